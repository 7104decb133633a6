"""Confidence intervals for the numbers goldeval gates and compares: proportions, paired differences of proportions,
and the label F1.

* A **proportion** (pass rate, precision, recall, missed per 100, accuracy, agreement) gets the Wilson score
  interval, computed by ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``. Unlike a percentile
  bootstrap of the 0/1 outcomes it does not collapse at 0% and 100%: 21/21 gives [0.845, 1], 0/15 gives
  [0, 0.204].
* A **paired difference of two proportions** (the pass rate of run B minus run A over the same cases) gets
  Newcombe's hybrid score interval for paired data (method 10 of Newcombe 1998): the two runs' Wilson limits
  combined by "square and add", with the correlation of the paired outcomes. At −100 pt over 14 discordant pairs it
  is [−100, −69.6] pt, not a point.
* The **label F1** (2 tp / (2 tp + fp + fn)) is no proportion of cases; it gets a percentile bootstrap over cases,
  drawn as multinomial counts of the four outcomes (the same distribution as resampling case indices).

Means (token F1 over examples) keep the paired percentile bootstrap of :func:`goldeval.runs.compare.paired_bootstrap`.

Source: E. B. Wilson, "Probable inference, the law of succession, and statistical inference", JASA 22 (1927);
R. G. Newcombe, "Two-sided confidence intervals for the single proportion: comparison of seven methods", Stat Med
17 (1998) 857–872 (Wilson's interval recommended); R. G. Newcombe, "Improved confidence intervals for the difference
between binomial proportions based on paired data", Stat Med 17 (1998) 2635–2650, method 10; Fagerland, Lydersen &
Laake, *Statistical Analysis of Contingency Tables* (2017) §8.5 (the same interval, "Newcombe square-and-add");
Efron & Tibshirani, *An Introduction to the Bootstrap* (1993) ch. 13 (percentile interval).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from goldeval.errors import InputError

__all__ = ["WILSON", "NEWCOMBE_PAIRED", "BOOTSTRAP_F1", "wilson_interval", "newcombe_paired_difference", "bootstrap_f1",
           "interval_words"]

#: ``interval_method`` of a proportion's interval.
WILSON = "wilson"
#: ``interval_method`` of a paired difference of proportions.
NEWCOMBE_PAIRED = "newcombe_paired"
#: ``interval_method`` of the label F1's interval.
BOOTSTRAP_F1 = "bootstrap_percentile"

_NAMES = {
    WILSON: "Wilson score interval",
    NEWCOMBE_PAIRED: "Newcombe's paired score interval (Newcombe 1998, method 10)",
    BOOTSTRAP_F1: "bootstrap percentile interval",
}


def interval_words(method: str, confidence: float) -> str:
    """How a page or a terminal names an interval: ``"95% Wilson score interval"``.

    Args:
        method: An ``interval_method`` (:data:`WILSON`, :data:`NEWCOMBE_PAIRED`, :data:`BOOTSTRAP_F1`); another
            string is shown as given.
        confidence: The interval's coverage in (0, 1).

    Returns:
        The coverage in percent and the method's name.

    Example:
        >>> interval_words("wilson", 0.95)
        '95% Wilson score interval'
    """
    return f"{round(100 * confidence, 1):g}% {_NAMES.get(method, method)}"


def _check_confidence(confidence: float, where: str) -> None:
    if not (isinstance(confidence, (int, float)) and 0.0 < confidence < 1.0):
        raise InputError(f"{where}: confidence must be in (0, 1), got {confidence!r}. Give e.g. 0.95.")


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of the proportion ``successes / n``.

    Args:
        successes: Count of successes, ``0 <= successes <= n`` (e.g. matches, true positives, misses).
        n: Count of trials (e.g. decided cases, predicted positives, gold positives), ≥ 0.
        confidence: Coverage in (0, 1); default 0.95.

    Returns:
        ``(low, high)`` within [0, 1], or ``None`` when ``n`` is 0 (no evidence, no interval). The interval has
        positive width at 0 and at ``n`` successes.

    Raises:
        InputError: a negative count, ``successes > n``, or ``confidence`` outside (0, 1).

    Source:
        Wilson (1927); Newcombe, Stat Med 17 (1998) 857–872, method 3 (no continuity correction). Computed by
        ``scipy.stats.binomtest(successes, n).proportion_ci(confidence, method="wilson")``; equal to
        ``statsmodels.stats.proportion.proportion_confint(successes, n, method="wilson")``.

    Example:
        >>> [round(x, 3) for x in wilson_interval(21, 21)]
        [0.845, 1.0]
    """
    _check_confidence(confidence, "wilson_interval")
    if isinstance(successes, bool) or isinstance(n, bool) or not isinstance(successes, int) or not isinstance(n, int):
        raise InputError(f"wilson_interval: counts must be whole numbers, got successes={successes!r}, n={n!r}.")
    if n < 0 or successes < 0 or successes > n:
        raise InputError(f"wilson_interval: need 0 <= successes <= n, got successes={successes}, n={n}.")
    if n == 0:
        return None
    from scipy.stats import binomtest  # start-up: scipy loads only when an interval is computed

    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def newcombe_paired_difference(pass_pass: int, pass_fail: int, fail_pass: int, fail_fail: int, *,
                               confidence: float = 0.95) -> dict[str, Any]:
    """Newcombe's score interval for the difference of two paired proportions, B − A.

    The cases decided in both runs form a 2×2 table: ``pass_pass`` passed in both, ``pass_fail`` passed in A and
    failed in B, ``fail_pass`` failed in A and passed in B, ``fail_fail`` failed in both. The difference is
    ``p_B − p_A = (fail_pass − pass_fail) / n``. With Wilson limits ``(l_A, u_A)`` and ``(l_B, u_B)`` of the two
    pass rates and φ the correlation of the paired outcomes::

        low  = d − sqrt((p_B − l_B)² − 2φ (p_B − l_B)(u_A − p_A) + (u_A − p_A)²)
        high = d + sqrt((u_B − p_B)² − 2φ (u_B − p_B)(p_A − l_A) + (p_A − l_A)²)

    φ = (ad − bc) / sqrt(product of the four margins), taken as 0 when a margin is 0, and shrunk as Newcombe
    prescribes: ad − bc is replaced by ad − bc − n/2 when it exceeds n/2, by 0 when it is between 0 and n/2.

    Args:
        pass_pass, pass_fail, fail_pass, fail_fail: The four cells (counts ≥ 0), A's outcome then B's.
        confidence: Coverage in (0, 1); default 0.95.

    Returns:
        ``{"n_pairs", "diff", "ci": [low, high] | None, "confidence", "interval_method": "newcombe_paired",
        "note"}``; ``diff`` is a fraction in [−1, 1]. With no pair, ``diff`` and ``ci`` are ``None`` and ``note``
        says why.

    Raises:
        InputError: a negative count, or ``confidence`` outside (0, 1).

    Source:
        Newcombe, Stat Med 17 (1998) 2635–2650, method 10; Fagerland, Lydersen & Laake (2017) §8.5: for their
        Cavo et al. (2012) table (59, 6, 16, 80) the interval of A − B is −0.0621 (−0.1186 to −0.0046), so B − A
        is 0.0621 (0.0046 to 0.1186).

    Example:
        >>> r = newcombe_paired_difference(0, 14, 0, 0)
        >>> r["diff"], [round(x, 3) for x in r["ci"]]
        (-1.0, [-1.0, -0.696])
    """
    _check_confidence(confidence, "newcombe_paired_difference")
    cells = (pass_pass, pass_fail, fail_pass, fail_fail)
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in cells):
        raise InputError(f"newcombe_paired_difference: counts must be whole numbers ≥ 0, got {cells}.")
    n = sum(cells)
    out: dict[str, Any] = {"n_pairs": n, "confidence": confidence, "interval_method": NEWCOMBE_PAIRED}
    if n == 0:
        return {**out, "diff": None, "ci": None, "note": "no pair: no case was decided (pass or fail) in both runs"}
    a, b, c, d = cells
    pass_a, pass_b = a + b, a + c
    p_a, p_b = pass_a / n, pass_b / n
    l_a, u_a = wilson_interval(pass_a, n, confidence=confidence)  # type: ignore[misc]  # n > 0: never None
    l_b, u_b = wilson_interval(pass_b, n, confidence=confidence)  # type: ignore[misc]
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = 0.0
    if margins:
        cross = a * d - b * c
        shrunk = cross - n / 2 if cross > n / 2 else (0.0 if cross >= 0 else cross)
        phi = shrunk / math.sqrt(margins)
    diff = p_b - p_a
    down = math.sqrt(max(0.0, (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2))
    up = math.sqrt(max(0.0, (u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a) + (p_a - l_a) ** 2))
    return {**out, "diff": diff, "ci": [max(-1.0, diff - down), min(1.0, diff + up)], "note": None}


def bootstrap_f1(outcomes: Mapping[str, int], *, confidence: float = 0.95, n_resamples: int = 2000,
                 seed: int = 0) -> list[float] | None:
    """Percentile bootstrap interval of the positive label's F1, resampling cases.

    A resample draws ``n`` cases with replacement; since a case is one of four outcomes, that is one multinomial
    draw of the outcome counts (the same distribution as resampling indices, in O(1) per resample).

    Args:
        outcomes: Counts ``{"tp", "fp", "fn", "tn"}`` (a missing key counts 0).
        confidence: Coverage in (0, 1). n_resamples: Resamples (≥ 100). seed: Seed of ``numpy.random.default_rng``.

    Returns:
        ``[low, high]``, or ``None`` with no case. A resample with no positive anywhere scores F1 0.0, as the point
        value does.

    Raises:
        InputError: ``confidence`` outside (0, 1), fewer than 100 resamples, or a negative count.

    Source: Efron & Tibshirani (1993) ch. 13 (percentile interval).

    Example:
        >>> bootstrap_f1({"tp": 10, "fp": 0, "fn": 0, "tn": 5}, n_resamples=200)
        [1.0, 1.0]
    """
    _check_confidence(confidence, "bootstrap_f1")
    if n_resamples < 100:
        raise InputError(f"bootstrap_f1: n_resamples must be ≥ 100, got {n_resamples}.")
    keys = ("tp", "fp", "fn", "tn")
    counts = [int(outcomes.get(k, 0) or 0) for k in keys]
    if any(c < 0 for c in counts):
        raise InputError(f"bootstrap_f1: outcome counts must be ≥ 0, got {dict(zip(keys, counts))}.")
    n = sum(counts)
    if n == 0:
        return None
    import numpy as np  # start-up: numpy loads only when an interval is computed

    draws = np.random.default_rng(seed).multinomial(n, np.asarray(counts, dtype=float) / n, size=n_resamples)
    tp, fp, fn = draws[:, 0], draws[:, 1], draws[:, 2]
    denom = 2 * tp + fp + fn
    f1 = np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(f1, [alpha, 1 - alpha])
    return [float(lo), float(hi)]
