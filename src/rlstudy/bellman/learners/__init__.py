"""The learners: the optimisers that fit the network (sgd.py, cbo.py; what an optimiser fills in:
optimizer.py; the registry: registry.py), their epoch scheme (batching.py), the error meter they
report through (metrics.py) and the CBO parameter sweep (sweep.py)."""
