"""The scheduling settings of the profiles every local run uses (workflow/profiles/default says why)."""

from pathlib import Path

import pytest
import yaml
from snakemake.settings.types import MaxJobsPerTimespan

PROFILES = Path(__file__).resolve().parents[3] / "workflow" / "profiles"


@pytest.mark.parametrize("profile", ["default", "smoke"])
def test_local_profiles_schedule_greedily_and_end_soon_after_their_last_job(profile):
    """A round per job end, not Snakemake's default one per second over every ready job; but a short
    timespan: Snakemake's exit waits for the rate limiter's last timer (a regression: a 1 h timespan
    kept a finished smoke build alive for an hour)."""
    settings = yaml.safe_load((PROFILES / profile / "config.yaml").read_text())
    assert settings["scheduler"] == "greedy"
    limit = MaxJobsPerTimespan.parse_choice(settings["max-jobs-per-timespan"])
    assert 1 < limit.timespan <= 5  # seconds a run may outlive its last job
    assert limit.max_jobs >= 1000  # never the binding limit: two cores start a few jobs per timespan


def test_the_long_runs_profile_slows_the_round_chains_and_ends_within_a_minute():
    """make figures, make study and make report schedule with workflow/profiles/long: every ended job
    starts a chain of rounds repeating every timespan (Snakemake 9), so a long run wants a long
    timespan; an interrupted run waits for its last timer before it exits (the hooks cancel them
    otherwise: below): at most a minute."""
    settings = yaml.safe_load((PROFILES / "long" / "config.yaml").read_text())
    assert settings["scheduler"] == "greedy"
    limit = MaxJobsPerTimespan.parse_choice(settings["max-jobs-per-timespan"])
    assert 30 <= limit.timespan <= 60
    assert limit.max_jobs >= 1000
    makefile = (PROFILES.parents[1] / "Makefile").read_text()
    assert "LONG_RUN := --profile workflow/profiles/long" in makefile
    for target in ("figures", "study", "report"):
        recipe = makefile.split(f"\n{target}: ", 1)[1].split("\n\n", 1)[0]
        assert "$(SNAKEMAKE) --cores all $(LONG_RUN)" in recipe, target


def test_a_run_ends_with_its_last_job_not_with_the_schedulers_last_timer(tmp_path):
    """The Snakefile's onsuccess cancels the scheduler's pending timers (runtime/snakemake_exit.py): a toy
    workflow under a 30 s timespan exits within seconds of its one job, where Snakemake alone waited
    the timespan out (make study ended a minute after its last job). The hook reports the timers it
    cancelled: at least one was pending."""
    import subprocess
    import sys
    import time

    src = PROFILES.parents[1] / "src"
    (tmp_path / "Snakefile").write_text(
        f"import sys\nsys.path.insert(0, {str(src)!r})\n"
        "from rlstudy.runtime.snakemake_exit import cancel_scheduling_timers\n\n"
        "onsuccess:\n    print('cancelled timers:', cancel_scheduling_timers())\n\n"
        "rule done:\n    output: 'done.txt'\n    shell: 'touch {output}'\n")
    start = time.monotonic()
    result = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "--cores", "1", "--scheduler", "greedy",
                             "--max-jobs-per-timespan", "100/30s"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    seconds = time.monotonic() - start
    assert result.returncode == 0, result.stderr
    cancelled = int(result.stdout.split("cancelled timers:")[1].split()[0])
    assert cancelled >= 1
    assert seconds < 20, f"the run took {seconds:.1f} s"


@pytest.mark.parametrize("profile", ["default", "long", "smoke", "slurm"])
def test_every_profile_reruns_what_a_killed_snakemake_left_marked_incomplete(profile):
    """docs/reliability.md's recovery (--unlock, then the same command) after a kill -9 of Snakemake
    alone: its jobs finish their outputs, still marked incomplete, and without this the rerun stops
    with IncompleteFilesException (tests/workflow/test_interrupted_runs.py runs it with smoke)."""
    settings = yaml.safe_load((PROFILES / profile / "config.yaml").read_text())
    assert settings["rerun-incomplete"] is True
