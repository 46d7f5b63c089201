"""Run the workflow until the group-sequential design has finished: `python -m rlstudy.runtime.run_looks
<snakemake arguments>` (make figures, make report).

The workflow makes one look per run (core/looks.py): this runs it (through rlstudy.runtime.launch) and
again while its last run made a new look that says a seed list continues. Without a design (the
exploratory block, the smoke profile's) no look is made and it runs once, as plain launch does; with a
design already finished the one run plans nothing new. A failed run stops it with that run's status.
"""

from __future__ import annotations

import subprocess
import sys

from rlstudy.core.config import ConfigError
from rlstudy.core.looks import LOOKS_DIR, continues

PROGRAM = "rlstudy.runtime.run_looks"


def run_once(argv: list[str]) -> int:
    return subprocess.run([sys.executable, "-m", "rlstudy.runtime.launch", *argv]).returncode


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        made, _ = continues(LOOKS_DIR)
        while True:
            status = run_once(argv)
            if status != 0:
                return status
            now, more = continues(LOOKS_DIR)
            if now == made or not more:  # no look made (no design, a dry run), or the design has finished
                return 0
            print(f"{PROGRAM}: look {now} made; a seed list continues: running look {now + 1}", file=sys.stderr)
            made = now
    except ConfigError as err:
        print(f"{PROGRAM}: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
