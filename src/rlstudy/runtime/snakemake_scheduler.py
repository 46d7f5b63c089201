"""Snakemake's scheduler without its timers: a round when a job ends, none in between, and an exit
with the last job.

Snakemake 9 rate-limits the jobs it starts (`max-jobs-per-timespan`, 100/1s unless set) and, to open
the round that may start more once the timespan has passed, starts a `threading.Timer` of the timespan
after every round (scheduling/job_scheduler.py, `_schedule_reevalutation`). The round that timer
opens starts another, so every job that ends adds one more chain of rounds that lasts to the end of
the run: the rounds grow with the jobs done, and each re-reads the size of every input of every
ready job. A local run has no one to protect from a flood of submissions (its cores bound it), and
its scheduler opens a round whenever a job ends anyway (`_proceed`), so the Snakefile's onstart hook
takes the limiter away from a local run (`rounds_when_jobs_end`): no timer is started, and the
rounds are the job ends (what that saves: docs/speed.md, "Snakemake's own process"). A run on a
cluster keeps it: there it bounds the submissions.

The timers are not daemon threads, so where any are left (a cluster run) the interpreter waits for
the last one before it exits, up to one timespan after the last job: the onsuccess and onerror hooks
run once the scheduler has returned, with no round left to open, and cancel them
(`cancel_scheduling_timers`).
"""

from __future__ import annotations

import threading


def rounds_when_jobs_end(workflow) -> bool:
    """Take the rate limiter away from a local run's scheduler (Snakemake's onstart: the scheduler is
    made, no round has run); whether it did. A cluster run keeps its limiter, and a Snakemake whose
    scheduler has none to take keeps its own ways (the pinned version has it: test_profiles.py)."""
    scheduler = getattr(workflow, "scheduler", None)
    if not workflow.local_exec or scheduler is None or not hasattr(scheduler, "job_rate_limiter"):
        return False
    scheduler.job_rate_limiter = None
    return True


def cancel_scheduling_timers() -> int:
    """Cancel every pending threading.Timer of this process (Snakemake's scheduler starts no other
    kind: its benchmark sampler is a thread of its own class); returns how many."""
    timers = [thread for thread in threading.enumerate() if isinstance(thread, threading.Timer)]
    for timer in timers:
        timer.cancel()
    return len(timers)
