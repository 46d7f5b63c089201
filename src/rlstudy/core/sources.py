"""The source files a step runs: its module and every module of the package it imports, at any depth.

The workflow lists them as each rule's inputs, so that editing a line of the library reruns exactly
the jobs whose code imports it (and only those), as editing the step's own script does.

Parsing the package's files was the largest cost of ours in a Snakemake start (some 175 files, 0.4 s
of CPU), paid again by every `snakemake` command. What each file imports is therefore kept between
processes, as Python keeps its bytecode: in `rlstudy/__pycache__/` (IMPORTS_CACHE), by module, with the
sha256 of the file it was read from. A file whose bytes moved is parsed again. The cache is read back as
data to be checked (ImportsCache.read): anything in it not of its form (a name that is not a module
name of the package, a digest that is not a sha256) discards the whole file, which is then written
afresh; an unreadable or unwritable cache only costs the parse. A well-formed cache is trusted as the
tree's own bytecode is; what must not trust it (protocol.lock's list of the verdict code, report/lock.py)
asks module_sources for a fresh parse (kept=False).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from functools import cache
from pathlib import Path

from .digests import SHA256_HEX

PACKAGE = "rlstudy"
IMPORTS_CACHE = Path(PACKAGE) / "__pycache__" / "rlstudy-imports.json"  # under src/
CACHE_FORMAT = 1
MAX_CACHE_BYTES = 4 << 20  # the package's 223 modules take about 105 KB
_MODULE_NAME = re.compile(rf"{PACKAGE}(\.[A-Za-z_][A-Za-z0-9_]*)*")


class ImportsCache:
    """module -> (the sha256 of its file, the names it imports), as read from and written to src/IMPORTS_CACHE."""

    def __init__(self, src: Path):
        self.path = src / IMPORTS_CACHE
        self.entries = self.read(self.path)
        self.kept: dict[str, tuple[str, tuple[str, ...]]] = {}  # parsed here, not yet written

    @staticmethod
    def read(path: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
        """The entries of a cache file, or none where it is missing, unreadable or not wholly of its form."""
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_CACHE_BYTES + 1)
            cached = json.loads(data) if len(data) <= MAX_CACHE_BYTES else None
        except (OSError, ValueError):
            return {}
        if not (isinstance(cached, dict) and cached.get("format") == CACHE_FORMAT
                and isinstance(cached.get("modules"), dict)):
            return {}
        entries = {}
        for module, entry in cached["modules"].items():
            if not (_MODULE_NAME.fullmatch(module) and isinstance(entry, dict)
                    and isinstance(entry.get("sha256"), str) and SHA256_HEX.fullmatch(entry["sha256"])
                    and isinstance(entry.get("imports"), list)
                    and all(isinstance(name, str) and _MODULE_NAME.fullmatch(name) for name in entry["imports"])):
                return {}
            entries[module] = (entry["sha256"], tuple(entry["imports"]))
        return entries

    def imports(self, module: str, digest: str) -> tuple[str, ...] | None:
        entry = self.entries.get(module)
        return entry[1] if entry is not None and entry[0] == digest else None

    def keep(self, module: str, digest: str, names: tuple[str, ...]) -> None:
        self.entries[module] = self.kept[module] = (digest, names)

    def write(self) -> None:
        """What was parsed here, written atomically into the cache as it is now (other Snakemake processes
        may have written theirs since this one read it); a folder that cannot be written is left alone."""
        if not self.kept:
            return
        from .atomic_writes import write_artefact
        from .errors import OutputError

        self.entries = {**self.read(self.path), **self.kept}
        modules = {module: {"sha256": digest, "imports": list(names)}
                   for module, (digest, names) in sorted(self.entries.items())}
        try:
            write_artefact(self.path, json.dumps({"format": CACHE_FORMAT, "modules": modules}).encode(), None)
        except OutputError:
            return
        self.kept = {}


@cache
def _imports_cache(src: Path) -> ImportsCache:
    return ImportsCache(src)


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


def _imported_modules(path: Path, module: str, src: Path, kept: bool) -> frozenset[str]:
    """The project's modules a file imports, wherever the import statement stands (lazy imports too).
    Each file is read once per process and content (its stat in the key), and parsed only where the
    imports cache lacks its bytes: the workflow asks for the sources of some forty steps, which share
    most of their files, at every Snakemake start."""
    stat = path.stat()
    return _parsed_imports(path, stat.st_mtime_ns, stat.st_size, module, src, kept)


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
def _parsed_imports(path: Path, mtime_ns: int, size: int, module: str, src: Path, kept: bool) -> frozenset[str]:
    data = path.read_bytes()
    if not kept:
        names = _imported_names(data, path, module)
    else:
        digest = hashlib.sha256(data).hexdigest()
        known = _imports_cache(src)
        names = known.imports(module, digest)
        if names is None:
            names = _imported_names(data, path, module)
            known.keep(module, digest, names)
    # the modules among them (`from a import b`: b may be a module or a name of a), decided here, not kept
    return frozenset(name for name in names if _file_of(name, src) is not None)


def _imported_names(source: bytes, path: Path, module: str) -> tuple[str, ...]:
    """Every name of the package a module's source imports, as `import a.b` or `from a import b` gives
    it: a.b, and both a and a.b (a.b may be a module of a, or a name defined in it); sorted."""
    is_package = path.name == "__init__.py"
    package_parts = module.split(".") if is_package else module.split(".")[:-1]
    found = set()
    for node in _import_statements(ast.parse(source, filename=str(path)).body):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        else:
            if node.level:
                parent = package_parts[:len(package_parts) - (node.level - 1)]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names if alias.name != "*"}  # `*`: the module alone
    return tuple(sorted(name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")))


def _with_parents(module: str) -> list[str]:
    """A module and the packages that contain it: importing a.b.c runs a/__init__.py and a/b/__init__.py."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


@cache
def module_sources(module: str, src: Path, kept: bool = True) -> tuple[Path, ...]:
    """Every file of the project that `python -m module` executes, sorted; src is the folder that
    holds the package; `kept`: each file's imports from the cache where it holds the file's bytes (else
    every file is parsed, and the cache neither read nor written). Raises ValueError for a module that
    does not exist."""
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
            pending.extend(_imported_modules(path, name, src, kept))
    if kept:
        _imports_cache(src).write()
    return tuple(sorted(_file_of(name, src) for name in seen))
