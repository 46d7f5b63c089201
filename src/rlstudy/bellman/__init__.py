"""The CBO/BFF study: learning Q of a toy MDP on the circle by minimising the Bellman residual.

sde (the MDP and its trajectories) -> datasets, authors_data (on-disk trajectories) -> qnet (the
notebook's network) -> residuals (DS, UR, BFF) -> sgd, cbo (the optimisers) -> metrics (e_k/e_0);
sweep: CBO's parameter grids. figures/ draws them, cli/ holds the workflow's steps.
"""
