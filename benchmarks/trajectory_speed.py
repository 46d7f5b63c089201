"""Time the trajectory generator: the state-dependent policy needs a sequential loop.

    python benchmarks/trajectory_speed.py [steps]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from rlstudy.bellman.problem.sde import sample_trajectory

from bellman_problem import DYNAMICS


def main() -> None:
    steps = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10_000_000
    for policy in ("evaluation", "uniform"):
        start = time.perf_counter()
        sample_trajectory(policy, steps, DYNAMICS, np.random.default_rng(0))
        seconds = time.perf_counter() - start
        print(f"{policy:>10} policy: {steps:.0e} steps in {seconds:.2f} s ({seconds / steps * 1e9:.0f} ns/step)")


if __name__ == "__main__":
    main()
