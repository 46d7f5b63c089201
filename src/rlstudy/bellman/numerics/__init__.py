"""The CBO/BFF numerics: the two backends of the optimisers' hot paths, chosen by config `numerics`, and
the Bellman loss both report (loss.py); the policy and the reward they use are problem/laws.py's:

    reference   reference.py: plain PyTorch with autograd, one equation a function (docs/bellman.md,
                "The reference layer")
    compiled    compiled/backend.py: the same quantities by Numba kernels and a hand-written backward pass,
                the default and what the study's artefacts are built with

A backend is a module with `batch` (the transitions of a mini-batch and their second next states),
`sgd_direction` (SGD's mean(j grad j^)) and `particle_losses` (CBO's L_i). No torch import here: the
registry is read where no tensor is (the config's checks, the workflow).
"""

from __future__ import annotations

from types import ModuleType

NUMERICS = ("compiled", "reference")
DEFAULT = "compiled"


def get_numerics(name: str) -> ModuleType:
    """The backend module of that name."""
    if name not in NUMERICS:
        raise ValueError(f"numerics must be one of {list(NUMERICS)}, got {name!r}")
    # imported by name, not through importlib: core/sources.py reads import statements, so a step that
    # may run either backend depends on both files, and editing one reruns its jobs
    from .compiled import backend as compiled
    from . import reference

    return {"compiled": compiled, "reference": reference}[name]
