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
