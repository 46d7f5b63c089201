"""MPO's figures: its learning curve beside DDPG's (mean and min-max band over seeds), and its
training diagnostics (temperature, KL of mean and std against their bound, the duals, the Q range)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..io import load_csv
from ..plotting import style
from ..plotting.curves import plot_curves, running_mean
from .common import parser, run

import matplotlib.pyplot as plt  # noqa: E402  (after plotting.style chose the Agg backend)


def smoothed_on_grid(runs: list[pd.DataFrame], window: int) -> list[pd.DataFrame]:
    """Each run's running-mean return at every episode end of any run, taken from the run's last
    finished episode, over the steps every run covers: seeds whose episodes end at other steps
    (terminations) then share one x axis."""
    first = max(int(r["step"].iloc[0]) for r in runs)
    last = min(int(r["step"].iloc[-1]) for r in runs)
    grid = np.unique(np.concatenate([r["step"].to_numpy() for r in runs]))
    grid = pd.DataFrame({"step": grid[(grid >= first) & (grid <= last)]})
    smoothed = [r.assign(**{"return": running_mean(r["return"].to_numpy(), window)}) for r in runs]
    return [pd.merge_asof(grid, r[["step", "return"]], on="step") for r in smoothed]


def learning_curve(mpo: list[pd.DataFrame], ddpg: list[pd.DataFrame], env: str, window: int, prefix, formats, dpi):
    fig, ax = plt.subplots(figsize=(6.5, 4))
    methods = {"MPO": smoothed_on_grid(mpo, window)}
    if ddpg:
        methods["DDPG"] = smoothed_on_grid(ddpg, window)
    plot_curves(ax, methods, "step", "return")
    ax.set(xlabel="environment steps", ylabel=f"episode return (running mean of {window})",
           title=f"{env}: MPO" + (" and DDPG" if ddpg else "") + ", mean and min-max over seeds")
    ax.legend(loc="lower right")
    style.save(fig, prefix, formats, dpi)


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
    p.add_argument("--mpo-runs", nargs="+", required=True, help="MPO run folders (returns.csv, diagnostics.csv)")
    p.add_argument("--ddpg-runs", nargs="*", default=[], help="DDPG run folders (returns.csv); none: MPO alone")
    p.add_argument("--kl-bound", type=float, required=True, help="config 'mpo.mstep_kl_epsilon'")
    p.add_argument("--window", type=int, default=10, help="episodes in the running mean of the returns")
    p.add_argument("--curve-prefix", required=True)
    p.add_argument("--diagnostics-prefix", required=True)
    p.add_argument("--formats", nargs="+", default=["png", "pdf"])
    p.add_argument("--dpi", type=int, default=150)
    args = p.parse_args()
    style.setup()
    mpo = [load_csv(Path(d) / "returns.csv", "MPO returns") for d in args.mpo_runs]
    ddpg = [load_csv(Path(d) / "returns.csv", "DDPG returns") for d in args.ddpg_runs]
    learning_curve(mpo, ddpg, args.env, args.window, args.curve_prefix, args.formats, args.dpi)
    runs = [load_csv(Path(d) / "diagnostics.csv", "MPO diagnostics") for d in args.mpo_runs]
    diagnostics(runs, args.env, args.kl_bound, args.diagnostics_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
