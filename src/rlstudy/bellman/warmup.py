"""The bellman study's warm-up hook, run by the workflow's warm-start server (runtime/warmstart/) once it
has imported the study's steps, before it forks any job: the optimisers' modules, which the registry
names and run_method imports when it fits, and its compiled kernels loaded (the network's
trigonometry, the budget's finite-data loss), as each of its jobs would on its first call."""


def warm_up() -> None:
    from rlstudy.bellman.learners.registry import OPTIMIZERS
    from rlstudy.bellman.numerics.compiled import budget_kernel, residual_kernels, trig

    for optimizer in OPTIMIZERS.values():
        optimizer.implementation()

    trig.warm_up()
    residual_kernels.warm_up()
    budget_kernel.warm_up()
