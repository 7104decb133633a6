"""The pass rate corrected for the judge's measured error: a run's raw pass rate, the judge's sensitivity and
specificity measured on a calibration set of settled human verdicts, and the Rogan–Gladen estimate with its
Lang–Reiczigel interval (:func:`goldeval.intervals.rogan_gladen`).

**The calibration set** is what :func:`goldeval.runs.calibration.judge_calibration` pairs: each settled human verdict
(``review import``, or a regressions file) beside the judge's verdict on the same answer. Of those pairs the
correction counts the ones where both the person and the judge decided pass or fail, as the pass rate does:
``match`` is a pass, ``no_match`` a fail. The judge's **sensitivity** is the share of the human passes it passed, its
**specificity** the share of the human fails it failed. A pair where either side said ``near_match``, or the judge
left the case to a person, is not counted (``n_excluded``): neither is in a pass rate's denominator.

**The assumptions** (say them beside the number): the judge errs on this run's cases as it did on the calibration's
(the same judge version and rubric, cases like these); the run's cases and the calibration's are independent samples.
A calibration drawn from the same run's cases breaks the second a little: the interval is then somewhat conservative
for those cases, never narrower than the data allow.

**How the interval carries both uncertainties**: its variance (delta method) is the run's binomial variance of the
raw pass rate plus the calibration's binomial variances of sensitivity and specificity, weighted by the estimate,
over (Se + Sp − 1)²; Lang & Reiczigel's adjusted counts keep its coverage near nominal on small samples.

The results gain ``corrected_pass_rate`` (the whole computation, for the report and ``compare``) and three
aggregate keys, ``pass_rate_corrected``, ``pass_rate_corrected_low`` and ``pass_rate_corrected_high`` (gateable:
the first two), each ``null`` and listed under ``undefined`` (so a gate on it fails) when the calibration is too
small, the judge no better than chance on it, or no case was decided.

Source: Rogan & Gladen, Am J Epidemiol 107 (1978) 71–76; Lang & Reiczigel, Prev Vet Med 113 (2014) 13–22; issue 28
item 5.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from goldeval.errors import InputError
from goldeval.intervals import MIN_CALIBRATION_PER_CLASS, rogan_gladen
from goldeval.paths import default_store
from goldeval.runs.backends import open_existing_store
from goldeval.runs.calibration import SCORER_NAME as CALIBRATION_SCORER
from goldeval.runs.calibration import judge_calibration
from goldeval.runs.location import is_server_store
from goldeval.runs.regressions import read_regressions

__all__ = ["CORRECTED_KEYS", "add_corrected_pass_rate", "add_corrected_to_comparison", "calibration_from", "corrected_pass_rate", "judge_error_counts",
           "load_calibration"]

#: The aggregate keys the correction adds (all fractions in [0, 1]).
CORRECTED_KEYS = ("pass_rate_corrected", "pass_rate_corrected_low", "pass_rate_corrected_high")


def judge_error_counts(calibration: Mapping[str, Any]) -> dict[str, Any]:
    """The judge's pass/fail confusion counts on a calibration set: what its sensitivity and specificity rest on.

    Args:
        calibration: The results of :func:`goldeval.runs.calibration.judge_calibration` (``review stats --out``):
            its ``by_decided_by["all"]["matrix"]`` (judge label → human verdict → count) is read.

    Returns:
        ``{"tp", "n_pos", "tn", "n_neg", "n_excluded", "n_pairs"}``: of the ``n_pos`` cases a person passed
        (``match``) and the judge decided, ``tp`` the judge passed; of the ``n_neg`` a person failed (``no_match``)
        and the judge decided, ``tn`` the judge failed; ``n_excluded`` pairs with a ``near_match`` on either side
        or the judge abstaining (not counted), of ``n_pairs``.

    Raises:
        InputError: *calibration* holds no confusion matrix (not a ``judge_calibration`` results file).

    Example:
        >>> m = {"match": {"match": 36, "near_match": 1, "no_match": 5}, "no_match": {"match": 4, "near_match": 0, "no_match": 15}}
        >>> judge_error_counts({"by_decided_by": {"all": {"matrix": m}}})
        {'tp': 36, 'n_pos': 40, 'tn': 15, 'n_neg': 20, 'n_excluded': 1, 'n_pairs': 61}
    """
    by = calibration.get("by_decided_by") if isinstance(calibration, Mapping) else None
    matrix = by.get("all", {}).get("matrix") if isinstance(by, Mapping) and isinstance(by.get("all"), Mapping) else None
    if not isinstance(matrix, Mapping):
        raise InputError("calibration: no confusion matrix (by_decided_by.all.matrix). Give the JSON `goldeval review "
                         "stats --out` wrote, a regressions file, or a run whose reviews were imported.")

    def cell(judge: str, human: str) -> int:
        row = matrix.get(judge)
        v = row.get(human, 0) if isinstance(row, Mapping) else 0
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InputError(f"calibration: matrix[{judge!r}][{human!r}] must be a count, got {v!r}.")
        return v

    tp, fn = cell("match", "match"), cell("no_match", "match")
    fp, tn = cell("match", "no_match"), cell("no_match", "no_match")
    n_pairs = sum(cell(j, h) for j, row in matrix.items() if isinstance(row, Mapping) for h in row)
    return {"tp": tp, "n_pos": tp + fn, "tn": tn, "n_neg": fp + tn, "n_excluded": n_pairs - (tp + fn + fp + tn),
            "n_pairs": n_pairs}


def load_calibration(source: str | os.PathLike[str], store: Any = None) -> dict[str, Any]:
    """The calibration set *source* names, as :func:`judge_calibration` results.

    Args:
        source: One of: the JSON file ``goldeval review stats --out`` wrote (used as it is); a regressions file
            (``judge-regressions.jsonl``: its settled verdicts, each beside the judge's verdict of its run in
            *store*, or its ``judge_verdict``); or a run reference (id, prefix, tag, ``latest``) of *store*, whose
            imported reviews are the human verdicts.
        store: An open :class:`goldeval.runs.store.RunStore` (needed for a run reference), or ``None``.

    Returns:
        The ``judge_calibration`` results, with ``"source"`` set to *source* and ``"judge_versions"``: the judge
        versions whose verdicts were measured (the runs' in *store*, the regression entries' ``judge_version``;
        sorted, ``[]`` when none is known).

    Raises:
        InputError: *source* is neither a file nor a run of *store*; the file holds no human verdict.
    """
    text = os.fspath(source)
    if os.path.isfile(text):
        data = _results_file(text)
        if data is not None:
            if data["scorer"].get("name") != CALIBRATION_SCORER:
                raise InputError(f"--calibration {text}: a results file of scorer {data['scorer'].get('name')!r}, not "
                                 f"{CALIBRATION_SCORER!r}. Give the JSON `goldeval review stats --out` wrote, or a "
                                 "regressions file.")
            return {**data, "source": text, "judge_versions": sorted(_judge_versions(data, store))}
        cal = judge_calibration(store, (), regressions=text)
        entries, _ = read_regressions(text)
        versions = _judge_versions(cal, store) | {e["judge_version"] for e in entries if isinstance(e.get("judge_version"), str)}
        return {**cal, "source": text, "judge_versions": sorted(versions)}
    if store is None:
        raise InputError(f"--calibration {text}: no such file, and no run store to find a run of that name in. Give a "
                         "regressions file, a `review stats --out` JSON, or a run id in --store.")
    cal = judge_calibration(store, [text])
    return {**cal, "source": text, "judge_versions": sorted(_judge_versions(cal, store))}


def _judge_versions(calibration: Mapping[str, Any], store: Any) -> set[str]:
    """The judge versions of the calibration's runs that *store* holds."""
    if store is None:
        return set()
    out = set()
    for rid in calibration.get("runs") or []:
        try:
            v = store.get_run(rid, with_results=False).get("judge_version")
        except InputError:
            continue  # a run of another store: its version is unknown here
        if isinstance(v, str):
            out.add(v)
    return out


def _results_file(path: str) -> dict[str, Any] | None:
    """The results object *path* holds (one JSON object with a ``scorer``), or ``None`` for anything else (a
    regressions file: one object per line, whose reader names a bad line)."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("scorer"), Mapping) else None


def _decided_counts(aggregate: Mapping[str, Any]) -> tuple[int, int]:
    """``(match, match + no_match)`` of a pass-rate aggregate (also where the llm_judge nests them under ``counts``)."""
    src = aggregate
    if "match" not in src and isinstance(aggregate.get("counts"), Mapping):
        src = aggregate["counts"]
    m, nm = src.get("match"), src.get("no_match")
    if not isinstance(m, int) or not isinstance(nm, int) or isinstance(m, bool) or isinstance(nm, bool) or m < 0 or nm < 0:
        raise InputError(f"corrected pass rate: the results hold no match / no_match counts (match={m!r}, no_match="
                         f"{nm!r}); only a data-answer run (goldeval judge) has a pass rate to correct.")
    return m, m + nm


def corrected_pass_rate(aggregate: Mapping[str, Any], calibration: Mapping[str, Any], *, confidence: float = 0.95,
                        min_per_class: int = MIN_CALIBRATION_PER_CLASS, judge_version: str | None = None) -> dict[str, Any]:
    """The run's pass rate corrected for the judge's error measured on *calibration*.

    Args:
        aggregate: A data-answer run's ``aggregate`` (``match`` and ``no_match`` counts).
        calibration: :func:`judge_calibration` results (:func:`load_calibration`).
        confidence: The interval's coverage in (0, 1). min_per_class: The fewest human passes and human fails the
            calibration must hold (:data:`goldeval.intervals.MIN_CALIBRATION_PER_CLASS`, 10).
        judge_version: The run's judge version: a warning (``warnings``) when the calibration measured other judge
            versions (``calibration["judge_versions"]``), whose errors need not be this judge's.

    Returns:
        :func:`goldeval.intervals.rogan_gladen`'s dict (``estimate``, ``low``, ``high``, ``clipped``,
        ``undefined``, ``sensitivity``, ``specificity``, counts…) plus ``"calibration"``: ``{"source", "runs",
        "n_pairs", "n_excluded"}``.

    Raises:
        InputError: the aggregate has no match / no_match counts; *calibration* has no confusion matrix.

    Source: Rogan & Gladen (1978); Lang & Reiczigel (2014).

    Example:
        >>> m = {"match": {"match": 36, "no_match": 5}, "no_match": {"match": 4, "no_match": 15}}
        >>> r = corrected_pass_rate({"match": 80, "no_match": 20}, {"by_decided_by": {"all": {"matrix": m}}})
        >>> round(r["estimate"], 4), r["clipped"]
        (0.8462, True)
    """
    k, n = _decided_counts(aggregate)
    e = judge_error_counts(calibration)
    r = rogan_gladen(k, n, tp=e["tp"], n_pos=e["n_pos"], tn=e["tn"], n_neg=e["n_neg"], confidence=confidence,
                     min_per_class=min_per_class)
    cal_agg = calibration.get("aggregate")
    cal_agg = cal_agg if isinstance(cal_agg, Mapping) else {}
    measured = [v for v in calibration.get("judge_versions") or [] if isinstance(v, str)]
    if judge_version is not None and measured and any(v != judge_version for v in measured):
        r["warnings"].append(f"the calibration measured judge version(s) {', '.join(measured)}, and this run was judged "
                             f"by {judge_version}: the correction assumes their errors are the same")
    r["calibration"] = {"source": calibration.get("source"), "runs": list(calibration.get("runs") or []),
                        "judge_versions": measured,
                        "n_pairs": e["n_pairs"], "n_excluded": e["n_excluded"],
                        # human verdicts that could not be paired or read, and reviewers never settled: not counted
                        "n_failed": cal_agg.get("n_failed", 0), "n_unsettled": cal_agg.get("n_unsettled", 0)}
    return r


def add_corrected_pass_rate(results: dict[str, Any], corrected: Mapping[str, Any]) -> dict[str, Any]:
    """Put *corrected* into *results*: ``results["corrected_pass_rate"]`` and the aggregate keys of
    :data:`CORRECTED_KEYS` (``null`` and listed under ``aggregate["undefined"]`` when the correction is undefined).

    Args:
        results: A data-answer results dict (mutated and returned).
        corrected: :func:`corrected_pass_rate`'s dict.

    Returns:
        *results*.
    """
    agg = results["aggregate"]
    undefined = dict(agg.get("undefined") or {})
    for key in CORRECTED_KEYS:
        undefined.pop(key, None)
    why = corrected.get("undefined")
    for key, field in zip(CORRECTED_KEYS, ("estimate", "low", "high"), strict=True):
        agg[key] = corrected.get(field)
        if why:
            undefined[key] = why
    agg["undefined"] = undefined
    results["corrected_pass_rate"] = dict(corrected)
    return results


def add_corrected_to_comparison(comparison: dict[str, Any], calibration: Mapping[str, Any], *,
                                confidence: float = 0.95) -> dict[str, Any]:
    """Give a comparison of two data-answer runs each run's corrected pass rate, from one calibration set.

    Args:
        comparison: :func:`goldeval.runs.compare.compare_runs`'s dict (mutated and returned): its
            ``verdicts.pass_rate`` {a, b} counts are corrected.
        calibration: :func:`load_calibration`'s results. confidence: The intervals' coverage.

    Returns:
        *comparison*, with ``"corrected_pass_rate"``: ``{"a", "b"}`` (each :func:`corrected_pass_rate`'s dict) and
        ``"note"`` (the runs were judged by different judge versions, which one calibration cannot both measure;
        else ``None``).

    Raises:
        InputError: the runs hold no data-answer verdicts (F1 or label runs: there is no judge to correct for).
    """
    v = comparison.get("verdicts")
    if not isinstance(v, Mapping) or comparison.get("labels") is not None:
        raise InputError("--calibration: these runs hold no data-answer verdicts (an F1 or a labels run), so there is no "
                         "judge's error to correct the pass rate for. Drop --calibration.")
    runs = comparison.get("runs") or {}
    versions = [(runs.get(side) or {}).get("judge_version") for side in ("a", "b")]
    out: dict[str, Any] = {side: corrected_pass_rate(v["pass_rate"][side], calibration, confidence=confidence,
                                                     judge_version=version)
                           for side, version in zip(("a", "b"), versions, strict=True)}
    out["note"] = None
    if versions[0] != versions[1]:
        out["note"] = (f"runs A and B were judged by different judge versions ({versions[0]} and {versions[1]}); one "
                       "calibration set measures one judge, so at most one of the corrections rests on its own judge's error")
    comparison["corrected_pass_rate"] = out
    return comparison


def calibration_from(source: str | os.PathLike[str], store: str | None = None) -> dict[str, Any]:
    """:func:`load_calibration` with the run store at *store* opened when *source* needs it (a run reference, or a
    regressions file whose entries name runs), read-only.

    Args:
        source: As for :func:`load_calibration`. store: The store's location (``--store``; ``None``: the default).

    Returns:
        The ``judge_calibration`` results, with ``"source"``.

    Raises:
        InputError: as :func:`load_calibration`; a run reference and no store at *store*.
    """
    path = default_store() if store is None else store
    text = os.fspath(source)
    if os.path.isfile(text) and _results_file(text) is not None:
        return load_calibration(text, None)  # a review stats file: no store needed
    if not (is_server_store(path) or os.path.exists(path)):
        return load_calibration(text, None)
    with open_existing_store(path) as st:
        return load_calibration(text, st)
