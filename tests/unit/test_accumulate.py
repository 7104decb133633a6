"""ExactSum: exact running sums whose mean equals statistics.mean to the last digit, however the values are split.

Expected values: statistics.mean (CPython's exact-fraction mean, the function Open-Scribe's run_eval.py computed
its published figures with) and the published figures themselves (Open-Scribe eval/results/primock57.json and
acibench.json: PriMock57 macro whole-note F1 0.27861937781204515 over 57 rows, ACI-Bench 0.4465338141844892 over 35).
"""

from __future__ import annotations

import json
import math
import pickle
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import EXAMPLES
from goldeval import InputError
from goldeval.scoring.sums import ExactSum

finite = st.floats(allow_nan=False, allow_infinity=False)
unit = st.floats(min_value=0.0, max_value=1.0)


def test_a_sum_that_naive_float_addition_gets_wrong():
    # 0.1 + 0.2 + 0.3 = 0.6000000000000001 in float arithmetic; the exact sum of those three doubles rounds to
    # 0.6 and its third to 0.2 (statistics.mean agrees).
    acc = ExactSum([0.1, 0.2, 0.3])
    assert sum([0.1, 0.2, 0.3]) == 0.6000000000000001
    assert acc.sum() == 0.6
    assert acc.mean() == 0.2 == statistics.mean([0.1, 0.2, 0.3])
    # 1e100 cancels exactly: float addition loses the 1.0 entirely
    big = ExactSum([1e100, 1.0, -1e100])
    assert big.sum() == 1.0 and big.mean() == statistics.mean([1e100, 1.0, -1e100]) == 1 / 3


@settings(max_examples=300, deadline=None)
@given(st.lists(finite, min_size=1, max_size=60))
def test_mean_equals_statistics_mean(xs):
    assert ExactSum(xs).mean() == statistics.mean(xs)


@settings(max_examples=300, deadline=None)
@given(st.lists(unit, min_size=1, max_size=60), st.lists(st.integers(0, 60), max_size=5))
def test_any_split_merges_to_the_same_mean(xs, cuts):
    bounds = sorted({0, len(xs), *(min(c, len(xs)) for c in cuts)})
    parts = [ExactSum(xs[a:b]) for a, b in zip(bounds, bounds[1:])]
    merged = ExactSum.merged(parts)
    assert merged.count == len(xs)
    assert merged.mean() == statistics.mean(xs)
    assert merged == ExactSum(xs)


@settings(max_examples=300, deadline=None)
@given(st.lists(finite, max_size=40))
def test_state_round_trips_through_json_exactly(xs):
    acc = ExactSum(xs)
    state = json.loads(json.dumps(acc.to_state()))
    back = ExactSum.from_state(state)
    assert back == acc
    assert back.total() == acc.total()
    # partials are non-overlapping: their exact sum is the total, and there are few of them
    assert len(state["partials"]) <= 40
    assert pickle.loads(pickle.dumps(acc)) == acc


def test_merging_serialised_states_as_a_driver_would():
    values = [i / 7 for i in range(1, 1001)]
    states = [ExactSum(values[i:i + 97]).to_state() for i in range(0, len(values), 97)]
    driver = ExactSum.merged(ExactSum.from_state(s) for s in states)
    assert driver.mean() == statistics.mean(values)
    assert driver.count == 1000


def test_published_primock57_and_acibench_means_from_per_example_scores():
    from goldeval.pipeline.files import score_file

    for name, f1 in (("openscribe_primock57_predictions.jsonl", 0.27861937781204515),
                     ("openscribe_acibench_predictions.jsonl", 0.4465338141844892)):
        per = score_file(EXAMPLES / name)["per_example"]
        values = [r["whole_note"]["f1"] for r in per]
        half = len(values) // 2
        acc = ExactSum(values[:half])
        acc.merge(ExactSum(values[half:][::-1]))
        assert acc.mean() == f1  # exactly the published figure, not approximately


def test_ints_keep_statistics_mean_type_rule():
    assert ExactSum([1, 1]).mean() == 1 and type(ExactSum([1, 1]).mean()) is int
    assert ExactSum([1, 2]).mean() == 1.5 and type(ExactSum([1, 2]).mean()) is float
    assert type(ExactSum([1, 1.0]).mean()) is float
    assert ExactSum([3, 4]).sum() == 7 and type(ExactSum([3, 4]).sum()) is int


def test_empty_mean_is_none_and_sum_zero():
    acc = ExactSum()
    assert acc.mean() is None and acc.count == 0 and len(acc) == 0
    assert acc.sum() == 0
    assert ExactSum.from_state(acc.to_state()) == acc


def test_non_finite_values_as_statistics_mean():
    assert ExactSum([1.0, math.inf]).mean() == math.inf == statistics.mean([1.0, math.inf])
    assert math.isnan(ExactSum([math.inf, -math.inf]).mean())
    assert math.isnan(ExactSum([0.5, math.nan]).mean())
    a, b = ExactSum([math.inf]), ExactSum([0.5])
    b.merge(a)
    assert b.mean() == math.inf and b.count == 2


def test_numpy_scalars_are_numbers():
    np = pytest.importorskip("numpy")
    assert ExactSum([np.float64(0.1), np.int64(2)]).mean() == statistics.mean([0.1, 2])


@pytest.mark.parametrize("bad", [True, "0.5", None, [0.5]])
def test_non_numbers_refused(bad):
    acc = ExactSum([0.25])
    with pytest.raises(InputError, match=r"ExactSum: expected a number \(int or float\), got"):
        acc.update([0.5, bad])
    assert acc.count == 2 and acc.sum() == 0.75  # the values before the bad one stay added


def test_bad_state_and_merge_refused():
    with pytest.raises(InputError, match="Pass what ExactSum.to_state"):
        ExactSum.from_state({"count": 1})
    with pytest.raises(InputError, match="partials a list of finite floats"):
        ExactSum.from_state({"count": 1, "partials": ["0.5"], "special": None, "all_int": False})
    with pytest.raises(InputError, match="expected an ExactSum"):
        ExactSum().merge([0.5])


def test_memory_is_bounded_by_exponents_not_count():
    acc = ExactSum()
    acc.update(i / 1000 for i in range(200_000))
    assert acc.count == 200_000
    assert len(acc._partials) <= 2098  # one entry per power-of-two denominator at most
    assert acc.mean() == statistics.mean([i / 1000 for i in range(200_000)])
