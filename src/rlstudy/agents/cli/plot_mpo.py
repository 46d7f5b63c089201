"""MPO's figures: its learning curve beside DDPG's (mean and min-max band over seeds), and its
training diagnostics (every column of diagnostics.csv, every seed, the failing ones dashed; the KL
bound dotted)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.agents.episodes import load_evaluation, load_returns
from rlstudy.agents.figures import learning_curve_figure
from rlstudy.core.cli import finite_float, integer_from, parser, run
from rlstudy.core.loaders import load_csv
from rlstudy.plotting import style
from rlstudy.plotting.curves import evaluation_label
from rlstudy.plotting.diagnostics_figure import DiagnosticsRun, diagnostics_figure


def learning_curve(methods: dict[str, list[pd.DataFrame]], evaluations: dict[str, list[tuple[str, float]]],
                   solved_return: float, env: str, window: int, prefix, formats, dpi):
    title = f"{env}: " + " and ".join(methods) + ", mean and min-max over seeds"
    style.save(learning_curve_figure(methods, "step", window, title, solved_return, by_seed=evaluations),
               prefix, formats, dpi)


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
    style.add_format_options(p)
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
    runs = [DiagnosticsRun(evaluation_label(name, mean, args.solved_return),
                           load_csv(folder / "diagnostics.csv", "MPO diagnostics"), mean < args.solved_return)
            for folder, (name, mean) in zip(folders["MPO"], evaluations["MPO"])]
    fig = diagnostics_figure(runs, "step", "environment steps",
                             f"MPO on {args.env}: training diagnostics, every seed (greedy evaluation return in the "
                             f"legend; dotted: the KL bound {args.kl_bound:g})",
                             bounds={"kl_mean": args.kl_bound, "kl_std": args.kl_bound})
    style.save(fig, args.diagnostics_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
