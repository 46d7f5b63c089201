"""The claims package's warm-up hook, run by the workflow's warm-start server (runtime/warmstart/) before it
forks any job: the study's steps imported, as each of its jobs would import its own."""

from rlstudy.core.cli import import_steps


def warm_up() -> None:
    import_steps(__package__)
