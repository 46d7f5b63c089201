"""The scale of a checkout: what its outputs were built at, kept across runs.

config.yaml says `scale: paper` and the smoke profile's scale.yaml `scale: smoke` (the sizes of a
scale come with its name). A run's first jobs record the scale in results/.scale (the Snakefile's
onstart), and every later run whose config is at another scale is refused before it plans
anything, naming the command that keeps the recorded scale: otherwise a reviewer's rerun in a
smoke checkout (`snakemake -f FILE`, no profile) planned the paper scale's 1e7-step trajectory and
everything after it, and `--profile workflow/profiles/smoke --configfile more.yaml` did the same
(a --configfile on the command line replaces the profile's configfile list, scale.yaml with it).
`--config rescale=true` builds at the config's scale anyway, and records it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rlstudy.core.config import ConfigError
from rlstudy.core.scale import SMOKE_SIZES

RECORD = Path("results") / ".scale"  # relative to the workflow's working directory
SMOKE_FILE = SMOKE_SIZES  # the smoke profile's sizes (core/scale.py)
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
    from rlstudy.core.io import write_artefact  # NumPy and pandas with it: only when a run starts

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
