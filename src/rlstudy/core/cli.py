"""What every command-line step shares: parameters as JSON, seeding, threads, clean failures."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from typing import Callable, TypeVar

import torch

from .errors import InputError, PipelineError

T = TypeVar("T")


def parser(description: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(description=description,
                                   formatter_class=argparse.ArgumentDefaultsHelpFormatter)


def json_arg(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON: {err}") from err
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def build(cls: type[T], values: dict, where: str) -> T:
    """A parameter dataclass from a dict, with errors that name the config section and the keys."""
    fields = {f.name for f in dataclasses.fields(cls)}
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    unknown, missing = sorted(set(values) - fields), sorted(required - set(values))
    if unknown or missing:
        raise InputError(f"{where}: unknown keys {unknown}, missing keys {missing}; allowed: {sorted(fields)}")
    return cls(**values)


DEVICES = ("auto", "cpu", "cuda")


def add_device_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", choices=DEVICES, default="cpu",
                   help="where the networks and data live: cpu, cuda, or auto (cuda when available); "
                        "random numbers are drawn on the CPU either way")


def add_tensorboard_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tensorboard", metavar="DIR",
                   help="also write the diagnostics as TensorBoard event files here, to watch the run live "
                        "(config 'tensorboard'; needs the optional extra: pip install -e '.[tensorboard]')")


def resolve_device(name: str) -> torch.device:
    """The torch device of a `device` config value; 'auto' is cuda when PyTorch sees a GPU."""
    if name not in DEVICES:
        raise InputError(f"device must be one of {list(DEVICES)}, got {name!r}")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise InputError(f"device 'cuda' requested, but this PyTorch ({torch.__version__}) sees no CUDA GPU; "
                         "use device=cpu or device=auto")
    return torch.device(name)


def setup_torch(device: str = "cpu") -> torch.device:
    """Deterministic kernels on the resolved device, which it returns; the CPU thread count comes
    from OMP_NUM_THREADS (Snakemake sets it).

    On CUDA, PyTorch's reproducibility notes: cuBLAS needs a fixed workspace
    (CUBLAS_WORKSPACE_CONFIG, read when cuBLAS starts, so set before any CUDA work), cuDNN must
    not benchmark, and use_deterministic_algorithms raises on any op without a deterministic kernel.
    Float32 matmuls stay full precision (no TF32). Runs on one GPU model repeat bit for bit; they
    do not match the CPU's bits (other kernels, other rounding)."""
    if device != "cpu":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    resolved = resolve_device(device)
    if resolved.type == "cuda":
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        torch.set_float32_matmul_precision("highest")
    torch.use_deterministic_algorithms(True)
    return resolved


def device_record(requested: str, device: torch.device) -> dict:
    """What the provenance says about the device: requested, used, and the GPU's name."""
    record = {"requested": requested, "used": device.type}
    if device.type == "cuda":
        record.update(name=torch.cuda.get_device_name(device), cuda=torch.version.cuda)
    return record


def run(main: Callable[[], None]) -> None:
    """Run a step; a PipelineError prints its message alone and exits with status 2."""
    try:
        main()
    except PipelineError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
