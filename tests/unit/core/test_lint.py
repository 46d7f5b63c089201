"""`make lint`'s formatting check: the Snakefile and the rules files as snakefmt formats them.

FAILS UNTIL THE REFORMAT (issue 40, item 5): snakefmt 2.1.0 was added to the dev extra with the
Snakefile and every workflow/rules/*.smk unformatted; the reformat is one commit at the merge of the
helpers' branches (`snakefmt Snakefile workflow/rules`), after which this test passes."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_snakefile_and_rules_pass_snakefmt_check():
    result = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "Snakefile", "workflow/rules"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, (f"snakefmt would reformat (run `snakefmt Snakefile workflow/rules`):\n"
                                    f"{result.stdout}{result.stderr}")
