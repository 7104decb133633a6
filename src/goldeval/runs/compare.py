"""Compare two runs case by case: what flipped, what stayed, stable vs flickering near_match, F1 movers, and a
paired test saying whether the change could be noise.

Cases are matched by id. Verdicts are bucketed by the one shared accounting (:func:`goldeval.verdict.pass_rate`):
pass (``match``), fail (``no_match``), ``near_match``, ``needs_human``, ``unscored``, ``verified_wrong``; a label
case passes when its label is right (``tp``/``tn``) and fails when it is wrong (``fp``/``fn``). A flip is a case
decided in both runs (pass or fail) whose outcome differs. F1 is read from ``f1`` or ``whole_note.f1``.

Statistics:

* **McNemar's exact test** on the cases decided in both runs: with ``b`` = pass → fail and ``c`` = fail → pass,
  the two-sided p-value is the binomial test of ``b`` successes in ``b + c`` trials at p = ½
  (``scipy.stats.binomtest``). With no discordant pair there is no test: the result says so (``p_value`` is
  ``None``), it does not divide by zero.
* **Newcombe's paired score interval** (Newcombe 1998, method 10: :func:`goldeval.intervals.newcombe_paired_difference`)
  of the pass-rate difference B − A over the cases decided in both runs (``verdicts.difference``): it keeps a
  positive width where every case flipped the same way, where a percentile bootstrap of 0/1 outcomes collapses to
  a point.
* **Paired bootstrap** of the difference in means (B − A) of the per-case values — the F1 over the cases scored in
  both (``scores.bootstrap``), and, kept beside Newcombe's interval for readers of older results, the pass
  indicator (``verdicts.bootstrap``) — resampling cases with replacement, percentile interval, seeded with
  ``numpy.random.default_rng(seed)`` so the same inputs give the same interval.

Source: McNemar (1947), exact form as in ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``; Newcombe,
Stat Med 17 (1998) 2635–2650; Efron & Tibshirani (1993) ch. 13 (percentile interval); ``DESIGN.md`` "Runs,
versions, comparisons".
"""

from __future__ import annotations

import heapq
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import numpy as np

from goldeval.errors import InputError
from goldeval.intervals import newcombe_paired_difference
from goldeval.resample import resample_means
from goldeval.runs.compare_labels import compare_labels, is_label_run
from goldeval.runs.columns import case_columns, case_score
from goldeval.verdict import pass_rate, pass_rate_class

__all__ = ["compare_runs", "compare_view", "CompareCases", "COMPARE_FIELDS", "mcnemar_exact", "paired_bootstrap", "bucket", "run_age_seconds",
           "regression_decision", "BUCKETS"]

#: The outcome buckets of a verdict case, in the order the shared pass-rate accounting checks them.
BUCKETS: tuple[str, ...] = ("pass", "fail", "near_match", "needs_human", "unscored", "verified_wrong")
_FROM_PASS_RATE = {
    "match": "pass",
    "no_match": "fail",
    "near_match": "near_match",
    "needs_human": "needs_human",
    "unscored": "unscored",
    "verified_wrong": "verified_wrong",
}


_LABEL_OUTCOMES = ("tp", "tn", "fp", "fn")


def _as_verdict_record(case: Mapping[str, Any]) -> Mapping[str, Any]:
    """A per-case record in the form ``pass_rate`` reads (label records with ``correct`` become match/no_match)."""
    verdict = case.get("verdict")
    if isinstance(verdict, Mapping):  # {"verdict": {...}} nested form
        return {**verdict, "status": case.get("status", "scored")}
    if verdict is None and case.get("status", "scored") == "scored":
        if isinstance(case.get("correct"), bool):
            return {**case, "verdict": "match" if case["correct"] else "no_match"}
        if case.get("outcome") in _LABEL_OUTCOMES:  # labels: a right label passes, a wrong one fails
            return {**case, "verdict": "match" if case["outcome"] in ("tp", "tn") else "no_match"}
    return case


def bucket(case: Mapping[str, Any]) -> str:
    """The outcome bucket of one per-case record (one of ``BUCKETS``), as :func:`goldeval.verdict.pass_rate`
    counts it — this calls the function that ``pass_rate`` counts each case by
    (:func:`goldeval.verdict.pass_rate_class`), so the two can never disagree."""
    return _FROM_PASS_RATE.get(pass_rate_class(_as_verdict_record(case)), "unscored")


#: The fields of a per-case record that a comparison reads (besides its headline score): the verdict and how it
#: was decided, a label case's gold, prediction and outcome, the why shown beside a flip.
COMPARE_FIELDS: tuple[str, ...] = ("status", "verdict", "correct", "outcome", "gold", "pred", "golden_used", "confidence",
                                   "why", "reason", "needs_human", "gold_status")
_SHARED_STRINGS = ("status", "verdict", "outcome", "gold_status", "golden_used", "gold", "pred")


def compare_view(record: Mapping[str, Any]) -> dict[str, Any]:
    """The part of one per-case record that :func:`compare_runs` reads: the ``COMPARE_FIELDS`` it has, and its
    headline score (``f1``, else ``whole_note.f1``, else ``score``: :func:`goldeval.runs.columns.case_columns`)
    as ``f1``. Comparing the views gives the same result as comparing the records; the views of a 100,000-case
    free-text run take ~20 MB where its records take ~90 MB (``RunStore.case_map(run, view=compare_view)``).

    Args:
        record: A stored per-case record (a dict decoded from the store).

    Returns:
        A new dict; repeated short strings (status, verdict, outcome…) are interned, so 100,000 ``"scored"`` are one.

    Example:
        >>> compare_view({"id": "c1", "status": "scored", "whole_note": {"precision": 0.5, "recall": 1.0, "f1": 0.6},
        ...               "tokens": {"prediction": 4}})
        {'status': 'scored', 'f1': 0.6}
    """
    view = {k: record[k] for k in COMPARE_FIELDS if k in record}
    for k in _SHARED_STRINGS:
        v = view.get(k)
        if v.__class__ is str:
            view[k] = sys.intern(v)
    score = case_columns(record)[2]
    if score is not None:
        view["f1"] = score
    return view


class CompareCases(Mapping[str, Mapping[str, Any]]):
    """case id → :func:`compare_view` of each case of a run, held compactly: a case whose view is its status and
    score only (every case of a free-text run) is kept as its score (a float, when scored) or a 2-tuple, not a
    dict, and given back as the dict ``{"status", "f1"}`` when read. At 100,000 free-text cases ~16 MB, where the
    views as dicts take ~35 MB and the records ~90 MB.

    Args:
        records: ``(case id, per-case record)`` pairs in recording order; each record is read down to its view as
            it comes, so no whole record is kept.

    Example:
        >>> cases = CompareCases([("c1", {"status": "scored", "whole_note": {"f1": 0.5}}),
        ...                       ("c2", {"status": "scored", "verdict": "match", "why": "same rows"})])
        >>> dict(cases["c1"]), dict(cases["c2"]), list(cases)
        ({'status': 'scored', 'f1': 0.5}, {'status': 'scored', 'verdict': 'match', 'why': 'same rows'}, ['c1', 'c2'])
    """

    __slots__ = ("_rows", "_views")

    def __init__(self, records: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        rows: dict[str, float | tuple[Any, float | None] | dict[str, Any]] = {}
        views = 0
        for cid, record in records:
            if _NOT_STATUS.isdisjoint(record):  # its view is its status and score: a free-text case
                status = record.get("status")
                score = case_score(record)
                if status == "scored" and score.__class__ is float:
                    rows[cid] = score  # the common case: a scored case's number alone (24 bytes)
                else:
                    rows[cid] = (sys.intern(status) if status.__class__ is str else status, score)
            else:
                rows[cid] = compare_view(record)
                views += 1
        self._rows = rows
        self._views = views

    @property
    def scores_only(self) -> bool:
        """True when every case's view is its status and score (no verdict, label outcome or reason: a free-text
        run), so that no case need be looked at to know the run holds no verdict."""
        return self._views == 0

    @classmethod
    def of_run(cls, store: Any, run_id: str) -> CompareCases:
        """The cases of the stored run *run_id* (a :class:`goldeval.runs.store.RunStore`, SQLite or PostgreSQL),
        decoded one at a time."""
        return cls(store.case_records(run_id))

    def __getitem__(self, cid: str) -> Mapping[str, Any]:
        row = self._rows[cid]
        if row.__class__ is float:
            return {"status": "scored", "f1": row}
        if row.__class__ is tuple:
            status, score = row
            out: dict[str, Any] = {}
            if status is not None:
                out["status"] = status
            if score is not None:
                out["f1"] = score
            return out
        return row  # type: ignore[return-value]

    def score(self, cid: str) -> float | None:
        """The headline score of case *cid* (``case_columns(self[cid])[2]``), without building its view."""
        row = self._rows[cid]
        if row.__class__ is float:
            return row
        if row.__class__ is tuple:
            return row[1]
        return case_columns(row)[2]  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


_NOT_STATUS = frozenset(COMPARE_FIELDS) - {"status"}


def _has_verdicts(cases: Mapping[str, Mapping[str, Any]]) -> bool:
    if isinstance(cases, CompareCases) and cases.scores_only:
        return False  # every case is a status and a score
    return any(
        isinstance(c.get("verdict"), (str, Mapping)) or isinstance(c.get("correct"), bool) or c.get("outcome") in _LABEL_OUTCOMES
        for c in cases.values()
    )


#: Most bootstrap resamples accepted (the means array is 8 MB at this size).
MAX_RESAMPLES = 1_000_000


def _kind(cases: Mapping[str, Mapping[str, Any]]) -> str | None:
    """``"verdicts"`` when any case holds a verdict (or a label outcome), ``"scores"`` when any holds a number
    only, ``None`` when no case holds either (an empty or wholly unscored run)."""
    if _has_verdicts(cases):
        return "verdicts"
    if isinstance(cases, CompareCases):
        return "scores" if any(cases.score(cid) is not None for cid in cases) else None
    if any(case_columns(c)[2] is not None for c in cases.values()):
        return "scores"
    return None


def mcnemar_exact(pass_to_fail: int, fail_to_pass: int) -> dict[str, Any]:
    """McNemar's exact test on the discordant pairs of two paired binary outcomes.

    Args:
        pass_to_fail: ``b``, cases that passed in A and failed in B (≥ 0).
        fail_to_pass: ``c``, cases that failed in A and passed in B (≥ 0).

    Returns:
        ``{"b", "c", "n_discordant", "p_value", "note"}``: the two-sided exact p-value
        ``binomtest(b, b + c, 0.5)``; with ``b + c == 0``, ``p_value`` is ``None`` and ``note`` says
        "no discordant pairs" (the runs agree on every case decided in both: there is nothing to test).

    Raises:
        InputError: a negative count.

    Source: McNemar, Psychometrika 12 (1947); exact binomial form as in statsmodels ``mcnemar(exact=True)``.
    """
    if pass_to_fail < 0 or fail_to_pass < 0:
        raise InputError(f"mcnemar_exact: counts must be ≥ 0, got b={pass_to_fail}, c={fail_to_pass}.")
    n = pass_to_fail + fail_to_pass
    if n == 0:
        return {
            "b": 0, "c": 0, "n_discordant": 0, "p_value": None,
            "note": "no discordant pairs: no case decided in both runs changed between pass and fail, so there is nothing to test",
        }
    from scipy.stats import binomtest  # start-up: numpy / scipy load only when this runs

    p = float(binomtest(pass_to_fail, n, 0.5, alternative="two-sided").pvalue)
    return {"b": pass_to_fail, "c": fail_to_pass, "n_discordant": n, "p_value": p, "note": None}


def paired_bootstrap(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """Paired bootstrap percentile interval for ``mean(b) − mean(a)``.

    Cases (pairs) are resampled with replacement ``n_resamples`` times; each resample's mean difference is kept;
    the interval is the ``(1 − confidence)/2`` and ``(1 + confidence)/2`` quantiles of those means.

    Args:
        a, b: Paired per-case values, shape ``(n_pairs,)`` each (e.g. pass indicators 0/1, or F1 in [0, 1]).
        n_resamples: Number of bootstrap resamples (100 to ``MAX_RESAMPLES``).
        confidence: Interval coverage in (0, 1).
        seed: Seed of ``numpy.random.default_rng``; the same inputs and seed give the same interval.

    Returns:
        ``{"n_pairs", "diff", "ci": [low, high] | None, "confidence", "n_resamples", "seed", "note"}``; with no
        pair, ``diff`` and ``ci`` are ``None`` and ``note`` says why.

    Notes:
        When the differences take few distinct values (≤ 64, e.g. pass indicators: −1, 0, 1), a resample is
        drawn as multinomial counts of those values (``numpy.random.default_rng(seed).multinomial``) — the same
        distribution as resampling indices, in O(distinct values) per resample instead of O(n_pairs). Otherwise
        the case indices come from :func:`goldeval.resample.resample_means` (a seeded counter-based stream, in C
        on every core the process may use; the same bits in NumPy without the extension): 10,000 resamples of
        100,000 pairs take about a second instead of 3.5 s. Its draws are not ``default_rng(seed).integers``,
        so such an interval differs from the one drawn by earlier versions within its Monte Carlo error; for a
        given seed it is fixed.

    Raises:
        InputError: shapes differ, or ``confidence`` / ``n_resamples`` out of range.

    Source: Efron & Tibshirani, *An Introduction to the Bootstrap* (1993), ch. 13 (percentile interval).
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise InputError(f"paired_bootstrap: a and b must be 1-d of the same length, got shapes {x.shape} and {y.shape}.")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"paired_bootstrap: confidence must be in (0, 1), got {confidence}.")
    if n_resamples < 100:
        raise InputError(f"paired_bootstrap: n_resamples must be ≥ 100, got {n_resamples}.")
    if n_resamples > MAX_RESAMPLES:
        raise InputError(f"paired_bootstrap: n_resamples must be ≤ {MAX_RESAMPLES:,}, got {n_resamples:,} (the interval's "
                         "percentiles do not move beyond that; the means alone would take 8 bytes each).")
    out: dict[str, Any] = {"n_pairs": int(x.size), "confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    if x.size == 0:
        return {**out, "diff": None, "ci": None, "note": "no pair: no case has a value in both runs"}
    d = y - x
    n = d.size
    values, counts = np.unique(d, return_counts=True)
    if values.size <= 64:
        rng = np.random.default_rng(seed)
        # (n_resamples, n_values) counts, drawn in blocks of at most ~2M cells so memory stays bounded (one block —
        # the same draws — for the default 10,000 resamples)
        block = max(1, 2_000_000 // values.size)
        means = np.empty(n_resamples)
        for start in range(0, n_resamples, block):
            k = min(block, n_resamples - start)
            means[start : start + k] = rng.multinomial(n, counts / n, size=k) @ values / n
    else:
        # case indices from goldeval.resample's counter-based stream: the C kernel on every core, the same bits
        # without it (10^9 draws for 10,000 resamples of 100,000 cases)
        means = resample_means(d, n_resamples, seed)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return {**out, "diff": float(d.mean()), "ci": [float(low), float(high)], "note": None}


def _brief(case: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if case is None:
        return None
    v = _as_verdict_record(case)
    brief = {
        "verdict": v.get("verdict"),
        "confidence": v.get("confidence"),
        "why": v.get("why") or v.get("reason"),
        "status": case.get("status", "scored"),
    }
    if case.get("golden_used") is not None:  # a case with alternative goldens: the one that decided
        brief["golden_used"] = case["golden_used"]
    if case.get("outcome") in _LABEL_OUTCOMES:  # a label case: what was predicted, for what gold
        brief.update(gold=case.get("gold"), pred=case.get("pred"), outcome=case["outcome"])
        if brief["why"] is None:
            brief["why"] = f"gold {case.get('gold')!r}, predicted {case.get('pred')!r}: {_OUTCOME_WORDS[case['outcome']]}"
    return brief


_OUTCOME_WORDS = {"tp": "a caught positive (tp)", "tn": "a right negative (tn)", "fp": "a false positive (fp)",
                  "fn": "a missed positive (fn)"}


def compare_runs(
    cases_a: Mapping[str, Mapping[str, Any]],
    cases_b: Mapping[str, Mapping[str, Any]],
    *,
    run_a: Mapping[str, Any] | None = None,
    run_b: Mapping[str, Any] | None = None,
    seed: int = 0,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    top: int = 10,
) -> dict[str, Any]:
    """Compare run A with run B, case by case.

    Args:
        cases_a, cases_b: case id → per-case record, as stored (``RunStore.case_map``).
        run_a, run_b: The runs' stored metadata (id, arm, scorer…), copied into the result; optional.
        seed, n_resamples, confidence: The paired bootstrap's settings (see :func:`paired_bootstrap`).
        top: How many biggest F1 movers to list.

    Returns:
        A JSON-ready dict:
        ``runs`` {a, b} (id, arm, ``created_at``, scorer, versions; ``ref`` and ``tags`` when the run mapping holds
        them: the name it was given by, e.g. ``baseline/main``, and its tags; the renderer shows each run's age from
        ``created_at``, which keeps this dict the same for the same runs and seed); ``n_a``, ``n_b``, ``n_common``; ``added`` (ids in B only),
        ``removed`` (ids in A only);
        ``verdicts`` (``None`` when neither run holds verdicts): ``pass_rate`` {a, b} (the shared accounting over
        each whole run), ``transitions`` {"pass->fail": n, …}, ``flips`` {``pass_to_fail``, ``fail_to_pass``:
        [{id, a, b}] with each side's verdict, confidence and why}, ``stayed`` {pass, fail: [ids]},
        ``near_match`` {``stable``: [ids], ``flickering``: [{id, a, b}]}, ``left_decided`` (decided in one run
        only), ``golden_changed`` ([{id, a, b}]: cases with a verdict in both runs whose deciding golden differs,
        ``golden_used`` of each side, ``"primary"`` for a record without it), ``mcnemar`` (:func:`mcnemar_exact`),
        ``difference`` (pass-rate difference B − A over the cases decided in both, with Newcombe's paired score
        interval: ``diff``, ``ci``, ``interval_method`` = ``newcombe_paired``), ``bootstrap`` (the same difference
        with a paired bootstrap percentile interval);
        ``scores`` (``None`` when no case has a number in both runs): ``n_pairs``, ``mean_a``, ``mean_b``,
        ``mean_delta``, ``improved``, ``worsened``, ``unchanged``, ``deltas`` [{id, a, b, delta}] in case order,
        ``biggest_movers`` (top by |delta|, ties by id), ``scored_in_one_only`` [ids], ``bootstrap``;
        ``labels`` (``None`` unless both runs are label runs: :func:`goldeval.runs.compare_labels.compare_labels`):
        each run's tp/fp/fn/tn, precision, recall and missed, the new and fixed missed positives and false
        positives, and the label flips (a right label that became wrong is also a pass → fail flip above);
        ``regressions``: ids of pass → fail flips (what ``--fail-on-regression`` fails on);
        ``differs``: pinned fields (arm, tokenizer, judge version, rubric / dataset hash, config…) that differ,
        field → [A's, B's]; ``warnings``: e.g. the runs were made by different scorers.

    Raises:
        InputError: one run holds verdicts and the other per-case scores only (e.g. a ``judge`` run and a
            ``score`` run): there is no case-by-case comparison between a verdict and an F1; one holds label
            outcomes and the other data-answer verdicts (a ``labels`` and a ``judge`` run); or ``top`` < 0.

    Notes:
        Case order is run A's recording order, then B's for added ids.
    """
    if top < 0:
        raise InputError(f"compare_runs: top must be ≥ 0, got {top}.")
    kind_a, kind_b = _kind(cases_a), _kind(cases_b)
    if kind_a and kind_b and kind_a != kind_b:
        def name(run: Mapping[str, Any] | None, side: str) -> str:
            return f"run {side}" + (f" ({run.get('id')}, {run.get('scorer_name')})" if run else "")

        raise InputError(
            f"compare: {name(run_a, 'A')} holds {'verdicts' if kind_a == 'verdicts' else 'per-case scores (F1)'} and "
            f"{name(run_b, 'B')} holds {'verdicts' if kind_b == 'verdicts' else 'per-case scores (F1)'}: a verdict and a "
            "score cannot be compared case by case. Compare two runs of the same kind of scorer."
        )
    label_a, label_b = is_label_run(cases_a), is_label_run(cases_b)
    if kind_a == kind_b == "verdicts" and label_a != label_b:
        # a labels run's right/wrong label is no data-answer verdict: 'report --results a.json --compare
        # labels.json' showed a pass rate B of 95.0% (190/200 decided) for the labels run and compared it
        def what(cases: Mapping[str, Mapping[str, Any]], run: Mapping[str, Any] | None, side: str) -> str:
            kind = "label outcomes (tp, fp, fn, tn)" if is_label_run(cases) else "verdicts (match, no_match, ...)"
            return f"run {side}" + (f" ({run.get('id')}, {run.get('scorer_name')})" if run else "") + f" holds {kind}"

        raise InputError(
            f"compare: {what(cases_a, run_a, 'A')} and {what(cases_b, run_b, 'B')}: a label and a data-answer verdict "
            "cannot be compared case by case. Compare two runs of the same kind of scorer."
        )
    ids_a = list(cases_a)
    ids_b = list(cases_b)
    set_a, set_b = set(ids_a), set(ids_b)
    common = [i for i in ids_a if i in set_b]
    result: dict[str, Any] = {
        "runs": {"a": _run_brief(run_a), "b": _run_brief(run_b)},
        "n_a": len(ids_a),
        "n_b": len(ids_b),
        "n_common": len(common),
        "added": [i for i in ids_b if i not in set_a],
        "removed": [i for i in ids_a if i not in set_b],
        "verdicts": None,
        "scores": None,
        "labels": None,
        "regressions": [],
        "differs": _differs(run_a, run_b),
        "warnings": [],
    }
    if run_a and run_b and run_a.get("scorer_name") != run_b.get("scorer_name"):
        result["warnings"].append(
            f"the runs were made by different scorers ({run_a.get('scorer_name')} vs {run_b.get('scorer_name')}); "
            "case-by-case comparison assumes the same kind of score"
        )
    for side, run in (("A", run_a), ("B", run_b)):
        if run and run.get("status") not in (None, "finished"):
            result["warnings"].append(
                f"run {side} ({run.get('id')}) did not finish ({run.get('status')}): only the {len(ids_a if side == 'A' else ids_b)} "
                "case(s) it recorded are compared; resume it first for a full comparison"
            )
    if common == [] and (ids_a or ids_b):
        result["warnings"].append("the runs share no case id: nothing can be compared case by case")

    if kind_a == "verdicts" or kind_b == "verdicts":
        result["verdicts"] = _compare_verdicts(cases_a, cases_b, common, seed=seed, n_resamples=n_resamples, confidence=confidence)
        result["regressions"] = [f["id"] for f in result["verdicts"]["flips"]["pass_to_fail"]]
    if label_a and label_b:
        pos_a, pos_b = _positive(run_a), _positive(run_b)
        result["labels"] = compare_labels(cases_a, cases_b, common, positive_a=pos_a, positive_b=pos_b)
        if pos_a != pos_b and pos_a is not None and pos_b is not None:
            result["warnings"].append(
                f"the runs score different positive labels ({pos_a!r} vs {pos_b!r}): a case's outcome (tp, fp, fn, tn) "
                "answers a different question in each, so its moves below are not a change of the model alone"
            )

    pair_ids: list[str] = []
    scores_a: list[float] = []
    scores_b: list[float] = []
    one_only = []
    score_a, score_b = _score_reader(cases_a), _score_reader(cases_b)
    for cid in common:
        sa = score_a(cid)
        sb = score_b(cid)
        if sa is not None and sb is not None:
            pair_ids.append(cid)
            scores_a.append(sa)
            scores_b.append(sb)
        elif (sa is None) != (sb is None):
            one_only.append(cid)
    if pair_ids:
        a = np.array(scores_a)
        b = np.array(scores_b)
        # the bootstrap (C, the GIL released) runs on a thread of its own while this one lists the deltas and the
        # movers: the same calls and the same result, ~0.2 s less wall at 100,000 pairs when a core is free
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="goldeval-bootstrap") as pool:
            boot = pool.submit(paired_bootstrap, a, b, n_resamples=n_resamples, confidence=confidence, seed=seed)
            deltas: list[dict[str, Any]] = [{"id": cid, "a": sa, "b": sb, "delta": sb - sa}
                                            for cid, sa, sb in zip(pair_ids, scores_a, scores_b, strict=True)]
            del scores_a, scores_b
            eps = 1e-12
            movers = heapq.nsmallest(top, deltas, key=lambda r: (-abs(r["delta"]), r["id"]))  # sorted(...)[:top], O(n log top)
            bootstrap = boot.result()
        result["scores"] = {
            "n_pairs": len(pair_ids),
            "mean_a": float(a.mean()),
            "mean_b": float(b.mean()),
            "mean_delta": float((b - a).mean()),
            "improved": int(((b - a) > eps).sum()),
            "worsened": int(((b - a) < -eps).sum()),
            "unchanged": int((np.abs(b - a) <= eps).sum()),
            "deltas": deltas,
            "biggest_movers": [m for m in movers if abs(m["delta"]) > eps],
            "scored_in_one_only": one_only,
            "bootstrap": bootstrap,
        }
    return result


def regression_decision(cmp: Mapping[str, Any]) -> dict[str, Any]:
    """What ``goldeval compare --fail-on-regression`` decides for a comparison, as data (the CLI exits on it, the
    compare page shows it).

    The rule: a verdict (or label) comparison fails when any case decided in both runs went from pass to fail, and
    also when no case was decided (pass or fail) in both runs, or when either run did not finish (its status in
    ``cmp["runs"]`` is not ``finished``: the cases it did not record are no evidence) — a gate never passes on no
    evidence. A comparison of
    F1 runs holds no verdict: the flag does not apply (the CLI refuses it, exit 2).

    Args:
        cmp: What :func:`compare_runs` returns.

    Returns:
        ``{"applies": bool, "failed": bool | None, "n_regressions": int, "n_decided_in_both": int, "reason": str}``:
        ``failed`` is ``None`` when the flag does not apply; ``reason`` is one plain sentence without a final stop.

    Example:
        >>> cmp = compare_runs({"q1": {"verdict": "match"}}, {"q1": {"verdict": "no_match"}})
        >>> d = regression_decision(cmp)
        >>> d["failed"], d["reason"]
        (True, '1 case(s) went from pass to fail: q1')
    """
    v = cmp.get("verdicts")
    if not isinstance(v, Mapping):
        return {"applies": False, "failed": None, "n_regressions": 0, "n_decided_in_both": 0,
                "reason": "--fail-on-regression applies to verdict and label runs only: these runs hold per-case scores "
                          "(F1), so no case can go from pass to fail"}
    regressions = list(cmp.get("regressions") or [])
    stayed = v.get("stayed") or {}
    flips = v.get("flips") or {}
    n_decided = (len(stayed.get("pass") or []) + len(stayed.get("fail") or []) + len(flips.get("pass_to_fail") or [])
                 + len(flips.get("fail_to_pass") or []))
    labels = bool(cmp.get("labels"))
    if regressions:
        shown = ", ".join(str(i) for i in regressions[:10]) + (f" … (+{len(regressions) - 10})" if len(regressions) > 10 else "")
        what = "went from a right label to a wrong one" if labels else "went from pass to fail"
        return {"applies": True, "failed": True, "n_regressions": len(regressions), "n_decided_in_both": n_decided,
                "reason": f"{len(regressions)} case(s) {what}: {shown}"}
    unfinished = [(side.upper(), run) for side, run in sorted((cmp.get("runs") or {}).items())
                  if isinstance(run, Mapping) and run.get("status") not in (None, "finished")]
    if unfinished:
        side, run = unfinished[0]
        return {"applies": True, "failed": True, "n_regressions": 0, "n_decided_in_both": n_decided,
                "reason": f"run {side} ({run.get('id')}) did not finish ({run.get('status')}), so the cases it did not "
                          "record may hold a regression that this comparison cannot see; resume it (the same scoring "
                          "command) and compare again"}
    if n_decided == 0:
        return {"applies": True, "failed": True, "n_regressions": 0, "n_decided_in_both": 0,
                "reason": f"no case was decided (match or no_match) in both runs ({cmp.get('n_common', 0)} case id(s) in "
                          "common), so nothing shows that no pass became a fail"}
    what = "no right label became wrong" if labels else "no case went from pass to fail"
    return {"applies": True, "failed": False, "n_regressions": 0, "n_decided_in_both": n_decided,
            "reason": f"{what} ({n_decided} case(s) decided in both runs)"}
def _score_reader(cases: Mapping[str, Mapping[str, Any]]) -> Callable[[str], float | None]:
    """case id → its headline score (:func:`goldeval.runs.columns.case_columns`), read straight from a
    :class:`CompareCases`."""
    if isinstance(cases, CompareCases):
        return cases.score
    return lambda cid: case_columns(cases[cid])[2]


def _positive(run: Mapping[str, Any] | None) -> Any:
    """The positive label a labels run was scored for (its recorded configuration), or ``None``."""
    config = (run or {}).get("config")
    return config.get("positive") if isinstance(config, Mapping) else None


_PINNED = ("arm", "scorer_name", "scorer_version", "tokenizer", "judge_version", "rubric_hash", "dod_hash", "dataset_hash",
           "goldeval_version", "config")


def _differs(run_a: Mapping[str, Any] | None, run_b: Mapping[str, Any] | None) -> dict[str, list[Any]]:
    """Pinned fields whose values differ between the runs: field → [A's, B's]."""
    if not run_a or not run_b:
        return {}
    return {k: [run_a.get(k), run_b.get(k)] for k in _PINNED if run_a.get(k) != run_b.get(k)}


def run_age_seconds(created_at: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds from *created_at* (a stored ISO 8601 time with its offset) to *now* (default: now, UTC); ``None``
    when the time is missing or unreadable.

    Example:
        >>> run_age_seconds("2026-12-01T10:00:00+00:00", now=datetime(2026, 12, 4, 10, 0, tzinfo=UTC))
        259200.0
    """
    if not isinstance(created_at, str):
        return None
    try:
        then = datetime.fromisoformat(created_at)
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return ((now or datetime.now(UTC)) - then).total_seconds()


def _run_brief(run: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if run is None:
        return None
    keys = ("id", "arm", "created_at", "status", "scorer_name", "scorer_version", "tokenizer", "judge_version",
            "rubric_hash", "dod_hash", "dataset_hash", "goldeval_version", "headline_name", "headline_value")
    brief = {k: run.get(k) for k in keys}
    for k in ("ref", "tags"):
        if k in run:
            brief[k] = run[k]
    return brief


def _compare_verdicts(
    cases_a: Mapping[str, Mapping[str, Any]],
    cases_b: Mapping[str, Mapping[str, Any]],
    common: list[str],
    *,
    seed: int,
    n_resamples: int,
    confidence: float,
) -> dict[str, Any]:
    transitions: dict[str, int] = {}
    flips: dict[str, list[dict[str, Any]]] = {"pass_to_fail": [], "fail_to_pass": []}
    stayed: dict[str, list[str]] = {"pass": [], "fail": []}
    stable: list[str] = []
    flickering: list[dict[str, Any]] = []
    left_decided: list[dict[str, Any]] = []
    golden_changed: list[dict[str, Any]] = []
    pairs_a: list[float] = []
    pairs_b: list[float] = []
    for cid in common:
        ca, cb = cases_a[cid], cases_b[cid]
        ba, bb = bucket(ca), bucket(cb)
        key = f"{ba}->{bb}"
        transitions[key] = transitions.get(key, 0) + 1
        decided_a, decided_b = ba in ("pass", "fail"), bb in ("pass", "fail")
        if decided_a and decided_b:
            pairs_a.append(1.0 if ba == "pass" else 0.0)
            pairs_b.append(1.0 if bb == "pass" else 0.0)
            if ba == bb:
                stayed[ba].append(cid)
            else:
                flips["pass_to_fail" if ba == "pass" else "fail_to_pass"].append({"id": cid, "a": _brief(ca), "b": _brief(cb)})
        elif decided_a != decided_b:
            left_decided.append({"id": cid, "a": ba, "b": bb})
        if isinstance(ca.get("verdict"), str) and isinstance(cb.get("verdict"), str):
            # A record without golden_used was judged against its one golden, the primary.
            ga, gb = ca.get("golden_used") or "primary", cb.get("golden_used") or "primary"
            if ga != gb:
                golden_changed.append({"id": cid, "a": ga, "b": gb})
        if ba == "near_match" and bb == "near_match":
            stable.append(cid)
        elif (ba == "near_match") != (bb == "near_match"):
            flickering.append({"id": cid, "a": _brief(ca), "b": _brief(cb)})
    return {
        "pass_rate": {
            "a": pass_rate([dict(_as_verdict_record(c)) for c in cases_a.values()]).to_dict(),
            "b": pass_rate([dict(_as_verdict_record(c)) for c in cases_b.values()]).to_dict(),
        },
        "transitions": dict(sorted(transitions.items())),
        "flips": flips,
        "stayed": stayed,
        "near_match": {"stable": stable, "flickering": flickering},
        "left_decided": left_decided,
        "golden_changed": golden_changed,
        "mcnemar": mcnemar_exact(len(flips["pass_to_fail"]), len(flips["fail_to_pass"])),
        "difference": {
            "metric": "pass_rate",
            **newcombe_paired_difference(len(stayed["pass"]), len(flips["pass_to_fail"]), len(flips["fail_to_pass"]),
                                         len(stayed["fail"]), confidence=confidence),
        },
        "bootstrap": {
            "metric": "pass_rate",
            **paired_bootstrap(pairs_a, pairs_b, n_resamples=n_resamples, confidence=confidence, seed=seed),
        },
    }
