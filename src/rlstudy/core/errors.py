"""Errors the pipeline reports to its users, each with a message that says what to fix."""


class PipelineError(Exception):
    """Base class: the CLIs print the message alone (no traceback) and exit with status 2."""


class InputError(PipelineError):
    """A missing, unreadable or malformed input file or parameter."""


class DivergenceError(PipelineError):
    """A run produced NaN or inf."""


class OutputError(PipelineError):
    """An output that cannot be written: a read-only or missing folder, no permission, a full disk."""


def first_line(err: BaseException) -> str:
    """An exception's message cut to its first line (torch's run to dozens), for one-line errors."""
    return (str(err).strip() or type(err).__name__).splitlines()[0]
