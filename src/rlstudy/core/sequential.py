"""Group-sequential designs: a test looked at K times, at counts fixed in advance, stopping early for a
hold when its evidence crosses an efficacy boundary and for futility when it falls below a futility bound.

The boundaries come from spending functions (Lan and DeMets): alpha(t) is the probability of a false
hold the design may have spent by the information fraction t = n_k / n_K, so the whole design's size is
at most alpha whatever the looks see; beta(t) likewise spends the probability of stopping for futility
under the planned effect. Two families:

- O'Brien-Fleming type: alpha(t) = 2 (1 - Phi(z_{1 - alpha/2} / sqrt(t))), spending almost nothing early;
- Pocock type: alpha(t) = alpha ln(1 + (e - 1) t), spending evenly.

For the sign test (`binomial_design`) every probability is exact: the count of pairs in the claimed
direction is followed look by look by binomial convolution. An efficacy boundary is the smallest count
whose first crossing probability under the null stays within the alpha spent at that look, computed
ignoring the futility bound, so the bound is non-binding: a study may keep going past it and the size
stays at most alpha. For any other test (`simulated_design`) the same is done on p-values by Monte
Carlo, and the size of the boundaries is checked on fresh draws (`simulated_size`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

SPENDING = ("obrien-fleming", "pocock")


def _stats():
    """SciPy's stats, imported at first use: the Snakefile reads SPENDING when it checks a lock's design
    (core/looks.py) at every start, and needs none of SciPy's most-of-a-second import for it."""
    from scipy import stats

    return stats


def spent(kind: str, level: float, fraction: float) -> float:
    """The cumulative error a spending function allows by the information fraction (0 < fraction <= 1)."""
    fraction = min(max(fraction, 0.0), 1.0)
    if fraction == 0.0:
        return 0.0
    if kind == "obrien-fleming":
        return float(2.0 * _stats().norm.sf(_stats().norm.isf(level / 2.0) / math.sqrt(fraction)))
    if kind == "pocock":
        return float(level * math.log(1.0 + (math.e - 1.0) * fraction))
    raise ValueError(f"spending function {kind!r}: expected one of {list(SPENDING)}")


def look_counts(maximum: int, looks: int) -> list[int]:
    """K looks at equal steps of the maximum count, the last at the maximum."""
    if looks < 1 or maximum < looks:
        raise ValueError(f"{looks} looks at a maximum of {maximum}: need 1 <= looks <= maximum")
    return [math.ceil(k * maximum / looks) for k in range(1, looks + 1)]


@dataclass(frozen=True)
class Operating:
    """What a design does under one law: its probability of a hold and its expected count."""
    hold: float
    expected_count: float
    stop_at: tuple[float, ...]  # the probability of stopping at each look (for a hold or for futility)


@dataclass(frozen=True)
class BinomialDesign:
    """A sign test's group-sequential design: hold at look k when the count in the claimed direction is at
    least efficacy[k]; stop for futility when it is at most futility[k] (-1: no futility stop there)."""
    counts: tuple[int, ...]
    efficacy: tuple[int, ...]        # n_k + 1: the look cannot hold
    futility: tuple[int, ...]
    level: float
    effect: float
    spending: str
    size: float                      # exact P(hold) under the null, futility ignored (non-binding)
    null: Operating                  # under the null, futility stops followed
    alternative: Operating           # at the planned effect, futility stops followed

    @property
    def power(self) -> float:
        return self.alternative.hold

    def as_dict(self) -> dict:
        return {"counts": list(self.counts), "efficacy": list(self.efficacy), "futility": list(self.futility),
                "level": self.level, "effect": self.effect, "spending": self.spending,
                "size": round(self.size, 6), "power": round(self.power, 6),
                "expected_count_null": round(self.null.expected_count, 3),
                "expected_count_alternative": round(self.alternative.expected_count, 3)}


def p_boundaries(design: BinomialDesign) -> list[tuple[float, float]]:
    """The boundaries as thresholds on the exact sign test's p-value P0(count >= s) at each look: hold
    when p <= the first (-1: this look cannot hold), stop for futility when p >= the second (2: no
    futility stop). The same decisions as the counts' boundaries, for a step that sees p-values."""
    found = []
    for n, a, b in zip(design.counts, design.efficacy, design.futility):
        hold = float(_stats().binom.sf(a - 1, n, 0.5)) if a <= n else -1.0
        futile = float(_stats().binom.sf(b - 1, n, 0.5)) if b >= 0 else 2.0
        found.append((hold, futile))
    return found


def _step(mass: np.ndarray, pairs: int, p: float) -> np.ndarray:
    """The distribution of the count after `pairs` more pairs, each in the claimed direction with p."""
    return np.convolve(mass, _stats().binom.pmf(np.arange(pairs + 1), pairs, p)) if pairs else mass


def _operate(counts, efficacy, futility, p: float, use_futility: bool) -> Operating:
    """Follow the design under success probability p: P(hold), the expected count, P(stop) per look."""
    mass, previous, hold, stops = np.ones(1), 0, 0.0, []
    for n, a, b in zip(counts, efficacy, futility):
        mass = _step(mass, n - previous, p)
        previous = n
        values = np.arange(len(mass))
        crossed = float(mass[values >= a].sum())
        stopped = crossed + (float(mass[values <= b].sum()) if use_futility else 0.0)
        hold += crossed
        stops.append(stopped)
        mass = np.where((values < a) & ((values > b) | (not use_futility)), mass, 0.0)
    stops[-1] = 1.0 - sum(stops[:-1])  # the last look ends the design
    return Operating(hold, float(np.dot(counts, stops)), tuple(stops))


def _efficacy(counts, level: float, spending: str) -> list[int]:
    """Each look's smallest count whose first crossing under the null stays within the alpha spent."""
    mass, previous, used, bounds = np.ones(1), 0, 0.0, []
    for n in counts:
        mass = _step(mass, n - previous, 0.5)
        previous = n
        allowed = spent(spending, level, n / counts[-1]) - used
        tail = np.cumsum(mass[::-1])[::-1]  # tail[a] = P(count >= a, still going)
        fits = np.flatnonzero(tail <= allowed * (1 + 1e-12))
        a = int(fits[0]) if len(fits) else n + 1
        bounds.append(a)
        used += float(tail[a]) if a <= n else 0.0
        mass = np.where(np.arange(len(mass)) < a, mass, 0.0)
    return bounds


def _futility(counts, efficacy, effect: float, beta: float, spending: str) -> list[int]:
    """Each look's largest count whose stopping probability at the planned effect stays within the beta
    spent; the last look's is one below its efficacy boundary (the design ends there)."""
    mass, previous, used, bounds = np.ones(1), 0, 0.0, []
    for k, (n, a) in enumerate(zip(counts, efficacy)):
        mass = _step(mass, n - previous, effect)
        previous = n
        if k == len(counts) - 1:
            bounds.append(a - 1)
            break
        allowed = spent(spending, beta, n / counts[-1]) - used
        head = np.cumsum(mass)  # head[b] = P(count <= b, still going)
        fits = np.flatnonzero(head[:max(0, min(a, len(head)))] <= allowed * (1 + 1e-12))
        b = int(fits[-1]) if len(fits) else -1
        bounds.append(b)
        used += float(head[b]) if b >= 0 else 0.0
        values = np.arange(len(mass))
        mass = np.where((values < a) & (values > b), mass, 0.0)
    return bounds


def binomial_design(counts, level: float, effect: float, spending: str = "obrien-fleming",
                    beta: float = 0.2, futility_spending: str | None = None) -> BinomialDesign:
    """The exact group-sequential sign test at these look counts: one-sided `level`, planned effect
    P(a pair in the claimed direction) = `effect`, futility bound from beta spending (beta 0: none)."""
    counts = tuple(int(n) for n in counts)
    if not counts or any(b <= a for a, b in zip((0, *counts), counts)):
        raise ValueError(f"look counts {list(counts)}: expected increasing positive counts")
    efficacy = _efficacy(counts, level, spending)
    futility = (_futility(counts, efficacy, effect, beta, futility_spending or spending) if beta > 0
                else [-1] * (len(counts) - 1) + [efficacy[-1] - 1])
    size = _operate(counts, efficacy, futility, 0.5, use_futility=False).hold
    return BinomialDesign(counts, tuple(efficacy), tuple(futility), level, effect, spending, size,
                          _operate(counts, efficacy, futility, 0.5, True),
                          _operate(counts, efficacy, futility, effect, True))


def stagewise_p(design: BinomialDesign, look: int, successes: int) -> float:
    """The exact stage-wise-ordering p-value (Jennison and Turnbull, ch. 8) of the outcome "stopped at look
    `look` (0-based) with `successes` pairs in the claimed direction": under the null (1/2 a pair)
    P(the count crosses the efficacy boundary at a look before) + P(it has not, and the count at this look
    is at least `successes`). The futility bound is ignored (non-binding), as in the design's size: a
    stop for futility, at the maximum or for any other reason is ordered by its look and count alike. At
    one look it is the exact one-sided sign test's p-value."""
    if not 0 <= look < len(design.counts) or not 0 <= successes <= design.counts[look] + 1:
        raise ValueError(f"look {look} with {successes} successes: outside the design's counts {design.counts}")
    mass, previous, crossed = np.ones(1), 0, 0.0
    for n, a in zip(design.counts[:look], design.efficacy[:look]):
        mass = _step(mass, n - previous, 0.5)
        previous = n
        crossed += float(mass[a:].sum())
        mass = np.where(np.arange(len(mass)) < a, mass, 0.0)
    mass = _step(mass, design.counts[look] - previous, 0.5)
    return min(1.0, crossed + float(mass[successes:].sum()))


def count_of_p(n: int, p: float) -> int:
    """The smallest count s of n pairs whose exact sign test p-value P0(count >= s) is at most p: the
    count a p-value seen at a look stands for (a look's decisions are taken on the p-value, ties of
    pairs dropped, against the boundaries at n: p_boundaries)."""
    tails = _stats().binom.sf(np.arange(n + 1) - 1, n, 0.5)
    fits = np.flatnonzero(tails <= p * (1 + 1e-9))
    return int(fits[0]) if len(fits) else n + 1


def sign_test_power(n: int, level: float, effect: float) -> float:
    """The exact power of the one-sided sign test of n pairs at `effect` (its size at most `level`)."""
    values = np.arange(n + 2)
    fits = np.flatnonzero(_stats().binom.sf(values - 1, n, 0.5) <= level)
    return float(_stats().binom.sf(fits[0] - 1, n, effect)) if len(fits) else 0.0


def fixed_sign_test_count(level: float, effect: float, power: float, stable: bool = False,
                          limit: int = 2000) -> int | None:
    """The smallest number of pairs at which the exact one-sided sign test reaches `power` at `effect`;
    `stable`: from which it never falls below it again up to `limit` (an exact test's power saws up and
    down with n: at 0.025 and 0.75 it first reaches 0.8 at 30 pairs, and stays there from 35)."""
    reached = [n for n in range(1, limit + 1) if sign_test_power(n, level, effect) >= power]
    if not reached:
        return None
    if not stable:
        return reached[0]
    below = sorted(set(range(1, limit + 1)) - set(reached))
    return below[-1] + 1 if below and below[-1] < limit else reached[0] if not below else None


def smallest_binomial_design(level: float, effect: float, power: float, looks: int,
                             spending: str = "obrien-fleming", limit: int = 2000) -> BinomialDesign | None:
    """The design of K equally spaced looks with the smallest maximum count that reaches `power`."""
    for maximum in range(looks, limit + 1):
        design = binomial_design(look_counts(maximum, looks), level, effect, spending, beta=1 - power)
        if design.power >= power:
            return design
    return None


@dataclass(frozen=True)
class SimulatedDesign:
    """A design on p-values: hold at look k when the p-value at counts[k] is at most thresholds[k]."""
    counts: tuple[int, ...]
    thresholds: tuple[float, ...]
    level: float
    spending: str


Draw = Callable[[np.random.Generator, int], object]  # data of `maximum` units under one law
PValue = Callable[[object, int], float]              # the p-value of the first n units of such data


def _p_values(draw: Draw, p_value: PValue, counts, draws: int, rng: np.random.Generator) -> np.ndarray:
    table = np.empty((draws, len(counts)))
    for i in range(draws):
        data = draw(rng, counts[-1])
        table[i] = [p_value(data, n) for n in counts]
    return table


def simulated_design(draw_null: Draw, p_value: PValue, counts, level: float, spending: str,
                     draws: int, rng: np.random.Generator) -> SimulatedDesign:
    """Thresholds on the p-value at each look such that, over `draws` null data sets, the share first
    crossing at look k is at most the alpha spent there (the thresholds are a p-value observed in the
    draws, or 0 where none fits)."""
    counts = tuple(int(n) for n in counts)
    table = _p_values(draw_null, p_value, counts, draws, rng)
    going, used, thresholds = np.ones(draws, bool), 0.0, []
    for k, n in enumerate(counts):
        allowed = spent(spending, level, n / counts[-1]) - used
        candidates = np.sort(table[going, k])
        fits = [c for c in np.unique(candidates) if np.count_nonzero(candidates <= c) <= allowed * draws]
        threshold = float(fits[-1]) if fits else 0.0
        crossed = going & (table[:, k] <= threshold)
        used += np.count_nonzero(crossed) / draws
        going &= ~crossed
        thresholds.append(threshold)
    return SimulatedDesign(counts, tuple(thresholds), level, spending)


def simulated_size(design: SimulatedDesign, draw: Draw, p_value: PValue, draws: int,
                   rng: np.random.Generator) -> tuple[float, float]:
    """P(hold) of a design on fresh draws of a law, and its Monte Carlo standard error."""
    table = _p_values(draw, p_value, design.counts, draws, rng)
    holds = float(np.mean((table <= np.asarray(design.thresholds)).any(axis=1)))
    return holds, math.sqrt(max(holds * (1 - holds), 1e-12) / draws)
