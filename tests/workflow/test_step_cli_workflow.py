"""Issue 40, items 4 and 5, on a copy of the project: a step's --from-config reads the options its rule
passes (so a hand run and the workflow's run agree), targets are checked before Snakemake plans them,
and the console shortens each job's inputs while .snakemake/log/ keeps them whole."""

import importlib
import re
import shlex
import sys
from pathlib import Path

import pytest

from project_copy import copy_project, snakemake
from rlstudy.core.cli import StepParser

pytestmark = pytest.mark.integration

SMOKE = ["--profile", "workflow/profiles/smoke", "--cores", "1"]  # without the authors' data: ours alone
TARGETS = {"rlstudy.agents.cli.train_agent": "results/agents/dqn/seed1/returns.csv",
           "rlstudy.bellman.cli.make_trajectory": "data/trajectories/ours/control/short/states.npy",
           "rlstudy.bellman.cli.run_method": "results/runs/ours/evaluation/cbo/UR/seed0/errors.csv",
           # the steps whose defaults repeated config values, or took gamma beside --problem
           "rlstudy.bellman.cli.solve_exact": "results/exact/control/reward_current/q_exact.npy",
           "rlstudy.bellman.cli.train_qstar": "results/reference/control/q_star.pt",
           "rlstudy.bellman.cli.summarise": "results/summary.csv",
           "rlstudy.bellman.cli.fourier_error": "results/fourier_error.csv",
           "rlstudy.bellman.cli.summarise_qstar": "results/reference/error_exact.csv",
           "rlstudy.bellman.cli.plot_q": "figures/ours/q_control_sgd.png",
           "rlstudy.agents.cli.plot_basics": "figures/agents/dqn_max_q.png",
           "rlstudy.agents.cli.plot_mpo": "figures/agents/mpo_diagnostics.png",
           "rlstudy.offline.cli.train_behavioural": "results/offline/CartPole-v1/seed0/behavioural/q.pt"}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("project"))


class Parsed(Exception):
    """Raised in place of running the step, once its options are parsed."""

    def __init__(self, parser, args):
        self.parser, self.options = parser, args


def parse(monkeypatch, module: str, args: list[str]):
    """The step's parser and the options it reads from `args`, without running the step."""
    original = StepParser.parse_args

    def stop(self, args=None, namespace=None):
        raise Parsed(self, original(self, args, namespace))

    monkeypatch.setattr(StepParser, "parse_args", stop)
    monkeypatch.setattr(sys, "argv", [module, *args])
    with pytest.raises(Parsed) as parsed:
        importlib.import_module(module).main()
    return parsed.value.parser, vars(parsed.value.options)


def without_options(args: list[str], flags: set[str]) -> list[str]:
    """args without the given options and their values (every value up to the next option: --formats png pdf)."""
    kept, skip = [], False
    for arg in args:
        if arg.startswith("--"):
            skip = arg in flags
        if not skip:
            kept.append(arg)
    return kept


def test_from_config_reads_what_the_rule_passes(workdir, monkeypatch):
    """Each step's options marked 'config' are read from the config files the run read, and equal what
    its rule passes: the mapping of options to config keys has no second version to drift."""
    result = snakemake(workdir, "-n", "-p", *SMOKE, *TARGETS.values())
    assert result.returncode == 0, result.stderr[-3000:]
    commands = []
    for line in re.findall(r"python -m rlstudy\.runtime\.warmstart (.*)$", result.stdout + result.stderr, re.M):
        module, *args = shlex.split(line)
        if module in TARGETS:
            commands.append((module, args[:args.index(">")]))
    assert {module for module, _ in commands} == set(TARGETS)
    assert len(commands) >= 5  # the short and long trajectories of a task, Q*'s among them
    monkeypatch.chdir(workdir)
    for module, args in commands:
        parser, given = parse(monkeypatch, module, args)
        flags = {option.flag for option in parser.config_options}
        assert flags
        _, read = parse(monkeypatch, module, [*without_options(args, flags), "--from-config",
                                              "config.yaml", "workflow/profiles/smoke/scale.yaml"])
        assert read.pop("from_config") and given.pop("from_config") is None
        assert read == given, (module, args)


def test_a_misspelt_target_is_answered_with_the_nearest_known_ones(workdir):
    result = snakemake(workdir, "-n", *SMOKE, "q_contol_cbo.png")
    assert result.returncode != 0
    assert ("no rule makes q_contol_cbo.png (a misspelt target?); the nearest known: figures/ours/q_control_cbo.png"
            in result.stdout + result.stderr)
    assert "MissingRuleException" not in result.stdout + result.stderr


def test_a_run_of_a_seed_the_config_does_not_list_is_refused(workdir):
    result = snakemake(workdir, "-n", *SMOKE, "results/runs/ours/control/sgd/DS/seed7/errors.csv")
    assert result.returncode != 0
    assert ("results/runs/ours/control/sgd/DS/seed7/errors.csv: seed 7 is not a seed the config lists for these "
            "runs (0, 1)" in result.stdout + result.stderr)
    listed = snakemake(workdir, "-n", *SMOKE, "results/runs/ours/control/sgd/DS/seed7/errors.csv",
                       "--config", "seeds=[0,1,7]")
    assert listed.returncode == 0, listed.stderr[-3000:]


def test_the_console_shortens_job_inputs_and_the_log_keeps_them(workdir):
    target = "data/trajectories/ours/evaluation/short/states.npy"
    built = snakemake(workdir, *SMOKE, target)
    assert built.returncode == 0, built.stderr[-3000:]
    console = built.stdout + built.stderr
    assert re.search(r"^\s+input: \d+ source files \(src/\)$", console, re.M), console
    assert "src/rlstudy/bellman/cli/make_trajectory.py" not in console
    [log] = [p for p in (Path(workdir) / ".snakemake" / "log").glob("*.snakemake.log")
             if target in p.read_text()]
    assert re.search(r"^\s+input: .*src/rlstudy/bellman/cli/make_trajectory\.py", log.read_text(), re.M)
    verbose = snakemake(workdir, "-n", "--forcerun", "trajectory", "--verbose", *SMOKE, target)
    assert "src/rlstudy/bellman/cli/make_trajectory.py" in verbose.stdout + verbose.stderr
