"""The CBO/BFF study's figures: Q against Q* with e_k/e_0, trajectories, the sweep, the cost."""
