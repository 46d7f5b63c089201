"""What every command-line step shares: parameters as JSON, seeding, threads, clean failures."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
from typing import TYPE_CHECKING, Callable, TypeVar

from .config import section_problems
from .errors import InputError, PipelineError
from .process import imports_done

if TYPE_CHECKING:
    import torch  # imported by the functions that need it: most steps never touch a tensor (start-up time)

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


def is_finite_number(value) -> bool:
    """A JSON number (not a boolean), finite."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def run_seed_of(folder) -> int:
    """N of a run folder named seed<N>, or a one-line error naming the folder."""
    name = os.path.basename(os.path.normpath(str(folder)))
    digits = name.removeprefix("seed")
    if not (name.startswith("seed") and digits.isascii() and digits.isdigit()):
        raise InputError(f"{folder}: a run folder is named seed<N>, got {name!r}")
    return int(digits)


def integer_from(low: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least `low` (a count of steps, a seed: never negative)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value
    parse.__name__ = f"integer >= {low}"  # argparse names the type in its message
    return parse


def finite_float(text: str) -> float:
    """An argparse type: a finite number (float() also reads 'nan' and 'inf')."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return value


def probability(text: str) -> float:
    value = finite_float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a probability in [0, 1], got {text}")
    return value


def build(cls: type[T], values: dict, where: str) -> T:
    """A parameter dataclass from a dict, with errors that name the config section and the keys.

    Each value is checked by the schema's definition of the section (the dataclass's SCHEMA), as
    the workflow checks its config, so a step run by hand refuses what a config would: a negative
    epoch count, a NaN or 1e300 learning rate."""
    fields = {f.name for f in dataclasses.fields(cls)}
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    unknown, missing = sorted(set(values) - fields), sorted(required - set(values))
    if unknown or missing:
        raise InputError(f"{where}: unknown keys {unknown}, missing keys {missing}; allowed: {sorted(fields)}")
    problems = section_problems(values, cls.SCHEMA)
    if problems:
        raise InputError(f"{where}: " + "; ".join(problems))
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
    import torch

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
    do not match the CPU's bits (other kernels, other rounding). Freed memory stays in the process
    (core/memory.py): the training loops' arrays of a few MB then reuse their pages."""
    import torch

    from .memory import keep_freed_memory

    keep_freed_memory()

    if device != "cpu":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    resolved = resolve_device(device)
    if resolved.type == "cuda":
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        torch.set_float32_matmul_precision("highest")
        torch.use_deterministic_algorithms(True)
    else:
        # The same ATen flag without torch.use_deterministic_algorithms' other half, Inductor's config:
        # importing it pulls in TorchDynamo, about as long as importing torch itself, in every one of
        # the workflow's hundreds of short jobs, and nothing here is compiled by Inductor.
        torch._C._set_deterministic_algorithms(True)
    return resolved


def device_record(requested: str, device: torch.device) -> dict:
    """What the provenance says about the device: requested, used, and the GPU's name."""
    record = {"requested": requested, "used": device.type}
    if device.type == "cuda":
        import torch

        record.update(name=torch.cuda.get_device_name(device), cuda=torch.version.cuda)
    return record


def run(main: Callable[[], None]) -> None:
    """Run a step; a PipelineError prints its message alone and exits with status 2."""
    imports_done()
    try:
        main()
    except PipelineError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
