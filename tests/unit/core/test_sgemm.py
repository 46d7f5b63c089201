"""core/sgemm.py: the wide products run by the CPU's faster BLAS, with bits that do not depend on
where NumPy put the operands."""

import numpy as np
import pytest
import torch

from rlstudy.core import sgemm


@pytest.mark.parametrize("intel", [True, False])
def test_matmul_is_mkls_on_intel_and_numpys_elsewhere(monkeypatch, intel):
    monkeypatch.setattr(sgemm, "intel_cpu", lambda: intel)
    rng = np.random.default_rng(0)
    h, g = rng.standard_normal((1000, 50), np.float32), rng.standard_normal((1000, 50), np.float32)
    by_mkl, by_openblas = torch.mm(torch.from_numpy(g).T, torch.from_numpy(h)).numpy(), np.matmul(g.T, h)
    assert by_mkl.tobytes() != by_openblas.tobytes()  # the two libraries round this sum apart
    expected = by_mkl if intel else by_openblas
    assert sgemm.matmul(g.T, h).tobytes() == expected.tobytes()
    out = np.full((50, 50), np.nan, np.float32)
    assert sgemm.matmul(g.T, h, out=out) is out
    assert out.tobytes() == expected.tobytes()
    np.testing.assert_allclose(out, g.T.astype(np.float64) @ h, rtol=1e-4, atol=1e-4)


def at_offset(array: np.ndarray, floats: int) -> np.ndarray:
    """A copy of `array` starting `floats` float32s past a 64-byte boundary."""
    room = np.empty(array.size + 32, np.float32)
    start = (16 - room.ctypes.data // 4 % 16) % 16 + floats
    copy = room[start:start + array.size].reshape(array.shape)
    copy[:] = array
    return copy


@pytest.mark.parametrize("rows", [4000, 1234])
def test_the_q_networks_products_do_not_depend_on_the_operands_alignment(rows):
    """The 50x50 layer's three products (qnet: forward, dW2, dL/dh1) on operands at every 4-byte
    offset of a cache line: one result each, so where NumPy's allocator puts an array cannot move a
    run's bits (MKL's kernels may round by alignment at other shapes: the compiled updates align theirs)."""
    rng = np.random.default_rng(1)
    h, g, w = (rng.standard_normal(shape, np.float32) for shape in ((rows, 50), (rows, 50), (50, 50)))
    for product in (lambda a, b, w: sgemm.matmul(a, w.T), lambda a, b, w: sgemm.matmul(b.T, a),
                    lambda a, b, w: sgemm.matmul(b, w)):
        results = {product(at_offset(h, k), at_offset(g, (k * 5) % 16), at_offset(w, (k * 3) % 16)).tobytes()
                   for k in range(16)}
        assert len(results) == 1


def test_off_intel_the_kernels_products_run_in_numpys_own_openblas(monkeypatch):
    """SciPy's OpenBLAS, a build of its own, ran the Q network's products 5-30 % slower on the AMD EPYC."""
    monkeypatch.setattr(sgemm, "intel_cpu", lambda: False)
    address = sgemm.numpy_sgemm_address()
    assert address is not None  # the pinned NumPy wheel carries its OpenBLAS
    assert sgemm.sgemm_address() == address
