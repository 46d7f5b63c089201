"""The compiled updates' building blocks (core/compiled_updates.py, core/flat_networks.py): the BLAS
product in every orientation, the flat layout the modules' parameters view, Adam and the Polyak
pass against PyTorch's. The learners' gradients against autograd: tests/unit/agents/test_agents_deep.py
and tests/unit/offline/test_offline_learners.py."""

import numpy as np
import pytest
import torch
from numba import njit

from rlstudy.core import compiled_updates
from rlstudy.core.flat_networks import FlatAdam, FlatMLP, flat_mlp, polyak

pytestmark = pytest.mark.usefixtures("one_thread")


@njit
def _product(a, transpose_a, b, transpose_b, out):
    compiled_updates._gemm(a, transpose_a, b, transpose_b, out)


def aligned(array: np.ndarray) -> np.ndarray:
    copy = compiled_updates._aligned(array.size).reshape(array.shape)
    copy[:] = array
    return copy


@pytest.mark.parametrize("m, k, n", [(64, 256, 48), (3, 40, 5), (32, 4, 16)], ids=["BLAS sgemm", "narrow", "4 wide"])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_the_product_is_numpys_in_every_orientation(m, k, n, transpose_a, transpose_b):
    """Wide aligned products go to the sgemm bound by symbol (read column-major: the orientation
    flags and leading dimensions are where a slip would show), the rest to np.dot."""
    compiled_updates.kernels()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
    stored_a, stored_b = aligned(a.T.copy() if transpose_a else a), aligned(b.T.copy() if transpose_b else b)
    out = compiled_updates._aligned(m * n).reshape(m, n)
    _product(stored_a, transpose_a, stored_b, transpose_b, out)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)
    misaligned = np.empty(m * n + 1, np.float32)[1:].reshape(m, n)  # 4 bytes off: np.dot, same numbers
    _product(stored_a, transpose_a, stored_b, transpose_b, misaligned)
    np.testing.assert_allclose(misaligned, out, rtol=1e-5, atol=1e-5)


def test_flat_buffers_are_what_the_parameters_view_and_heads_stack_into_one_layer():
    torso, q, imitation = torch.nn.Linear(3, 5), torch.nn.Linear(5, 2), torch.nn.Linear(5, 2)
    before = [p.detach().clone() for p in (torso.weight, torso.bias, q.weight, q.bias, imitation.weight, imitation.bias)]
    flat = FlatMLP([[torso], [q, imitation]])
    assert flat.sizes.tolist() == [3, 5, 4]
    after = (torso.weight, torso.bias, q.weight, q.bias, imitation.weight, imitation.bias)
    assert all(torch.equal(a, b) for a, b in zip(before, after))  # flattening keeps the values
    compiled_updates.kernels()
    for layer, (weight, bias) in enumerate([(torso.weight, torso.bias),
                                            (torch.cat([q.weight, imitation.weight]), torch.cat([q.bias, imitation.bias]))]):
        flat_weight, flat_bias = compiled_updates._layer(flat.values, flat.sizes, layer)
        assert np.array_equal(flat_weight, weight.detach().numpy()) and np.array_equal(flat_bias, bias.detach().numpy())
        assert flat_weight.ctypes.data % 64 == 0 and flat_bias.ctypes.data % 64 == 0
    flat.values[:] = 1.0  # the parameters and their gradients are views of the buffers
    flat.grads[:] = 2.0
    assert all(bool((p == 1.0).all()) and bool((p.grad == 2.0).all()) for p in after)


def test_adam_takes_torchs_steps_and_the_target_moves_by_the_polyak_rate():
    generator = torch.Generator().manual_seed(0)
    network = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    reference = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    reference.load_state_dict(network.state_dict())
    flat = flat_mlp(network)
    optimiser = FlatAdam(flat, 1e-2, eps=1e-4)
    expected = torch.optim.Adam(reference.parameters(), lr=1e-2, eps=1e-4)
    for step in range(30):
        for p, r in zip(network.parameters(), reference.parameters()):
            grad = torch.randn(p.shape, generator=generator) * (0.0 if step > 10 else 1.0)  # then moments decay
            p.grad.copy_(grad)
            r.grad = grad.clone()
        optimiser.step()
        expected.step()
    for p, r in zip(network.parameters(), reference.parameters()):
        torch.testing.assert_close(p, r, rtol=1e-5, atol=1e-6)
    restored = FlatAdam(flat, 1e-2, eps=1e-4)
    restored.load_state_dict(optimiser.state_dict())
    assert restored.steps == 30 and np.array_equal(restored.exp_avg_sq, optimiser.exp_avg_sq)

    target = flat_mlp(reference)
    before = target.values.copy()
    polyak(target, flat, 0.25)
    np.testing.assert_allclose(target.values, 0.75 * before + 0.25 * flat.values, rtol=1e-6, atol=1e-7)


def test_adam_sets_subnormal_moments_to_zero():
    """A parameter whose gradients stop: its first moment decays by beta1 a step, and would reach
    the subnormal range (slow arithmetic) after some 800 steps; it is 0 there instead."""
    network = torch.nn.Sequential(torch.nn.Linear(1, 1))
    flat = flat_mlp(network)
    optimiser = FlatAdam(flat, 1e-3)
    flat.grads[:] = 1.0
    optimiser.step()
    flat.grads[:] = 0.0
    for _ in range(900):
        optimiser.step()
    moments = np.concatenate([optimiser.exp_avg, optimiser.exp_avg_sq])
    assert not ((moments != 0) & (np.abs(moments) < np.finfo(np.float32).tiny)).any()
    assert (optimiser.exp_avg[:2] == 0).all() and (optimiser.exp_avg_sq[:2] > 0).all()
