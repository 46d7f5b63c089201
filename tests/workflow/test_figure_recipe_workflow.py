"""Adding a figure is the five steps of docs/bellman.md, "Adding a figure", and nothing else: on a
temporary copy of the project a toy figure is added so (its drawing function, its plot_toy step, its
rule derived from figure_template, its target in rule `figures`, its caption), the workflow plans it
for a plain `figures`, and it is built at smoke scale from its one input, a short trajectory."""

import json

import pytest
from project_copy import copy_project, snakemake

pytestmark = pytest.mark.integration

# 1. The drawing function, in the study's figures module: loaded data in, a Matplotlib figure out.
TOY_DRAWING = '''"""A toy of the tests: where a trajectory's states lie on the circle."""

from __future__ import annotations

import math

import numpy as np

from rlstudy.plotting import style


def plot_toy_figure(states: np.ndarray, title: str):
    style.setup()
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3))
    ax.hist(np.remainder(states, 2 * math.pi), bins=20)
    ax.set(xlabel=r"$s \\;\\mathrm{mod}\\; 2\\pi$", ylabel="steps", title=title)
    return fig
'''

# 2. Its step: reads its input, takes --out-prefix, --formats and --dpi, writes with style.save.
TOY_STEP = '''"""Draw where a trajectory's states lie on the circle (a toy of the tests)."""

from __future__ import annotations

from rlstudy.bellman.data.trajectories import load_trajectory
from rlstudy.bellman.figures.toy import plot_toy_figure
from rlstudy.core.cli import parser, run
from rlstudy.plotting import style


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--trajectory", required=True, help="folder of the trajectory")
    style.add_output_options(p)
    args = p.parse_args()
    traj = load_trajectory(args.trajectory)
    style.save(plot_toy_figure(traj.states, f"{len(traj)} states"), args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
'''

# 3. Its rule, in the stage's rules file.
TOY_RULE = '''

use rule figure_template as toy_figure with:
    input:
        trajectory_files("ours", "control"),
        code=sources("bellman.cli.plot_toy"),
    output:
        figure_output("figures/ours/toy", "toy.rst", "1. Datasets", "ours data"),
    log:
        "logs/figures/ours/toy.log",
    params:
        args=options(trajectory="data/trajectories/ours/control/short"),
'''

# 4. A target: its files in rule `figures`.
FIGURES_RULE = "rule figures:\n    input:\n"
TOY_TARGET = '        figure_files("ours/toy"),\n'

# 5. Its caption.
TOY_CAPTION = "Where the short control trajectory's states lie on the circle (a toy of the tests).\n"


def edit(path, old, new):
    text = path.read_text()
    assert text.count(old) == 1, f"{path.name} changed: update this test and docs/bellman.md"
    path.write_text(text.replace(old, new))


@pytest.fixture(scope="module")
def toy_project(tmp_path_factory):
    workdir = copy_project(tmp_path_factory.mktemp("figure"))
    bellman = workdir / "src" / "rlstudy" / "bellman"
    (bellman / "figures" / "toy.py").write_text(TOY_DRAWING)
    (bellman / "cli" / "plot_toy.py").write_text(TOY_STEP)
    rules = workdir / "workflow" / "rules" / "figures.smk"
    rules.write_text(rules.read_text() + TOY_RULE)
    edit(rules, FIGURES_RULE, FIGURES_RULE + TOY_TARGET)
    (workdir / "workflow" / "report" / "toy.rst").write_text(TOY_CAPTION)
    return workdir


def test_a_plain_figures_run_plans_the_toy_figure(toy_project):
    result = snakemake(toy_project, "--profile", "workflow/profiles/smoke", "-n", "-p", "figures")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "rule toy_figure:" in result.stdout
    assert "rlstudy.bellman.cli.plot_toy" in result.stdout and "--out-prefix figures/ours/toy" in result.stdout


def test_the_toy_figure_is_built_with_its_provenance_at_smoke_scale(toy_project):
    files = [f"figures/ours/toy.{fmt}" for fmt in ("png", "pdf")]  # config figures.formats
    result = snakemake(toy_project, "--profile", "workflow/profiles/smoke", "--cores", "1", *files)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "2 of 2 steps (100%) done" in result.stderr  # the figure and its one input, the trajectory
    for name in files:
        figure = toy_project / name
        assert figure.stat().st_size > 0
        record = json.loads(figure.with_name(figure.name + ".provenance.json").read_text())
        assert "rlstudy.bellman.cli.plot_toy" in record["command"]
        assert record["parameters"]["formats"] == ["png", "pdf"]
        assert "data/trajectories/ours/control/short/states.npy" in json.dumps(record["inputs"])
