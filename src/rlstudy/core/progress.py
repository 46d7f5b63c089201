"""Progress bars that stay readable in a terminal and in a log file."""

from __future__ import annotations

import sys

from tqdm.auto import tqdm


class _OneLinePerUpdate:
    """A stream that turns tqdm's carriage-return redraws into one line per update (for logs)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> None:
        text = text.replace("\r", "").strip("\n")
        if text.strip():
            self.stream.write(text + "\n")

    def flush(self) -> None:
        self.stream.flush()


def progress(iterable=None, *, desc: str, total: int | None = None, **kwargs):
    """tqdm on stderr; when stderr is not a terminal, one line at most every 10 s."""
    if sys.stderr.isatty():
        return tqdm(iterable, desc=desc, total=total, **kwargs)
    return tqdm(iterable, desc=desc, total=total, file=_OneLinePerUpdate(sys.stderr), ascii=True,
                mininterval=10.0, maxinterval=60.0, ncols=100, **kwargs)
