"""How far the artefacts that train nothing move when the CPU's kernels change: the trajectories and the
exact Q, rebuilt by their own steps (the workflow's commands, config.yaml's parameters) under each BLAS
setting this machine can emulate, and compared with the build under the machine's own setting.

A platform differs from another in the kernels its libraries pick: OpenBLAS's (by CPU, or
OPENBLAS_CORETYPE), PyTorch's (ATEN_CPU_CAPABILITY), libm's. This script emulates the first two on one
machine, which is what `make verify` calls another platform when only they differ; it cannot emulate
another vendor's libm or microcode. The trained kinds (runs, agents, networks) are not here: one other
CPU moved them by far more than any rounding tolerance (docs/ci.md), and verify compares them through
the verdicts.

    python benchmarks/platform_spread.py            # print the table
    python benchmarks/platform_spread.py --write    # and write it into docs/ci.md
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
# What the machine picks by itself (the published build's setting), then the settings another CPU would pick:
# an Intel with AVX-512 unpinned (SkylakeX), an AMD Zen, an older Intel without AVX2's FMA (Sandybridge).
SETTINGS = {
    "as published": {},
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
    return made


def build(step: list[str], out: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", *step, "--out-dir", str(out)], check=True, capture_output=True,
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
            reference = Path(scratch) / "as-published" / name.replace(" ", "_")
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


if __name__ == "__main__":
    main()
