"""Editing a library module reruns exactly the jobs whose step imports it, and nothing else; so does a
changed config value, the jobs whose options it reaches."""

import os
import shutil
from pathlib import Path

import pytest
from project_copy import SMOKE, snakemake

from rlstudy.agents.registry import AGENTS
from rlstudy.core.sources import module_sources

pytestmark = pytest.mark.integration

SRC = Path(__file__).resolve().parents[2] / "src"


def planned_rules(workdir: Path) -> set[str]:
    """The rules a dry run would run, read from its job-stats table."""
    result = snakemake(workdir, *SMOKE, "-n")
    assert result.returncode == 0, result.stderr[-3000:]
    if "Nothing to be done" in result.stdout + result.stderr:
        return set()
    table = result.stdout.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {line.split()[0] for line in table.splitlines()[3:] if line.strip()}


def test_a_step_depends_on_its_imports_at_any_depth():
    sources = {str(p.relative_to(SRC)) for p in module_sources("rlstudy.bellman.cli.run_method", SRC)}
    assert {"rlstudy/bellman/cli/run_method.py", "rlstudy/bellman/learners/optimizer.py",
            "rlstudy/bellman/numerics/compiled/qnet.py", "rlstudy/core/atomic_writes.py", "rlstudy/core/errors.py",
            "rlstudy/__init__.py"} <= sources
    assert not any(s.startswith(("rlstudy/agents", "rlstudy/offline", "rlstudy/plotting")) for s in sources)


def test_the_mpo_rollout_does_not_import_the_learner():
    """The rollout's code (rule mpo_rollout: its step's and its agent class's module, agent_sources in
    basics_common.smk, as the registry builds the agent by name) has the networks, not the learner."""
    module = f"rlstudy.agents.{AGENTS['mpo'].module}"
    sources = {str(p.relative_to(SRC)) for step in ("rlstudy.agents.cli.rollout_mpo", module)
               for p in module_sources(step, SRC)}
    assert "rlstudy/agents/mpo/networks.py" in sources and "rlstudy/agents/mpo/learner.py" not in sources


@pytest.fixture(scope="module")
def complete_copy(smoke_project, tmp_path_factory):
    """One copy of the finished smoke run for every case below (each restores what it edits)."""
    copy = tmp_path_factory.mktemp("rerun") / "project"
    shutil.copytree(smoke_project, copy, symlinks=True)
    assert planned_rules(copy) == set(), "the copied smoke run should be complete"
    return copy


@pytest.mark.parametrize("module, reruns, untouched", [
    # the registry names the optimisers' modules: a fitting job's code is its optimiser's (optimizer_sources)
    ("bellman/learners/cbo.py", {"run_method", "sweep_run"},
     {"trajectory", "reference", "train_agent", "mpo_train", "offline_behavioural", "offline_train"}),
    ("bellman/learners/sgd.py", {"run_method", "reference"},  # Q* is SGD's (train_qstar imports it)
     {"trajectory", "exact_q", "train_agent", "mpo_train", "offline_train"}),
    # mpo_rollout reruns too, on the retrained model it reads (its code does not import the learner:
    # test_the_mpo_rollout_does_not_import_the_learner)
    ("agents/mpo/learner.py", {"mpo_train", "mpo_rollout"},
     {"trajectory", "run_method", "train_agent", "offline_train", "sweep_run"}),
    ("offline/bcq.py", {"offline_train"},
     {"offline_behavioural", "offline_buffer", "run_method", "train_agent", "mpo_train"}),
])
def test_editing_a_module_reruns_the_jobs_that_import_it(complete_copy, module, reruns, untouched):
    edited = complete_copy / "src" / "rlstudy" / module
    text, stat = edited.read_text(), edited.stat()
    try:
        edited.write_text(text + "\n# an edit\n")
        planned = planned_rules(complete_copy)
    finally:  # the same text and modification time: the copy is complete again for the next case
        edited.write_text(text)
        os.utime(edited, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert reruns <= planned, planned
    assert not planned & untouched, planned


@pytest.mark.parametrize("old, new, reruns, untouched", [
    ("    lr0: 0.15\n", "    lr0: 0.14\n", {"run_method"},  # sgd.control: the control runs of SGD
     {"trajectory", "reference", "train_agent", "train_qtable", "mpo_train", "offline_train", "sweep_run"}),
    ("    max_steps: 50 ", "    max_steps: 49 ", {"train_qtable"},  # qtable.params
     {"trajectory", "run_method", "train_agent", "mpo_train", "offline_train", "sweep_run"}),
])
def test_a_changed_config_value_reruns_the_jobs_it_reaches(complete_copy, old, new, reruns, untouched):
    """A step's options name its files, so Snakemake did not compare them (a params function of `input` or
    `output` is not tracked): a changed learning rate reran nothing (runtime/tracked_params.py)."""
    config = complete_copy / "config.yaml"
    text, stat = config.read_text(), config.stat()
    assert text.count(old) == 1
    try:
        config.write_text(text.replace(old, new))
        planned = planned_rules(complete_copy)
    finally:
        config.write_text(text)
        os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert reruns <= planned, planned
    assert not planned & untouched, planned
