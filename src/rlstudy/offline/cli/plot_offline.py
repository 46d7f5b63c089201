"""The offline figures of one environment: evaluation return against updates for every offline
learner (rlstudy.offline.learners; mean line, min-max band over seeds), with the behavioural policy
and the buffer as reference lines (means over seeds); and the training diagnostics of each learner
(the behavioural DQN, then the offline learners), every seed, dashed where its final return is below the buffer's (the summary's
`at_least_buffer` false)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from rlstudy.core.cli import parser, run
from rlstudy.core.loaders import load_csv
from rlstudy.offline.evaluation import load_evaluations, load_performance
from rlstudy.offline.learners import DIAGNOSED, LEARNERS
from rlstudy.plotting import style
from rlstudy.plotting.curves import plot_curves
from rlstudy.plotting.diagnostics_figure import DiagnosticsRun, diagnostics_figure

REFERENCES = {"behavioural": ("behavioural policy", "k", "--"), "buffer": ("buffer episodes", "0.45", ":")}


def learner_diagnostics(env: str, folders: list[Path], performance: list, prefix: str, formats, dpi) -> None:
    """One figure per learner; a seed whose final return is below its buffer's is failing."""
    for name, (label, x_label) in DIAGNOSED.items():
        runs = []
        for folder, table in zip(folders, performance):
            final = load_csv(folder / name / "evaluations.csv", f"{label} evaluations")["mean_return"].iloc[-1]
            buffer = table.loc["buffer", "mean_return"]
            failing = not final >= buffer
            runs.append(DiagnosticsRun(f"{folder.name}: final return {final:.1f}"
                                       + (f" BELOW the buffer's {buffer:.1f}" if failing else ""),
                                       load_csv(folder / name / "diagnostics.csv", f"{label} diagnostics"), failing))
        title = f"{env}: {label}, training diagnostics (means between evaluations), every seed"
        style.save(diagnostics_figure(runs, "iteration", x_label, title), f"{prefix}_{name}_diagnostics",
                   formats, dpi)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--env", required=True)
    p.add_argument("--runs", nargs="+", required=True, help="run folders results/offline/{env}/seed{seed}")
    style.add_output_options(p)
    p.add_argument("--diagnostics-prefix", required=True,
                   help="each learner's diagnostics figure is <prefix>_<learner>_diagnostics.<fmt>")
    args = p.parse_args()
    runs = [Path(folder) for folder in args.runs]
    curves = {learner.label: [load_evaluations(folder / name / "evaluations.csv", f"{learner.label} evaluations")
                              for folder in runs]
              for name, learner in LEARNERS.items()}
    performance = [load_performance(folder / "buffer" / "performance.csv") for folder in runs]
    style.setup()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    plot_curves(ax, curves, "iteration", "mean_return")
    for source, (label, colour, dash) in REFERENCES.items():
        level = sum(table.loc[source, "mean_return"] for table in performance) / len(performance)
        ax.axhline(level, color=colour, linestyle=dash, linewidth=1.2, label=f"{label} ({level:.1f})")
    ax.set(xlabel="training iterations (updates on the fixed buffer)", ylabel="evaluation return (mean over its episodes)",
           title=f"{args.env}: learning from the behavioural DQN's noisy buffer")
    fig.tight_layout()
    style.legend_below(fig, *ax.get_legend_handles_labels(), ncol=2)
    style.save(fig, args.out_prefix, args.formats, args.dpi)
    learner_diagnostics(args.env, runs, performance, args.diagnostics_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
