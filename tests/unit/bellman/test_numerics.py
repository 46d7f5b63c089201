"""The two backends of the CBO/BFF numerics (bellman/numerics/): the compiled one, the study's, and the
plain-PyTorch reference agree within float32 rounding on every estimator and task; the policy and the
reward have one home; the config's `numerics` is the registry's."""

import math

import numpy as np
import pytest
import torch
import yaml

from rlstudy.bellman.budget.sampled import SampledResidual
from rlstudy.bellman.learners.cbo import CBOParams, initial_swarm, train_cbo
from rlstudy.bellman.estimators import ESTIMATORS, ArrayDraw, TensorDraw
from rlstudy.bellman.numerics import NUMERICS, get_numerics, reference
from rlstudy.bellman.numerics.compiled import backend as compiled
from rlstudy.bellman.problem import laws
from rlstudy.bellman.numerics.compiled.qnet import init_params, layer_offsets
from rlstudy.bellman.numerics.compiled.residuals import start_pool
from rlstudy.bellman.learners.sgd import SGDParams, train_sgd
from rlstudy.core.config import schema_file
from bellman_fixtures import problem

TASKS = ("evaluation", "control")
CASES = [(task, estimator, ur_action, reward_of) for task in TASKS for estimator in ESTIMATORS
         for ur_action in ("recorded", "policy") if ur_action == "recorded" or estimator == "UR"
         for reward_of in ("current", "next")]


def trajectory(small_trajectory, task):
    return small_trajectory("evaluation" if task == "evaluation" else "uniform")


def both_batches(traj, task, estimator, ur_action, dynamics, count=300, seed=3):
    """The same transitions drawn by each backend from generators in the same state; each generator's
    state after the draw, to show that the two consume the stream alike."""
    starts = start_pool(estimator, traj.action_indices)[:count]
    batches, states = {}, {}
    for name in NUMERICS:
        generator = torch.Generator().manual_seed(seed)
        batches[name] = get_numerics(name).batch(traj, starts, estimator, task, dynamics, generator, ur_action)
        states[name] = generator.get_state()
    return batches, states


@pytest.mark.parametrize("task, estimator, ur_action, reward_of", CASES)
def test_sgds_direction_agrees_between_the_backends(small_trajectory, theta, task, estimator, ur_action, reward_of):
    """mean(j * grad j^) by the hand-written backward and compiled passes against autograd over the
    plain network, with the same draws: j, j^, Q(s_m, a_m) and the direction within float32 rounding."""
    dynamics = problem(reward_of=reward_of).dynamics
    batches, states = both_batches(trajectory(small_trajectory, task), task, estimator, ur_action, dynamics)
    assert torch.equal(states["compiled"], states["reference"])
    fast = compiled.sgd_direction(theta, batches["compiled"], 0.9)
    plain = reference.sgd_direction(theta, batches["reference"], 0.9)
    for ours, expected in zip(fast[1:], plain[1:]):
        torch.testing.assert_close(ours, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(fast[0], plain[0], rtol=1e-4, atol=1e-5)
    assert float(fast[0].abs().max()) > 1e-3  # a direction that could disagree


@pytest.mark.parametrize("task, estimator, ur_action, reward_of", CASES)
def test_cbos_particle_losses_agree_between_the_backends(small_trajectory, task, estimator, ur_action, reward_of):
    dynamics = problem(reward_of=reward_of).dynamics
    batches, _ = both_batches(trajectory(small_trajectory, task), task, estimator, ur_action, dynamics)
    particles = init_params(5, torch.Generator().manual_seed(4))
    with torch.no_grad():
        fast = compiled.particle_losses(particles, batches["compiled"], 0.9)
    plain = reference.particle_losses(particles, batches["reference"], 0.9)
    torch.testing.assert_close(fast, plain, rtol=1e-5, atol=1e-6)
    assert len(set(plain.tolist())) == 5  # each particle its own loss


@pytest.mark.parametrize("rows_per_part", [2048, 37])
def test_a_swarm_with_a_particle_beyond_the_compiled_cosines_range_takes_the_librarys_cosine(
        small_trajectory, monkeypatch, rows_per_part):
    """The compiled call checks every particle's bound first: one particle whose weights could reach
    the cosine beyond trig.LIMIT sends the whole swarm to PyTorch's cosine, exact there; a swarm in
    range gives the reference's losses whatever the rows per part."""
    monkeypatch.setattr(compiled, "ROWS_PER_PART", rows_per_part)
    batches, _ = both_batches(trajectory(small_trajectory, "control"), "control", "UR", "recorded", problem().dynamics)
    particles = init_params(4, torch.Generator().manual_seed(4))
    far = particles.clone()
    far[2] *= 3e4
    for swarm in (particles, far):
        fast = compiled.particle_losses(swarm, batches["compiled"], 0.9)
        torch.testing.assert_close(fast, reference.particle_losses(swarm, batches["reference"], 0.9), rtol=1e-5, atol=1e-6)
    from rlstudy.bellman.numerics.compiled import residual_kernels

    losses = np.full(4, np.nan)
    batch = batches["compiled"]
    assert not residual_kernels.kernels().particle_losses(
        far.numpy(), np.array(layer_offsets(), np.int64), np.ascontiguousarray(torch.cat([batch.feats, batch.next_feats]).numpy()), len(batch.feats),
        batch.action_indices.numpy(), batch.rewards.numpy(), batch.alt_rewards.numpy(), np.empty((0, 0), np.float32),
        np.empty((0, 0), np.float32), np.float32(0.9), 2048, losses)
    assert np.isnan(losses).all()


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("estimator", list(ESTIMATORS))
def test_short_sgd_and_cbo_runs_agree_between_the_backends(small_trajectory, task, estimator):
    """A few steps of each optimiser, each backend from the same start and stream: the same draws
    throughout (the generators end alike) and the final networks within float32 rounding. The step is
    small enough that the loss falls: a growing one amplifies any rounding, as a chaotic map does."""
    traj = trajectory(small_trajectory, task)
    sgd_params = SGDParams(epochs=1, batch_size=400, lr0=0.01, lr_decay=0.9, ur_action="recorded")
    cbo_params = CBOParams(particles=4, particle_batch=2, samples=200, epochs=1, lam=1.0, eta=0.1, noise=0.5,
                           beta=10.0, ur_action="recorded", output_bias_init="default", kick=0.0, kick_decay=1.0,
                           ess_target=0.0)
    finals, streams = {}, {}
    for name in NUMERICS:
        generator = torch.Generator().manual_seed(6)
        theta0 = init_params(1, torch.Generator().manual_seed(1))[0]
        sgd_theta, _ = train_sgd(theta0, traj, estimator, task, sgd_params, problem(), generator, numerics=name)
        swarm = initial_swarm(cbo_params, torch.Generator().manual_seed(2), 0.0)
        consensus, _ = train_cbo(swarm, traj, estimator, task, cbo_params, problem(), generator, numerics=name)
        finals[name], streams[name] = (sgd_theta, consensus), generator.get_state()
    assert torch.equal(streams["compiled"], streams["reference"])
    for ours, expected in zip(finals["compiled"], finals["reference"]):
        torch.testing.assert_close(ours, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("task, estimator, ur_action, reward_of", CASES)
def test_the_budgets_sampled_residual_agrees_between_the_backends(task, estimator, ur_action, reward_of):
    """The finite-data loss and its gradient: budget_kernel.py's pass against autograd through the
    reference residuals, on the same interpolation."""
    dyn = problem(reward_of=reward_of).dynamics
    rng = np.random.default_rng(8)
    states = np.cumsum(np.r_[0.0, rng.choice([-1.0, 1.0], 1999) * dyn.dt + 0.09 * rng.normal(size=1999)])
    actions = (rng.random(2000) < 0.5).astype(np.int8)
    rewards = laws.reward(states)
    theta = init_params(1, torch.Generator().manual_seed(0))[0].double()
    losses, grads = {}, {}
    for name in NUMERICS:
        sampled = SampledResidual(states, actions, rewards, task, estimator, problem(reward_of=reward_of),
                                         np.random.default_rng(7), 256, ur_action, numerics=name)
        point = theta.clone().requires_grad_(True)
        loss = sampled.loss(point)
        loss.backward()
        losses[name], grads[name] = float(loss.detach()), point.grad
    assert losses["compiled"] == pytest.approx(losses["reference"], rel=1e-10, abs=1e-14)
    torch.testing.assert_close(grads["compiled"], grads["reference"], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("estimator", list(ESTIMATORS))
@pytest.mark.parametrize("ur_action", ["recorded", "policy"])
def test_an_estimators_one_draw_gives_the_same_states_on_arrays_and_tensors(small_trajectory, estimator, ur_action):
    """The budget (arrays, a NumPy stream) and the optimisers (tensors, a torch stream) call the same
    second_state: fed the same random numbers, it gives the same states, bit for bit."""
    traj = small_trajectory("evaluation")
    starts = start_pool(estimator, traj.action_indices)[:200]
    s, actions = traj.states[starts], traj.action_indices[starts]
    dynamics = problem().dynamics
    spec = ESTIMATORS[estimator]
    tensor = spec.second_state(TensorDraw(traj.states, starts, s, actions, "evaluation", dynamics, ur_action,
                                          torch.Generator().manual_seed(5)))
    generator = torch.Generator().manual_seed(5)  # UR's stream: uniforms for a fresh action, then normals
    uniforms = None
    if ur_action == "policy":
        uniforms = torch.rand(len(starts), generator=generator, dtype=torch.float64).numpy()
    normals = torch.randn(len(starts), generator=generator, dtype=torch.float64).numpy()

    class Replay:  # a NumPy generator that hands out the torch stream's numbers, in its order
        def __init__(self):
            self.pending = [uniforms, normals] if ur_action == "policy" else [normals]

        def random(self, n):
            return self.pending.pop(0)

        standard_normal = random

    array = spec.second_state(ArrayDraw(traj.states.numpy(), starts.numpy(), s.numpy(), actions.numpy(),
                                        "evaluation", dynamics, ur_action, Replay()))
    if tensor is None:
        assert array is None
    else:
        assert np.array_equal(tensor.numpy(), array)


def test_the_policy_and_the_reward_keep_each_librarys_bits():
    """One formula, evaluated in the library of its argument: NumPy's for arrays and floats, torch's
    for tensors (so no caller's bits move), and from a sine where the caller has one."""
    s = np.linspace(-20.0, 20.0, 1001)
    assert np.array_equal(laws.prob_plus("evaluation", s), 0.5 + np.sin(s) / 5.0)
    assert np.array_equal(laws.reward(s), np.sin(s) + 1.0)
    t = torch.from_numpy(s)
    assert torch.equal(laws.prob_plus("evaluation", t), 0.5 + torch.sin(t) / 5.0)
    assert torch.equal(laws.reward(t), torch.sin(t) + 1.0)
    assert laws.evaluation_plus(math.sin(1.0)) == 0.5 + math.sin(1.0) / 5.0
    assert np.array_equal(laws.prob_plus("uniform", s), np.full_like(s, 0.5))
    with pytest.raises(ValueError, match="'evaluation', 'uniform'"):
        laws.prob_plus("greedy", s)


def test_the_configs_numerics_is_the_registrys_and_an_unknown_backend_is_refused():
    schema = yaml.safe_load(schema_file().read_text())
    assert schema["properties"]["numerics"]["enum"] == list(NUMERICS)
    with pytest.raises(ValueError, match="numerics must be one of"):
        get_numerics("fast")
    with pytest.raises(ValueError, match="numerics must be one of"):
        SampledResidual(np.zeros(10), np.zeros(10, np.int8), np.ones(10), "control", "DS", problem(),
                               np.random.default_rng(0), 16, numerics="fast")


def test_the_budget_draws_a_new_estimators_own_second_state(monkeypatch):
    """A registered estimator that is neither DS nor UR gets its own draw in the finite-data fit, not
    BFF's (the budget once chose the draw by name, and gave every other estimator BFF's)."""
    from rlstudy.bellman.estimators import Estimator

    mirror = Estimator("MIRROR", "s_{m+1} mirrored through s_m",
                       second_state=lambda draw: 2.0 * draw.s - draw.following(1), lookahead=1, rows_per_sample=3)
    monkeypatch.setitem(ESTIMATORS, "MIRROR", mirror)
    states = np.cumsum(np.random.default_rng(1).normal(size=50))
    sampled = SampledResidual(states, np.zeros(50, np.int8), laws.reward(states), "control", "MIRROR",
                                     problem(), np.random.default_rng(0), 16)
    assert np.array_equal(sampled.sample.s_alt.numpy(), 2.0 * states[:49] - states[1:])


@pytest.mark.parametrize("step", ["rlstudy.bellman.cli.run_method", "rlstudy.bellman.cli.budget_finite"])
def test_a_step_that_takes_numerics_depends_on_both_backends(step):
    """The workflow reruns a job when a file it imports changes (core/sources.py reads the imports): the
    backend chosen at run time must be among them, whichever it is."""
    from pathlib import Path

    from rlstudy.core.sources import module_sources

    src = Path(laws.__file__).resolve().parents[3]
    sources = {str(path.relative_to(src)) for path in module_sources(step, src)}
    backends = {"compiled": "numerics/compiled/backend.py", "reference": "numerics/reference.py"}
    assert {f"rlstudy/bellman/{backends[name]}" for name in NUMERICS} | {"rlstudy/bellman/problem/laws.py"} <= sources


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_sgds_compiled_mini_batch_in_parts_agrees_with_the_reference(small_trajectory, theta, monkeypatch, task,
                                                                     estimator):
    """The compiled mini-batch goes through the network in parts (here of 7 transitions: 43 parts, the
    last of 6): every part's rows, residuals and gradient in their places."""
    monkeypatch.setattr(compiled, "TRANSITIONS_PER_PASS", 7)
    dynamics = problem().dynamics
    batches, _ = both_batches(trajectory(small_trajectory, task), task, estimator, "recorded", dynamics)
    fast = compiled.sgd_direction(theta, batches["compiled"], 0.9)
    plain = reference.sgd_direction(theta, batches["reference"], 0.9)
    for ours, expected in zip(fast[1:], plain[1:]):
        torch.testing.assert_close(ours, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(fast[0], plain[0], rtol=1e-4, atol=1e-5)


def test_the_residual_kernels_cache_keys_hold_the_files_they_call_into():
    """Numba's cache notices edits of a kernel's own file only; SGD's mini-batch and CBO's particles
    call trig.py's and core/compiled_updates.py's kernels, so their digest rides in each one's
    closure, part of the cache's key."""
    from rlstudy.bellman.numerics.compiled import residual_kernels, trig
    from rlstudy.core import compiled_updates

    digest = residual_kernels.sources_digest(trig, compiled_updates)
    kernels = residual_kernels.kernels()
    for kernel in (kernels.sgd_direction, kernels.particle_losses):
        assert [cell.cell_contents for cell in kernel.py_func.__closure__] == [digest]
    # the batch's gather calls no kernel: it needs no digest (a call into another file would show in its names)
    assert kernels.gather_transitions.py_func.__closure__ is None
    assert not [name for name in kernels.gather_transitions.py_func.__code__.co_names if name.startswith("_")]


@pytest.mark.parametrize("estimator", ["DS", "UR"])
def test_warm_up_compiles_the_signatures_the_backend_calls(small_trajectory, theta, estimator):
    """The warm-start server loads each kernel for the arguments a job passes (residual_kernels.warm_up):
    a job's first mini-batch and particles then compile nothing."""
    from rlstudy.bellman.numerics.compiled import residual_kernels

    residual_kernels.warm_up()
    kernels = vars(residual_kernels.kernels())
    warmed = {name: list(kernel.signatures) for name, kernel in kernels.items()}
    batch = both_batches(trajectory(small_trajectory, "control"), "control", estimator, "recorded",
                         problem().dynamics)[0]["compiled"]
    compiled.sgd_direction(theta, batch, 0.9)
    compiled.particle_losses(torch.stack([theta, theta]), batch, 0.9)
    assert {name: list(kernel.signatures) for name, kernel in kernels.items()} == warmed


def test_an_empty_mini_batch_gives_a_zero_direction(small_trajectory, theta):
    """The compiled call's parts are at least one transition (a part of min(part, 0) gave range() a step of 0)."""
    traj = trajectory(small_trajectory, "control")
    batch = compiled.batch(traj, torch.empty(0, dtype=torch.long), "UR", "control", problem().dynamics,
                           torch.Generator().manual_seed(1))
    direction, j, j_hat, q_taken = compiled.sgd_direction(theta, batch, 0.9)
    assert not direction.any() and len(j) == len(j_hat) == len(q_taken) == 0
