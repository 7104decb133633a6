"""Confidence intervals for the numbers goldeval gates and compares: proportions, paired differences of proportions,
and the label F1.

* A **proportion** (pass rate, precision, recall, missed per 100, accuracy, agreement) gets the Wilson score
  interval, as ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`` computes it (within 1e-15).
  Unlike a percentile bootstrap of the 0/1 outcomes it does not collapse at 0% and 100%: 21/21 gives [0.845, 1],
  0/15 gives [0, 0.204].
* A **paired difference of two proportions** (the pass rate of run B minus run A over the same cases) gets
  Newcombe's hybrid score interval for paired data (method 10 of Newcombe 1998): the two runs' Wilson limits
  combined by "square and add", with the correlation of the paired outcomes. At −100 pt over 14 discordant pairs it
  is [−100, −69.6] pt, not a point.
* The **label F1** (2 tp / (2 tp + fp + fn)) is no proportion of cases; it gets a percentile bootstrap over cases,
  drawn as multinomial counts of the four outcomes (the same distribution as resampling case indices).
* A **proportion measured by an imperfect classifier** (the pass rate an LLM judge decides, with the judge's
  sensitivity and specificity measured on a calibration set of human verdicts) gets the Rogan–Gladen correction and
  the Lang–Reiczigel interval, which carries the sampling error of the run *and* of the calibration
  (:func:`rogan_gladen`).

Means (token F1 over examples) keep the paired percentile bootstrap of :func:`goldeval.runs.compare.paired_bootstrap`.

Source: E. B. Wilson, "Probable inference, the law of succession, and statistical inference", JASA 22 (1927);
R. G. Newcombe, "Two-sided confidence intervals for the single proportion: comparison of seven methods", Stat Med
17 (1998) 857–872 (Wilson's interval recommended); R. G. Newcombe, "Improved confidence intervals for the difference
between binomial proportions based on paired data", Stat Med 17 (1998) 2635–2650, method 10; Fagerland, Lydersen &
Laake, *Statistical Analysis of Contingency Tables* (2017) §8.5 (the same interval, "Newcombe square-and-add");
Efron & Tibshirani, *An Introduction to the Bootstrap* (1993) ch. 13 (percentile interval); W. J. Rogan & B. Gladen,
"Estimating prevalence from the results of a screening test", Am J Epidemiol 107 (1978) 71–76; Z. Lang & J.
Reiczigel, "Confidence limits for prevalence of disease adjusted for estimated sensitivity and specificity", Prev Vet
Med 113 (2014) 13–22.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from statistics import NormalDist
from typing import Any

from goldeval.errors import InputError

__all__ = ["WILSON", "NEWCOMBE_PAIRED", "BOOTSTRAP_F1", "LANG_REICZIGEL", "MIN_CALIBRATION_PER_CLASS", "wilson_interval",
           "newcombe_paired_difference", "bootstrap_f1", "rogan_gladen", "corrected_detail", "corrected_words",
           "interval_words"]

#: ``interval_method`` of a proportion's interval.
WILSON = "wilson"
#: ``interval_method`` of a paired difference of proportions.
NEWCOMBE_PAIRED = "newcombe_paired"
#: ``interval_method`` of the label F1's interval.
BOOTSTRAP_F1 = "bootstrap_percentile"
#: ``interval_method`` of a proportion corrected for a classifier's measured error (Rogan–Gladen estimate).
LANG_REICZIGEL = "lang_reiczigel"
#: The fewest calibration cases of each class (human pass, human fail) a correction is computed from: below it the
#: judge's sensitivity or specificity rests on too few verdicts, and the corrected rate is undefined.
MIN_CALIBRATION_PER_CLASS = 10

_NAMES = {
    WILSON: "Wilson score interval",
    NEWCOMBE_PAIRED: "Newcombe's paired score interval (Newcombe 1998, method 10)",
    BOOTSTRAP_F1: "bootstrap percentile interval",
    LANG_REICZIGEL: "Lang–Reiczigel interval (Rogan–Gladen estimate; run and calibration error)",
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
        Wilson (1927); Newcombe, Stat Med 17 (1998) 857–872, method 3 (no continuity correction), as
        ``scipy.stats.binomtest(successes, n).proportion_ci(confidence, method="wilson")`` evaluates it (the same
        expression; z from :class:`statistics.NormalDist`, which may differ from scipy's ``ndtri`` in the last
        bit), so equal to it and to ``statsmodels.stats.proportion.proportion_confint(successes, n,
        method="wilson")`` within 1e-15.

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
    # Newcombe (1998) eq. 3, in the order scipy's binomtest(...).proportion_ci(method="wilson") evaluates it (a test
    # holds the two within 1e-15 over a grid). Not scipy itself: `import scipy.stats` costs ~1.3 s and ~75 MiB, and
    # this interval is on every labels, judge and report summary. z is the standard library's normal quantile.
    z = NormalDist().inv_cdf(0.5 + 0.5 * confidence)
    p = successes / n
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
    low = 0.0 if successes == 0 else center - delta
    high = 1.0 if successes == n else center + delta
    return low, high


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


def _count_ok(*counts: Any) -> bool:
    return all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts)


def rogan_gladen(k: int, n: int, *, tp: int, n_pos: int, tn: int, n_neg: int, confidence: float = 0.95,
                 min_per_class: int = MIN_CALIBRATION_PER_CLASS) -> dict[str, Any]:
    """A proportion a classifier measured, corrected for the classifier's measured sensitivity and specificity.

    The classifier (the judge) called ``k`` of ``n`` cases positive (pass): the apparent rate is ``AP = k / n``. On a
    calibration set with known truth (settled human verdicts) it called ``tp`` of the ``n_pos`` true positives
    positive and ``tn`` of the ``n_neg`` true negatives negative: sensitivity ``Se = tp / n_pos``, specificity
    ``Sp = tn / n_neg``. Since ``E[AP] = π Se + (1 − π)(1 − Sp)``, the true rate is estimated by Rogan–Gladen::

        π̂ = (AP + Sp − 1) / (Se + Sp − 1)

    The interval is Lang & Reiczigel's (2014): the delta-method variance of π̂, which adds the run's binomial
    variance of AP and the calibration's binomial variances of Se and Sp (the three samples independent), computed on
    Agresti–Coull-style adjusted counts (z²/2 successes and z²/2 failures added to the run's count, 1 and 1 to each
    calibration class) and shifted by their bias term::

        AP' = (k + z²/2) / (n + z²)      Se' = (tp + 1) / (n_pos + 2)      Sp' = (tn + 1) / (n_neg + 2)
        P'  = (AP' + Sp' − 1) / (Se' + Sp' − 1)
        V   = [AP'(1−AP')/(n + z²) + P'² Se'(1−Se')/(n_pos + 2) + (1−P')² Sp'(1−Sp')/(n_neg + 2)] / (Se' + Sp' − 1)²
        d   = 2 z² [P' Se'(1−Se')/(n_pos + 2) − (1−P') Sp'(1−Sp')/(n_neg + 2)]
        CI  = P' + d ± z √V

    The estimate and both ends are clipped to [0, 1]; ``clipped`` says so and the unclipped values are kept.

    Args:
        k: Cases the classifier called positive (``0 <= k <= n``). n: Cases it decided (≥ 0).
        tp: Calibration true positives it called positive (``0 <= tp <= n_pos``). n_pos: Calibration true positives.
        tn: Calibration true negatives it called negative (``0 <= tn <= n_neg``). n_neg: Calibration true negatives.
        confidence: Coverage in (0, 1); default 0.95 (the method was studied at 90–99%).
        min_per_class: The fewest calibration cases of each class; default :data:`MIN_CALIBRATION_PER_CLASS` (10).

    Returns:
        ``{"estimate", "low", "high"}`` (fractions in [0, 1], ``None`` when undefined), ``"estimate_unclipped"``,
        ``"low_unclipped"``, ``"high_unclipped"``, ``"clipped"`` (bool) and ``"clipped_note"``; ``"raw"`` (AP),
        ``"sensitivity"``, ``"specificity"``, ``"youden_j"`` (Se + Sp − 1) and ``"youden_j_low"`` (the low end of
        its Newcombe score interval); the counts; ``"confidence"``, ``"interval_method"`` (``lang_reiczigel``),
        ``"undefined"`` (why there is no estimate, else ``None``) and ``"warnings"``.
        Undefined when ``n`` is 0, when either calibration class has fewer than ``min_per_class`` cases, or when the
        classifier is no better than chance: the low end of the interval of Youden's J (Newcombe's hybrid score
        interval for a difference of independent proportions, Se − (1 − Sp)) is ≤ 0, so the denominator
        Se + Sp − 1 may be 0 or negative and the correction has no sign.

    Raises:
        InputError: a count that is not a whole number ≥ 0, a count of successes above its total, ``confidence``
            outside (0, 1), ``min_per_class`` below 1.

    Source:
        Rogan & Gladen, Am J Epidemiol 107 (1978) 71–76 (the estimate); Lang & Reiczigel, Prev Vet Med 113 (2014)
        13–22, eqs. 4, 6, 7, 16, 17, with eq. 4's (1 + P)² read as (1 − P)² (the typo noted by M. P. Fay, R package
        ``asht``, ``prevSeSp``); Newcombe, Stat Med 17 (1998) 873–890, method 10 (the interval of J). Their
        example 4 (AP 259/509, Se 84/127, Sp 96/109) gives 0.58 to 0.87.

    Example:
        >>> r = rogan_gladen(259, 509, tp=84, n_pos=127, tn=96, n_neg=109)
        >>> round(r["estimate"], 3), round(r["low"], 2), round(r["high"], 2)
        (0.719, 0.58, 0.87)
    """
    _check_confidence(confidence, "rogan_gladen")
    if not _count_ok(k, n, tp, n_pos, tn, n_neg) or k > n or tp > n_pos or tn > n_neg:
        raise InputError(f"rogan_gladen: need whole counts with 0 <= k <= n, 0 <= tp <= n_pos, 0 <= tn <= n_neg; got "
                         f"k={k!r}, n={n!r}, tp={tp!r}, n_pos={n_pos!r}, tn={tn!r}, n_neg={n_neg!r}.")
    if not _count_ok(min_per_class) or min_per_class < 1:
        raise InputError(f"rogan_gladen: min_per_class must be a whole number ≥ 1, got {min_per_class!r}.")
    se = tp / n_pos if n_pos else None
    sp = tn / n_neg if n_neg else None
    out: dict[str, Any] = {
        "estimate": None, "low": None, "high": None, "estimate_unclipped": None, "low_unclipped": None,
        "high_unclipped": None, "clipped": False, "clipped_note": None, "raw": k / n if n else None,
        "sensitivity": se, "specificity": sp, "youden_j": None, "youden_j_low": None,
        "k": k, "n": n, "tp": tp, "n_pos": n_pos, "tn": tn, "n_neg": n_neg,
        "confidence": confidence, "interval_method": LANG_REICZIGEL, "min_per_class": min_per_class,
        "undefined": None, "warnings": [],
    }
    if n_pos < min_per_class or n_neg < min_per_class:
        out["undefined"] = (f"the calibration holds {n_pos} human-pass and {n_neg} human-fail case(s) with a decided "
                            f"judge verdict; at least {min_per_class} of each are needed to measure the judge's "
                            "sensitivity and specificity")
        return out
    assert se is not None and sp is not None  # both classes hold cases (min_per_class >= 1)
    j = se + sp - 1
    l_se, _ = wilson_interval(tp, n_pos, confidence=confidence)  # type: ignore[misc]  # n_pos > 0: never None
    l_sp, _ = wilson_interval(tn, n_neg, confidence=confidence)  # type: ignore[misc]  # n_neg > 0
    j_low = j - math.sqrt((se - l_se) ** 2 + (sp - l_sp) ** 2)
    out["youden_j"], out["youden_j_low"] = j, j_low
    if j_low <= 0:
        out["undefined"] = (f"the judge is no better than chance on the calibration: sensitivity {se:.3f} + specificity "
                            f"{sp:.3f} - 1 = {j:.3f}, and the low end of its {round(100 * confidence, 1):g}% interval "
                            f"is {j_low:.3f} (not above 0)")
        return out
    if n == 0:
        out["undefined"] = "no case was decided (match or no_match) on this set"
        return out
    if se < 0.5 or sp < 0.5:
        out["warnings"].append(f"sensitivity {se:.3f} or specificity {sp:.3f} is below 0.5, where Lang & Reiczigel "
                               "did not study the interval's coverage")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    z2 = z * z
    ap = k / n
    est = (ap + sp - 1) / j
    n_ap, ap_a = n + z2, (k + z2 / 2) / (n + z2)
    n_se, se_a = n_pos + 2, (tp + 1) / (n_pos + 2)
    n_sp, sp_a = n_neg + 2, (tn + 1) / (n_neg + 2)
    j_a = se_a + sp_a - 1
    p_a = (ap_a + sp_a - 1) / j_a
    var_se, var_sp = se_a * (1 - se_a) / n_se, sp_a * (1 - sp_a) / n_sp
    var = (ap_a * (1 - ap_a) / n_ap + p_a ** 2 * var_se + (1 - p_a) ** 2 * var_sp) / j_a ** 2
    centre = p_a + 2 * z2 * (p_a * var_se - (1 - p_a) * var_sp)
    low, high = centre - z * math.sqrt(var), centre + z * math.sqrt(var)
    clip = [name for name, v in (("estimate", est), ("low", low), ("high", high)) if not 0.0 <= v <= 1.0]
    out.update({
        "estimate_unclipped": est, "low_unclipped": low, "high_unclipped": high,
        "estimate": min(1.0, max(0.0, est)), "low": min(1.0, max(0.0, low)), "high": min(1.0, max(0.0, high)),
        "clipped": bool(clip),
        "clipped_note": None if not clip else (
            "clipped to [0, 1]: " + ", ".join(f"{name} {v:.4f}" for name, v in (("estimate", est), ("low", low), ("high", high))
                                              if name in clip)),
    })
    return out


def corrected_detail(corrected: Mapping[str, Any]) -> str:
    """What a corrected pass rate rests on, in words: its interval, whether it was clipped, the raw rate and the
    judge's measured rates, the calibration; or why it is undefined. (:func:`corrected_words` puts the number first.)

    Args:
        corrected: :func:`rogan_gladen`'s dict (optionally with ``"calibration"``: ``{"source", …}``).

    Returns:
        The words, percentages to one decimal.

    Example:
        >>> print(corrected_detail(rogan_gladen(20, 100, tp=6, n_pos=10, tn=5, n_neg=10)))
        undefined: the judge is no better than chance on the calibration: sensitivity 0.600 + specificity 0.500 - 1 = 0.100, and the low end of its 95% interval is -0.290 (not above 0)
    """
    cal = corrected.get("calibration")
    source = cal.get("source") if isinstance(cal, Mapping) else None
    on = f" on calibration {source}" if source else ""
    if corrected.get("undefined"):
        return f"undefined: {corrected['undefined']}{on}"
    rates = (f"judge sensitivity {corrected['sensitivity']:.3f} = {corrected['tp']}/{corrected['n_pos']}, "
             f"specificity {corrected['specificity']:.3f} = {corrected['tn']}/{corrected['n_neg']}")
    conf = round(100 * float(corrected.get("confidence") or 0.95), 1)
    clipped = f"; {corrected['clipped_note']}" if corrected.get("clipped") else ""
    raw = f"; raw {corrected['raw']:.1%}" if corrected.get("raw") is not None else ""
    warned = "".join(f"; warning: {w}" for w in corrected.get("warnings") or [])
    return f"{conf:g}% Lang–Reiczigel interval {corrected['low']:.1%}–{corrected['high']:.1%}{clipped}{raw}; {rates}{on}{warned}"


def corrected_words(corrected: Mapping[str, Any], *, label: str = "pass rate corrected for the judge's error") -> str:
    """One line that states a corrected pass rate (terminal, report, compare): the estimate, then
    :func:`corrected_detail` (its interval, whether it was clipped, the judge's measured rates); or why it is undefined.

    Args:
        corrected: :func:`rogan_gladen`'s dict (optionally with ``"calibration"``: ``{"source", …}``).
        label: What the line calls the number (``"pass rate B corrected for the judge's error"`` in a comparison).

    Returns:
        The line, percentages to one decimal.

    Example:
        >>> print(corrected_words(rogan_gladen(259, 509, tp=84, n_pos=127, tn=96, n_neg=109)))
        pass rate corrected for the judge's error 71.9% (95% Lang–Reiczigel interval 58.5%–86.6%; raw 50.9%; judge sensitivity 0.661 = 84/127, specificity 0.881 = 96/109)
    """
    if corrected.get("undefined"):
        return f"{label}: undefined ({corrected_detail(corrected).removeprefix('undefined: ')})"
    return f"{label} {corrected['estimate']:.1%} ({corrected_detail(corrected)})"
