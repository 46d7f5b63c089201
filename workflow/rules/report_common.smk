# What the front page (report.smk) and the captions read: the scale the config runs at, and the
# figures the report shows.
from rlstudy.core.scale import scale_of

# paper, smoke or custom: the merged config's sizes against config.yaml and the smoke profile's
# (src/rlstudy/core/scale.py); the front page and the Q figures' captions name it.
SCALE = scale_of(config, workflow.basedir)


def report_figures():
    """The figures the report shows: the first format of every figure the default target builds."""
    shown = f".{config['figures']['formats'][0]}"
    return sorted(
        str(path) for path in rules.all.input if str(path).startswith("figures/") and str(path).endswith(shown)
    )


# The master seed, the seed block and every setting's seeds, for the front page.
FRONT_PAGE_SEEDS = as_json(
    {
        "master": config["seed"],
        "block": config["seed_block"],
        "settings": {
            setting: {task: list(seeds_of(setting, task)) for task in config["tasks"]} for setting in SETTINGS
        },
    }
)


def front_page_options(wildcards, input, output):
    """The figures' names, not their files: the block links them and reads none (a figure redrawn, e.g.
    cost_seconds from remeasured wall times, changes nothing in it)."""
    return options(
        claims=input.claims,
        claims_file=input.claims_file,
        schema=input.schema,
        figures=report_figures(),
        scale=SCALE.describe(),
        seeds=FRONT_PAGE_SEEDS,
        datasets=DATASETS,
        out=output[0],
    )
