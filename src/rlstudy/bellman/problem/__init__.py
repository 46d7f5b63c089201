"""The problem, the ground floor of the study: the diffusion on the circle and its MDP (sde.py), the
policy and the reward (laws.py), the exact Q by the Bellman operator on a grid (exact.py), the
stationary density (stationary.py), and the greedy policies of a Q (greedy.py)."""
