"""The offline figure of one environment: evaluation return against updates for BCQ and offline
DQN (mean line, min-max band over seeds), with the behavioural policy and the buffer as
reference lines (means over seeds)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from rlstudy.core.cli import integer_from, parser, run
from rlstudy.offline.evaluation import load_evaluations, load_performance
from rlstudy.plotting import style
from rlstudy.plotting.curves import plot_curves

LEARNERS = {"bcq": "BCQ", "dqn": "offline DQN"}
REFERENCES = {"behavioural": ("behavioural policy", "k", "--"), "buffer": ("buffer episodes", "0.45", ":")}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--env", required=True)
    p.add_argument("--runs", nargs="+", required=True, help="run folders results/offline/{env}/seed{seed}")
    p.add_argument("--formats", nargs="+", default=["png", "pdf"])
    p.add_argument("--dpi", type=integer_from(1), default=150)
    p.add_argument("--out-prefix", required=True)
    args = p.parse_args()
    runs = [Path(folder) for folder in args.runs]
    curves = {label: [load_evaluations(folder / name / "evaluations.csv", f"{label} evaluations") for folder in runs]
              for name, label in LEARNERS.items()}
    performance = [load_performance(folder / "buffer" / "performance.csv") for folder in runs]
    style.setup()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    plot_curves(ax, curves, "iteration", "mean_return")
    for source, (label, colour, dash) in REFERENCES.items():
        level = sum(table.loc[source, "mean_return"] for table in performance) / len(performance)
        ax.axhline(level, color=colour, linestyle=dash, linewidth=1.2, label=f"{label} ({level:.1f})")
    ax.set(xlabel="training iterations (updates on the fixed buffer)", ylabel="evaluation return (10 episodes)",
           title=f"{args.env}: learning from the behavioural DQN's noisy buffer")
    ax.legend(loc="best", fontsize="small")
    style.save(fig, args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
