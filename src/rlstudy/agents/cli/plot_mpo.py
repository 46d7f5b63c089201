"""MPO's figures: its learning curve beside DDPG's (mean and min-max band over seeds), and its
training diagnostics (temperature, KL of mean and std against their bound, the duals, the Q range)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.agents.episodes import load_evaluation, load_returns
from rlstudy.agents.figures import learning_curve_figure
from rlstudy.core.cli import finite_float, integer_from, parser, run
from rlstudy.core.io import load_csv
from rlstudy.plotting import style
from rlstudy.plotting.curves import evaluation_label, plot_curves

import matplotlib.pyplot as plt  # noqa: E402  (after plotting.style chose the Agg backend)


def learning_curve(methods: dict[str, list[pd.DataFrame]], evaluations: dict[str, list[tuple[str, float]]],
                   solved_return: float, env: str, window: int, prefix, formats, dpi):
    by_seed = "; ".join(f"{method} " + ", ".join(evaluation_label(run, mean, solved_return) for run, mean in runs)
                        for method, runs in evaluations.items())
    title = (f"{env}: " + " and ".join(methods) + ", mean and min-max over seeds\n"
             f"greedy evaluation by seed: {by_seed}")
    style.save(learning_curve_figure(methods, "step", window, title, solved_return), prefix, formats, dpi)


def diagnostics(runs: list[pd.DataFrame], env: str, kl_bound: float, prefix, formats, dpi):
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    panels = [
        (axes[0, 0], {"temperature eta": "temperature"}, "E-step temperature", True),
        (axes[0, 1], {"KL mean": "kl_mean", "KL std": "kl_std"}, "M-step KL to the target policy", True),
        (axes[1, 0], {"alpha mean": "alpha_mean", "alpha std": "alpha_std"}, "KL duals", True),
        (axes[1, 1], {"Q max": "q_max", "Q mean": "q_mean", "Q min": "q_min"}, "Q of the E-step samples", False),
    ]
    for ax, columns, title, log in panels:
        for i, (label, column) in enumerate(columns.items()):
            plot_curves(ax, {label: [r.rename(columns={column: "value"}) for r in runs]}, "step", "value",
                        colours={label: f"C{i}"})
        ax.set(title=title, yscale="log" if log else "linear")
        ax.legend(loc="best", fontsize="small")
    axes[0, 1].axhline(kl_bound, color="grey", linestyle="--", linewidth=1)
    for ax in axes[1]:
        ax.set_xlabel("environment steps")
    skipped = [int(r["skipped_nonfinite_batches"].iloc[-1]) for r in runs]
    fig.suptitle(f"MPO on {env}: training diagnostics, mean and min-max over {len(runs)} seed(s); "
                 f"non-finite batches skipped: {skipped}  (dashed: KL bound {kl_bound:g})", fontsize="medium")
    style.save(fig, prefix, formats, dpi)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--env", required=True)
    p.add_argument("--mpo-runs", nargs="+", required=True,
                   help="MPO run folders (returns.csv, evaluation.csv, diagnostics.csv)")
    p.add_argument("--ddpg-runs", nargs="*", default=[],
                   help="DDPG run folders (returns.csv, evaluation.csv); none: MPO alone")
    p.add_argument("--kl-bound", type=finite_float, required=True, help="config 'mpo.mstep_kl_epsilon'")
    p.add_argument("--solved-return", type=finite_float, required=True,
                   help="config 'mpo.solved_return': a seed whose mean greedy return is below it is marked failing")
    p.add_argument("--window", type=integer_from(1), default=10, help="episodes in the running mean of the returns")
    p.add_argument("--curve-prefix", required=True)
    p.add_argument("--diagnostics-prefix", required=True)
    p.add_argument("--formats", nargs="+", default=["png", "pdf"])
    p.add_argument("--dpi", type=integer_from(1), default=150)
    args = p.parse_args()
    style.setup()
    folders = {method: [Path(d) for d in runs] for method, runs in (("MPO", args.mpo_runs), ("DDPG", args.ddpg_runs))
               if runs}
    methods = {method: [load_returns(d / "returns.csv", f"{method} returns") for d in runs]
               for method, runs in folders.items()}
    evaluations = {method: [(d.name, load_evaluation(d / "evaluation.csv", f"{method} evaluation")["return"].mean())
                            for d in runs]
                   for method, runs in folders.items()}
    learning_curve(methods, evaluations, args.solved_return, args.env, args.window, args.curve_prefix,
                   args.formats, args.dpi)
    runs = [load_csv(Path(d) / "diagnostics.csv", "MPO diagnostics") for d in args.mpo_runs]
    diagnostics(runs, args.env, args.kl_bound, args.diagnostics_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
