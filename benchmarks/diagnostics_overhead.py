"""What the training diagnostics cost: the timing benchmarks run with this checkout's library and
with that of a revision from before the diagnostics, in turn, and their times compared.

    python benchmarks/diagnostics_overhead.py [--base be47b9e] [--repeats 3] [--scale 0.3]

Each repeat runs, in fresh processes, benchmarks/agents_speed.py (the training time of each agent),
benchmarks/offline_rl_speed.py (BCQ and offline DQN updates) and benchmarks/cbo_step.py (the
train_cbo and train_sgd loops), first on one library then on the other, alternating which goes
first; the best time of each over the repeats is compared. The base revision's src/ is exported
with `git archive` into a temporary folder; the benchmarks' scripts are this checkout's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export_src(revision: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"], capture_output=True,
                             check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def run_benchmarks(src: Path, scale: float, offline_updates: int, tmp: Path) -> dict[str, float]:
    """Seconds of each timed item (lower is better) with the library in `src`."""
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    seconds = {}
    for script, args in (("agents_speed.py", [str(scale)]),
                         ("offline_rl_speed.py", ["--updates", str(offline_updates), "--atari-updates", "5"]),
                         ("cbo_step.py", ["--particles", "30", "--samples", "1000", "--loop-steps", "20"])):
        out = tmp / f"{script}.json"
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args, "--out", str(out)], env=env,
                       check=True, capture_output=True, text=True)
        for name, value in json.loads(out.read_text()).items():
            if isinstance(value, dict):  # offline_rl_speed: rates per environment
                seconds |= {f"{name} {key.removesuffix('_per_s')} s": 1.0 / rate for key, rate in value.items()
                            if key in ("bcq_updates_per_s", "dqn_updates_per_s")}
            else:
                seconds[name] = value
    return seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", default="be47b9e", help="a revision without the diagnostics")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--scale", type=float, default=0.3, help="agents_speed.py's budget scale")
    p.add_argument("--offline-updates", type=int, default=1000)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        trees = {"without": export_src(args.base, tmp / "base"), "with": ROOT / "src"}
        best: dict[str, dict[str, float]] = {"without": {}, "with": {}}
        for repeat in range(args.repeats):
            for label in (("without", "with") if repeat % 2 == 0 else ("with", "without")):
                for name, value in run_benchmarks(trees[label], args.scale, args.offline_updates, tmp).items():
                    best[label][name] = min(value, best[label].get(name, float("inf")))
                print(f"repeat {repeat + 1}/{args.repeats}: {label} diagnostics done", flush=True)
    print(f"\nbest of {args.repeats}, seconds: without diagnostics ({args.base}), with (this checkout)")
    for name, without in best["without"].items():
        with_ = best["with"][name]
        print(f"{name:<45} {without:10.4f} {with_:10.4f}  {100 * (with_ / without - 1):+6.1f} %")


if __name__ == "__main__":
    main()
