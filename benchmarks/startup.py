"""What each workflow step pays before it does any work: the import of its command-line module.

Every job of the workflow is a fresh Python process running `python -m rlstudy.<study>.cli.<step>`,
so a step's import is paid once per job: about 830 jobs at paper scale, about 180 at smoke scale.
Importing PyTorch is most of it where a step imports it; the steps that never touch a tensor
(tables, most figures, the exact solver, the claims) import it only where a function needs it
(core/provenance.py, core/atomic_writes.py, core/loaders.py, core/cli.py, core/seeding.py, the estimators' registry), and the cycle collector is
off while a step imports (core/process.py). This prints, for every
command-line module, the best of `--repeats` imports in a fresh interpreter (wall seconds, and CPU
seconds of that process) and whether PyTorch was loaded.

    PYTHONPATH=src python benchmarks/startup.py
    PYTHONPATH=src python benchmarks/startup.py --repeats 5 rlstudy.bellman.cli.plot_sweep

`--snakemake` times instead what every Snakemake command pays before its first job, a dry run in the
checkout (its Snakefile parsed, the config checked, every rule's code inputs found, the DAG built):
at the checkout's scale, or with `--snakemake-args` (e.g. the smoke profile).
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json, resource, sys, time
sys.argv = ["-m"]  # as `python -m` sets it while it imports the step: the collector stays off (core/process.py)
start = time.perf_counter()
import {module}
from rlstudy.core.process import imports_done
imports_done()
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "torch": "torch" in sys.modules}}))
"""


def cli_modules() -> list[str]:
    """Every command-line step a rule runs: the modules under src/rlstudy/*/cli/ with a __main__ block."""
    src = ROOT / "src"
    return sorted(".".join(path.relative_to(src).with_suffix("").parts) for path in src.glob("rlstudy/*/cli/*.py")
                  if 'if __name__ == "__main__":' in path.read_text())


def measure(module: str, repeats: int) -> dict:
    """The fastest of `repeats` imports of `module`, each in a new interpreter."""
    best = None
    for _ in range(repeats):
        result = subprocess.run([sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True,
                                check=True)
        record = json.loads(result.stdout.strip().splitlines()[-1])
        best = record if best is None or record["wall"] < best["wall"] else best
    return best


def dry_run(args: list[str], repeats: int) -> dict:
    """The fastest of `repeats` Snakemake dry runs in the checkout (wall seconds, and CPU seconds of the
    launcher and its Snakemake process)."""
    best = None
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        # through the launcher, as every make target: it refuses an evaluating (YTE) config file among args
        subprocess.run([sys.executable, "-m", "rlstudy.runtime.launch", "-n", *args], cwd=ROOT,
                       capture_output=True, text=True, check=True)
        wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = {"wall": wall, "cpu": cpu} if best is None or wall < best["wall"] else best
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("modules", nargs="*", help="modules to time (default: every command-line module)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", action="store_true", help="one JSON record per module instead of a table")
    p.add_argument("--snakemake", action="store_true", help="time a Snakemake dry run instead (the docstring)")
    p.add_argument("--snakemake-args", default="--cores 1", help="the dry run's options (default: --cores 1)")
    args = p.parse_args()
    if args.snakemake:
        record = dry_run(shlex.split(args.snakemake_args), args.repeats)
        print(json.dumps(record) if args.json else
              f"snakemake -n {args.snakemake_args}: {record['wall']:.2f} s wall, {record['cpu']:.2f} s CPU "
              f"(best of {args.repeats})")
        return
    if not args.json:
        print(f"{'module':55s} {'wall s':>7s} {'CPU s':>7s}  torch")
    for module in args.modules or cli_modules():
        record = measure(module, args.repeats)
        if args.json:
            print(json.dumps({"module": module, **record}))
        else:
            print(f"{module:55s} {record['wall']:7.2f} {record['cpu']:7.2f}  {'yes' if record['torch'] else 'no'}")


if __name__ == "__main__":
    main()
