"""The agents study's warm-up hook, run by the workflow's warm-start server (runtime/warmstart/) once it
has imported the study's steps, before it forks any job: the learners' compiled updates loaded
(core/compiled_updates.py, MPO's agents/mpo/kernels.py), as each of its jobs would on its first update."""


def warm_up() -> None:
    from rlstudy.agents.mpo import kernels as mpo_kernels
    from rlstudy.core import flat_networks

    flat_networks.warm_up()
    mpo_kernels.warm_up()
