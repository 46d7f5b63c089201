"""The one road of a run's configuration: the config files read with limits and merged in order, the
command line's values merged over them, the whole checked by the schema and the studies' checks, the
block of replicate seeds written into the lists every rule reads, and the scale kept.

The Snakefile calls settle_config once, after `configfile:` (Snakemake has merged config.yaml, the
profile's files and --configfile); a step run by hand with --from-config reads its files by
core/config.py's config_from_files. The one check that stands before `configfile:` is
check_command_line_size (core/config.py): --config's values are bounded before Snakemake merges them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from snakemake.utils import update_config

from rlstudy.core.config import (
    Check,
    ConfigError,
    check_config_files,
    command_line_values,
    load_yaml,
    merged_config,
    validate_config,
)
from rlstudy.core.scale import SMOKE_SIZES, check_scale, files_scale
from rlstudy.core.seed_blocks import replaced_lists, resolve_seed_block

SHIPPED = "config.yaml"
OWN_FILES = (SHIPPED, SMOKE_SIZES)  # the checkout's own config files: the lists a seed block may replace
LOCK = "protocol.lock"


def merged_files(paths: Iterable[str | Path]) -> dict:
    config: dict = {}
    for path in paths:
        config = merged_config(config, load_yaml(path, "config file"))
    return config


def own_config(paths: Iterable[str | Path], workdir: str | Path = ".") -> dict:
    """The checkout's own config files among `paths` (a run's config files), merged in their order."""
    own = {(Path(workdir) / name).resolve() for name in OWN_FILES}
    return merged_files(Path(workdir) / path for path in paths if (Path(workdir) / path).resolve() in own)


def settle_config(config: dict, *, config_files: Sequence[str | Path], command_line: Mapping,
                  command_line_words: Sequence[str] | None, added_files: Sequence[str | Path],
                  schema: str | Path, checks: Sequence[Check] = (), workdir: str | Path = ".") -> None:
    """The workflow's config made whole and checked, in place: `config` as Snakemake merged it from
    `config_files` (config.yaml first, `added_files` the command line's --configfile), `command_line`
    its --config values (`command_line_words` as typed). Raises ConfigError naming the key or file."""
    # The raw files first, with limits (no YAML aliases, 1 MiB, no key twice, no YTE template): the
    # merged config is walked below, and Snakemake's own loader accepts aliases.
    check_config_files(config_files)
    # `--config tensorboard=true` or 'seeds=[0,1]' arrive as strings: read as a config file's would be.
    update_config(config, command_line_values(command_line, config, arguments=command_line_words))
    # A replicate list the run sets (--config, a more.yaml) where the picked seed block would replace it
    # is refused in one line saying how to run it.
    replaced = replaced_lists(config, own_config(config_files))
    if replaced:
        raise ConfigError(replaced[0])
    validate_config(config, schema, checks=checks)
    # The picked block of replicate seeds written into the lists every rule reads: the rules know no
    # blocks (core/seed_blocks.py; results/seed_plan.csv records the block and its lists); a
    # confirmatory block with `start: protocol` takes its lists from the committed lock.
    config.update(resolve_seed_block(config, Path(LOCK)))
    # The checkout's scale (results/.scale, recorded by its first run) is kept; the files' own scale is
    # config.yaml's, unless a --configfile merged over it names one.
    own_scale = files_scale([load_yaml(path, "config file") for path in [SHIPPED, *added_files]])
    check_scale(config, own_scale, command_line, config_files, workdir)
