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
    timespan, but Snakemake waits for its last timer before it exits: at most a minute."""
    settings = yaml.safe_load((PROFILES / "long" / "config.yaml").read_text())
    assert settings["scheduler"] == "greedy"
    limit = MaxJobsPerTimespan.parse_choice(settings["max-jobs-per-timespan"])
    assert 30 <= limit.timespan <= 60
    assert limit.max_jobs >= 1000
    makefile = (PROFILES.parents[1] / "Makefile").read_text()
    assert "LONG_RUN := --profile workflow/profiles/long" in makefile
    for target in ("figures", "study", "report"):
        recipe = makefile.split(f"\n{target}: ", 1)[1].split("\n\n", 1)[0]
        assert "$(BIN)/snakemake --cores all $(LONG_RUN)" in recipe, target
