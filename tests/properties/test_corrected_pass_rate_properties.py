"""The corrected pass rate's interval covers the true pass rate at about its nominal level.

A simulated judge with known error rates (sensitivity Se, specificity Sp) judges a synthetic run of n cases whose
true pass rate is π; a calibration set of m cases (drawn from the same population, truth known: the settled human
verdicts) measures the judge. Over many seeds the 95% Lang–Reiczigel interval of the Rogan–Gladen estimate
(:func:`goldeval.intervals.rogan_gladen`) must hold π in about 95% of them; the raw pass rate's Wilson interval,
which ignores the judge's error, must not (a check that the simulation can tell the two apart).
"""

from __future__ import annotations

import numpy as np
import pytest

from goldeval.intervals import rogan_gladen, wilson_interval

SEEDS = 600


def _simulate(pi: float, se: float, sp: float, n: int, m: int, rng: np.random.Generator):
    truth = rng.random(n) < pi
    judged = np.where(truth, rng.random(n) < se, rng.random(n) >= sp)
    cal_truth = rng.random(m) < pi
    cal_judged = np.where(cal_truth, rng.random(m) < se, rng.random(m) >= sp)
    return (int(judged.sum()), n, int((cal_truth & cal_judged).sum()), int(cal_truth.sum()),
            int((~cal_truth & ~cal_judged).sum()), int((~cal_truth).sum()))


@pytest.mark.parametrize("pi, se, sp, n, m", [
    (0.7, 0.8, 0.9, 400, 150),  # a strict judge (fails 20% of true passes) on a mostly passing run
    (0.3, 0.95, 0.85, 1000, 100),  # a small calibration for a large run
])
def test_corrected_interval_covers_the_true_rate_at_its_nominal_level(pi, se, sp, n, m):
    rng = np.random.default_rng(20261204)
    covered = raw_covered = defined = 0
    for _ in range(SEEDS):
        k, n_, tp, n_pos, tn, n_neg = _simulate(pi, se, sp, n, m, rng)
        r = rogan_gladen(k, n_, tp=tp, n_pos=n_pos, tn=tn, n_neg=n_neg)
        if r["undefined"]:
            continue
        defined += 1
        covered += r["low"] <= pi <= r["high"]
        lo, hi = wilson_interval(k, n_)  # type: ignore[misc]
        raw_covered += lo <= pi <= hi
    assert defined == SEEDS  # with these sizes the calibration always measures the judge
    # 600 seeds: the coverage's standard error at 0.95 is 0.009; [0.925, 0.975] is about ±2.8 of them
    assert 0.925 <= covered / defined <= 0.975
    # the raw pass rate estimates π Se + (1 − π)(1 − Sp) (0.59 and 0.39 here): its interval rarely holds π
    assert raw_covered / defined < 0.5
