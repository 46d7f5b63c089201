"""`make lint`'s formatting check: the Snakefile and the rules files as snakefmt formats them."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_snakefile_and_rules_pass_snakefmt_check():
    result = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "Snakefile", "workflow/rules"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, (f"snakefmt would reformat (run `snakefmt Snakefile workflow/rules`):\n"
                                    f"{result.stdout}{result.stderr}")
