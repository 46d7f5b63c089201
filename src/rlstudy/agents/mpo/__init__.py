"""MPO (Maximum a-posteriori Policy Optimisation) for continuous actions, readable top to bottom.

Acme-style MPO with decoupled KL constraints, reimplemented from the seed `mpo_agent.py.txt`:
- critic Q(s, a) and Gaussian policy pi(a|s) on layer-normed torsos (Linear -> LayerNorm -> tanh,
  then ELU layers); target copies of both, synced every `target_update_period` updates;
- policy evaluation: Q regresses on r + gamma * E_{a'~pi_target} Q_target(s', a') (expected SARSA
  over `action_samples` actions), or on Retrace targets over `retrace_steps`-long sequences;
- E-step: for N actions a_i ~ pi_target(.|s), the non-parametric policy q(a_i|s) = softmax_i(Q(s, a_i) / eta);
  the temperature eta minimises the dual  eta * (epsilon + mean_b log mean_i exp(Q_bi / eta));
- M-step: weighted maximum likelihood of the a_i under the online policy, split into a mean part
  (online mean, target std) and a std part (target mean, online std), each with its own KL penalty
  to the target policy; the multipliers alpha_mean, alpha_std are duals that grow while their KL
  exceeds `mstep_kl_epsilon` and shrink while it is below;
- every gradient is clipped to `max_grad_norm`; a batch with a non-finite value is skipped and counted.
Dual variables are stored unconstrained and mapped through softplus (as in the seed).

The agent is one folder, in the manner of Acme: `config` (its hyper-parameters), `environment`,
`networks` (the torch modules), `passes` (their forward and backward passes by hand in NumPy),
`losses` (the KL terms, the E-step, Retrace, the duals, with their gradients), `flat` (each
optimiser's parameters in one flat array, and Adam's and SGD's steps on it), `learner` (one update
per replay batch) and `loop` (acting, replay, logging). The replay buffer, the environment set-up and
the greedy evaluation are the other agents' (agents/replay.py, agents/episodes.py). This file
imports nothing, so that a step imports only the parts it runs (and reruns when they change).
"""
