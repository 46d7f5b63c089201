"""What a short job pays besides its work: one sweep point's run_method job (rule sweep_run: CBO's
cbo-adaptive setting with the sweep's overrides, on the control task's short trajectory; the SGD runs
go through the same step and pay the same), started as a rule starts it, warm (forked by the
warm-start server, runtime/warmstart/) and cold (`RLSTUDY_WARM_START=0`: a new interpreter).

Two measures, each the median of `--repeats`:

- the whole job, as Snakemake's shell runs it (`python -m rlstudy.runtime.warmstart
  rlstudy.bellman.cli.run_method ...`), its wall timed from outside: with the sweep's budget (300 CBO
  steps) and with a budget of one step, whose wall is almost all fixed cost; and the step's `--help`,
  a job that only starts, parses and ends. The load average is printed beside them: on a shared
  machine the walls measure the machine as much as the job;
- the phases of the one-step job inside the step, in CPU time (the thread's, and that of the
  subprocesses it waited for: git), which other processes on the machine hardly change, each timed by
  a stopwatch put around the functions that do it (exclusive times: a load's sha256 counts as sha256,
  not as reading): reading the inputs, the sha256 of the inputs (the loads' checks against their
  records and the record's own list), the git commit, the package versions, the rest of the
  provenance record, the work, writing the four outputs and their records, and what is left of the
  step's main() (its arguments, the parameters, the tensors' set-up). They run in forks of a process
  that has done what a job's process has done when its main() starts: imported the step (cold), or
  also readied everything as the server does (warm: preload, and what each fork hashed handed back).

The inputs are made in a temporary folder: the trajectory by make_trajectory (`--steps`, the paper
scale's short trajectory by default: what a job's sha256 reads), the exact Q by solve_exact, and a
stand-in for the learned Q* (a fresh network of the same shape, with its record).

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/job_overhead.py [--repeats 7] [--steps 1000000]
        [--only phases|jobs] [--epochs 300]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
STEP = "rlstudy.bellman.cli.run_method"
TASK, SETTING_NAME, RUN_SEED = "control", "cbo-sweep", "100"
TRAJECTORY = f"data/trajectories/ours/{TASK}/short"
EXACT_DIR = f"results/exact/{TASK}/reward_current"
REFERENCE = f"results/reference/{TASK}/q_star.pt"
SERVER_READY, SERVER_DONE = " serving ", "; exiting"


def config() -> dict:
    return yaml.safe_load((ROOT / "config.yaml").read_text())


def sweep_params(epochs: int | None) -> dict:
    """A sweep point's parameters as the rule gives them (the base setting with the sweep's overrides);
    `epochs` set where given."""
    shipped = config()
    sweep = shipped["cbo_sweep"]
    params = {**shipped["cbo"]["settings"][sweep["setting"]]["params"], **sweep["overrides"]}
    return params if epochs is None else {**params, "epochs": epochs}


def job_args(out_dir: str, epochs: int | None) -> list[str]:
    """run_method's arguments as rule sweep_run writes them."""
    shipped = config()
    return ["--optimizer", "cbo", "--setting", SETTING_NAME, "--dataset", "ours", "--task", TASK,
            "--estimator", shipped["cbo_sweep"]["estimator"], "--run-seed", RUN_SEED, "--stop-on-divergence",
            "--trajectory", TRAJECTORY, "--params", json.dumps(sweep_params(epochs), sort_keys=True),
            "--problem", json.dumps(shipped["problem"], sort_keys=True), "--seed", str(shipped["seed"]),
            "--device", "cpu", "--numerics", shipped["numerics"], "--reference", REFERENCE,
            "--exact", f"{EXACT_DIR}/q_exact.npy", "--out-dir", out_dir]


def step_env(warm: bool) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}
    if not warm:
        env["RLSTUDY_WARM_START"] = "0"
    return env


def make_inputs(workdir: Path, steps: int) -> None:
    """The job's three inputs, each with its provenance record, as the workflow writes them."""
    shipped = config()
    env = step_env(warm=False)
    for module, args in [
        ("rlstudy.bellman.cli.make_trajectory",
         ["--task", TASK, "--size", "short", "--steps", str(steps), "--seed", str(shipped["seed"]),
          "--dynamics", json.dumps(shipped["problem"]["dynamics"]), "--out-dir", TRAJECTORY]),
        ("rlstudy.bellman.cli.solve_exact",
         ["--task", TASK, "--problem", json.dumps(shipped["problem"]), "--rtol", str(shipped["exact"]["rtol"]),
          "--out-dir", EXACT_DIR]),
    ]:
        subprocess.run([sys.executable, "-m", module, *args], cwd=workdir, env=env, check=True, capture_output=True)
    subprocess.run([sys.executable, __file__, "--reference-into", str(workdir)], env=env, check=True)


def write_reference(workdir: Path) -> None:
    import torch

    from rlstudy.bellman.numerics.compiled.qnet import init_params, to_state_dict
    from rlstudy.core.atomic_writes import save_tensors
    from rlstudy.core.provenance import provenance

    theta = init_params(1, torch.Generator().manual_seed(0))[0]
    save_tensors(workdir / REFERENCE, to_state_dict(theta), provenance({"stand_in": "a fresh network"}, 0, {}))


# ---- the whole job, timed from outside ----------------------------------------------------------------

def whole_job(workdir: Path, args: list[str], warm: bool) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rlstudy.runtime.warmstart", STEP, *args], cwd=workdir,
                   env=step_env(warm), check=True, capture_output=True)
    return time.perf_counter() - start


def wait_for_log(log: Path, text: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while text not in (log.read_text() if log.exists() else ""):
        if time.monotonic() > deadline:
            raise SystemExit(f"the warm-start server did not log {text.strip()!r} within {timeout:g} s: {log}")
        time.sleep(0.1)


def whole_jobs(workdir: Path, repeats: int, epochs: int, warm: bool) -> dict[str, list[float]]:
    """Walls of --help, the one-step job and the sweep's job, repeats of each (warm: after the job that
    starts the server, which runs cold, and once the server is serving)."""
    from rlstudy.runtime.warmstart import client

    mode = "warm" if warm else "cold"
    log = workdir / "logs" / "warmstart.log"
    if warm:
        client.begin()
        whole_job(workdir, job_args(f"out/{mode}/first", 1), warm)
        wait_for_log(log, SERVER_READY)
    walls: dict[str, list[float]] = {"--help": [], "one step": [], f"{epochs} steps": []}
    try:
        for i in range(repeats):
            walls["--help"].append(whole_job(workdir, ["--help"], warm))
            walls["one step"].append(whole_job(workdir, job_args(f"out/{mode}/short{i}", 1), warm))
            walls[f"{epochs} steps"].append(whole_job(workdir, job_args(f"out/{mode}/full{i}", epochs), warm))
    finally:
        if warm:
            client.end()
            wait_for_log(log, SERVER_DONE)  # none of ours left running
    if warm and "refused" in log.read_text():
        raise SystemExit(f"the warm-start server refused a job (so it ran cold): {log}")
    return walls


# ---- the phases inside the step: stopwatches in forks of a readied process ------------------------------

def cpu_now() -> float:
    """CPU seconds of this thread and of the subprocesses this process has waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.thread_time() + children.ru_utime + children.ru_stime


class Stopwatches:
    """Exclusive CPU time per label: a timed call inside another counts for its own label only."""

    def __init__(self) -> None:
        self.total: dict[str, float] = {}
        self.stack: list[list[float]] = []  # [start, time of the timed calls inside]

    def wrap(self, label: str, function):
        def timed(*args, **kwargs):
            self.stack.append([cpu_now(), 0.0])
            try:
                return function(*args, **kwargs)
            finally:
                start, inside = self.stack.pop()
                spent = cpu_now() - start
                self.total[label] = self.total.get(label, 0.0) + spent - inside
                if self.stack:
                    self.stack[-1][1] += spent
        return timed


class TimedOptimizer:
    """An optimiser of the registry whose fit is timed."""

    def __init__(self, optimizer, watches: Stopwatches) -> None:
        self._optimizer, self.fit = optimizer, watches.wrap("the work (one CBO step)", optimizer.fit)

    def __getattr__(self, name):
        return getattr(self._optimizer, name)


def step_phases(args: list[str]) -> dict[str, float]:
    """One run of the step's main() in this process, its phases timed."""
    from rlstudy.bellman.cli import run_method as step
    from rlstudy.core import provenance
    from rlstudy.core.cli import run

    watches = Stopwatches()
    for label, module, names in [
        ("reading inputs (less their sha256)", step, ("load_trajectory", "load_exact", "load_network")),
        ("sha256 of the inputs", provenance, ("sha256_file",)),
        ("git commit", provenance, ("git_commit",)),
        ("package versions", provenance, ("package_versions",)),
        ("the rest of the provenance record", step, ("provenance",)),
        ("writing 4 outputs and their records", step, ("save_tensors", "save_csv")),
    ]:
        for name in names:
            setattr(module, name, watches.wrap(label, getattr(module, name)))
    step.OPTIMIZERS = {name: TimedOptimizer(optimizer, watches) for name, optimizer in step.OPTIMIZERS.items()}
    sys.argv = [STEP, *args]
    start = cpu_now()
    run(step.main)
    whole = cpu_now() - start
    return {**watches.total, "arguments, parameters, set-up (the rest of main)": whole - sum(watches.total.values()),
            "the step's main(), in all": whole}


def phases_in_forks(workdir: Path, repeats: int, warm: bool) -> dict[str, list[float]]:
    """step_phases in `repeats` forks of this process, readied as a cold job's (the step imported) or as
    the warm-start server readies itself (preload), and told, as the server is, of the files each fork
    hashed (runtime/warmstart/reports.py)."""
    os.chdir(workdir)
    sys.argv = ["-m"]  # as `python -m` leaves it while the step imports (core/process.py)
    import rlstudy.bellman.cli.run_method  # noqa: F401
    from rlstudy.core.process import imports_done

    if warm:
        from rlstudy.runtime.warmstart.preload import preload

        preload()
    imports_done()
    runs: dict[str, list[float]] = {}
    for i in range(repeats):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            status = 1
            try:
                with open(os.devnull, "w") as quiet:
                    os.dup2(quiet.fileno(), 1)
                    phases = step_phases(job_args(f"out/phases-{'warm' if warm else 'cold'}{i}", 1))
                with open(write, "w") as pipe:
                    json.dump({"phases": phases, "hashed": learned_digests()}, pipe)
                status = 0
            finally:
                os._exit(status)
        os.close(write)
        with os.fdopen(read) as pipe:
            text = pipe.read()
        _, status = os.waitpid(pid, 0)
        if status != 0:
            raise SystemExit(f"a timed run of the step failed (wait status {status})")
        report = json.loads(text)
        if warm:
            remember_digests(report["hashed"])
        for label, seconds in report["phases"].items():
            runs.setdefault(label, []).append(seconds)
    return runs


def learned_digests() -> list:
    from rlstudy.core import digests

    return digests.take_learned()


def remember_digests(rows: list) -> None:
    from rlstudy.core import digests

    digests.remember(rows)


# ---- the table ------------------------------------------------------------------------------------------

def median_ms(values: list[float]) -> str:
    return f"{1000 * statistics.median(values):8.1f}"


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--steps", type=int, default=1_000_000, help="steps of the short trajectory (paper scale: 1e6)")
    p.add_argument("--only", choices=("jobs", "phases"), help="one of the two measures")
    p.add_argument("--epochs", type=int, help="the full job's CBO steps (default: the sweep's, config.yaml)")
    p.add_argument("--reference-into", help=argparse.SUPPRESS)  # make_inputs' own use
    p.add_argument("--phases-in", nargs=2, metavar=("FOLDER", "MODE"), help=argparse.SUPPRESS)  # main's own use
    args = p.parse_args()
    if args.reference_into:
        write_reference(Path(args.reference_into))
        return
    if args.phases_in:
        folder, mode = args.phases_in
        print(json.dumps(phases_in_forks(Path(folder), args.repeats, mode == "warm")))
        return
    epochs = args.epochs or sweep_params(None)["epochs"]
    print(f"One sweep job (run_method, CBO, {args.steps:g}-step trajectory), median of {args.repeats} "
          f"(milliseconds; OMP_NUM_THREADS=1); load average {load()} at the start")
    print(f"{'':58s} {'warm':>8s} {'cold':>8s}")
    with tempfile.TemporaryDirectory(prefix="job-overhead-") as folder:
        workdir = Path(folder)
        make_inputs(workdir, args.steps)
        if args.only != "phases":
            walls = {mode: whole_jobs(workdir, args.repeats, epochs, mode == "warm") for mode in ("warm", "cold")}
            print(f"the whole job, its wall timed from outside (load average {load()} at the end):")
            for label in walls["warm"]:
                print(f"  {label:56s} {median_ms(walls['warm'][label])} {median_ms(walls['cold'][label])}")
        if args.only != "jobs":
            phases = {}
            for mode in ("warm", "cold"):
                result = subprocess.run([sys.executable, __file__, "--repeats", str(args.repeats), "--phases-in",
                                         str(workdir), mode], env=step_env(warm=False), check=True,
                                        capture_output=True, text=True)
                phases[mode] = json.loads(result.stdout.strip().splitlines()[-1])
            print("the one-step job's phases inside the step, CPU time:")
            for label in phases["warm"]:
                print(f"  {label:56s} {median_ms(phases['warm'][label])} {median_ms(phases['cold'][label])}")


if __name__ == "__main__":
    main()
