"""What every command-line step shares: parameters as JSON, seeding, threads, clean failures."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import sys
from typing import TYPE_CHECKING, Callable, TypeVar

from .config import section_problems
from .errors import InputError, PipelineError
from .provenance import name_step, step_module
from .process import imports_done

if TYPE_CHECKING:
    import torch  # imported by the functions that need it: most steps never touch a tensor (start-up time)

T = TypeVar("T")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """The description as written, and an option's default only where it has one (not on a required
    option, a flag, or an option that is absent unless given)."""

    def _fill_text(self, text, width, indent):
        return "".join(indent + line for line in text.splitlines(keepends=True))

    def _get_help_string(self, action):
        if action.required or action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


FROM_CONFIG_HELP = ("take the options marked 'config ...' that are not given from these config files, merged "
                    "in order as Snakemake merges them (paper scale: config.yaml; smoke scale: config.yaml "
                    "workflow/profiles/smoke/scale.yaml); an option given is taken whole from the command line")


@dataclasses.dataclass(frozen=True)
class ConfigOption:
    """An option whose value the workflow's rule takes from the config: `key` is a dotted config key,
    formatted with the other options' values ('{agent}.params'), or a function of (config, options)
    whose docstring names the key."""
    dest: str
    flag: str
    key: str | Callable[[dict, argparse.Namespace], object]

    def where(self, args: argparse.Namespace | None = None) -> str:
        """Where the value comes from, as help and messages say it."""
        if callable(self.key):
            return f"config: {(self.key.__doc__ or self.key.__name__).strip()}"
        return f"config '{self.name(args)}'"

    def name(self, args: argparse.Namespace | None = None) -> str:
        if callable(self.key):
            return (self.key.__doc__ or self.key.__name__).strip()
        if args is not None:
            try:
                return self.key.format(**vars(args))
            except (KeyError, IndexError):
                pass
        return re.sub(r"\{(\w+)\}", r"<\1>", self.key)  # '{agent}.params' -> '<agent>.params'


class StepParser(argparse.ArgumentParser):
    """A step's options. Its usage names the command that runs it (python -m rlstudy.<study>.cli.<step>);
    the options the workflow takes from the config (config_option) may come from --from-config instead,
    so that a step run by hand needs only what differs from the config."""

    def __init__(self, description: str):
        module = step_module()
        super().__init__(prog=f"python -m {module}" if module else None, description=description,
                         formatter_class=HelpFormatter)
        self.config_options: list[ConfigOption] = []

    def config_option(self, flag: str, key, *, help: str = "", **kwargs) -> None:
        """An option whose value is config `key` under --from-config when it is not given: each option
        comes whole from the command line or from the config, never from both."""
        if not self.config_options:
            self.add_argument("--from-config", nargs="+", metavar="FILE", help=FROM_CONFIG_HELP)
        action = self.add_argument(flag, **kwargs, default=None,
                                   help=f"{help}; " if help else "")
        option = ConfigOption(action.dest, flag, key)
        action.help += option.where()
        self.config_options.append(option)

    def parse_args(self, args=None, namespace=None):
        parsed = super().parse_args(args, namespace)
        if self.config_options:
            self._fill_from_config(parsed)
        return parsed

    def _fill_from_config(self, args: argparse.Namespace) -> None:
        config = self._read_config(args.from_config) if args.from_config else None
        missing = []
        for option in self.config_options:
            given = getattr(args, option.dest)
            if config is not None and given is None:
                setattr(args, option.dest, self._typed(option, self._config_value(config, option, args), args))
            elif given is None:
                missing.append(f"{option.flag} ({option.where(args)})")
        if missing:
            self.error(f"the following arguments are required: {', '.join(missing)}; give them, or "
                       "--from-config config.yaml to take the config's values")

    def _read_config(self, paths: list[str]) -> dict:
        from .config import ConfigError, config_from_files, schema_file

        try:
            return config_from_files(paths, schema_file())
        except ConfigError as err:
            self.error("--from-config: " + re.sub(r"\s*\n\s*", " ", str(err)))

    def _config_value(self, config: dict, option: ConfigOption, args: argparse.Namespace):
        if callable(option.key):
            try:
                return option.key(config, args)
            except KeyError as err:
                self.error(f"--from-config: no config value for {option.flag} ({option.where(args)}): {err} is not there")
        value = config
        for part in option.name(args).split("."):
            if not isinstance(value, dict) or part not in value:
                self.error(f"--from-config: the config has no key '{option.name(args)}' ({option.flag})")
            value = value[part]
        return value

    def _typed(self, option: ConfigOption, value, args: argparse.Namespace):
        """The value as the option reads it from the rule's command, where each value is text: checked
        by the option's type and choices as a value given on the command line would be."""
        action = next(a for a in self._actions if a.dest == option.dest)
        if action.nargs in ("+", "*"):  # a list option (--formats png pdf): each item as one value
            if not isinstance(value, list) or (action.nargs == "+" and not value):
                self.error(f"--from-config: {option.where(args)} for {option.flag} is {value!r}, not a list")
            return [self._typed_one(action, option, item, args) for item in value]
        return self._typed_one(action, option, value, args)

    def _typed_one(self, action: argparse.Action, option: ConfigOption, value, args: argparse.Namespace):
        convert = action.type or str
        try:
            text = json.dumps(value, sort_keys=True) if isinstance(value, dict) else str(value)
            typed = convert(text)
        except (argparse.ArgumentTypeError, TypeError, ValueError) as err:
            self.error(f"--from-config: {option.where(args)} for {option.flag}: {err}")
        if action.choices is not None and typed not in action.choices:
            self.error(f"--from-config: {option.where(args)} for {option.flag} is {typed!r}, not one of "
                       f"{sorted(action.choices)}")
        return typed


def parser(description: str) -> StepParser:
    return StepParser(description)


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


# How a step run by hand fills the keys its --params lacks.
FILL_FROM_CONFIG = "give them in --params, or leave --params out and add --from-config config.yaml to take the config's"


def build(cls: type[T], values: dict, where: str, fill: str = "") -> T:
    """A parameter dataclass from a dict, with errors that name the config section and the keys.

    Each value is checked by the schema's definition of the section (the dataclass's SCHEMA), as
    the workflow checks its config, so a step run by hand refuses what a config would: a negative
    epoch count, a NaN or 1e300 learning rate. `fill` says how to give the keys that are missing."""
    fields = {f.name for f in dataclasses.fields(cls)}
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    unknown, missing = sorted(set(values) - fields), sorted(required - set(values))
    if unknown or missing:
        how = f"; {fill}" if missing and fill else ""
        raise InputError(f"{where}: unknown keys {unknown}, missing keys {missing}; allowed: {sorted(fields)}{how}")
    problems = section_problems(values, cls.SCHEMA)
    if problems:
        raise InputError(f"{where}: " + "; ".join(problems))
    return cls(**values)


DEVICES = ("auto", "cpu", "cuda")


def add_device_argument(p: StepParser) -> None:
    """--device, from config `device` (its one default, in config.yaml) under --from-config."""
    p.config_option("--device", "device", choices=DEVICES,
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
    # The step's module, for its usage line and its records' command: under `python -m` (and the warm
    # start) the module runs as __main__, and its spec keeps the real name.
    spec = main.__globals__.get("__spec__")
    name_step(spec.name if spec is not None else main.__module__)
    try:
        main()
    except PipelineError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


def import_steps(study: str) -> list[str]:
    """Import every step module of a study (`<study>.cli.<step>`, its folder's files in name order), as
    each step's job would: what the warm-start server (runtime/warmstart/) preloads of every study.
    Returns their names."""
    import importlib
    from pathlib import Path

    folder = Path(importlib.import_module(f"{study}.cli").__file__).parent
    names = [f"{study}.cli.{path.stem}" for path in sorted(folder.glob("*.py")) if path.stem != "__init__"]
    for name in names:
        importlib.import_module(name)
    return names
