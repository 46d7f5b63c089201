"""Render the error of the learned Q* against the exact Q along its training, beside the SGD runs
(figures/ours/reference_error, PNG and PDF); lines are means over seeds, bands the min-max."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import torch

from rlstudy.bellman.results.error_curves import load_error_curves
from rlstudy.bellman.problem.exact import load_exact
from rlstudy.bellman.figures.qstar import plot_reference_figure
from rlstudy.bellman.learners.metrics import GRID_POINTS, centred_norm
from rlstudy.core.cli import parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_csv
from rlstudy.plotting import style


def exact_norms(pairs: list[str]) -> dict[str, float]:
    """task=path pairs -> the exact Q's centred norm per task."""
    norms = {}
    for pair in pairs:
        task, sep, path = pair.partition("=")
        if not sep:
            raise InputError(f"--exact: expected task=path, got {pair!r}")
        norms[task] = centred_norm(torch.from_numpy(load_exact(path, GRID_POINTS)))
    return norms


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--reference-curves", nargs="+", required=True, help="Q*'s errors.csv of each task")
    p.add_argument("--runs", nargs="+", required=True, help="SGD run folders with errors.csv")
    p.add_argument("--exact", nargs="+", required=True, help="task=q_exact.npy of each task")
    p.add_argument("--note", default="", help="how Q* was made, for the title")
    style.add_output_options(p)
    args = p.parse_args()
    norms = exact_norms(args.exact)
    references = pd.concat([load_csv(path, "Q*'s training curve", columns=["task", "iteration"],
                                     finite=["evaluations", "error_exact_normalised"])
                            for path in args.reference_curves])
    runs = pd.concat(load_error_curves([Path(folder) / "errors.csv" for folder in args.runs]))
    runs["error_exact_normalised"] = runs["error_exact"] / runs["task"].map(norms)
    title = "The notebook's procedure against the truth" + (f"; {args.note}" if args.note else "")
    style.save(plot_reference_figure(references, runs, title), args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
