"""The source files a step runs: its module and every module of the package it imports, at any depth.

The workflow lists them as each rule's inputs, so that editing a line of the library reruns exactly
the jobs whose code imports it (and only those), as editing the step's own script does.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = "rlstudy"


def _file_of(module: str, src: Path) -> Path | None:
    """The file that defines a module or package of the project, or None (a name, not a module)."""
    return _module_files(src).get(module)


@cache
def _module_files(src: Path) -> dict[str, Path]:
    """Every module and package of the project under src by its name (a.b: a/b.py, else a/b/__init__.py),
    from one walk of the tree per process: a Snakemake start asks for some four thousand names, and a
    stat and two paths made for each were a third of the import scan's time."""
    packages, modules = {}, {}
    for path in (src / PACKAGE).rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            packages[".".join(parts[:-1])] = path
        else:
            modules[".".join(parts)] = path
    return {**packages, **modules}


def _imported_modules(path: Path, module: str, src: Path) -> frozenset[str]:
    """The project's modules a file imports, wherever the import statement stands (lazy imports too).
    Each file is parsed once per process and content (its stat in the key): the workflow asks for the
    sources of some forty steps, which share most of their files, at every Snakemake start."""
    stat = path.stat()
    return _parsed_imports(path, stat.st_mtime_ns, stat.st_size, module, src)


def _import_statements(body: list[ast.stmt]):
    """The import statements of a block and of every block nested in it. An import is a statement, so
    only statement lists are walked, not expressions: a tenth of the nodes of ast.walk."""
    for statement in body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            yield statement
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(statement, field, None)
            if block:
                if isinstance(block[0], ast.stmt):
                    yield from _import_statements(block)
                else:  # a try's handlers, a match's cases: each holds a body
                    for part in block:
                        yield from _import_statements(part.body)


@cache
def _parsed_imports(path: Path, mtime_ns: int, size: int, module: str, src: Path) -> frozenset[str]:
    is_package = path.name == "__init__.py"
    package_parts = module.split(".") if is_package else module.split(".")[:-1]
    found = set()
    for node in _import_statements(ast.parse(path.read_text(), filename=str(path)).body):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        else:
            if node.level:
                parent = package_parts[:len(package_parts) - (node.level - 1)]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            found.add(base)
            # `from package import name`: the name may be a submodule.
            found |= {f"{base}.{alias.name}" for alias in node.names
                      if _file_of(f"{base}.{alias.name}", src) is not None}
    return frozenset(name for name in found if name == PACKAGE or name.startswith(PACKAGE + "."))


def _with_parents(module: str) -> list[str]:
    """A module and the packages that contain it: importing a.b.c runs a/__init__.py and a/b/__init__.py."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


@cache
def module_sources(module: str, src: Path) -> tuple[Path, ...]:
    """Every file of the project that `python -m module` executes, sorted; src is the folder that
    holds the package. Raises ValueError for a module that does not exist."""
    if _file_of(module, src) is None:
        raise ValueError(f"no module {module} under {src}")
    seen: set[str] = set()
    pending = [module]
    while pending:
        for name in _with_parents(pending.pop()):
            if name in seen:
                continue
            path = _file_of(name, src)
            if path is None:
                continue
            seen.add(name)
            pending.extend(_imported_modules(path, name, src))
    return tuple(sorted(_file_of(name, src) for name in seen))
