"""The training diagnostics of one task and optimiser setting (SGD or a CBO setting): every run
(estimator and seed) overlaid, a run whose final e_k/e_0 exceeds --converged-below (not converged, as in
results/summary.csv) dashed."""

from __future__ import annotations

from pathlib import Path

from rlstudy.bellman.learners.registry import OPTIMIZERS
from rlstudy.bellman.problem.sde import TASKS
from rlstudy.core.cli import finite_float, parser, run
from rlstudy.core.loaders import load_csv
from rlstudy.plotting import style
from rlstudy.plotting.diagnostics_figure import DiagnosticsRun, diagnostics_figure


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--optimizer", choices=OPTIMIZERS, required=True, help="the setting's optimiser")
    p.add_argument("--setting", required=True, help="the setting's name (sgd, cbo, cbo-adaptive, ...)")
    p.add_argument("--runs", nargs="+", required=True, help="run folders, each with errors.csv and diagnostics.csv")
    p.add_argument("--converged-below", type=finite_float, required=True, help="config 'summary.converged_below'")
    style.add_output_options(p)
    args = p.parse_args()
    runs = []
    for folder in map(Path, args.runs):
        curve = load_csv(folder / "errors.csv", "error curve", columns=("dataset", "estimator", "seed"),
                         finite=("rel_error",))
        final = float(curve["rel_error"].iloc[-1])
        failing = not final <= args.converged_below
        label = (f"{curve['estimator'].iloc[0]} seed {curve['seed'].iloc[0]}: e_k/e_0 {final:.2f}"
                 + (f" NOT converged (> {args.converged_below:g})" if failing else ""))
        runs.append(DiagnosticsRun(label, load_csv(folder / "diagnostics.csv", "diagnostics"), failing))
    data = style.DATASET_NAMES[curve["dataset"].iloc[0]]
    per = OPTIMIZERS[args.optimizer].diagnostics_per
    title = f"Q-{args.task}, {args.setting.upper()} on {data}: training diagnostics, means per {per}"
    style.save(diagnostics_figure(runs, "iteration", "iteration", title), args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
