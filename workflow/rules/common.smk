# Helpers shared by every study's rules: parameters as JSON, the code a step runs, the figures'
# files and options, the defaults of every rule (ENV, STEP, figure(); their templates are in templates.smk).
# Each study's own helpers are in its *_common.smk (bellman_common.smk, basics_common.smk,
# offline_common.smk).
import json
import re

from rlstudy.core.sources import module_sources


def one_of(names):
    """A wildcard's regex accepting exactly these names (longest first: BFF-matched before BFF)."""
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


wildcard_constraints:
    seed=r"\d+",


def as_json(values):
    """Parameters for a CLI; a change of any value reruns the rule (Snakemake tracks params)."""
    return json.dumps(values, sort_keys=True)


def sources(step):
    """The code a step runs, as inputs: its own module first (the rule's command runs it: step_of), then
    every module of the package it imports (core/sources.py), so that editing any of them reruns exactly
    the jobs that run it."""
    found = [path.relative_to(SRC.parent) for path in module_sources(f"rlstudy.{step}", SRC)]
    own = [path for path in found if ".".join(path.with_suffix("").parts[1:]) == f"rlstudy.{step}"]
    return [str(path) for path in own + [path for path in found if path not in own]]


def step_of(wildcards, input):
    """The module a job runs, named once, by its code inputs (sources puts it first)."""
    return ".".join(Path(input.code[0]).with_suffix("").parts[1:])


def tensorboard_args(run):
    """The training step's --tensorboard option when config `tensorboard` is on: event files of the
    run's diagnostics in logs/tensorboard/<run> (logs, not results: they hold wall times); a list of
    arguments, each quoted by the rule's `{params.tensorboard:q}`."""
    return ["--tensorboard", f"logs/tensorboard/{run}"] if config["tensorboard"] else []


def figure_output(prefix, caption, category, subcategory=None):
    """A figure's files, one per format; the first format is shown in the HTML report (make report)
    with its caption (workflow/report/), grouped by category and subcategory."""
    first, *rest = [f"{prefix}.{fmt}" for fmt in config["figures"]["formats"]]
    return [report(first, caption=f"../report/{caption}", category=category, subcategory=subcategory), *rest]


def figure_files(name):
    return expand("figures/{name}.{fmt}", name=name, fmt=config["figures"]["formats"])


def gpus_of_training_job():
    """GPUs a training job (Q*, SGD and CBO runs) asks for: one when config `device` is cuda, so that
    the SLURM executor adds --gpus=1; none otherwise (0 adds nothing, and a local run without
    --resources gpu=N does not limit it)."""
    return 1 if config["device"] == "cuda" else 0


# Defaults of every rule. conda stays a directive of each rule (or of the template it
# derives from): Snakemake's workflow-level `conda:` injects an environment into Snakemake itself, not
# into the jobs, and `snakemake --lint` asks for one per rule.
ENV = "../../envs.yaml"
# The module a job runs, in the params of every step (**STEP, then its args).
STEP = {"step": step_of}


def figure(outputs=None):
    """A figure rule's params besides its args: its step, the formats and resolution (config `figures`),
    and the options that say where it writes (by default --out-prefix: its first output without the
    extension; a step that writes several figures names its own)."""
    return {
        **STEP,
        "formats": config["figures"]["formats"],
        "dpi": config["figures"]["dpi"],
        "outputs": outputs or (lambda wildcards, output: ["--out-prefix", str(Path(output[0]).with_suffix(""))]),
    }
