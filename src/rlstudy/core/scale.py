"""Which scale a merged config runs at: the one it declares (config key `scale`: "paper" in config.yaml,
"smoke" in workflow/profiles/smoke/scale.yaml, which the smoke profile merges over it), or "custom"
where a size differs from the declared scale's own.

The sizes that tell them apart are the keys scale.yaml sets, so a value given on the command line
for another key (e.g. `--config authors_data=...`, as the published run does) keeps the scale's
name; a size given there that is neither the paper's nor the smoke profile's makes it "custom",
and the keys that differ say how. The report's front page and captions name the scale from here
(workflow/rules/common.smk)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rlstudy.core.config import load_yaml

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
    paper in config.yaml, smoke in the smoke profile's scale.yaml: runtime/scale.py keeps a checkout at
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
