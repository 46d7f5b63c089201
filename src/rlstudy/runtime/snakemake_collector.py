"""The cycle collector of Snakemake's own process: off while it parses the workflow and builds the DAG,
on once the jobs start.

Parsing the Snakefile (its imports, the config's YAML, the import scan of every step's code) and
building the DAG (some ten thousand input files at smoke scale) make objects by the hundred thousand,
and the collector walked them again at each generation's threshold: some six hundred passes, 0.5-0.74 s
of CPU of a `snakemake -n` at either scale (timed by gc.callbacks), paid by every `snakemake` command (a
reviewer's one-rule rerun once, the workflow's tests at each of their Snakemake runs). Nothing they make is garbage that
must be found before the jobs start, so the Snakefile turns the collector off at its first line
(`off_while_planning`; 0.17-0.28 s remain, spent while Snakemake imports itself) and its onstart hook
turns it back on (`on_for_the_jobs`): after one collection, with what survives frozen out of its reach
(`gc.freeze`: the DAG lives as long as the run), so a long run's collector does not walk the DAG
either. A dry run, which starts no job, ends with the collector still off.
`python -m rlstudy.runtime.launch` (every make target) imports Snakemake with it off already, as a step
imports its libraries (core/process.py); the hook turns it on there too.
"""

from __future__ import annotations

import gc


def off_while_planning() -> None:
    gc.disable()


def on_for_the_jobs() -> None:
    """The collector on, if it was off: the garbage of the parse and the DAG collected once, the rest frozen."""
    if not gc.isenabled():
        gc.collect()
        gc.freeze()
        gc.enable()
