"""The generated block of docs/offline.md (its results table, `offline-results`), rendered from
results/offline/summary.csv by `make readme` (report/study_tables.py registers it), so that no result
there is typed by hand: every value it inserts is escaped (core.markdown.text)."""

from __future__ import annotations

import pandas as pd

from rlstudy.core.markdown import generated_note, text


def render_offline(summary: pd.DataFrame, commit: str, start: str, end: str) -> str:
    """One row per environment, seed and learner: the final evaluation return (its standard deviation
    over the evaluation episodes) and the best one, against the run's buffer episodes and behavioural
    policy; the BCQ paper's criterion, final >= buffer."""
    lines = [start, generated_note("results/offline/summary.csv", commit,
                          "evaluation return (mean over its evaluation episodes) of each learner at the end of training and at its "
                          "best, and the run's references; *at least the buffer* is the BCQ paper's "
                          "criterion (final >= the buffer episodes' mean)."), "",
             "| environment | seed | learner | updates (behavioural: env steps) | final (sd) | best "
             "| buffer episodes | behavioural policy | at least the buffer |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in summary.itertuples():
        verdict = "yes" if row.at_least_buffer else "**no**"
        lines.append(f"| {text(row.env)} | {text(row.seed)} | {text(row.learner)} | {text(row.iterations)} "
                     f"| {row.final_return:.1f} ({row.final_std:.1f}) | {row.best_return:.1f} "
                     f"| {row.buffer_return:.1f} | {row.behavioural_return:.1f} | {verdict} |")
    return "\n".join([*lines, end])


def offline_scale(path: str, parameters: dict, config: dict) -> tuple[dict, dict]:
    """(what config.yaml asks of an offline run, what its record says was used): the behavioural
    DQN's environment steps, or an offline learner's updates."""
    offline = config["offline"]
    kind = "atari" if parameters["env"]["is_atari"] else "regular"
    budget = offline["budgets"].get(parameters["env"]["env_id"], offline["budgets"][kind])
    if "algorithm" in parameters:
        return {"iterations": budget["offline"]}, parameters
    return {"steps": budget["behavioural"]}, parameters
