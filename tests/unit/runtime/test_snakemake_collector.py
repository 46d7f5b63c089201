"""Snakemake's own process runs its parse and its DAG with the cycle collector off, and its jobs with it on
(runtime/snakemake_collector.py)."""

import gc
import subprocess
import sys
import weakref
from pathlib import Path

from rlstudy.runtime.snakemake_collector import off_while_planning, on_for_the_jobs

ROOT = Path(__file__).resolve().parents[3]


class Node:
    pass


def test_the_collector_comes_back_on_having_collected_the_plannings_garbage_and_frozen_the_rest(monkeypatch):
    enabled, frozen = gc.isenabled(), gc.get_freeze_count()
    try:
        off_while_planning()
        assert not gc.isenabled()
        kept = Node()
        cycle = Node()
        cycle.self = cycle
        gone = weakref.ref(cycle)
        del cycle
        assert gone() is not None  # a cycle outlives its last name while the collector is off ...
        on_for_the_jobs()
        assert gc.isenabled()
        assert gone() is None  # ... until the one collection as the jobs start
        assert gc.get_freeze_count() > frozen and kept is not None
        # Already on: nothing collected or frozen again. Spied, not read off the frozen count, which falls
        # whenever a frozen object is freed (a pytest-xdist worker's own threads free some at any time).
        calls = []
        with monkeypatch.context() as patch:
            patch.setattr(gc, "collect", lambda *generation: calls.append("collect"))
            patch.setattr(gc, "freeze", lambda: calls.append("freeze"))
            on_for_the_jobs()
        assert calls == []
    finally:
        gc.unfreeze()
        gc.freeze() if frozen else None
        (gc.enable if enabled else gc.disable)()


def test_snakemakes_process_parses_with_the_collector_off_and_turns_it_on_before_its_first_job(tmp_path):
    """In Snakemake's own process: off from the Snakefile's first line, through the DAG, on in onstart, which
    Snakemake runs once the DAG is built and before the first job (a dry run runs no onstart)."""
    src = ROOT / "src"
    (tmp_path / "Snakefile").write_text(
        f"import gc, sys\nsys.path.insert(0, {str(src)!r})\n"
        "from rlstudy.runtime.snakemake_collector import off_while_planning, on_for_the_jobs\n"
        "off_while_planning()\n"
        "print('parse: collector', gc.isenabled())\n\n"
        "onstart:\n    print('onstart: collector', gc.isenabled())\n    on_for_the_jobs()\n"
        "    print('then: collector', gc.isenabled(), 'frozen', gc.get_freeze_count() > 0)\n\n"
        "rule done:\n    output: 'done.txt'\n    shell: 'touch {output}'\n")
    result = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "--cores", "1"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    said = result.stdout + result.stderr
    for line in ("parse: collector False", "onstart: collector False", "then: collector True frozen True"):
        assert line in said, said[-2000:]
    assert said.index("then: collector") < said.index("rule done")


def test_the_workflows_snakefile_turns_it_off_before_its_imports_and_on_as_its_jobs_start():
    lines = (ROOT / "Snakefile").read_text().splitlines()
    project_imports = [i for i, line in enumerate(lines) if line.startswith("from rlstudy.")]
    off = lines.index("off_while_planning()")
    assert lines[project_imports[0]].startswith("from rlstudy.runtime.snakemake_collector import")
    assert project_imports[0] < off < project_imports[1]
    assert lines[lines.index("onstart:") + 1].strip() == "on_for_the_jobs()"
