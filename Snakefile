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
from snakemake.utils import min_version

min_version("9.0")

# The rules run the code of this checkout, installed or not. Outside `--sdm conda` they run with the
# interpreter that runs Snakemake (e.g. .venv/bin/python, even when the venv is not activated).
SRC = Path(workflow.basedir) / "src"
sys.path.insert(0, str(SRC))
from rlstudy.runtime.snakemake_collector import off_while_planning, on_for_the_jobs  # noqa: E402

# The cycle collector off while Snakemake parses and plans, back on as the jobs start (onstart).
off_while_planning()

from rlstudy.core.config import check_command_line_size  # noqa: E402

# --config's values bounded before `configfile:` merges them: YAML aliases make 200 characters a
# million values (core/config.py, MAX_COMMAND_LINE_VALUES).
check_command_line_size(workflow.config_settings.config)


configfile: "config.yaml"


IN_CONDA = DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method
# Paths quoted for the shell, as every value of a rule's command is ({params.x:q}).
INTERPRETER = "" if IN_CONDA else f'export PATH={shlex.quote(str(Path(sys.executable).parent))}:"$PATH"; '

from rlstudy.bellman.config_checks import CHECKS as BELLMAN_CHECKS  # noqa: E402
from rlstudy.claims.loading import load_claims  # noqa: E402
from rlstudy.core.config import missing_extras  # noqa: E402
from rlstudy.core.looks import run_looks  # noqa: E402
from rlstudy.core.provenance import SCALE_ENV, SEED_BLOCK_ENV  # noqa: E402
from rlstudy.core.run_config import LOCK, settle_config  # noqa: E402
from rlstudy.core.scale import record_scale, recorded_scale  # noqa: E402
from rlstudy.runtime.snakemake_scheduler import cancel_scheduling_timers, rounds_when_jobs_end  # noqa: E402
from rlstudy.runtime.tracked_params import track_derived_params  # noqa: E402
from rlstudy.runtime.warmstart import client as warm_starts  # noqa: E402

# The config made whole and checked, once (core/run_config.py): the raw files' limits, the command
# line's values, the schema and the studies' checks, the seed block, the scale. An optional extra the
# config needs (tensorboard) is checked here, not in the first job that imports it; under --sdm conda
# the jobs' environments hold their own packages.
settle_config(
    config,
    config_files=workflow.configfiles,
    command_line=workflow.config_settings.config,
    command_line_words=workflow.config_settings.config_args,
    added_files=workflow.config_settings.configfiles,
    schema=Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml",
    checks=(*BELLMAN_CHECKS, *(() if IN_CONDA else (missing_extras,))),
)
# The confirmatory block's group-sequential design, one look per run: the lists every rule reads cut to
# the seeds of the look in progress (core/looks.py, workflow/rules/looks.smk); None where no design runs.
LOOKS = run_looks(config, Path(LOCK))
# Every job's shell: src/ on the path, and the run's scale and seed block, which each artefact's
# provenance record names (core/provenance.py RUN_ENV).
shell.prefix(
    f"set -euo pipefail; export PYTHONPATH={shlex.quote(str(SRC))}; "
    f"export {SCALE_ENV}={shlex.quote(config['scale'])} {SEED_BLOCK_ENV}={shlex.quote(config['seed_block'])}; "
    f"{INTERPRETER}"
)
# The claims file too, so that a broken claim stops the workflow before any job runs.
CLAIMS = load_claims(
    Path(workflow.basedir) / "claims.yaml", Path(workflow.basedir) / "workflow" / "schemas" / "claims.schema.yaml"
)


report: "workflow/report/workflow.rst"


# Jobs fork from one process that has already imported their libraries (src/rlstudy/runtime/warmstart/);
# RLSTUDY_WARM_START=0 runs each job in a new interpreter. A local run's scheduler plans when a job ends,
# not on the rate limiter's timers (src/rlstudy/runtime/snakemake_scheduler.py).
onstart:
    on_for_the_jobs()
    rounds_when_jobs_end(workflow)
    if recorded_scale() is None or config.get("rescale", False):
        record_scale(config["scale"])
    warm_starts.begin()


# Both hooks run after the last job: a cluster run's pending scheduling timers would hold the exit for up
# to a rate-limit timespan (src/rlstudy/runtime/snakemake_scheduler.py).
onsuccess:
    warm_starts.end()
    cancel_scheduling_timers()


onerror:
    warm_starts.end()
    cancel_scheduling_timers()


include: "workflow/rules/common.smk"
include: "workflow/rules/templates.smk"
include: "workflow/rules/bellman_common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/reference.smk"
include: "workflow/rules/methods.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/budget.smk"
include: "workflow/rules/sweep.smk"
include: "workflow/rules/mpo.smk"
include: "workflow/rules/basics.smk"
include: "workflow/rules/offline.smk"
include: "workflow/rules/protocol.smk"
include: "workflow/rules/looks.smk"
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


# What a person reads: the console shortens each job's inputs and reason (the log in .snakemake/log/
# keeps them whole; src/rlstudy/runtime/console.py), and the targets asked for are checked before
# Snakemake plans them: a misspelt one gets the nearest known targets, a run of a seed the config does
# not list is refused (src/rlstudy/runtime/targets.py).
from snakemake.logging import logger as snakemake_logger  # noqa: E402
from rlstudy.runtime.console import brief_console  # noqa: E402
from rlstudy.runtime.targets import TargetError, requested_targets, target_problems  # noqa: E402

brief_console(snakemake_logger, workflow.output_settings.verbose)
TARGET_PROBLEMS = target_problems(
    requested_targets(),
    rules.all.input,
    [r.name for r in workflow.rules],
    lambda path: any(r.is_producer(path) for r in workflow.rules),
)
if TARGET_PROBLEMS:
    raise TargetError("; ".join(TARGET_PROBLEMS))


# Last, once every rule is defined: a changed config value reruns the jobs it reaches (the module says why).
track_derived_params(workflow.rules)
