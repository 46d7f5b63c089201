"""The direction of the package's imports, read from every module's source (ast: imports inside functions
included, relative ones resolved, and importlib.import_module of a written name):

    runtime   may import core; a study only through its steps and warm-up hook, found by their files (never named)
    studies   bellman, agents, offline, claims, report, plotting: may import core and each other, never runtime
    core      imports nothing of the package but core (and the package root, rlstudy/__init__.py)

so nothing below knows a study or how the workflow runs it, and a new study edits only itself. Above
that, every room stands on a floor (ROOMS) and imports only rooms on lower floors; bellman/'s folders
stand on floors of their own (BELLMAN_FLOORS); and no module imports a step's module (`<room>/cli/`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rlstudy

PACKAGE = Path(rlstudy.__file__).resolve().parent  # src/rlstudy
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
    ("rlstudy.bellman.x", "from rlstudy.runtime.launch import main", {"runtime"}),
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


# The rooms of the package from the ground up: a room imports only rooms on lower floors (the studies of
# one floor do not import each other; runtime reaches the studies only through their steps' files).
ROOMS = (("core",), ("plotting", "runtime"), ("bellman", "agents", "offline"), ("claims",), ("report",))
# bellman/'s folders from the ground up; its root modules (the workflow's config checks and the warm-up
# hook) stand above all of them.
BELLMAN_FLOORS = ("problem", "estimators", "numerics", "learners", "budget", "data", "results", "figures", "cli")


def floor_of_room(name: str) -> int | None:
    room = part(name)
    return next((level for level, rooms in enumerate(ROOMS) if room in rooms), None)


def floor_in_bellman(name: str) -> int | None:
    """The floor of a module of bellman/ (None: not in bellman/; len(BELLMAN_FLOORS): its root modules)."""
    pieces = name.split(".")
    if pieces[:2] != ["rlstudy", "bellman"] or len(pieces) < 3:
        return None
    return BELLMAN_FLOORS.index(pieces[2]) if pieces[2] in BELLMAN_FLOORS else len(BELLMAN_FLOORS)


def is_step(name: str) -> bool:
    """A module of a room's cli/ folder: a workflow step, run as `python -m`, imported by no module (a
    name imported from a module is not one)."""
    return "cli" in name.split(".")[2:-1] and (PACKAGE.parent / Path(*name.split("."))).with_suffix(".py").is_file()


def back_up(name: str, imports: set[str]) -> list[str]:
    """Each import of `name` that runs up a floor (between rooms, or inside bellman/), or into a step."""
    wrong = []
    for target in sorted(imports):
        if target == "rlstudy":
            continue
        own, theirs = floor_of_room(name), floor_of_room(target)
        if own is not None and theirs is not None and part(name) != part(target) and theirs >= own:
            wrong.append(f"{name} imports {target} (room {part(target)} is not below {part(name)})")
        own, theirs = floor_in_bellman(name), floor_in_bellman(target)
        if own is not None and theirs is not None and theirs > own:
            wrong.append(f"{name} imports {target} (floor {BELLMAN_FLOORS[theirs]} is above)")
        if is_step(target):
            wrong.append(f"{name} imports {target}, a step's module")
    return wrong


def test_no_import_runs_back_up_between_rooms_or_inside_bellman_or_into_a_step():
    found = [problem for name, imports in modules() for problem in back_up(name, imports)]
    assert found == []


def test_every_room_and_every_bellman_folder_has_its_floor():
    names = [name for name, _ in modules()]
    assert {part(name) for name in names} - {None} <= {room for rooms in ROOMS for room in rooms}
    folders = {name.split(".")[2] for name in names if name.startswith("rlstudy.bellman.")
               and (PACKAGE / "bellman" / name.split(".")[2]).is_dir()}
    assert folders == set(BELLMAN_FLOORS)


def test_no_module_cycle_inside_a_room():
    """Modules that import each other in a loop (a package's __init__ aside: importing a submodule runs it)."""
    known = dict(modules())
    graph = {name: {target for target in imports if target in known and target != name and not is_package_of(target, name)}
             for name, imports in known.items()}
    state, cycles = {}, []

    def visit(name, path):
        state[name] = "open"
        for target in sorted(graph.get(name, ())):
            if state.get(target) == "open":
                cycles.append(" -> ".join([*path[path.index(target):], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def is_package_of(target: str, name: str) -> bool:
    return name.startswith(target + ".")


@pytest.mark.parametrize("name, source, refused", [
    ("rlstudy.bellman.problem.sde", "from ..numerics.laws import reward", ["floor numerics"]),
    ("rlstudy.bellman.numerics.reference", "from ..estimators import Estimator\nfrom ..problem import sde", []),
    ("rlstudy.bellman.learners.sgd", "from ..budget import steps", ["floor budget"]),
    ("rlstudy.bellman.warmup", "from .numerics.compiled import trig", []),
    ("rlstudy.report.x", "from rlstudy.claims import rules", []),
    ("rlstudy.claims.x", "from rlstudy.report import verdicts", ["room report"]),
    ("rlstudy.bellman.x", "from rlstudy.agents import nets", ["room agents"]),
    ("rlstudy.plotting.x", "from rlstudy.bellman import problem", ["room bellman"]),
    ("rlstudy.report.x", "from rlstudy.bellman.cli import plot_q", ["a step's module"]),
    ("rlstudy.bellman.cli.plot_q", "from rlstudy.bellman.cli import run_method", ["a step's module"]),
])
def test_the_floors_check_sees_each_kind_of_import(name, source, refused):
    found = back_up(name, imported(source, name))
    assert bool(found) == bool(refused) and all(any(word in problem for problem in found) for word in refused)
