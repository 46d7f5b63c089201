"""A stage's last evaluation, which the per-run claims test, runs `evaluation_episodes` episodes; the
evaluations before it (the curves' points) run `curve_episodes`, so a large claim count does not
multiply the cost of every curve point."""

from hostile import RUN


class AlwaysLeft:
    def act(self, state, eps, rng):
        return 0


def test_the_last_evaluation_runs_the_claims_episodes_and_the_earlier_ones_the_curves():
    run = RUN
    assert (run.evaluation_episodes, run.curve_episodes) == (10, 3)
    assert len(run.evaluate(AlwaysLeft(), final=False)) == 3
    assert len(run.evaluate(AlwaysLeft())) == 10

