"""The registry of residual estimators: one module per estimator (base.py says what it fills in), one
line here. The order is the one figures draw and list them in (and gives each its colour). The config
schema, the workflow's wildcards and the figures' colours all derive from this registry
(tests/unit/bellman/test_registries.py). The entries are imported, not named by module and class
as the agents' are: no torch is imported here, and a step's code is what it imports (docs/bellman.md,
"How the registries are written")."""

from .base import ArrayDraw, Draw, Estimator, GridResidual, TensorDraw
from .bff import BFF, BFF_MATCHED
from .ds import DS
from .ur import UR

ESTIMATORS: dict[str, Estimator] = {estimator.name: estimator for estimator in (
    UR,
    DS,
    BFF,
    BFF_MATCHED,
)}


def get_estimator(estimator: str | Estimator) -> Estimator:
    """The registered estimator of that name (an Estimator passes through: tests register toys)."""
    if isinstance(estimator, Estimator):
        return estimator
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {list(ESTIMATORS)}, got {estimator!r}")
    return ESTIMATORS[estimator]


__all__ = ["ESTIMATORS", "ArrayDraw", "Draw", "TensorDraw", "Estimator", "GridResidual", "get_estimator"]
