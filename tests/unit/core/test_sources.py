"""core/sources.py: the files a step runs are its module and every module of the package it imports, wherever
the import statement stands (the workflow lists them as the rule's inputs, so that editing one reruns the jobs)."""

import textwrap

import pytest

from rlstudy.core.sources import module_sources

NESTED = '''
import rlstudy.top

def lazy():
    from rlstudy import in_function

class Holder:
    import rlstudy.in_class

if True:
    import rlstudy.in_if
else:
    import rlstudy.in_else

for _ in ():
    pass
else:
    import rlstudy.in_for_else

while False:
    import rlstudy.in_while

with open(__file__):
    import rlstudy.in_with

try:
    import rlstudy.in_try
except ImportError:
    import rlstudy.in_handler
else:
    import rlstudy.in_try_else
finally:
    import rlstudy.in_finally

match 1:
    case 1:
        import rlstudy.in_case

async def later():
    async with None:
        from . import in_async_with
    x = "import rlstudy.in_a_string"
'''
IMPORTED = ["top", "in_function", "in_class", "in_if", "in_else", "in_for_else", "in_while", "in_with", "in_try",
            "in_handler", "in_try_else", "in_finally", "in_case", "in_async_with"]


def test_an_import_is_found_in_every_kind_of_block_and_not_in_a_string(tmp_path):
    package = tmp_path / "rlstudy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "step.py").write_text(textwrap.dedent(NESTED))
    for name in [*IMPORTED, "in_a_string"]:
        (package / f"{name}.py").write_text("")
    found = {path.name for path in module_sources("rlstudy.step", tmp_path)}
    assert found == {"__init__.py", "step.py", *(f"{name}.py" for name in IMPORTED)}


def small_tree(root):
    """A package whose step imports sub.deep lazily, sub importing deep relatively; other.py imported by none.
    The files of the step's closure."""
    (root / "rlstudy" / "sub").mkdir(parents=True)
    (root / "rlstudy" / "__init__.py").write_text("")
    (root / "rlstudy" / "sub" / "__init__.py").write_text("from .deep import x\n")
    (root / "rlstudy" / "sub" / "deep.py").write_text("x = 1\n")
    (root / "rlstudy" / "other.py").write_text("")
    (root / "rlstudy" / "step.py").write_text("def main():\n    from rlstudy.sub import deep\n")
    return {"rlstudy/__init__.py", "rlstudy/step.py", "rlstudy/sub/__init__.py", "rlstudy/sub/deep.py"}


def closure(root):
    return {str(path.relative_to(root)) for path in module_sources("rlstudy.step", root)}


def test_a_module_imported_through_a_chain_brings_its_packages(tmp_path):
    expected = small_tree(tmp_path)
    assert closure(tmp_path) == expected


def test_the_trees_index_finds_each_name_where_a_stat_of_its_two_candidates_does():
    """_file_of reads one walk of the tree (an index per process) where it stat-ed a.b's a/b.py, then
    a/b/__init__.py, for each name: the same file for every module of the project and for names that are
    not modules (a class or function imported from a module), the .py first where both exist."""
    import ast
    from pathlib import Path

    from rlstudy.core import sources

    def by_stat(module, src):
        base = src / module.replace(".", "/")
        return next((c for c in (base.with_suffix(".py"), base / "__init__.py") if c.is_file()), None)

    src = Path(sources.__file__).resolve().parents[2]
    names = set()
    for path in (src / "rlstudy").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rlstudy"):
                names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    assert len(names) > 300 and any(by_stat(name, src) is None for name in names)
    assert {name: sources._file_of(name, src) for name in names} == {name: by_stat(name, src) for name in names}


def test_a_module_file_comes_before_a_package_of_the_same_name(tmp_path):
    (tmp_path / "rlstudy" / "twice").mkdir(parents=True)
    for path in ("__init__.py", "twice.py", "twice/__init__.py"):
        (tmp_path / "rlstudy" / path).write_text("")
    (tmp_path / "rlstudy" / "step.py").write_text("import rlstudy.twice\n")
    found = {str(path.relative_to(tmp_path)) for path in module_sources("rlstudy.step", tmp_path)}
    assert found == {"rlstudy/__init__.py", "rlstudy/step.py", "rlstudy/twice.py"}


# ---------------------------------------------------------------- what each file imports, kept between processes


def a_new_process():
    """sources' per-process memories forgotten, as in the next Snakemake start."""
    from rlstudy.core import sources

    for memory in (sources._parsed_imports, sources._imports_cache, sources.module_sources, sources._module_files):
        memory.cache_clear()


def test_the_next_process_parses_no_file_whose_bytes_the_cache_holds_and_parses_an_edited_one(tmp_path, monkeypatch):
    import ast

    from rlstudy.core.sources import IMPORTS_CACHE, ImportsCache

    expected = small_tree(tmp_path)
    a_new_process()
    assert closure(tmp_path) == expected
    assert set(ImportsCache.read(tmp_path / IMPORTS_CACHE)) == {"rlstudy", "rlstudy.step", "rlstudy.sub",
                                                                 "rlstudy.sub.deep"}
    parsed = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda source, *args, **kwargs: parsed.append(kwargs.get("filename"))
                        or real_parse(source, *args, **kwargs))
    a_new_process()
    assert closure(tmp_path) == expected and parsed == []
    (tmp_path / "rlstudy" / "step.py").write_text("def main():\n    from rlstudy import other\n")  # same size
    a_new_process()
    assert closure(tmp_path) == {"rlstudy/__init__.py", "rlstudy/step.py", "rlstudy/other.py"}
    assert parsed == [str(tmp_path / "rlstudy" / name) for name in ("step.py", "other.py")]  # other.py: new to it


BROKEN_CACHES = {
    "not JSON": b"{",
    "another format": b'{"format": 2, "modules": {}}',
    "a module outside the package": b'{"format": 1, "modules": {"os": {"sha256": "%s", "imports": []}}}',
    "a path for a module": b'{"format": 1, "modules": {"rlstudy/../x": {"sha256": "%s", "imports": []}}}',
    "an import that is no module name":
        b'{"format": 1, "modules": {"rlstudy": {"sha256": "%s", "imports": ["rlstudy.a b"]}}}',
    "a digest that is no sha256": b'{"format": 1, "modules": {"rlstudy": {"sha256": "zz", "imports": []}}}',
    "imports that are no list": b'{"format": 1, "modules": {"rlstudy": {"sha256": "%s", "imports": "rlstudy"}}}',
    "too large": b" " * (5 << 20),
}



@pytest.mark.parametrize("content", BROKEN_CACHES.values(), ids=BROKEN_CACHES.keys())
def test_a_cache_not_wholly_of_its_form_is_discarded_and_written_afresh(tmp_path, content):
    from rlstudy.core.sources import IMPORTS_CACHE, ImportsCache

    expected = small_tree(tmp_path)
    cache = tmp_path / IMPORTS_CACHE
    cache.parent.mkdir()
    cache.write_bytes(content.replace(b"%s", b"0" * 64) if len(content) < 1000 else content)
    assert ImportsCache.read(cache) == {}
    a_new_process()
    assert closure(tmp_path) == expected
    assert set(ImportsCache.read(cache)) == {"rlstudy", "rlstudy.step", "rlstudy.sub", "rlstudy.sub.deep"}


def test_two_processes_writing_the_cache_in_turn_keep_what_both_parsed(tmp_path):
    """Snakemake starts run side by side (the test suite's, a cluster's jobs): each writes what it parsed
    into the cache as it finds it, where the last writer's view replaced the other's."""
    from rlstudy.core.sources import IMPORTS_CACHE, ImportsCache

    small_tree(tmp_path)
    first, second = ImportsCache(tmp_path), ImportsCache(tmp_path)  # both read the cache before either wrote
    first.keep("rlstudy.step", "0" * 64, ("rlstudy.sub",))
    second.keep("rlstudy.other", "1" * 64, ())
    first.write()
    second.write()
    assert ImportsCache.read(tmp_path / IMPORTS_CACHE) == {"rlstudy.step": ("0" * 64, ("rlstudy.sub",)),
                                                           "rlstudy.other": ("1" * 64, ())}


def test_a_fresh_parse_trusts_no_cache_and_leaves_it_as_it_was(tmp_path):
    """A cache of the right form and the file's right digest can still name the wrong imports (written by hand):
    the closure that protocol.lock vouches for (report/lock.py) is parsed afresh, kept=False."""
    import hashlib
    import json

    from rlstudy.core.sources import IMPORTS_CACHE

    expected = small_tree(tmp_path)
    step = (tmp_path / "rlstudy" / "step.py").read_bytes()
    forged = {"format": 1, "modules": {"rlstudy.step": {"sha256": hashlib.sha256(step).hexdigest(), "imports": []}}}
    cache = tmp_path / IMPORTS_CACHE
    cache.parent.mkdir()
    cache.write_text(json.dumps(forged))
    a_new_process()
    assert {str(p.relative_to(tmp_path)) for p in module_sources("rlstudy.step", tmp_path, kept=False)} == expected
    assert json.loads(cache.read_text()) == forged
    assert closure(tmp_path) == {"rlstudy/__init__.py", "rlstudy/step.py"}  # what the cache, trusted, says


def test_a_star_import_is_its_module_and_keeps_the_cache_of_its_form(tmp_path):
    from rlstudy.core.sources import IMPORTS_CACHE, ImportsCache

    small_tree(tmp_path)
    (tmp_path / "rlstudy" / "step.py").write_text("from rlstudy.other import *\n")
    a_new_process()
    assert closure(tmp_path) == {"rlstudy/__init__.py", "rlstudy/step.py", "rlstudy/other.py"}
    assert ImportsCache.read(tmp_path / IMPORTS_CACHE)["rlstudy.step"][1] == ("rlstudy.other",)


def test_a_cache_that_cannot_be_written_costs_only_the_parse(tmp_path):
    from rlstudy.core.sources import IMPORTS_CACHE

    expected = small_tree(tmp_path)
    (tmp_path / IMPORTS_CACHE).parent.write_text("a file where the cache's folder would be")
    a_new_process()
    assert closure(tmp_path) == expected
