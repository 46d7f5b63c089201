"""The first seed of a replicate list in the seed block the next run of this checkout uses: what a command
names a run's folder by (seed<N>). The block's seeds depend on the scale and the block (confirmatory: drawn
from `confirmatory_block`; exploratory: the lists as the config files write them), so the documented examples
name a run through this (`make -s first-seed`) instead of a number that holds at one scale only.

The config is read as the Snakefile reads it: config.yaml, the smoke profile's sizes at smoke scale, then the
config files given (make's CONFIGFILES), merged in that order; its block resolved by core/seed_blocks.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlstudy.core.config import ConfigError
from rlstudy.core.run_config import LOCK, SHIPPED, merged_files
from rlstudy.core.scale import SMOKE_SIZES, recorded_scale
from rlstudy.core.seed_blocks import resolve_seed_block, seed_lists

DEFAULT_LIST = "seeds.control"


def first_seed(config: dict, key: str = DEFAULT_LIST) -> int:
    lists = seed_lists(resolve_seed_block(config, Path(LOCK)))
    shared = key.rpartition(".")[0]  # 'seeds.control' where `seeds:` is one list for every task
    key = key if key in lists or shared not in lists else shared
    if not lists.get(key):
        raise ConfigError(f"no replicate list '{key}' with seeds in the config; lists: {sorted(lists)}")
    return lists[key][0]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m rlstudy.runtime.first_seed", description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", choices=("paper", "smoke"), help="default: the checkout's (results/.scale), else paper")
    p.add_argument("--list", default=DEFAULT_LIST, help="the replicate list, by its config key (default %(default)s; "
                   "e.g. dqn.seeds, cbo_sweep.seeds)")
    p.add_argument("--configfile", nargs="*", default=[], help="more config files, merged over the checkout's")
    args = p.parse_args(argv)
    try:
        scale = args.scale or recorded_scale() or "paper"
        files = [SHIPPED, *([SMOKE_SIZES] if scale == "smoke" else []), *args.configfile]
        print(first_seed(merged_files(files), args.list))
    except ConfigError as err:
        print(f"first_seed: {err}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
