# Helpers shared by every study's rules: a step's command line (options), parameters as JSON, a rule's
# named files (files_in), the code a step runs (sources, step_of), the figures' files. The templates every
# rule derives from are in templates.smk; each study's own helpers in its *_common.smk
# (bellman_common.smk, basics_common.smk, offline_common.smk).
import json
import re
from functools import cache

from rlstudy.core.sources import module_sources


def one_of(names):
    """A wildcard's regex accepting exactly these names (longest first: BFF-matched before BFF)."""
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


wildcard_constraints:
    seed=r"\d+",


def options(*words, **values):
    """A step's command line: `words` as they are, then each option in the order given: `name=value` is
    `--name value` (underscores as dashes), a list or tuple `--name` and then each item, True `--name`
    alone, None and False nothing. The rule's command quotes every word ({params.args:q})."""
    words = list(words)
    for name, value in values.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            words.append(flag)
        elif isinstance(value, (list, tuple)):
            words += [flag, *value]
        else:
            words += [flag, value]
    return words


def files_in(folder, names):
    """A rule's named files in one folder, {name: folder/file} for each name: file of `names` (`output:
    **files_in(...)`)."""
    return {name: f"{folder}/{file}" for name, file in names.items()}


def as_json(values):
    """Parameters for a CLI; a change of any value reruns the rule (Snakemake tracks params)."""
    return json.dumps(values, sort_keys=True)


def sources(step):
    """The code a step runs, as inputs: its own module first (the rule's command runs it: step_of), then
    every module of the package it imports (core/sources.py), so that editing any of them reruns exactly
    the jobs that run it."""
    return list(_sources(step))


@cache
def _sources(step):
    """sources(step), once per Snakemake process: the input functions ask for it once per job."""
    found = [path.relative_to(SRC.parent) for path in module_sources(f"rlstudy.{step}", SRC)]
    own = [path for path in found if ".".join(path.with_suffix("").parts[1:]) == f"rlstudy.{step}"]
    return tuple(str(path) for path in own + [path for path in found if path not in own])


def step_of(wildcards, input):
    """The module a job runs, named once, by its code inputs (sources puts it first)."""
    return ".".join(Path(input.code[0]).with_suffix("").parts[1:])


def tensorboard_dir(run):
    """The training step's --tensorboard folder when config `tensorboard` is on, else None (no option):
    event files of the run's diagnostics in logs/tensorboard/<run> (logs, not results: they hold wall times)."""
    return f"logs/tensorboard/{run}" if config["tensorboard"] else None


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


def claims_options(wildcards, input, output):
    """The verdict step's options: the claims, the tables by name, the publications and the last look."""
    return options(
        claims=input.claims,
        schema=input.schema,
        publication=list(input.publications) or None,
        table=[f"{name}={path}" for name, path in CLAIM_TABLES.items()],
        out=output.claims,
        seed_power=output.seed_power,
    ) + [option for path in input.looks for option in ("--looks", path)]
