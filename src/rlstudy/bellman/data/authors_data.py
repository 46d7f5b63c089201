"""The original authors' data (franinsu/CBO_RL at a fixed commit) as a dataset source.

Three ways in, one format out (trajectories.py): download the original PyTorch files; read files
already downloaded; or read the NumPy conversion shipped beside this project
(`../shared/data/cbo_rl_original`). Every file's sha256 is checked against the pinned one first,
and what it holds is checked as any trajectory or network is (finite, shapes, lengths). The
control reference network is a pickled whole module (`__main__.Net`): every pickle torch reads
from it, the legacy format's header included, goes through an unpickler that may construct only
the few classes such a file needs and refuses anything else, so a tampered file cannot run code
even when the checksum is skipped. Every file is read as authors_files reads the folder: a regular
file of bounded size, never a FIFO, a device or a link out of the folder.
"""

from __future__ import annotations

import io
import os
import pickle
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from rlstudy.core.errors import InputError, first_line
from rlstudy.core.atomic_writes import ensure_writable
from rlstudy.core.loaders import require_finite
from rlstudy.core.provenance import sha256_file

from . import authors_files
from .trajectories import FILES, checked_trajectory
from ..numerics.compiled.qnet import LAYER_NAMES, from_state_dict
from ..problem.sde import Trajectory

REPOSITORY = "franinsu/CBO_RL"
COMMIT = "772ee5735126063ae5e413c7eef3c4858d3adcbe"
URL = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/cache/{{name}}"
SHA256 = {
    "S_1.pt": "e766b38c89f74d2efaf787d2b113b38b1ca4afb0ec9cfeebd920344a84ea303b",
    "A_idx_1.pt": "628eb58d81d5db62537e37957ac543707124255d3eb6594894c3ea7241622397",
    "R_1.pt": "786c069dd95a114799170424395dbc87dd51e24a8f176069529bb454e397dc5a",
    "S_2.pt": "ead9da75e427670cb870d0e9de6cb05244e660f440f4bbfc0a8b61e9bafd893f",
    "A_idx_2.pt": "292dc647f9a285c03c927af184a3bef118922d12d720fd4ce16dae6822e6db3a",
    "R_2.pt": "2581bdfba3b09018e7857d423d94a9c50bc4d601368468d993f07f9f94e9ea9e",
    "Q_ctrl_star.pt": "c656e6aa4df0aab8a62969be556ef6376b18f2a639917cd74771d68dbe77d99a",
    # The NumPy conversion (../shared/data/cbo_rl_original/README.md), pinned as the originals are.
    "evaluation_trajectory_1e6.npz": "23d9524481ebfe0c532a407857907aab598cb47376f7e350545545b79493d003",
    "control_trajectory_1e6.npz": "be5297a6bf23a8b443d5f9dd82a3755281f3621d0d1575441509583bc45b0474",
    "control_reference_q.npz": "8c509e5bd51e639e3e30c098a9320e90bf91b678b7effd6ed2ef19ad86351c82",
}
SUFFIX_OF_TASK = {"evaluation": "1", "control": "2"}  # the notebook's file numbering
NPZ_OF_TASK = {"evaluation": "evaluation_trajectory_1e6.npz", "control": "control_trajectory_1e6.npz"}
NPZ_REFERENCE = "control_reference_q.npz"


def verify(path: Path, name: str | None = None) -> None:
    """Refuse a file whose sha256 is not the published one, naming it."""
    name = name or path.name
    digest = authors_files.sha256(path)
    if digest != SHA256[name]:
        raise InputError(f"{path}: sha256 {digest} does not match the published {SHA256[name]} of {name}; "
                         "the file is corrupt or not the authors' (delete it and download again)")


def download(name: str, folder: Path) -> Path:
    """Fetch one original file into folder, verified before it gets its final name."""
    ensure_writable(folder)
    target, partial = folder / name, folder / f".{name}.part"
    try:
        with urllib.request.urlopen(URL.format(name=name), timeout=60) as response:
            partial.write_bytes(response.read())
    except OSError as err:
        raise InputError(f"cannot download {URL.format(name=name)}: {err}; download it by hand into {folder} "
                         "or point config 'authors_data' at a copy") from err
    try:
        verify(partial, name)
    except InputError:
        partial.unlink()
        raise
    partial.replace(target)
    return target


def _column(path: Path) -> np.ndarray:
    data = io.BytesIO(authors_files.read_bytes(path))
    try:
        tensor = torch.load(data, weights_only=True)
        return tensor.reshape(-1).numpy()
    except Exception as err:  # torch raises many types for a damaged or foreign file
        raise InputError(f"{path}: not a tensor file of the authors' data ({first_line(err)})") from err


def _checked_file(path: Path, what: str) -> None:
    if not os.path.lexists(path):
        raise InputError(f"missing input file {authors_files.shown(path)} ({what})")
    verify(path)


def trajectory_from_originals(folder: Path, task: str) -> Trajectory:
    """A trajectory from the authors' S_k.pt, A_idx_k.pt, R_k.pt (each checked first)."""
    k = SUFFIX_OF_TASK[task]
    paths = dict(zip(FILES, (folder / f"{part}_{k}.pt" for part in ("S", "A_idx", "R"))))
    for path in paths.values():
        _checked_file(path, f"the authors' {task} data")
    return checked_trajectory({name: _column(path) for name, path in paths.items()}, paths)


def _npz_arrays(path: Path, names) -> dict[str, np.ndarray]:
    """The named arrays of an .npz file (no pickles), each required."""
    data = io.BytesIO(authors_files.read_bytes(path))
    try:
        with np.load(data, allow_pickle=False) as arrays:
            found = {name: arrays[name] for name in names if name in arrays.files}
    except Exception as err:  # numpy and zipfile raise several types for a damaged file
        raise InputError(f"corrupt input file {path} ({first_line(err)})") from err
    missing = sorted(set(names) - set(found))
    if missing:
        raise InputError(f"{path}: no array {missing}")
    return found


def trajectory_from_npz(path: Path) -> Trajectory:
    """A trajectory from the NumPy conversion (arrays states, action_indices, rewards)."""
    _checked_file(path, "the authors' data, NumPy conversion")
    return checked_trajectory(_npz_arrays(path, FILES), dict.fromkeys(FILES, path))


def _checked_reference(state: dict[str, torch.Tensor], path: Path) -> dict[str, torch.Tensor]:
    """The state dict of a Q network of the notebook's layout, with finite weights."""
    try:
        from_state_dict(state)
    except (KeyError, ValueError) as err:
        raise InputError(f"{path}: not the notebook's Q network ({err!r})") from err
    require_finite(state, path)
    return state


def reference_from_npz(path: Path) -> dict[str, torch.Tensor]:
    _checked_file(path, "the authors' control Q*, NumPy conversion")
    names = [f"{layer}.{part}" for layer in LAYER_NAMES for part in ("weight", "bias")]
    arrays = _npz_arrays(path, names)
    return _checked_reference({key: torch.from_numpy(value.astype(np.float32)) for key, value in arrays.items()},
                              path)


class _NetStandIn(torch.nn.Module):
    """Receives the attributes of the pickled `__main__.Net`; only its parameters are used."""


_ALLOWED = {
    ("__main__", "Net"): _NetStandIn,
    ("torch.nn.modules.linear", "Linear"): torch.nn.Linear,
    ("collections", "OrderedDict"): __import__("collections").OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): torch._utils._rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): torch._utils._rebuild_parameter,
    ("torch", "FloatStorage"): torch.FloatStorage,
    ("__builtin__", "set"): set,  # a module's set of non-persistent buffer names (pickle protocol 2)
    ("builtins", "set"): set,
}


class RestrictedUnpickler(pickle.Unpickler):
    """Constructs only what a pickled `Net` of Linear layers needs; anything else is refused."""

    def find_class(self, module: str, name: str):
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(
                f"refused to load {module}.{name}: a Q network file may only contain "
                f"{sorted(f'{m}.{n}' for m, n in _ALLOWED)}") from None


def _restricted_load(file, **kwargs):
    """pickle.load through the RestrictedUnpickler: torch reads a legacy file's header (magic
    number, protocol, system info) with the module's `load`, its body with its `Unpickler`."""
    return RestrictedUnpickler(file, **kwargs).load()


RESTRICTED_PICKLE = SimpleNamespace(Unpickler=RestrictedUnpickler, load=_restricted_load,
                                    __name__="restricted_pickle")


def reference_from_pickled_module(path: Path, check_hash: bool = True) -> dict[str, torch.Tensor]:
    """The state dict (fc1.weight ... fc3.bias) of a pickled whole `Net` module."""
    if check_hash:
        _checked_file(path, "the authors' control Q*")
    data = io.BytesIO(authors_files.read_bytes(path))
    try:
        module = torch.load(data, weights_only=False, pickle_module=RESTRICTED_PICKLE)
    except pickle.UnpicklingError as err:
        raise InputError(f"{path}: {first_line(err)}") from err
    except Exception as err:  # torch raises many types for a damaged file
        raise InputError(f"{path}: not a pickled Q network ({first_line(err)})") from err
    state = {}
    for layer in LAYER_NAMES:
        linear = getattr(module, layer, None)
        if not isinstance(linear, torch.nn.Linear):
            raise InputError(f"{path}: expected a Linear layer '{layer}' in the pickled network")
        state[f"{layer}.weight"] = linear.weight.detach().clone()
        state[f"{layer}.bias"] = linear.bias.detach().clone()
    return _checked_reference(state, path)
