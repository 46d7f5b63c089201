import math

import pytest
import torch

from rlstudy.bellman.learners.cbo import CBOParams, cbo_update, consensus_weights, initial_swarm, reward_level, train_cbo
from rlstudy.bellman.numerics.compiled.qnet import SHAPE
from rlstudy.core.errors import DivergenceError
from bellman_fixtures import PROBLEM


def test_weights_match_hand_computed_softmax():
    losses = torch.tensor([1.0, 2.0, 4.0])
    w = consensus_weights(losses, beta=1.0)
    z = [math.exp(-1), math.exp(-2), math.exp(-4)]
    assert w.tolist() == pytest.approx([x / sum(z) for x in z], rel=1e-12)


def test_weights_are_stable_where_the_notebook_gives_0_over_0():
    """exp(-100 * 50) underflows to 0 for every particle in the notebook; shifted by min L it does not."""
    losses = torch.tensor([50.0, 50.01, 60.0, 1e6], dtype=torch.float64)
    assert float(torch.exp(-100 * losses).sum()) == 0.0  # the notebook's 0/0
    w = consensus_weights(losses, beta=100.0)
    assert torch.isfinite(w).all() and float(w.sum()) == pytest.approx(1.0)
    assert float(w[1] / w[0]) == pytest.approx(math.exp(-100 * 0.01), rel=1e-5)
    assert float(w[3]) == 0.0


def test_update_drift_and_noise_by_hand():
    particles = torch.tensor([[0.0, 2.0], [4.0, -2.0]])
    weights = torch.tensor([0.75, 0.25], dtype=torch.float64)
    normals = torch.tensor([[1.0, 0.0], [0.0, -1.0]])
    lam, eta, noise = 1.0, 0.1, 0.5
    moved, consensus = cbo_update(particles, weights, lam, eta, noise, normals)
    assert consensus.tolist() == pytest.approx([1.0, 1.0])
    # X - x^ = [[-1, 1], [3, -3]]; X - lam*eta*(X - x^) + noise*sqrt(eta)*(X - x^)*Z, component by component.
    c = noise * math.sqrt(eta)
    expected = [[0.0 + 0.1 + c * (-1) * 1, 2.0 - 0.1 + 0.0],
                [4.0 - 0.3 + 0.0, -2.0 + 0.3 + c * (-3) * (-1)]]
    assert moved.tolist()[0] == pytest.approx(expected[0])
    assert moved.tolist()[1] == pytest.approx(expected[1])


def test_a_noiseless_update_draws_no_normals_and_moves_as_zero_noise_does(small_trajectory, monkeypatch):
    """noise 0 (cbo-adaptive): the step draws no normals, which would be multiplied by zero, and the
    move is the drift alone."""
    particles = torch.randn(6, 4, generator=torch.Generator().manual_seed(1))
    weights = torch.full((6,), 1 / 6, dtype=torch.float64)
    drift, consensus = cbo_update(particles, weights, 1.0, 0.5, 0.0, None)
    assert torch.equal(drift, cbo_update(particles, weights, 1.0, 0.5, 0.0, torch.randn(6, 4))[0])
    torch.testing.assert_close(drift, particles - 0.5 * (particles - consensus))
    draws = []
    real_randn = torch.randn
    monkeypatch.setattr(torch, "randn", lambda *a, **k: draws.append(a[:2]) or real_randn(*a, **k))
    swarm = initial_swarm(params(noise=0.0, kick=0.0), torch.Generator().manual_seed(0), 1.0)
    train_cbo(swarm, small_trajectory(), "DS", "control", params(noise=0.0, kick=0.0), PROBLEM,
              torch.Generator().manual_seed(1))
    assert draws == []


def test_coinciding_particles_stay_put():
    particles = torch.full((5, 7), 0.3)
    weights = torch.full((5,), 0.2, dtype=torch.float64)
    noise = torch.randn(5, 7, generator=torch.Generator().manual_seed(0))
    moved, consensus = cbo_update(particles, weights, 1.0, 0.5, 10.0, noise)
    assert torch.equal(moved, particles)
    torch.testing.assert_close(consensus, particles[0])


def test_single_dominant_particle_is_the_consensus():
    particles = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    weights = consensus_weights(torch.tensor([5.0, 0.0, 5.0, 5.0]), beta=1e6)
    _, consensus = cbo_update(particles, weights, 1.0, 0.1, 1.0, torch.zeros(4, 3))
    torch.testing.assert_close(consensus, particles[1])


def params(**overrides):
    base = dict(particles=6, particle_batch=6, samples=200, epochs=3, lam=1.0, eta=0.01, noise=1.0, beta=10.0,
                ur_action="recorded", output_bias_init="default", kick=0.0, kick_decay=1.0, ess_target=0.0)
    return CBOParams(**{**base, **overrides})


def test_train_cbo_is_deterministic_and_reports_every_step(small_trajectory):
    traj = small_trajectory()
    runs = []
    for _ in range(2):
        g = torch.Generator().manual_seed(5)
        swarm = initial_swarm(params(), g, 1.0)
        runs.append(train_cbo(swarm, traj, "UR", "control", params(), PROBLEM, g))
    torch.testing.assert_close(runs[0][0], runs[1][0], rtol=0, atol=0)
    assert len(runs[0][1].loss) == 4 and runs[0][1].ess[1] >= 1.0


def test_particle_batches_cycle_with_a_remainder(small_trajectory):
    """With M < N the notebook cycles through random particle batches: floor(epochs*N/M) steps."""
    g = torch.Generator().manual_seed(0)
    p = params(particles=5, particle_batch=2, epochs=3)
    _, history = train_cbo(initial_swarm(p, g, 1.0), small_trajectory(), "DS", "control", p, PROBLEM, g)
    assert len(history.loss) - 1 == (3 * 5) // 2


def test_reward_level_init_shifts_the_output_bias_only():
    g1, g2 = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    assert reward_level(1.0, 0.9) == pytest.approx(10.0)  # mean(r)/(1 - gamma)
    default = initial_swarm(params(), g1, reward_level(1.0, 0.9))
    shifted = initial_swarm(params(output_bias_init="reward_level"), g2, reward_level(1.0, 0.9))
    diff = shifted - default
    assert torch.allclose(diff[:, -SHAPE.actions:], torch.full((6, 2), 10.0))
    assert torch.equal(diff[:, :-SHAPE.actions], torch.zeros(6, SHAPE.size - SHAPE.actions))


def test_divergence_fails_loudly(small_trajectory):
    g = torch.Generator().manual_seed(0)
    p = params(noise=1e30, eta=1.0, epochs=20)
    with pytest.raises(DivergenceError, match="diverged at step"):
        train_cbo(initial_swarm(p, g, 1.0), small_trajectory(), "DS", "control", p, PROBLEM, g)


def test_divergence_ends_a_sweep_run_at_the_last_finite_consensus(small_trajectory):
    g = torch.Generator().manual_seed(0)
    p = params(noise=1e30, eta=1.0, epochs=20)
    swarm = initial_swarm(p, g, 1.0)
    consensus, history = train_cbo(swarm, small_trajectory(), "DS", "control", p, PROBLEM, g,
                                   stop_on_divergence=True)
    assert history.diverged_at is not None and history.diverged_at == len(history.loss)
    assert torch.isfinite(consensus).all()
    assert len(history.error) == len(history.evaluations) == len(history.seconds) == history.diverged_at


def test_network_evaluations_count_every_particle_on_every_sample(small_trajectory):
    """UR evaluates each particle at s, s^' and s' for each of the m samples: 3 * m * N per step."""
    g = torch.Generator().manual_seed(0)
    p = params(particles=5, particle_batch=5, samples=40, epochs=3)
    _, history = train_cbo(initial_swarm(p, g, 1.0), small_trajectory(), "UR", "control", p, PROBLEM, g)
    assert history.evaluations == [0, 600, 1200, 1800]
    _, history = train_cbo(initial_swarm(p, g, 1.0), small_trajectory(), "DS", "control", p, PROBLEM, g)
    assert history.evaluations[1] == 2 * 40 * 5


def test_beta_for_ess_hits_the_target():
    losses = torch.linspace(0.0, 1.0, 30, dtype=torch.float64)
    from rlstudy.bellman.learners.cbo import beta_for_ess, effective_sample_size
    beta = beta_for_ess(losses, 9.0)
    assert effective_sample_size(consensus_weights(losses, beta)) == pytest.approx(9.0, rel=1e-6)
    assert beta_for_ess(losses, 9.0) == beta  # deterministic


def test_kick_moves_coinciding_particles_and_shrinks(small_trajectory):
    """lambda*eta = 1 restarts every particle at the consensus; the kick alone spreads them."""
    p = params(particles=4, particle_batch=4, epochs=3, lam=1.0, eta=1.0, noise=0.0, kick=0.1, kick_decay=0.5)
    g = torch.Generator().manual_seed(0)
    _, history = train_cbo(initial_swarm(p, g, 1.0), small_trajectory(), "UR", "control", p, PROBLEM, g)
    # spread after step k is the root mean squared kick: 0.1 * 0.5**k * sqrt(d), within sampling noise
    for k, spread in enumerate(history.spread[1:]):
        assert spread == pytest.approx(0.1 * 0.5 ** k * math.sqrt(SHAPE.size), rel=0.1)


def test_bff_matched_draws_only_transitions_that_repeat_the_action(small_trajectory, monkeypatch):
    import rlstudy.bellman.numerics.compiled.backend as compiled
    seen = []
    real = compiled.make_batch

    def spy(traj, starts, *args, **kwargs):
        seen.append(starts)
        return real(traj, starts, *args, **kwargs)

    monkeypatch.setattr(compiled, "make_batch", spy)
    traj = small_trajectory()
    p = params()
    g = torch.Generator().manual_seed(0)
    train_cbo(initial_swarm(p, g, 1.0), traj, "BFF-matched", "control", p, PROBLEM, g)
    starts = torch.cat(seen)
    assert torch.equal(traj.action_indices[starts + 1], traj.action_indices[starts])
    assert int(starts.max()) <= len(traj.states) - 3


@pytest.mark.parametrize("task", ["evaluation", "control"])
@pytest.mark.parametrize("estimator", ["DS", "UR", "BFF", "BFF-matched"])
def test_particle_losses_are_each_particles_own_loss(small_trajectory, task, estimator):
    """All particles' residuals at once (residual_pair on a stack of Q) give each particle the loss it
    has alone, mean(j * j^) / 2 of its own Q."""
    from rlstudy.bellman.numerics.compiled.backend import particle_losses
    from rlstudy.bellman.numerics.compiled.qnet import forward_no_grad, init_params
    from rlstudy.bellman.numerics.compiled.residuals import make_batch, residual_pair, start_pool
    from rlstudy.bellman.numerics.loss import bellman_loss

    traj = small_trajectory("evaluation" if task == "evaluation" else "uniform")
    starts = start_pool(estimator, traj.action_indices)[:400]
    batch = make_batch(traj, starts, estimator, task, PROBLEM.dynamics, torch.Generator().manual_seed(2))
    particles = init_params(4, torch.Generator().manual_seed(3))
    alone = []
    for theta in particles:
        q_next = None if batch.next_feats is None else forward_no_grad(theta, batch.next_feats)
        alone.append(bellman_loss(*residual_pair(forward_no_grad(theta, batch.feats), q_next, batch, PROBLEM.gamma)))
    torch.testing.assert_close(particle_losses(particles, batch, PROBLEM.gamma), torch.stack(alone),
                               rtol=1e-6, atol=0)
