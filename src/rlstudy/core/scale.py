"""The scale of a run and of a checkout.

Which scale a merged config runs at (scale_of): the one it declares (config key `scale`: "paper" in
config.yaml, "smoke" in workflow/profiles/smoke/scale.yaml, which the smoke profile merges over it),
or "custom" where a size differs from the declared scale's own. The sizes that tell them apart are the
keys scale.yaml sets, so a value given on the command line for another key (e.g. `--config
authors_data=...`, as the published run does) keeps the scale's name; a size given there that is
neither the paper's nor the smoke profile's makes it "custom", and the keys that differ say how. The
report's front page and captions name the scale from here (workflow/rules/common.smk).

The scale a checkout was built at is kept across runs (check_scale): a run's first jobs record it in
results/.scale (the Snakefile's onstart), and a later run whose config is at another scale is refused
before it plans anything, naming the command that keeps the recorded scale. Without it a rerun in a
smoke checkout without the profile (`snakemake -f FILE`) would plan the paper scale's 1e7-step
trajectory and everything after it, and so would `--profile workflow/profiles/smoke --configfile
more.yaml` (a --configfile on the command line replaces the profile's configfile list, scale.yaml with
it). `--config rescale=true` builds at the config's scale anyway, and records it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rlstudy.core.config import ConfigError, load_yaml

SHIPPED_CONFIG = "config.yaml"
SMOKE_SIZES = "workflow/profiles/smoke/scale.yaml"
PAPER, SMOKE, CUSTOM = "paper", "smoke", "custom"
_MISSING = object()


@dataclass(frozen=True)
class Scale:
    name: str  # PAPER, SMOKE or CUSTOM
    differences: tuple[str, ...] = ()  # for CUSTOM: "key value (paper: x, smoke: y)", per size not the paper's

    def describe(self) -> str:
        if self.name == PAPER:
            return "paper scale (config.yaml as shipped)"
        if self.name == SMOKE:
            return f"smoke scale (the smoke profile: {SMOKE_SIZES} merged over config.yaml; not the paper's results)"
        shown = "; ".join(self.differences[:3]) + ("; ..." if len(self.differences) > 3 else "")
        return f"custom scale (neither the paper's nor the smoke profile's sizes: {shown})"


def size_keys(sizes: dict, prefix: tuple = ()) -> list[tuple]:
    """The key paths of every value the sizes file sets (a list or a number is one value)."""
    keys = []
    for key, value in sizes.items():
        if isinstance(value, dict) and value:
            keys += size_keys(value, (*prefix, key))
        else:
            keys.append((*prefix, key))
    return keys


def value_at(config: dict, key: tuple):
    for part in key:
        if not isinstance(config, dict) or part not in config:
            return _MISSING
        config = config[part]
    return config


def _shown(value) -> str:
    return "unset" if value is _MISSING else repr(value)


def scale_of(config: dict, root: str | Path) -> Scale:
    """The scale of `config` (the merged config a run uses): the name it declares (config key `scale`,
    paper in config.yaml, smoke in the smoke profile's scale.yaml: check_scale keeps a checkout at
    it), unless a size that scale.yaml sets differs from that scale's own value, which makes it CUSTOM
    with the keys that differ."""
    root = Path(root)
    paper = load_yaml(root / SHIPPED_CONFIG, "config file")
    smoke = load_yaml(root / SMOKE_SIZES, "smoke profile's sizes")
    declared = config.get("scale", PAPER)
    # the seed lists are the seed block's (core/seed_blocks.py resolves them), not sizes
    keys = [key for key in size_keys(smoke) if key[-1] not in ("scale", "seed_block", "seeds")]
    own = smoke if declared == SMOKE else paper
    differ = [key for key in keys if value_at(config, key) != value_at(own, key)]
    if not differ:
        return Scale(declared)
    return Scale(CUSTOM, tuple(
        f"{'.'.join(map(str, key))} {_shown(value_at(config, key))} (paper: {_shown(value_at(paper, key))}, "
        f"smoke: {_shown(value_at(smoke, key))})" for key in differ))

RECORD = Path("results") / ".scale"  # relative to the workflow's working directory
SMOKE_FILE = SMOKE_SIZES
# What keeps each scale, for the messages: make rerun reads RECORD.
KEEP = {"paper": "make rerun TARGET=... (or snakemake without --profile workflow/profiles/smoke)",
        "smoke": "make rerun TARGET=... (or snakemake --profile workflow/profiles/smoke, and with more config files "
                 f"--configfile config.yaml {SMOKE_FILE} more.yaml)"}


def recorded_scale(workdir: str | Path = ".") -> str | None:
    try:
        text = (Path(workdir) / RECORD).read_text().strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read the recorded scale {RECORD}: {err}") from err
    return text or None


def record_scale(scale: str, workdir: str | Path = ".") -> None:
    from rlstudy.core.atomic_writes import write_artefact  # NumPy and pandas with it: only when a run starts

    write_artefact(Path(workdir) / RECORD, f"{scale}\n".encode(), None)


def files_scale(config_files: Sequence[Mapping]) -> str | None:
    """The scale the config files give: the last that names one (the command line's come last)."""
    scales = [values["scale"] for values in config_files if isinstance(values, Mapping) and "scale" in values]
    return scales[-1] if scales else None


def check_scale(config: Mapping, from_files: str | None, command_line: Mapping, config_paths: Sequence,
                workdir: str | Path = ".") -> None:
    """Refuse a run whose scale is not the files' (`--config scale=...`: the smoke profile sets it, so
    a profile that lost its scale.yaml shows), or not the checkout's recorded one (unless rescale)."""
    scale = config["scale"]
    named = ", ".join(str(p) for p in config_paths) or "none"
    given = command_line.get("scale")
    if given is not None and from_files is not None and given != from_files:
        raise ConfigError(
            f"--config scale={given}, but the config files give scale {from_files} ({named}): a scale comes with "
            f"its config files. The smoke profile sets scale=smoke beside its configfile list, which a --configfile "
            f"on the command line replaces, its scale.yaml with it: name them all, --configfile config.yaml "
            f"{SMOKE_FILE} more.yaml")
    recorded = recorded_scale(workdir)
    if recorded is not None and recorded != scale and not config.get("rescale", False):
        raise ConfigError(
            f"this checkout was built at {recorded} scale ({RECORD}) and this run's config is at {scale} scale "
            f"(config files: {named}); to keep {recorded} scale: {KEEP.get(recorded, 'its config files')}; "
            f"to build at {scale} scale instead: --config rescale=true")
