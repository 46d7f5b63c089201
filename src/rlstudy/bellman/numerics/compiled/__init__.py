"""The compiled backend, every kernel in one folder: the network and its passes (qnet.py, trig.py's Numba
kernels), the residuals in the stacked-rows layout (residuals.py), the budget's sampled residual
(budget_kernel.py), and the adapter the optimisers call (backend.py, config `numerics: compiled`)."""
