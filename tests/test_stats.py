"""Intervals on campaigns whose true answer is known by construction."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_explore_suff import stats


def clustered_arm(rng: random.Random, p: float, runs: int, spread: float = 0.25) -> list[tuple[int, int]]:
    """Runs of 1-5 calls; each run has its own rate around p, so calls in a run are correlated."""
    out = []
    for _ in range(runs):
        n = rng.randint(1, 5)
        rate = min(1.0, max(0.0, rng.gauss(p, spread)))
        out.append((sum(rng.random() < rate for _ in range(n)), n))
    return out


def true_share(p: float, spread: float = 0.25, draws: int = 200_000) -> float:
    """The expected ratio sum(k)/sum(n) when each run's rate is clipped: computed, not assumed."""
    rng = random.Random(99)
    return sum(min(1.0, max(0.0, rng.gauss(p, spread))) for _ in range(draws)) / draws


@pytest.mark.parametrize("p", [0.8, 0.5])
def test_the_clustered_interval_covers_the_truth_at_about_the_stated_rate(p):
    rng = random.Random(20261130)
    truth = true_share(p)
    trials = 400
    covered = sum(
        s.lo <= truth <= s.hi for s in (stats.share(clustered_arm(rng, p, runs=40)) for _ in range(trials))
    )
    assert 0.91 <= covered / trials <= 0.99, covered / trials


def test_ignoring_clustering_would_undercover():
    """The reason for the clustered method: plain Wilson over calls is too narrow here."""
    rng = random.Random(7)
    truth = true_share(0.5, spread=0.35)
    trials = 400
    plain = clustered_width = 0
    for _ in range(trials):
        arm = clustered_arm(rng, 0.5, runs=40, spread=0.35)
        k, n = sum(x for x, _ in arm), sum(y for _, y in arm)
        lo, hi = stats.wilson(k, n)
        plain += lo <= truth <= hi
        s = stats.share(arm)
        clustered_width += s.lo <= truth <= s.hi
    assert plain / trials < 0.91 <= clustered_width / trials


def test_the_difference_between_an_80_and_a_50_percent_arm_covers_the_truth():
    rng = random.Random(11)
    truth = true_share(0.8) - true_share(0.5)
    trials = 300
    covered = 0
    for _ in range(trials):
        d = stats.difference(
            stats.share(clustered_arm(rng, 0.8, 40)), stats.share(clustered_arm(rng, 0.5, 40))
        )
        covered += d.lo <= truth <= d.hi
    assert 0.91 <= covered / trials <= 0.99, covered / trials


def test_pairing_by_group_removes_between_group_spread():
    """Groups (repos) differ a lot; both arms ran every group. The paired interval is narrower."""
    rng = random.Random(3)
    a, b = {}, {}
    for g, base in enumerate([0.2, 0.5, 0.9, 0.35, 0.7, 0.6]):
        a[str(g)] = clustered_arm(rng, min(1.0, base + 0.1), 8, spread=0.05)
        b[str(g)] = clustered_arm(rng, base, 8, spread=0.05)
    paired = stats.paired_difference(a, b)
    flat_a = [run for runs in a.values() for run in runs]
    flat_b = [run for runs in b.values() for run in runs]
    unpaired = stats.difference(stats.share(flat_a), stats.share(flat_b))
    assert paired is not None and paired.paired and paired.groups == 6
    assert paired.hi - paired.lo < unpaired.hi - unpaired.lo


def test_edge_cases_fall_back_to_wilson():
    assert stats.share([]).method == "wilson"
    one = stats.share([(1, 3)])
    assert (one.method, one.lo < 1 / 3 < one.hi) == ("wilson", True)
    zero = stats.share([(0, 2), (0, 3)])
    assert (zero.p, zero.lo, zero.method) == (0.0, 0.0, "wilson") and zero.hi > 0 and zero.var > 0


def test_the_median_ignores_missing_values():
    assert stats.median([3, None, 1, 2]) == 2
    assert stats.median([1, 2]) == 1.5
    assert stats.median([None]) is None


_value = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)


@given(
    st.lists(_value, max_size=9)
    | st.lists(st.integers(0, 9) | st.floats(-5, 5), max_size=9)
    | st.lists(st.integers(-(2**70), 2**70), max_size=9)
)
def test_the_median_of_an_all_number_column_is_the_median_of_its_numbers(values):
    # The fast path (every value an int or a float) must give what filtering value by value gives.
    numbers = sorted(float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool))
    mid = len(numbers) // 2
    expected = (
        None if not numbers else numbers[mid] if len(numbers) % 2 else (numbers[mid - 1] + numbers[mid]) / 2
    )
    got = stats.median(values)
    assert repr(got) == repr(expected)
    assert repr(stats.median(iter(values))) == repr(expected)


_FIGURE = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.none(),
    st.booleans(),
)


@given(st.lists(_FIGURE, max_size=40))
def test_a_compact_column_gives_back_each_value_as_it_came(values):
    # report._Column holds a column of the report's figures in 8 bytes a value while it can
    # (the end of the session is where memory peaks); what it gives back must be the list's
    # values with their types (an int stays an int, a float a float, True is not 1).
    from pytest_explore_suff.report import _Column

    column = _Column()
    for v in values:
        column.add(v)
    back = list(column.values)
    assert [(type(v), repr(v)) for v in back] == [(type(v), repr(v)) for v in values]
    assert repr(stats.median(column.values)) == repr(stats.median(values))


@given(st.lists(st.tuples(st.integers(0, 10**9), st.integers(-5, 10**9)), max_size=40))
def test_a_ratio_read_from_two_columns_is_the_ratio_of_the_pairs(pairs):
    used, envelope = [u for u, _ in pairs], [e for _, e in pairs]
    assert repr(stats.ratio_of(used, envelope)) == repr(stats.ratio(pairs))
