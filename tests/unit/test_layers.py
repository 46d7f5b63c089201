"""The direction of the package's imports, read from every module's source (ast: imports inside functions
included, relative ones resolved, and importlib.import_module of a written name):

    runtime   may import core; a study only through its steps and warm-up hook, found by their files (never named)
    studies   bellman, agents, offline, claims, report, plotting: may import core and each other, never runtime
    core      imports nothing of the package but core (and the package root, rlstudy/__init__.py)

so nothing below knows a study or how the workflow runs it, and a new study edits only itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rlstudy.runtime import warmstart

PACKAGE = Path(warmstart.__file__).resolve().parents[1]  # src/rlstudy
LAYERS = ("core", "runtime")  # every other subpackage is a study


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, module: str, is_package: bool = False) -> set[str]:
    """The rlstudy modules a module's source imports."""
    package = module if is_package else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names.update(f"{base}.{alias.name}" for alias in node.names)  # `from a import b`: a.b, or a's name b
            names.add(base)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value)
    return {name for name in names if name == "rlstudy" or name.startswith("rlstudy.")}


def part(name: str) -> str | None:
    """The subpackage of rlstudy a module belongs to (None: the package root)."""
    pieces = name.split(".")
    return pieces[1] if len(pieces) > 1 else None


def modules() -> list[tuple[str, set[str]]]:
    return [(module_name(path), imported(path.read_text(), module_name(path), path.stem == "__init__"))
            for path in sorted(PACKAGE.rglob("*.py"))]


def violations(name: str, imports: set[str]) -> list[str]:
    """Each import of `name` that goes against the direction."""
    own = part(name)
    wrong = []
    for target in sorted(imports):
        theirs = part(target)
        if theirs is None or theirs == own:
            continue
        if own == "core" or (own not in LAYERS and own is not None and theirs == "runtime"):
            wrong.append(f"{name} imports {target}")
        elif own == "runtime" and theirs != "core":
            wrong.append(f"{name} imports {target} (a study: only through its steps and warm-up hook)")
    return wrong


def test_core_imports_no_study_and_no_runtime_and_studies_import_no_runtime():
    found = [problem for name, imports in modules() for problem in violations(name, imports)]
    assert found == []


def test_every_part_of_the_package_was_read():
    parts = {part(name) for name, _ in modules()}
    assert {"core", "runtime", "bellman", "agents", "offline", "claims", "report", "plotting"} <= parts


@pytest.mark.parametrize("name, source, refused", [
    ("rlstudy.core.x", "from rlstudy.bellman import trig", {"bellman"}),
    ("rlstudy.core.x", "def f():\n    from ..runtime import warmstart", {"runtime"}),
    ("rlstudy.core.x", "import importlib\nimportlib.import_module('rlstudy.agents.cli')", {"agents"}),
    ("rlstudy.core.x", "import rlstudy\nfrom . import io", set()),
    ("rlstudy.bellman.x", "from rlstudy.runtime.scale import RECORD", {"runtime"}),
    ("rlstudy.runtime.x", "from rlstudy.offline import envs", {"offline"}),
    ("rlstudy.runtime.x", "from rlstudy.core import io\nfrom . import scale", set()),
    ("rlstudy.bellman.x", "from rlstudy.core import io\nfrom rlstudy.plotting import style\nfrom .trig import f", set()),
])
def test_the_check_sees_each_kind_of_import(name, source, refused):
    found = violations(name, imported(source, name))
    assert {part(problem.split(" imports ")[1].split(" ")[0]) for problem in found} == refused


def test_core_holds_no_path_into_the_workflow_s_schemas():
    """The config schema's place is the package's to say (rlstudy.CONFIG_SCHEMA) or the caller's (the
    Snakefile passes its own): core reads it from there."""
    import rlstudy
    from rlstudy.core.config import schema_file

    for path in sorted((PACKAGE / "core").rglob("*.py")):
        texts = [node.value for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Constant) and isinstance(node.value, str)]
        assert not [text for text in texts if text in {"workflow", "schemas"} or "workflow/schemas" in text], path
    assert schema_file() == rlstudy.CONFIG_SCHEMA and schema_file().is_file()
