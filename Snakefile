# The reproducible results pipeline. Stages, one rules file each:
#   datasets -> reference (Q*, the exact Q) -> methods (SGD/CBO x estimators) -> figures -> claims;
#   budget: each task's error budget (reach, population and finite-data minimisers, the runs);
#   sweep: CBO's parameter grids and CBO against SGD at equal cost. `make report`: the HTML report
#   (workflow/report/: its front page and the caption of every figure; report.smk: the front page's
#   generated block)
# Run:   snakemake --cores all                                  (paper scale, config.yaml)
#        snakemake --cores all --profile workflow/profiles/smoke (smoke scale)
import shlex
import sys
from pathlib import Path

from snakemake.settings.types import DeploymentMethod
from snakemake.utils import min_version, update_config

min_version("9.0")


configfile: "config.yaml"


# The rules run the code of this checkout, installed or not. Outside `--sdm conda` they run with the
# interpreter that runs Snakemake (e.g. .venv/bin/python, even when the venv is not activated).
SRC = Path(workflow.basedir) / "src"
sys.path.insert(0, str(SRC))
IN_CONDA = DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method
# Paths quoted for the shell, as every value of a rule's command is ({params.x:q}).
INTERPRETER = "" if IN_CONDA else f'export PATH={shlex.quote(str(Path(sys.executable).parent))}:"$PATH"; '
shell.prefix(f"set -euo pipefail; export PYTHONPATH={shlex.quote(str(SRC))}; {INTERPRETER}")

from rlstudy.bellman.config_checks import CHECKS as BELLMAN_CHECKS  # noqa: E402
from rlstudy.core import warmstart  # noqa: E402
from rlstudy.core.snakemake_exit import cancel_scheduling_timers  # noqa: E402
from rlstudy.claims.loading import load_claims  # noqa: E402
from rlstudy.core.config import ConfigError, check_config_files, command_line_values, validate_config  # noqa: E402

# The raw config files first, with limits (no YAML aliases, 1 MiB): the merged config is walked below.
check_config_files(workflow.configfiles)
# `--config 'seeds=[0,1]'` arrives with every number a string: read them as a config file's.
update_config(config, command_line_values(workflow.config_settings.config))
validate_config(config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml",
                checks=BELLMAN_CHECKS)
# The claims file too, so that a broken claim stops the workflow before any job runs.
load_claims(Path(workflow.basedir) / "claims.yaml", Path(workflow.basedir) / "workflow" / "schemas" / "claims.schema.yaml")


report: "workflow/report/workflow.rst"


# Jobs fork from one process that has already imported their libraries (src/rlstudy/core/warmstart.py);
# RLSTUDY_WARM_START=0 runs each job in a new interpreter.
onstart:
    warmstart.begin()


# Both hooks run after the last job: the scheduler's pending timers would hold the exit for up to a
# timespan of the profile (src/rlstudy/core/snakemake_exit.py).
onsuccess:
    warmstart.end()
    cancel_scheduling_timers()


onerror:
    warmstart.end()
    cancel_scheduling_timers()


include: "workflow/rules/common.smk"
include: "workflow/rules/templates.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/reference.smk"
include: "workflow/rules/methods.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/budget.smk"
include: "workflow/rules/sweep.smk"
include: "workflow/rules/mpo.smk"
include: "workflow/rules/basics.smk"
include: "workflow/rules/offline.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/report.smk"


include: "workflow/rules/targets.smk"


rule all:
    default_target: True
    input:
        run_outputs(),
        rules.figures.input,
        "results/summary.csv",
        "results/summary_stats.csv",
        "results/reference/error_exact.csv",
        "results/fourier_error.csv",
        "results/claims.csv",
        "results/report/front_page.rst",
        "results/cost.csv",
        budget_targets(),
        figure_files("ours/cbo_sweep"),
        [figure_files(f"{dataset}/cost_{cost}") for dataset in DATASETS for cost in ("evaluations", "seconds")],
        MPO_TARGETS,
        basics_targets(),
        "results/agents/summary.csv",
        offline_targets(),


rule study:  # the CBO/BFF study alone (no sweep, cost, agents, offline or claims): snakemake --cores all study
    input:
        rules.figures.input,
        "results/summary.csv",
        "results/summary_stats.csv",
        "results/reference/error_exact.csv",
        "results/fourier_error.csv",
        budget_targets(),


rule agents:  # the basics agents and MPO alone: snakemake --cores all agents
    input:
        MPO_TARGETS,
        basics_targets(),
        "results/agents/summary.csv",
