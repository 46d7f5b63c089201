"""How far the artefacts that train nothing move when the CPU's kernels change: the trajectories, the
exact Q and the stationary density (every kind of these a verify sample draws and can build in a few jobs),
rebuilt by their own steps (the workflow's commands, config.yaml's parameters) under each BLAS and ATen
setting this machine can emulate, and compared with the build under the machine's own setting.
`--write` also writes the measurement per kind into src/rlstudy/report/platform_spread.json, which
`make verify` reads: a kind is held to identical bytes across platforms only where every setting
rebuilt it byte for byte.

A platform differs from another in the kernels its libraries pick: OpenBLAS's (by CPU, or
OPENBLAS_CORETYPE), PyTorch's (ATEN_CPU_CAPABILITY), libm's. This script emulates the first two on one
machine, which is what `make verify` calls another platform when only they differ; it cannot emulate
another vendor's libm or microcode. The trained kinds (runs, agents, networks) are not here: one other
CPU moved them by far more than any rounding tolerance (docs/ci.md), and verify compares them through
the verdicts.

    python benchmarks/platform_spread.py            # print the table
    python benchmarks/platform_spread.py --write    # and write it into docs/ci.md and platform_spread.json
    python benchmarks/platform_spread.py --quick    # one task, 1000 steps, one emulated setting (the tests)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from record import ROOT, commit, machine, now, write_block

sys.path.insert(0, str(ROOT / "src"))
from rlstudy.core.config import load_yaml  # noqa: E402

DOC = ROOT / "docs" / "ci.md"
KINDS_FILE = ROOT / "src" / "rlstudy" / "report" / "platform_spread.json"
# What the machine picks by itself, then the settings another CPU would pick: the published build's (an AMD
# EPYC pinned to Haswell), an AVX-512 CPU unpinned (SkylakeX), an AMD Zen, an older Intel without AVX2's FMA.
SETTINGS = {
    "this machine's own": {},
    "OpenBLAS Haswell, PyTorch avx512": {"OPENBLAS_CORETYPE": "Haswell", "ATEN_CPU_CAPABILITY": "avx512"},
    "OpenBLAS SkylakeX, PyTorch avx512": {"OPENBLAS_CORETYPE": "SkylakeX", "ATEN_CPU_CAPABILITY": "avx512"},
    "OpenBLAS Zen, PyTorch avx2": {"OPENBLAS_CORETYPE": "Zen", "ATEN_CPU_CAPABILITY": "avx2"},
    "OpenBLAS Sandybridge, PyTorch default": {"OPENBLAS_CORETYPE": "Sandybridge", "ATEN_CPU_CAPABILITY": "default"},
}


def steps(config: dict, quick: bool) -> dict[str, tuple[list[str], str]]:
    """Each artefact's step, as the workflow runs it (the rules trajectory and exact_q)."""
    dynamics = config["problem"]["dynamics"]
    made = {}
    for task in config["tasks"][:1] if quick else config["tasks"]:
        for size in ("short", "long"):
            made[f"trajectory {task} {size}"] = (
                ["rlstudy.bellman.cli.make_trajectory", "--task", task, "--size", size,
                 "--steps", str(1000 if quick else config["trajectories"][size]), "--dynamics", json.dumps(dynamics),
                 "--seed", str(config["seed"])], "trajectory")
        for reward_of in ("current", "next"):
            problem = {"dynamics": {**dynamics, "reward_of": reward_of}, "gamma": config["problem"]["gamma"]}
            made[f"exact {task} reward {reward_of}"] = (
                ["rlstudy.bellman.cli.solve_exact", "--task", task, "--problem", json.dumps(problem),
                 "--rtol", str(config["exact"]["rtol"])], "exact")
        made[f"stationary density {task}"] = (
            ["rlstudy.bellman.cli.solve_density", "--task", task, "--dynamics", json.dumps(dynamics),
             "--out", "{out}/stationary_density.npy"], "density")
    return made


def build(step: list[str], out: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    where = [arg.replace("{out}", str(out)) for arg in step] if "--out" in step else [*step, "--out-dir", str(out)]
    subprocess.run([sys.executable, "-m", *where], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **env})
    return time.perf_counter() - start


def compare(first: Path, second: Path) -> tuple[int, int, float]:
    """(files, files byte-identical, the largest relative difference of any number, 0 when identical)."""
    files = sorted(path.relative_to(first) for path in first.rglob("*") if path.is_file()
                   and not path.name.endswith(".provenance.json"))
    same, worst = 0, 0.0
    for name in files:
        a, b = (first / name).read_bytes(), (second / name).read_bytes()
        if a == b:
            same += 1
        elif name.suffix == ".npy":
            x, y = np.load(first / name).astype(float), np.load(second / name).astype(float)
            scale = np.maximum(np.abs(x), np.finfo(float).tiny)
            worst = max(worst, float(np.max(np.abs(x - y) / scale)) if x.shape == y.shape else float("inf"))
        else:
            worst = float("inf")  # a table: its text differs; the arrays say by how much
    return len(files), same, worst


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--write", action="store_true", help="write the table into docs/ci.md")
    p.add_argument("--quick", action="store_true", help="one task, 1000 steps, one emulated setting")
    args = p.parse_args()
    if args.quick and args.write:
        p.error("--quick measures too little to write")
    config = load_yaml(ROOT / "config.yaml", "config file")
    base_env = {"OPENBLAS_CORETYPE": os.environ["OPENBLAS_CORETYPE"]} if "OPENBLAS_CORETYPE" in os.environ else {}
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, (step, kind) in steps(config, args.quick).items():
            reference = Path(scratch) / "own" / name.replace(" ", "_")
            build(step, reference, base_env)
            for setting, env in list(SETTINGS.items())[1:2 if args.quick else None]:
                out = Path(scratch) / setting.replace(" ", "_").replace(",", "") / name.replace(" ", "_")
                seconds = build(step, out, env)
                files, same, worst = compare(reference, out)
                rows.append((kind, name, setting, files, same, worst, seconds))
                print(rows[-1], flush=True)
    lines = [f"Written by `python benchmarks/platform_spread.py --write` at commit {commit()} on {now()}, "
             f"{machine()}; each artefact rebuilt by its own step under the machine's own setting "
             f"(OPENBLAS_CORETYPE={base_env.get('OPENBLAS_CORETYPE', 'unset')}) and under each emulated one.", "",
             "| kind | artefact | emulated setting | files | byte-identical | largest relative difference |",
             "| --- | --- | --- | ---: | ---: | ---: |"]
    for kind, name, setting, files, same, worst, _ in rows:
        lines.append(f"| `{kind}` | {name} | {setting} | {files} | {same} | {worst:.3g} |")
    print("\n".join(lines))
    if args.write:
        write_block("platform-spread", "platform_spread.py", "\n".join(lines), DOC)
        KINDS_FILE.write_text(json.dumps(by_kind(rows, lines[0]), indent=1, sort_keys=True) + "\n")


def by_kind(rows: list[tuple], measured: str) -> dict:
    """Per kind: whether every emulated setting rebuilt it byte for byte, and the largest relative
    difference of any of its numbers (verify's tolerance for a kind that moves)."""
    kinds: dict[str, dict] = {}
    for kind, _, _, files, same, worst, _ in rows:
        entry = kinds.setdefault(kind, {"identical": True, "largest_relative_difference": 0.0})
        entry["identical"] &= same == files
        entry["largest_relative_difference"] = max(entry["largest_relative_difference"], worst)
    return {"measured": measured, "kinds": kinds}


if __name__ == "__main__":
    main()
