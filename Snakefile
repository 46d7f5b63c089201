# The reproducible results pipeline. Stages, one rules file each:
#   datasets -> reference (Q*) -> methods (SGD/CBO x DS/UR/BFF) -> figures
# Run:   snakemake --cores all                                  (paper scale, config.yaml)
#        snakemake --cores all --profile workflow/profiles/smoke (smoke scale)
import os
import sys
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


# The rules run the code of this checkout, installed or not.
SRC = Path(workflow.basedir) / "src"
sys.path.insert(0, str(SRC))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))

from rlstudy.config import validate_config  # noqa: E402

validate_config(config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/reference.smk"
include: "workflow/rules/methods.smk"
include: "workflow/rules/figures.smk"


rule all:
    default_target: True
    input:
        rules.figures.input,
        "results/summary.csv",
