"""Snakemake's exit without its scheduler's last timer.

After every scheduling round Snakemake 9 starts a `threading.Timer` of the rate-limit timespan
(`max-jobs-per-timespan`) whose only work is to open the next round (scheduling/job_scheduler.py,
`_schedule_reevalutation`). The timers are not daemon threads, so the interpreter waits for the last
one before it exits: up to one timespan after the last job, a minute under workflow/profiles/long
(measured: make study ended 60 s after its last job). The Snakefile's onsuccess and onerror hooks
run once the scheduler has returned, with no round left to open, and cancel them here.
"""

from __future__ import annotations

import threading


def cancel_scheduling_timers() -> int:
    """Cancel every pending threading.Timer of this process (Snakemake's scheduler starts no other
    kind: its benchmark sampler is a thread of its own class); returns how many."""
    timers = [thread for thread in threading.enumerate() if isinstance(thread, threading.Timer)]
    for timer in timers:
        timer.cancel()
    return len(timers)
