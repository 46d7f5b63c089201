"""A console a person reads: each job's inputs and reason shortened on Snakemake's console, whole in its log.

Every rule lists the source files its step imports as inputs (core/sources.py), so Snakemake's job
info names some 60-130 files per job: in a smoke run the `input:` lines were about half of the console
(176 KB of 365 KB) and the `reason:` lines another quarter. Snakemake's own `--quiet` cannot help:
its choices (rules, progress, reason, host, all) filter its log file (.snakemake/log/) as they filter
the console (one DefaultFilter and DefaultFormatter serve both handlers), and `--quiet rules` hides
the failed jobs' errors too. So the Snakefile gives the console's handler alone a formatter that
shortens the lists; the log file keeps every file of every job (benchmarks/timings.py reads it), and
`snakemake --verbose` keeps the console whole.
"""

from __future__ import annotations

import copy
import logging

STREAM_HANDLER = "DefaultStreamHandler"  # the name Snakemake 9 gives its console handler (snakemake/logging.py)
SHOWN = 3  # files shown of a list before "and N more"


def brief_files(files: list[str], shown: int = SHOWN) -> str:
    """The first few files that are not source code, how many more, and how many source files."""
    code = [f for f in files if f.startswith("src/")]
    data = [f for f in files if not f.startswith("src/")]
    parts = [", ".join(data[:shown])] if data else []
    if len(data) > shown:
        parts[0] += f" and {len(data) - shown} more"
    if code:
        parts.append(f"{len(code)} source file{'s' if len(code) > 1 else ''} (src/)")
    return "; ".join(parts)


def brief_reason(reason: str, shown: int = 2) -> str:
    """Each clause of Snakemake's reason ('Missing output files: a, b, c; Input files updated by another
    job: d, e') with its first files only."""
    clauses = []
    for clause in str(reason).split("; "):
        heading, colon, files = clause.partition(": ")
        clauses.append(f"{heading}: {brief_files(files.split(', '), shown)}" if colon and ", " in files else clause)
    return "; ".join(clauses)


class BriefJobInfo(logging.Formatter):
    """Snakemake's console formatter, given each job's info with its inputs and reason shortened: a copy
    of the record, so that the log file's handler formats the original."""

    def __init__(self, inner: logging.Formatter):
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        from snakemake_interface_logger_plugins.common import LogEvent

        if getattr(record, "event", None) == LogEvent.JOB_INFO:
            record = copy.copy(record)
            if isinstance(getattr(record, "input", None), list) and record.input:
                record.input = [brief_files(record.input)]
            if getattr(record, "reason", None):
                record.reason = brief_reason(record.reason)
        return self.inner.format(record)


def brief_console(logger: logging.Logger, verbose: bool) -> bool:
    """Shorten the job info on the console's handler of `logger` (unless verbose); whether one was found."""
    if verbose:
        return False
    for handler in logger.handlers:
        if handler.name == STREAM_HANDLER and not isinstance(handler.formatter, BriefJobInfo):
            handler.setFormatter(BriefJobInfo(handler.formatter))
            return True
    return False
