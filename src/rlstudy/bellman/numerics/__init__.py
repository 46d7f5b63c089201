"""The CBO/BFF numerics: the MDP's laws (laws.py), and the two backends of the optimisers' hot paths."""
