"""core/process.py: the cycle collector is off while `python -m rlstudy...` imports its step and back on
(with the import's objects frozen) when the step starts; a library import leaves it alone; a step runs
on one thread unless told otherwise; every artefact's provenance names the BLAS kernels that rounded
its products and the threads they ran on."""

import os
import subprocess
import sys

from rlstudy.core.provenance import provenance
from rlstudy.core.process import openblas_kernels

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "MKL_NUM_THREADS")


def python(code: str, env: dict | None = None) -> list[str]:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_the_collector_is_off_while_a_step_imports_and_on_when_it_runs():
    # sys.argv[0] is "-m" while `python -m` locates the step, as Python documents
    code = ("import sys, gc\nsys.argv = ['-m']\nimport rlstudy\nimport rlstudy.bellman.cli.solve_exact\n"
            "print(gc.isenabled())\nfrom rlstudy.core.cli import run\n"
            "run(lambda: print(gc.isenabled(), gc.get_freeze_count() > 1000))")
    assert python(code) == ["False", "True", "True"]


def test_a_library_import_leaves_the_collector_alone():
    assert python("import gc, rlstudy.core.cli\nprint(gc.isenabled(), gc.get_freeze_count())") == ["True", "0"]


def test_a_step_run_as_a_module_starts_and_exits_cleanly():
    result = subprocess.run([sys.executable, "-m", "rlstudy.bellman.cli.solve_exact", "--help"],
                            capture_output=True, text=True)
    assert result.returncode == 0 and "usage" in result.stdout, result.stderr


def test_provenance_names_the_openblas_kernels():
    import numpy  # noqa: F401  (loaded in every step that computes)

    kernels = openblas_kernels()
    assert kernels and kernels not in ("numpy not loaded",)
    assert provenance({}, 0, {})["openblas_kernels"] == kernels
    assert python("from rlstudy.core.process import openblas_kernels\nprint(openblas_kernels())") == ["numpy", "not",
                                                                                                    "loaded"]


def environment(**variables: str) -> dict:
    """This process's environment without any thread count, plus the given variables."""
    env = {name: value for name, value in os.environ.items() if name not in THREAD_VARIABLES}
    return {**env, **variables}


STEP_THREADS = ("import os, sys\nsys.argv = ['-m']\nimport rlstudy, numpy, torch\n"
                "from rlstudy.core.process import thread_counts\n"
                "counts = thread_counts()\nprint(os.environ['OMP_NUM_THREADS'], counts['numpy'], counts['torch'])")


def test_a_step_runs_on_one_thread_when_nothing_says_otherwise():
    # the bug: a step rerun by hand from its provenance's command used both cores, 7 times slower, other bits
    assert python(STEP_THREADS, environment()) == ["1", "1", "1"]


def test_a_thread_count_set_by_the_user_or_snakemake_is_kept():
    openblas = min(2, os.cpu_count() or 1)  # OpenBLAS never starts more threads than the machine has cores
    assert python(STEP_THREADS, environment(OMP_NUM_THREADS="2")) == ["2", str(openblas), "2"]


def test_a_library_import_leaves_the_thread_count_alone():
    code = "import os, rlstudy.core.cli\nprint(os.environ.get('OMP_NUM_THREADS', 'unset'))"
    assert python(code, environment()) == ["unset"]


def test_provenance_records_the_threads_of_the_products():
    import numpy  # noqa: F401
    import torch

    from rlstudy.core.process import thread_counts

    threads = provenance({}, 0, {})["threads"]
    assert threads == thread_counts() and threads["torch"] == torch.get_num_threads()
    assert isinstance(threads["numpy"], int) and threads["numpy"] >= 1
