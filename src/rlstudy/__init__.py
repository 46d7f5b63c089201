"""rlstudy: the mathematics and command-line steps of a reproducible RL results pipeline."""
