"""The CBO/BFF study's figures: Q against Q* with e_k/e_0, trajectories, the sweep, the cost."""

from rlstudy.bellman.estimators import ESTIMATORS
from rlstudy.plotting.style import palette

# The estimators in the order figures draw and list them (the registry's), each with its colour.
ESTIMATOR_COLOURS = palette(ESTIMATORS)
