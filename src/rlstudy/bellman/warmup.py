"""The bellman study's warm-up hook, run by the workflow's warm-start server (runtime/warmstart.py) before
it forks any job: the study's steps imported and its compiled kernels loaded (the network's
trigonometry, the budget's finite-data loss), as each of its jobs would on its first call."""

from rlstudy.core.cli import import_steps


def warm_up() -> None:
    import_steps(__package__)
    from rlstudy.bellman import budget_kernel, trig

    trig.warm_up()
    budget_kernel.warm_up()
