"""The error budget of a task: how far the study's network can get from the exact Q, part by part.

Each part is measured by an experiment of its own, never obtained by subtracting two others:

    reach        the network fitted to the exact Q by regression on a grid (full batch, L-BFGS): how close
                 the architecture gets to the truth at all, the grid's points weighted alike
    reach_weighted  the same regression with the points weighted as the residual fits weigh them (where
                 the data are): the reach in the metric those fits and the weighted error aim at
    population   the network minimising the Bellman residual *in expectation*: on a grid of states weighted
                 by the data's distribution, each action by the behaviour policy, with the exact transition
                 kernel (exact.StepOperator's Fourier multipliers); no sampling noise
    finite_data  the network minimising the sampled residual of the study's own trajectory to convergence
                 (full batch, L-BFGS): what the finite data add to the population minimiser
    optimiser    the study's final runs (results/summary.csv): what each optimiser leaves on top

One module a concern, each read top to bottom:

    grid.py           the grid of states, the network's float64 inputs on it, the policies and V
    interpolation.py  between grids and states: weights read on a grid, Q resampled, states placed
    lbfgs.py          the deterministic full-batch minimiser every part's fit runs (L-BFGS in chunks)
    reach.py          (a) the regression to the exact Q
    population.py     (b) the residual in expectation, each estimator's objective written out
    sampled.py        (c) the sampled residual of the trajectory (its compiled pass: ../budget_kernel.py)
    tables.py         what each part's step writes: the errors, the final loss, the fit's history

The loss of an objective is half its weighted mean, as CBO's (numerics/loss.py). The fits run in
float64 (the network's forward pass with float64 features and parameters) and save float32
networks, as every run's q.pt; the errors are measured on the saved float32 network, as summarise does.
The steps are bellman/cli/budget_{reach,population,finite}.py (docs/bellman.md, "The error budget").
"""
