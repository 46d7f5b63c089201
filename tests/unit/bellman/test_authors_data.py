"""The authors' data: hash checks, the restricted unpickler, and the conversion."""

import hashlib
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from rlstudy.bellman.data import authors_data
from rlstudy.core.errors import InputError
from hostile import cli  # noqa: F401 (a fixture)

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / "cbo_rl_original"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"the shared copy {SHARED} is not here")


def test_a_corrupted_file_is_refused_by_name(tmp_path):
    bad = tmp_path / "S_1.pt"
    bad.write_bytes(b"not the authors' file")
    with pytest.raises(InputError, match=r"S_1\.pt: sha256 .* does not match the published"):
        authors_data.verify(bad)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = torch.nn.Linear(2, 50), torch.nn.Linear(50, 50), torch.nn.Linear(50, 2)


@pytest.fixture
def pickled_net(monkeypatch, tmp_path):
    """A whole Net pickled as the notebook did (class __main__.Net), in the legacy format."""
    monkeypatch.setattr(Net, "__module__", "__main__")
    monkeypatch.setattr(sys.modules["__main__"], "Net", Net, raising=False)
    net = Net()
    path = tmp_path / "Q_ctrl_star.pt"
    torch.save(net, path, _use_new_zipfile_serialization=False)
    return net, path


def test_restricted_loader_reads_a_pickled_net(pickled_net):
    net, path = pickled_net
    state = authors_data.reference_from_pickled_module(path, check_hash=False)
    for name, value in net.state_dict().items():
        assert torch.equal(state[name], value)


class Payload:
    def __reduce__(self):
        return (os.system, ("echo this must never run",))


@pytest.mark.parametrize("payload", [Payload(), {"x": __import__("collections").Counter("ab")}])
def test_restricted_loader_refuses_any_other_class(tmp_path, payload):
    path = tmp_path / "evil.pt"
    torch.save(payload, path, _use_new_zipfile_serialization=False)
    with pytest.raises(InputError, match=r"evil\.pt: refused to load (posix\.system|collections\.Counter)"):
        authors_data.reference_from_pickled_module(path, check_hash=False)


@needs_shared
@pytest.mark.parametrize("task", ["evaluation", "control"])
def test_original_files_convert_to_the_shared_copy(tmp_path, monkeypatch, task):
    """Write the authors' .pt layout from the shared copy, convert it back, compare exactly."""
    shared = authors_data.trajectory_from_npz(SHARED / authors_data.NPZ_OF_TASK[task])
    k = authors_data.SUFFIX_OF_TASK[task]
    hashes = dict(authors_data.SHA256)
    for part, values in (("S", shared.states), ("A_idx", shared.action_indices), ("R", shared.rewards)):
        path = tmp_path / f"{part}_{k}.pt"
        torch.save(torch.from_numpy(values.astype(np.float32)).view(-1, 1), path)
        hashes[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    monkeypatch.setattr(authors_data, "SHA256", hashes)
    converted = authors_data.trajectory_from_originals(tmp_path, task)
    np.testing.assert_array_equal(converted.states, shared.states)
    np.testing.assert_array_equal(converted.action_indices, shared.action_indices)
    np.testing.assert_array_equal(converted.rewards, shared.rewards)
    assert len(converted.states) == 1_000_000


@needs_shared
def test_shared_reference_is_a_q_network():
    from rlstudy.bellman.numerics.compiled.qnet import from_state_dict
    theta = from_state_dict(authors_data.reference_from_npz(SHARED / authors_data.NPZ_REFERENCE))
    assert theta.shape == (2802,)


@needs_shared
def test_import_cli_writes_the_pipeline_formats(tmp_path, cli):
    from rlstudy.bellman.data.trajectories import load_trajectory
    from rlstudy.core.loaders import load_tensors
    out = tmp_path / "control"
    status, stderr = cli("bellman.cli.import_authors_data", "--task", "control", "--source", SHARED,
                         "--trajectory-out", out, "--steps", "5000", "--reference-out", tmp_path / "q.pt")
    assert status == 0, stderr
    shared = authors_data.trajectory_from_npz(SHARED / authors_data.NPZ_OF_TASK["control"])
    np.testing.assert_array_equal(load_trajectory(out).states, shared.states[:5000])
    assert set(load_tensors(tmp_path / "q.pt", "Q*")) == {f"fc{i}.{p}" for i in (1, 2, 3) for p in ("weight", "bias")}
    assert (out / "states.npy.provenance.json").is_file()


def test_import_cli_refuses_an_evaluation_reference(tmp_path, cli):
    status, stderr = cli("bellman.cli.import_authors_data", "--task", "evaluation", "--source", tmp_path,
                         "--steps", "0", "--reference-out", tmp_path / "q.pt")
    assert status == 2
    assert "control task only" in stderr
    assert not (tmp_path / "q.pt").exists()
