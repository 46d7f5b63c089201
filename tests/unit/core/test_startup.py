"""A step that never touches a tensor does not import PyTorch: every job is a fresh process, and the
import is most of a short job's time (benchmarks/startup.py)."""

import subprocess
import sys

# The workflow's steps that read and write only arrays, tables and figures (one of each kind).
TORCH_FREE_STEPS = (
    "rlstudy.bellman.cli.make_trajectory",
    "rlstudy.bellman.cli.solve_exact",
    "rlstudy.bellman.cli.solve_density",
    "rlstudy.bellman.cli.summarise_sweep",
    "rlstudy.bellman.cli.summarise_budget",
    "rlstudy.bellman.cli.plot_budget",
    "rlstudy.bellman.cli.plot_trajectory",
    "rlstudy.claims.cli.evaluate_claims",
    "rlstudy.offline.cli.summarise_offline",
    "rlstudy.agents.cli.summarise_agents",
    "rlstudy.report.cli.render_readme",
    "rlstudy.report.cli.write_front_page",
)


def test_steps_without_tensors_do_not_import_torch():
    probe = "import sys\n" + "".join(f"import {m}\n" for m in TORCH_FREE_STEPS) + \
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))[:3])"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_estimators_draw_with_torch_imported_on_first_use():
    """The estimators' registry is torch-free at import; drawing a state imports torch where needed."""
    probe = ("import sys\nfrom rlstudy.bellman.estimators import get_estimator\nassert 'torch' not in sys.modules\n"
             "import torch\nprint(get_estimator('BFF-matched').start_pool(torch.tensor([0, 0, 1, 1, 1])).tolist())")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[0, 2]"
