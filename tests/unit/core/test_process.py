"""core/process.py: the cycle collector is off while `python -m rlstudy...` imports its step and back on
(with the import's objects frozen) when the step starts; a library import leaves it alone; every
artefact's provenance names the BLAS kernels that rounded its products."""

import subprocess
import sys

from rlstudy.core.io import provenance
from rlstudy.core.process import openblas_kernels


def python(code: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
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
