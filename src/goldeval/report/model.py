"""What an HTML report shows, as plain data: header, decision, summary, the charts' inputs, the case table and,
with a second run, the comparison. :mod:`goldeval.report.html` turns it into one self-contained page.

Case buckets follow the one shared accounting (:func:`goldeval.runs.compare.bucket`, i.e.
:func:`goldeval.verdict.pass_rate`): ``pass`` (match; a right label), ``fail`` (no_match; a false positive or a
missed positive), ``near_match``, ``needs_human``, ``unscored``, ``verified_wrong``. A free-text case has a pass or
a fail only against a threshold: with ``min_f1`` it is ``fail`` below it and ``pass`` at or above it; without one it
is ``scored`` (an F1 is a number, not a verdict); ``unscored`` when it failed.

Above ``max_cases`` the page embeds every case that is not a pass (failing, changed, undecided, unscored), the worst
of the passing (or scored) cases by the headline's per-case number (the lowest whole-note F1: half the room left)
and a seeded random sample of the others, and says how many of each; the whole run stays in the store.
"""

from __future__ import annotations

import io
import random
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from goldeval.errors import InputError
from goldeval.freetext.tokens import get_tokenizer
from goldeval.gates.evaluate import interval_text
from goldeval.intervals import BOOTSTRAP_F1, WILSON, bootstrap_f1, corrected_detail, corrected_words, interval_words, wilson_interval
from goldeval.report import charts
from goldeval.report.marks import (  # noqa: F401 (re-exported)
    shared_marks_python,
    compact_spans,
    shared_marks,
    shared_spans,
)
from goldeval.report.comparison import compare_charts, comparison_verdict
from goldeval.report.runs import render_compare
from goldeval.report.sources import CaseSources, input_files
from goldeval.runs.compare import BUCKETS, bucket, paired_bootstrap
from goldeval.scoring.registry import scorer_of
from goldeval.verdict import GOLD_STATUSES

__all__ = ["CaseTally", "EmbeddedCases", "ReportOptions", "build_model", "case_filters", "headline_summary", "llm_calls", "shared_spans", "shared_marks", "compact_spans", "scorer_kind", "DEFAULT_MAX_CASES"]

DEFAULT_MAX_CASES = 20_000
REDACTED = "(redacted)"


class ReportOptions:
    """Options of one report.

    Attributes:
        max_cases: Most cases embedded (default 20,000); above it, every non-passing case, the lowest-F1 of the rest
            (half the room left) and a sample of the others.
        redact: Leave out every case text (predictions, references, answers, questions, whys, queries, rows, judge
            text, row error messages); keep ids, numbers and verdicts.
        min_f1: Free text: a case below this F1 counts as a failure (``None``: no per-case threshold).
        seed: Seed of the sample and of the bootstrap.
        resamples: Bootstrap resamples of the headline interval.
        confidence: Coverage of that interval.
    """

    def __init__(self, *, max_cases: int = DEFAULT_MAX_CASES, redact: bool = False, min_f1: float | None = None,
                 seed: int = 0, resamples: int = 2000, confidence: float = 0.95) -> None:
        if max_cases < 1:
            raise InputError(f"--max-cases must be ≥ 1, got {max_cases}. Give the most cases to embed (default {DEFAULT_MAX_CASES:,}).")
        if min_f1 is not None and not 0.0 <= min_f1 <= 1.0:
            raise InputError(f"--min-f1 must be in [0, 1], got {min_f1}.")
        self.max_cases, self.redact, self.min_f1 = max_cases, redact, min_f1
        self.seed, self.resamples, self.confidence = seed, resamples, confidence


def scorer_kind(results: Mapping[str, Any]) -> str:
    """``"freetext"``, ``"labels"``, ``"answers"`` or ``"generic"`` for a results dict: the ``report_kind`` of the
    scorer that wrote it (``"generic"`` when no installed scorer did)."""
    scorer = scorer_of((results.get("scorer") or {}).get("name"))
    return "generic" if scorer is None else scorer.report_kind


# ---------------------------------------------------------------------------------------------------------------
# header, decision, summary


def _short_hash(h: Any) -> str:
    return "—" if not h else str(h)


def _header(results: Mapping[str, Any], run: Mapping[str, Any] | None) -> list[list[str]]:
    scorer = results.get("scorer") or {}
    gates = results.get("gates") if isinstance(results.get("gates"), Mapping) else {}
    definition = (gates or {}).get("definition") or {}
    rows: list[tuple[str, Any]] = []
    if run is not None:
        rows += [("run", run.get("id")), ("arm", run.get("arm") or "—"), ("when (UTC)", str(run.get("created_at") or "—")[:19].replace("T", " ")),
                 ("goldeval", run.get("goldeval_version") or "—")]
    else:
        rows += [("run", "— (a results file; not from the store)")]
        r = results.get("run")
        if isinstance(r, Mapping):
            rows = [("run", r.get("id")), ("arm", r.get("arm") or "—"), ("store", r.get("store") or "—")]
    rows.append(("scorer", f"{scorer.get('name', '?')}@{scorer.get('version', '?')}"))
    judge = (run or {}).get("judge_version") or results.get("judge_version")
    if judge:
        rows.append(("judge version", judge))
    llm = _llm_info(results)
    if llm:
        for k in ("judge_version", "model", "system_prompt_sha256"):
            if llm.get(k):
                rows.append((f"LLM judge {k}", llm[k]))
    tok = results.get("tokenizer")
    if isinstance(tok, Mapping):
        rows.append(("tokenizer", f"{tok.get('name')}@{tok.get('version')}: {tok.get('description', '')}"))
    elif run is not None and run.get("tokenizer"):
        rows.append(("tokenizer", run["tokenizer"]))

    for role, f in input_files(results, run).items():
        rows.append((f"input {role}", f"{f.get('path') or '(path not recorded)'} · sha256 {f.get('sha256') or '—'}"))
    if run is not None and run.get("rubric_hash"):
        rows.append(("rubric sha256", run["rubric_hash"]))
    dod_hash = definition.get("sha256") or (run or {}).get("dod_hash")
    if dod_hash or definition:
        rows.append(("definition of done", f"{definition.get('path') or '—'} · sha256 {_short_hash(dod_hash)}"))
        rows.append(("agreed_by", definition.get("agreed_by") or "—"))
        rows.append(("agreed_on", str(definition.get("agreed_on") or "—")))
    return [[k, str(v)] for k, v in rows]


def _decision(results: Mapping[str, Any]) -> dict[str, Any]:
    gates = results.get("gates")
    if not isinstance(gates, Mapping):
        return {"status": "NO GATES", "summary": "No definition of done was applied to this run (give --gates to the "
                "scoring command, or run `goldeval gate`).", "gates": [], "warnings": []}
    out = []
    for g in gates.get("gates") or []:
        out.append({
            "metric": g.get("metric") if g.get("slice") is None else f"{g.get('metric')} [slice {g['slice']}]", "bound": f"{'≥' if g.get('op') == 'min' else '≤'} {g.get('limit_text')}",
            "value": g.get("observed_text") if g.get("observed_text") is not None else "—",
            "interval": interval_text(g),
            "interval_warning": g.get("interval_warning"),
            "passed": bool(g.get("passed")),
            "on_this_set": g.get("reason") or g.get("allowed_on_this_set") or "",
            "sentence": g.get("sentence") or "",
        })
    return {"status": "PASS" if gates.get("passed") else "FAIL", "summary": gates.get("summary") or "", "gates": out,
            "warnings": list(gates.get("warnings") or [])}


def _bootstrap_mean(values: Sequence[float], opts: ReportOptions) -> list[float] | None:
    if not values:
        return None
    import numpy as np  # start-up: numpy / scipy load only when this runs

    b = paired_bootstrap(np.zeros(len(values)), np.asarray(values, dtype=float), n_resamples=opts.resamples,
                         confidence=opts.confidence, seed=opts.seed)
    return b["ci"]


def _failure_ids(results: Mapping[str, Any]) -> set[Any]:
    """The ids of the results' ``failures`` (those a hash can hold: another can equal no case id, a str)."""
    out: set[Any] = set()
    for f in results.get("failures") or []:
        cid = f.get("id")
        try:
            out.add(cid)
        except TypeError:  # an id that is a list or an object: no case row carries it
            pass
    return out


class CaseTally:
    """What the summary and the charts read of every case of a run, gathered one case row at a time
    (:func:`_case_row`), so that a run's cases need never be held together.

    Attributes:
        f1s, precisions, recalls: Free text: the F1, precision and recall of each case with an F1, in the run's order.
        outcomes: Labels: tp / fp / fn / tn counts. buckets: cases per bucket. gold_status: data answers: cases per
            status.
        unscored: The first :data:`MAX_UNSCORED_SHOWN` unscored cases with a reason whose id is not among the
            results' failures (nor an earlier one's), ``{"id", "line", "reason"}``; ``n_unscored`` counts them all.

    Args:
        kind: The report kind (:func:`scorer_kind`).
        failure_ids: The ids of the results' ``failures`` (listed first by the summary).
    """

    def __init__(self, kind: str, failure_ids: set[Any]) -> None:
        self.kind = kind
        self.f1s: list[Any] = []
        self.precisions: list[Any] = []
        self.recalls: list[Any] = []
        self.outcomes: Counter[str] = Counter()
        self.buckets: Counter[str] = Counter()
        self.gold_status: Counter[Any] = Counter()
        self.unscored: list[dict[str, Any]] = []
        self.n_unscored = 0
        self._seen = set(failure_ids)

    @classmethod
    def of(cls, kind: str, rows: Sequence[Mapping[str, Any]], results: Mapping[str, Any]) -> CaseTally:
        """The tally of *rows* (case rows of *results*' run)."""
        tally = cls(kind, _failure_ids(results))
        for r in rows:
            tally.add(r)
        return tally

    def add(self, row: Mapping[str, Any]) -> None:
        """Count one case row."""
        b = row["bucket"]
        self.buckets[b] += 1
        if self.kind == "freetext" and row.get("f1") is not None:
            self.f1s.append(row["f1"])
            self.precisions.append(row["precision"])
            self.recalls.append(row["recall"])
        if row.get("outcome") in ("tp", "fp", "fn", "tn"):
            self.outcomes[row["outcome"]] += 1
        if row.get("gold_status"):
            self.gold_status[row["gold_status"]] += 1
        if b == "unscored" and row.get("reason") and row["id"] not in self._seen:
            self._seen.add(row["id"])
            self.n_unscored += 1
            if len(self.unscored) < MAX_UNSCORED_SHOWN:
                self.unscored.append({"id": row["id"], "line": row.get("line"), "reason": row["reason"]})


#: Unscored cases the summary lists (every one is counted).
MAX_UNSCORED_SHOWN = 1000


def _summary(results: Mapping[str, Any], kind: str, cases: list[dict[str, Any]] | CaseTally, opts: ReportOptions) -> dict[str, Any]:
    tally = cases if isinstance(cases, CaseTally) else CaseTally.of(kind, cases, results)
    agg = results.get("aggregate") or {}
    und = agg.get("undefined") or {}
    failures = results.get("failures") or []
    unscored = [{"id": f.get("id"), "line": f.get("line"), "reason": REDACTED if opts.redact else f.get("error")} for f in failures]
    n_unscored = len(unscored) + tally.n_unscored
    unscored += [{**u, "reason": REDACTED if opts.redact else u["reason"]} for u in tally.unscored[: max(0, MAX_UNSCORED_SHOWN - len(unscored))]]
    n_rows = agg.get("n_rows", agg.get("n", 0) if kind != "freetext" else agg.get("n", 0) + agg.get("n_failed", 0))
    items = [["cases (rows)", n_rows], ["scored", agg.get("n_scored", agg.get("n"))], ["unscored or failed", n_unscored]]
    head: dict[str, Any] = {"name": None, "value": None, "ci": None, "undefined": None}
    if kind == "freetext":
        f1s = tally.f1s
        # the scorer's own F1 mean (whole_note_f1_mean for token F1, rougeL_f1_mean for rougeL): <prefix>f1_mean
        key = _freetext_headline(results)
        prefix = key[: -len("f1_mean")]
        name = "whole-note F1" if prefix == "whole_note_" else f"{prefix.rstrip('_')} F1"
        head = {"name": f"{name} (macro)", "key": key, "value": agg.get(key), "ci": _bootstrap_mean(f1s, opts),
                "undefined": und.get(key), "interval_method": "bootstrap_percentile"}
        items += [["precision (macro)", agg.get(f"{prefix}precision_mean")], ["recall (macro)", agg.get(f"{prefix}recall_mean")]]
        for section_key in (f"{prefix}section_f1_mean", "section_f1_mean"):
            if section_key in agg:
                items.append(["section F1 (macro)", agg.get(section_key)])
                break
    elif kind == "labels":
        outcomes = tally.outcomes
        f1_ci = bootstrap_f1(outcomes, confidence=opts.confidence, n_resamples=opts.resamples, seed=opts.seed)
        head = {"name": f"F1 of {results.get('positive')!r}", "key": "f1", "value": agg.get("f1"),
                "ci": f1_ci if "f1" not in und else None, "undefined": und.get("f1"), "interval_method": BOOTSTRAP_F1}
        items += [[k, agg.get(k)] for k in ("precision", "recall", "missed", "missed_per_100", "tp", "fp", "fn", "tn") if k in agg]
    elif kind == "answers":
        # the counts of the headline value itself (the aggregate's), else the cases' buckets (the same accounting)
        n_pass, n_decided = agg.get("match"), agg.get("decided")
        if not (isinstance(n_pass, int) and isinstance(n_decided, int) and 0 <= n_pass <= n_decided):
            n_pass = tally.buckets["pass"]
            n_decided = tally.buckets["pass"] + tally.buckets["fail"]
        ci = wilson_interval(n_pass, n_decided, confidence=opts.confidence)
        head = {"name": "pass rate", "key": "pass_rate", "value": None if und.get("pass_rate") else agg.get("pass_rate"),
                "ci": None if ci is None else list(ci), "undefined": und.get("pass_rate"), "interval_method": WILSON}
        items += [[k, agg.get(k)] for k in ("match", "no_match", "decided", "near_match", "needs_human", "unscored", "verified_wrong") if k in agg]
    if head.get("ci") is not None and head.get("interval_method") == WILSON:
        head["interval_note"] = (f"{interval_words(WILSON, opts.confidence)} of match / (match + no_match); "
                                 "Wilson 1927, Newcombe 1998")
    elif head.get("ci") is not None:
        what = "the mean" if kind == "freetext" else "F1, which is no proportion of cases"
        head["interval_note"] = (f"{round(100 * opts.confidence, 1):g}% bootstrap percentile interval of {what}, "
                                 f"{opts.resamples:,} resamples of the cases, seed {opts.seed}")
    corrected = results.get("corrected_pass_rate") if kind == "answers" else None
    shown_undefined = dict(und)
    if isinstance(corrected, Mapping):  # its own line says why it is undefined, once
        shown_undefined = {k: v for k, v in und.items() if not k.startswith("pass_rate_corrected")}
    return {"items": [[k, v] for k, v in items], "headline": head, "unscored": unscored[:MAX_UNSCORED_SHOWN], "n_unscored": n_unscored,
            "undefined": shown_undefined, "corrected": _corrected_view(corrected) if isinstance(corrected, Mapping) else None}


def _corrected_view(c: Mapping[str, Any]) -> dict[str, Any]:
    """The corrected pass rate as the summary shows it: the numbers and the one line that states them
    (:func:`goldeval.intervals.corrected_words`)."""
    return {"value": c.get("estimate"), "low": c.get("low"), "high": c.get("high"), "undefined": c.get("undefined"),
            "clipped": bool(c.get("clipped")), "line": corrected_words(c), "detail": corrected_detail(c)}


def headline_summary(results: Mapping[str, Any], options: ReportOptions | None = None) -> dict[str, Any]:
    """The headline of one run with its interval, exactly as its report's summary shows it.

    Args:
        results: A results dict with its ``per_example`` (as the store gives it: ``RunStore.get_run(...)["results"]``).
        options: :class:`ReportOptions` (``confidence``, ``resamples`` and ``seed`` of a bootstrap interval).

    Returns:
        ``{"name", "key", "value", "ci": [low, high] | None, "undefined", "interval_method", "interval_note"?}``: the
        pass rate with its Wilson score interval (Wilson 1927), a mean F1 with a bootstrap percentile interval over
        the cases, the label F1 with a bootstrap over its outcome counts; ``name`` ``None`` for a scorer with no
        headline the report knows (a third-party scorer: ``kind`` generic).

    Example:
        >>> h = headline_summary({"scorer": {"name": "answer_judge"}, "aggregate": {"pass_rate": 1.0, "match": 21, "decided": 21},
        ...                       "per_example": []})
        >>> h["name"], round(h["ci"][0], 3)
        ('pass rate', 0.845)
    """
    opts = options or ReportOptions()
    kind = scorer_kind(results)
    rows = [_case_row(c, kind, opts) for c in results.get("per_example") or [] if isinstance(c, Mapping)]
    return dict(_summary(results, kind, rows, opts)["headline"])


def slices_view(results: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report's table of a run scored with ``--slice-by``: a row per slice, a column per metric.

    Args:
        results: A results dict; ``None`` is returned without ``slices``.

    Returns:
        ``{"field", "columns", "rows": [{"name", "cells", "error"}], "errors"}``: the columns are the scorer's
        ``slice_columns`` (else ``n``, ``n_scored`` and its headline), each cell the slice's value (a number, or
        ``"undefined"`` when the slice lists it under ``undefined``, ``None`` when absent); ``error`` is why a slice
        could not be aggregated; ``errors`` counts the rows whose field named no slice.

    Example:
        >>> v = slices_view({"scorer": {"name": "answer_judge"}, "slice_by": "db",
        ...                  "slices": {"a": {"n": 2, "pass_rate": 0.5, "undefined": {}}}})
        >>> v["columns"][:2], v["rows"][0]["cells"][:2]
        (['n', 'pass_rate'], [2, 0.5])
    """
    slices = results.get("slices")
    if not isinstance(slices, Mapping) or not slices:
        return None
    scorer = scorer_of((results.get("scorer") or {}).get("name"))
    cols = list(getattr(scorer, "slice_columns", ()) or [c for c in ("n", "n_scored", getattr(scorer, "headline", None)) if c])
    rows = []
    for name, agg in slices.items():
        if not isinstance(agg, Mapping):
            continue
        given = agg.get("undefined")
        und: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        rows.append({"name": str(name), "error": agg.get("error"),
                     "cells": [None if "error" in agg else "undefined" if c in und else agg.get(c) for c in cols]})
    return {"field": results.get("slice_by"), "columns": cols, "rows": rows, "errors": len(results.get("slice_errors") or [])}


# ---------------------------------------------------------------------------------------------------------------
# cases


def _freetext_headline(results: Mapping[str, Any]) -> str:
    """The aggregate key of a free-text results dict's F1 mean: its scorer's ``headline`` when that is an
    ``*f1_mean`` key, else token F1's ``whole_note_f1_mean``."""
    scorer = scorer_of((results.get("scorer") or {}).get("name"))
    key = scorer.headline if scorer is not None else None
    return key if isinstance(key, str) and key.endswith("f1_mean") else "whole_note_f1_mean"


def _bucket(case: Mapping[str, Any], kind: str, min_f1: float | None) -> str:
    if case.get("status", "scored") != "scored":
        return "unscored"
    if kind == "freetext":
        f1 = (case.get("whole_note") or {}).get("f1")
        if f1 is None:
            return "unscored"
        if min_f1 is None:
            return "scored"
        return "fail" if f1 < min_f1 else "pass"

    return bucket(case)


def _case_row(case: Mapping[str, Any], kind: str, opts: ReportOptions) -> dict[str, Any]:
    """The table's view of one per-case record (numbers, verdicts, and the detail a row opens to)."""
    red = opts.redact
    row: dict[str, Any] = {"id": str(case.get("id")), "bucket": _bucket(case, kind, opts.min_f1), "line": case.get("line")}
    if case.get("status", "scored") != "scored":
        row["reason"] = REDACTED if red else (case.get("reason") or case.get("error"))
    if kind == "freetext":
        wn = case.get("whole_note") or {}
        row.update(f1=wn.get("f1"), precision=wn.get("precision"), recall=wn.get("recall"))
        tk = case.get("tokens") or {}
        row.update(tokens_pred=tk.get("prediction"), tokens_ref=tk.get("reference"), overlap=tk.get("overlap"))
        if isinstance(case.get("sections"), Mapping):
            row["sections"] = {name: (s or {}).get("f1") for name, s in case["sections"].items()}
    elif kind == "labels":
        row.update(outcome=case.get("outcome"), gold=case.get("gold"), pred=case.get("pred"))
        if "second_gold" in case:
            row["second_gold"] = case.get("second_gold")
    elif kind == "answers":
        row.update(verdict=case.get("verdict"), confidence=case.get("confidence"), gold_status=case.get("gold_status"),
                   decided_by=case.get("decided_by"), needs_human_flag=bool(case.get("needs_human")))
        if case.get("golden_used") is not None:  # a case with alternative goldens: which decided, what each gave
            row["golden_used"] = case["golden_used"]
            row["golden_verdicts"] = [
                {k: (REDACTED if red and k in ("why", "gold_note") and g.get(k) else g.get(k))
                 for k in ("golden", "verdict", "confidence", "gold_status", "gold_note", "why")}
                for g in case.get("golden_verdicts") or [] if isinstance(g, Mapping)]
        loc = case.get("located")
        if red:
            row["why"] = REDACTED if case.get("why") else None
            if isinstance(loc, Mapping):
                row["located"] = {"golden_rows": loc.get("golden_rows"), "found": loc.get("found"),
                                  "missing": len(loc.get("missing") or []), "extra": loc.get("extra")}
        else:
            row.update(why=case.get("why"), column_pairing=case.get("column_pairing"), located=loc,
                       mismatch=case.get("mismatch"), gold_note=case.get("gold_note"))
            rule = case.get("rule")
            if isinstance(rule, Mapping):
                row["rule"] = {k: rule.get(k) for k in ("verdict", "confidence", "why")}
            given = case.get("details")
            details: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
            veto = details.get("must_not_use")
            forbidden: Mapping[str, Any] = veto if isinstance(veto, Mapping) else {}
            # what the judged record says of the key (read by _attach_key, then dropped): its parsed rubric (shown
            # when the case file is no longer there), why the rules held their verdict open, the vetoed fields hit
            row["_recorded"] = {"rubric": details.get("rubric"), "undecided_because": details.get("undecided_because"),
                                "hits": forbidden.get("hits")}
            if case.get("agreement") is not None:
                row["agreement"] = case.get("agreement")
        calls = llm_calls(case, redact=red)
        if calls:
            row["llm_calls"] = calls
    else:
        for k, v in case.items():
            if isinstance(v, (int, float, str, bool)) or v is None:
                row.setdefault(k, v)
    return row


def _freetext_row(case: Mapping[str, Any], kind: str, opts: ReportOptions) -> dict[str, Any]:
    """:func:`_case_row` of a free-text record (*kind* ``"freetext"``), which stays the definition: the same keys in
    the same order, the same values (``_bucket``'s rule written out), in one pass and a third of the time: the
    streamed report's loop over every case of a 100,000-case run (tests/unit/test_report_stream.py holds the two
    equal)."""
    get = case.get
    scored = get("status", "scored") == "scored"
    wn = get("whole_note") or {}
    f1 = wn.get("f1")
    min_f1 = opts.min_f1
    if not scored or f1 is None:
        bucket_ = "unscored"
    elif min_f1 is None:
        bucket_ = "scored"
    else:
        bucket_ = "fail" if f1 < min_f1 else "pass"
    row: dict[str, Any] = {"id": str(get("id")), "bucket": bucket_, "line": get("line")}
    if not scored:
        row["reason"] = REDACTED if opts.redact else (get("reason") or get("error"))
    row["f1"] = f1
    row["precision"] = wn.get("precision")
    row["recall"] = wn.get("recall")
    tk = get("tokens") or {}
    row["tokens_pred"] = tk.get("prediction")
    row["tokens_ref"] = tk.get("reference")
    row["overlap"] = tk.get("overlap")
    sections = get("sections")
    if sections is not None and isinstance(sections, Mapping):
        row["sections"] = {name: (s or {}).get("f1") for name, s in case["sections"].items()}
    return row


#: What the page shows of each LLM call (as :func:`goldeval.llm.run.judge_cases` records it): the numbers and the
#: parsed verdict always; the prompt sent, the raw answer and the judge's why only when the report is not redacted.
_CALL_NUMBERS = ("sample", "cached", "status", "latency_s", "attempts", "prompt_tokens", "completion_tokens", "cost_usd",
                 "finish_reason", "response_model", "capped")
_CALL_TEXTS = ("user_prompt", "raw", "error", "nonce")
_VERDICT_NUMBERS = ("verdict", "confidence", "needs_human", "self_contradicting", "injection", "truncated")
_VERDICT_TEXTS = ("why", "parse_error", "error")


def llm_calls(case: Mapping[str, Any], *, redact: bool = False) -> list[dict[str, Any]]:
    """Each LLM call of one judged case as the report's detail shows it.

    Args:
        case: A per-case record of a judge run (``goldeval judge --llm`` or ``goldeval llm-judge``), whose ``llm``
            is ``{"calls": [...]}`` as :func:`goldeval.llm.run.judge_cases` records it (the run store keeps the
            same record).
        redact: Keep only the numbers and the parsed verdict's verdict and confidence (no prompt, raw answer, why).

    Returns:
        One dict per call, in sample order: ``sample``, ``cached``, ``status``, ``latency_s``, ``attempts``, tokens,
        ``cost_usd``, ``finish_reason``, ``response_model`` (the model the endpoint says answered), ``verdict``
        (the parsed verdict: ``verdict``, ``confidence``, ``needs_human``, ``why``, ``parse_error``…) and, unless
        redacted, ``user_prompt`` (the user message sent, case materials with the answer fenced by ``nonce``),
        ``raw`` (the answer as received, ``None`` when the call failed) and ``error``. Keys whose value is ``None``
        are left out. ``[]`` for a case that went to no LLM.
    """
    llm = case.get("llm")
    calls = llm.get("calls") if isinstance(llm, Mapping) else llm if isinstance(llm, list) else None
    out: list[dict[str, Any]] = []
    for c in calls or []:
        if not isinstance(c, Mapping):
            continue
        keys = _CALL_NUMBERS if redact else _CALL_NUMBERS + _CALL_TEXTS
        call = {k: c.get(k) for k in keys if c.get(k) is not None}
        v = c.get("verdict")
        if isinstance(v, Mapping):
            vkeys = _VERDICT_NUMBERS if redact else _VERDICT_NUMBERS + _VERDICT_TEXTS
            call["verdict"] = {k: v.get(k) for k in vkeys if v.get(k) is not None}
        elif v is not None:
            call["verdict"] = {"verdict": v}
        out.append(call)
    return out


def _llm_info(results: Mapping[str, Any]) -> dict[str, Any] | None:
    """The LLM judge every call of the run went to: requested ``model``, ``base_url``, ``judge_version`` (the
    versioned doctrine, i.e. the system prompt), ``system_prompt_sha256``, ``layout`` of the user prompt,
    ``temperature``, ``seed``, ``max_tokens``, ``repeat``; ``None`` when the run had no LLM stage. From
    ``results["llm_judge"]`` (``goldeval judge --llm``) or ``results["judge"]`` (``goldeval llm-judge``)."""
    info = results.get("llm_judge")
    if not isinstance(info, Mapping) or "model" not in info:
        info = results.get("judge")
    if not isinstance(info, Mapping) or "model" not in info:
        return None
    return {k: info.get(k) for k in ("model", "base_url", "judge_version", "system_prompt_sha256", "layout", "temperature",
                                     "seed", "max_tokens", "repeat") if info.get(k) is not None}


def _select(rows: list[dict[str, Any]], opts: ReportOptions, changed: set[str]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Every case when they fit, else every non-pass or changed case, then the worst of the rest by the headline's
    per-case number (the lowest whole-note F1: half the room left, at least one) and a seeded sample of the others."""
    if len(rows) <= opts.max_cases:
        return rows, None
    # a free-text case without a threshold ("scored") is sampled like a pass: nothing says it failed
    keep = [r for r in rows if r["bucket"] not in ("pass", "scored") or r["id"] in changed]
    rest = [r for r in rows if r["bucket"] in ("pass", "scored") and r["id"] not in changed]
    room = max(0, opts.max_cases - len(keep))
    # the worst passing / scored cases by the headline (the lowest F1, ties by id) are always on the page: a random
    # sample alone could leave out the very cases a reviewer opens first
    ranked = sorted((r for r in rest if isinstance(r.get("f1"), (int, float))), key=lambda r: (r["f1"], r["id"]))
    worst = ranked[:min(len(ranked), max(1, room // 2))] if room else []
    taken = {id(r) for r in worst}
    others = [r for r in rest if id(r) not in taken]
    sample = random.Random(opts.seed).sample(others, min(room - len(worst), len(others)))
    chosen = {id(r) for r in keep} | taken | {id(r) for r in sample}
    out = [r for r in rows if id(r) in chosen]
    what = "passing" if any(r["bucket"] == "pass" for r in rest) or not rest else "scored"
    lowest = (f", the {len(worst):,} {what} cases of lowest whole-note F1 (up to {worst[-1]['f1']:.4f})" if worst else "")
    note = (f"This run has {len(rows):,} cases; the report embeds {len(out):,}: every case that is not a pass or that "
            f"changed ({len(keep):,}){lowest} and a random sample of {len(sample):,} of the {len(others):,} other {what} "
            f"cases (seed {opts.seed}). The charts and the summary count every case. The whole run stays in the store: "
            "`goldeval runs export RUN` writes every case.")
    return out, {"n_total": len(rows), "n_embedded": len(out), "n_kept": len(keep), "n_worst": len(worst),
                 "n_sampled": len(sample), "n_passing": len(rest), "note": note}


def _attach_texts(rows: list[dict[str, Any]], kind: str, sources: CaseSources | None, tokenizer: Any) -> None:
    if sources is None:
        return
    for r in rows:
        t = sources.texts.get(r["id"])
        if not t:
            continue
        if kind == "freetext":
            p, ref = t.get("prediction"), t.get("reference")
            if isinstance(p, Mapping) and isinstance(ref, Mapping):
                # sectioned notes: each section beside its counterpart, marked as its own section F1 counts it
                r["section_texts"] = [_marked_pair(p.get(name), ref.get(name), tokenizer, name=str(name))
                                      for name in dict.fromkeys([*ref, *p])]
            else:
                r.update(_marked_pair(p, ref, tokenizer))
        elif kind == "answers":
            r.update({k: v for k, v in t.items() if v is not None})


#: Coverage values a case may carry, in words (DESIGN.md "Data answers"; the LLM judge's doctrine 14).
COVERAGE_WORDS = {
    "derivable": ("the answer had to build the concept from parts (no column or measure names it): a derived answer "
                  "that matches the golden is a match, and naming no such measure is no deduction"),
}


def _attach_key(r: dict[str, Any]) -> None:
    """The case's key beside its golden, as ``r["key"]``: the rubric clauses with their markers, what each does and
    the part it played in the verdict (:func:`goldeval.answers.rubric.clause_roles`), the ``must_not_use`` entries
    (a field name: a hard veto the rules check on the parsed final query, with the use found; prose: read by the
    LLM judge) and ``coverage``. The clauses are the case file's; when it is gone, the judged record's parsed ones
    (``rubric_from`` says so). Leaves ``r`` without its raw ``rubric`` and ``must_not_use``."""
    # start-up: the data-answer judge (sqlglot, scipy: ~1 s) loads only for a data-answer page
    from goldeval.answers.forbidden import split_entries
    from goldeval.answers.rubric import clause_roles

    rec = r.pop("_recorded", None) or {}
    rubric, rubric_from = r.pop("rubric", None), "case file"
    if not rubric and rec.get("rubric"):
        rubric, rubric_from = rec["rubric"], "judged record"
    if r.get("golden_kind") is None and rec.get("undecided_because") == "criteria golden":
        r["golden_kind"] = "criteria"  # the case file is gone; the record says what kind of golden it was
    key: dict[str, Any] = {}
    if isinstance(rubric, list) and rubric:
        key["rubric"] = clause_roles(rubric, verdict=r.get("verdict"), why=r.get("why"), decided_by=r.get("decided_by"),
                                     undecided_because=rec.get("undecided_because"))
        if rubric_from != "case file":
            key["rubric_from"] = rubric_from
    entries = r.pop("must_not_use", None)
    if isinstance(entries, list) and entries:
        hits = {str(h.get("entry")).lower(): h.get("where") for h in rec.get("hits") or [] if isinstance(h, Mapping)}
        out = []
        for e in entries:
            fields, _ = split_entries([str(e)])
            if fields:
                t, f = fields[0]
                out.append({"entry": str(e), "kind": "field", "used": hits.get(f"{t}.{f}" if t else f)})
            else:
                out.append({"entry": str(e), "kind": "prose", "used": None})
        key["must_not_use"] = out
    coverage = r.pop("coverage", None)
    if coverage:
        key["coverage"] = {"value": str(coverage), "meaning": COVERAGE_WORDS.get(str(coverage))}
    if key:
        r["key"] = key


def case_filters(kind: str, *, min_f1: float | None = None, compare: bool = False) -> list[list[str]]:
    """The case table's filter chips: ``[[bucket, label], ...]``, one per outcome a scorer of *kind* can produce.

    Args:
        kind: The report kind (:func:`scorer_kind`).
        min_f1: Free text: the per-case threshold; without one an F1 is a number, not a pass or a fail, so there
            is a ``scored`` chip and no pass / fail chip.
        compare: A comparison: add ``changed``.

    Returns:
        ``"all"`` first, then the outcomes: data answers ``fail pass near_match needs_human unscored
        verified_wrong`` (the pass rate's buckets, :data:`goldeval.runs.compare.BUCKETS`); labels ``fail pass
        unscored`` (a label is right or wrong); free text ``fail pass unscored`` with a threshold, ``scored
        unscored`` without; any other scorer every bucket.

    Example:
        >>> [k for k, _ in case_filters("labels")]
        ['all', 'fail', 'pass', 'unscored']
    """
    label = {"fail": "failures", "pass": "passes"}
    if kind == "labels" or (kind == "freetext" and min_f1 is not None):
        keys: list[str] = ["fail", "pass", "unscored"]
    elif kind == "freetext":
        keys = ["scored", "unscored"]
    else:  # data answers and any other scorer: every bucket of the pass rate's accounting
        keys = ["fail", "pass", *[b for b in BUCKETS if b not in ("pass", "fail")]]
    return [["all", "all"], *[[k, label.get(k, k)] for k in keys], *([["changed", "changed"]] if compare else [])]


def _marked_pair(p: Any, ref: Any, tokenizer: Any, *, name: str | None = None) -> dict[str, Any]:
    """``{"prediction", "reference"}`` (and ``"name"``), with ``spans_pred`` / ``spans_ref`` when both are texts
    and the rule gives offsets."""
    out: dict[str, Any] = {"prediction": p, "reference": ref}
    if name is not None:
        out["name"] = name
    if isinstance(p, str) and isinstance(ref, str) and tokenizer is not None:
        marks = shared_marks(p, ref, tokenizer)
        if marks is not None:
            out["spans_pred"], out["spans_ref"] = marks
    return out



# ---------------------------------------------------------------------------------------------------------------
# charts


def _chart_inputs(results: Mapping[str, Any], kind: str, rows: list[dict[str, Any]] | CaseTally, opts: ReportOptions,
                  summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The charts as ``[{"title", "svg"}]`` (drawn by :mod:`goldeval.report.charts` from every case: its rows, or
    their :class:`CaseTally`)."""
    tally = rows if isinstance(rows, CaseTally) else CaseTally.of(kind, rows, results)

    agg = results.get("aggregate") or {}
    # the whole run's gates, every bound of each (a slice's gate, [gates.slices.NAME], bounds that slice's value, not
    # the value charted here; `min = 0.8, max = 0.99` is two gate lines on one metric, and a failing one makes it red)
    gates: dict[str, list[Mapping[str, Any]]] = {}
    if isinstance(results.get("gates"), Mapping):
        for g in (results.get("gates") or {}).get("gates") or []:
            if isinstance(g, Mapping) and g.get("slice") is None:
                gates.setdefault(str(g.get("metric")), []).append(g)
    out: list[dict[str, Any]] = []
    if kind == "freetext":
        out.append({"title": "per-example F1", "svg": charts.histogram(tally.f1s, title=f"per-example F1 ({len(tally.f1s)} scored)",
                                                                     xlabel="whole-note F1", threshold=opts.min_f1)})
        out.append({"title": "precision against recall", "svg": charts.scatter(tally.recalls, tally.precisions,
                                                                            title="precision against recall", xlabel="recall", ylabel="precision")})
        sections = agg.get("sections")
        if isinstance(sections, Mapping) and sections:
            names = list(sections)
            out.append({"title": "mean F1 per section", "svg": charts.bars(names, [float(sections[n].get("f1_mean") or 0.0) for n in names],
                                                                         title="mean F1 per section", ylabel="mean F1", ymax=1.05)})
    elif kind == "labels":
        cm = results.get("confusion_matrix") or {}
        if cm.get("matrix"):
            labels = [str(x) for x in cm.get("labels") or []]
            matrix = cm["matrix"]
            if len(labels) > 12:  # the 12 most frequent gold labels keep the chart readable
                order = sorted(range(len(labels)), key=lambda i: -sum(matrix[i]))[:12]
                labels = [labels[i] for i in order]
                matrix = [[matrix[i][j] for j in order] for i in order]
            out.append({"title": "confusion matrix", "svg": charts.confusion(matrix, labels, title="confusion matrix (rows gold, columns predicted)")})
        names, values, marks = [], [], []
        for key in ("precision", "recall"):
            if key in agg:
                names.append(key)
                values.append(float(agg[key]))
                marks += [(len(names) - 1, g["op"], float(g["limit"])) for g in gates.get(key, []) if g.get("limit") is not None]
        if names:
            out.append({"title": "precision and recall against their gates", "svg": charts.bars(
                names, values, title="precision / recall" + (" (dashed: gate)" if marks else ""), ylabel="value", ymax=1.1, gates=marks,
                colors=[_gate_colour(gates.get(n)) for n in names])})
        for key, label in (("missed_per_100", "missed per 100 gold positives"), ("missed", "missed positives")):
            if key in agg and (key in gates or key == "missed_per_100"):
                marks = [(0, g["op"], float(g["limit"])) for g in gates.get(key, []) if g.get("limit") is not None]
                out.append({"title": label, "svg": charts.bars([key], [float(agg[key])], title=label + (" (dashed: gate)" if marks else ""), ylabel=key,
                                                             gates=marks, colors=[_gate_colour(gates.get(key))])})
    elif kind == "answers":
        # each case in the one bucket the pass rate puts it in (goldeval.verdict.pass_rate), so that the bars are the
        # summary's counts: a verified_wrong golden is its own bar whatever its verdict, and a match of confidence
        # ≤ 5 is needs_human
        names = ["match", "no_match", "near_match", "needs_human", "unscored", "verified_wrong"]
        as_name = {"pass": "match", "fail": "no_match"}
        counts: Counter[str] = Counter()
        for b, k in tally.buckets.items():
            counts[as_name.get(b, b)] += k
        values = [counts.get(v, 0) for v in names]
        out.append({"title": "verdicts, as the pass rate counts them", "counts": dict(zip(names, values)),
                    "note": ("Each case counted once, as in the summary: a case whose golden was judged verified_wrong is "
                             "counted there (out of the pass rate) whatever its verdict, and a verdict of confidence ≤ 5 "
                             "under needs_human. Its own verdict is in the table."),
                    "svg": charts.bars(names, values, title="verdicts (as the pass rate counts them)", ylabel="cases",
                                       colors=["#2e7d32", "#c62828", "#0277bd", "#ef6c00", "#6d6d6d", "#8d6e63"])})

        gs = tally.gold_status
        out.append({"title": "gold_status", "svg": charts.bars(list(GOLD_STATUSES), [gs.get(s, 0) for s in GOLD_STATUSES], title="gold_status counts",
                                                             ylabel="cases")})
        head = summary["headline"]
        ci = head.get("ci") or [None, None]
        bounds = gates.get("pass_rate", [])
        # one dashed line: the bound that failed, else the first (the point's colour is every bound's decision)
        g = next((b for b in bounds if not b.get("passed")), bounds[0] if bounds else None)
        out.append({"title": "pass rate = match / (match + no_match)", "svg": charts.interval(
            "pass rate", head.get("value"), ci[0], ci[1], title=f"pass rate and its {interval_words(WILSON, opts.confidence)}",
            gate=(g["op"], float(g["limit"])) if g and g.get("limit") is not None else None,
            passed=None if not bounds else all(bool(b.get("passed")) for b in bounds))})
    return out


def _gate_colour(bounds: list[Mapping[str, Any]] | None) -> str:
    """A bar's colour: neutral without a gate, green when every bound of the metric's gate passed, else red."""
    if not bounds:
        return "#3f6fb5"
    return "#2e7d32" if all(g.get("passed") for g in bounds) else "#c62828"


# ---------------------------------------------------------------------------------------------------------------
# the whole model


def build_model(
    results: Mapping[str, Any],
    *,
    run: Mapping[str, Any] | None = None,
    sources: CaseSources | Callable[[set[str]], CaseSources] | None = None,
    compare: Mapping[str, Any] | None = None,
    results_b: Mapping[str, Any] | None = None,
    run_b: Mapping[str, Any] | None = None,
    sources_b: CaseSources | Callable[[set[str]], CaseSources] | None = None,
    options: ReportOptions | None = None,
    records: Callable[[], Iterable[Any]] | None = None,
) -> dict[str, Any]:
    """Everything one report shows, JSON-ready (charts as SVG strings; with *records*, the cases as
    :class:`EmbeddedCases`).

    Args:
        results: The results dict of the run (with ``per_example``), as a scoring command wrote it or as the store
            rebuilds it.
        run: The stored run record (id, arm, versions, hashes, inputs), or ``None`` for a results file.
        sources: Case texts read back from the inputs (:func:`goldeval.report.sources.load_sources`), or a function
            of the embedded case ids that reads them (called once the cases to embed are chosen, so that a 100,000-
            case run reads the texts of the 20,000 it shows).
        compare, results_b, run_b, sources_b: Compare mode: :func:`goldeval.runs.compare.compare_runs` of this run
            (A, before) with run B (after), and B's results, record and texts. The table then shows B's cases with A's
            beside them; ``summary`` and ``decision`` are B's, ``summary_a`` and ``decision_a`` A's, the charts set A
            against B (:func:`goldeval.report.comparison.compare_charts`) and ``compare["verdict"]`` is the verdict of
            the comparison (:func:`goldeval.report.comparison.comparison_verdict`).
        options: :class:`ReportOptions`.
        records: One run (no *compare*): a function that returns an iterator of the run's per-case records each
            time it is called (e.g. :meth:`goldeval.runs.store.RunStore.per_example_records`), read in place of
            ``results["per_example"]``. The cases are then streamed: one pass counts what the summary and charts
            show (:class:`CaseTally`) and chooses the cases to embed (the same ones, :func:`_select`), a second
            decodes only those, and ``cases`` is an :class:`EmbeddedCases` whose texts (free text) are read a chunk
            at a time as :func:`goldeval.report.html.write_html` writes the page: the same page, and memory that
            does not grow with the run (the 100,000 records are never held).

    Returns:
        ``{"kind", "title", "header", "header_a", "decision", "decision_a", "summary", "summary_a", "slices", "charts",
        "columns", "cases", "sample", "notes", "redacted", "min_f1", "llm", "compare", "filters"}`` (``*_a``
        ``None`` outside compare mode; ``slices``: :func:`slices_view`, ``None`` for a run not sliced; ``llm``: the
        LLM judge of the run, see :func:`_llm_info`; ``filters``: :func:`case_filters`). A data-answer case also
        carries ``key`` (its rubric clauses and the part each played, its ``must_not_use`` entries and ``coverage``:
        see :func:`_attach_key`) unless redacted.
    """
    opts = options or ReportOptions()
    if compare is None:
        main_results, main_run, main_sources = results, run, sources
    elif results_b is None:
        raise InputError("build_model: compare mode needs results_b, the results of run B. Pass it with compare.")
    else:
        main_results, main_run, main_sources = results_b, run_b, sources_b
    kind = scorer_kind(main_results)
    if records is not None and compare is None:
        return _streamed_model(main_results, main_run, main_sources, kind, records, opts)
    per_example = list(main_results.get("per_example") or [])
    rows = [_case_row(c, kind, opts) for c in per_example if isinstance(c, Mapping)]
    changed: set[str] = set()
    cmp_view = None
    before: dict[str, dict[str, Any]] = {}
    if compare is not None:
        before = {str(c.get("id")): _case_row(c, kind, opts) for c in (results.get("per_example") or []) if isinstance(c, Mapping)}
        for r in rows:
            a = before.get(r["id"])
            if a is None:
                r["a"] = None
                changed.add(r["id"])
                continue
            r["a"] = {k: a.get(k) for k in ("bucket", "verdict", "confidence", "why", "f1", "outcome", "pred", "golden_used") if k in a}
            if a["bucket"] != r["bucket"] or (r.get("f1") is not None and a.get("f1") is not None and r["f1"] != a["f1"]):
                changed.add(r["id"])
            elif (a.get("golden_used") or "primary") != (r.get("golden_used") or "primary") and "verdict" in r:
                changed.add(r["id"])  # the same outcome, decided by another of the case's goldens
            if r.get("f1") is not None and a.get("f1") is not None:
                r["delta_f1"] = r["f1"] - a["f1"]
        for r in rows:
            r["changed"] = r["id"] in changed
        cmp_view = _compare_view(compare, opts)
    summary = _summary(main_results, kind, rows, opts)
    summary_a = decision_a = None
    if compare is not None and cmp_view is not None:
        # the compare page: A's summary and gates beside B's, and charts that set A against B (every case of both)
        summary_a, decision_a = _summary(results, kind, list(before.values()), opts), _decision(results)
        charts = compare_charts(compare, kind, rows_a=before, rows_b=rows, summary_a=summary_a, summary_b=summary,
                                results_a=results, results_b=main_results)
    else:
        charts = _chart_inputs(main_results, kind, rows, opts, summary)
    embedded, sample = _select(rows, opts, changed)
    if not opts.redact:
        ids = {r["id"] for r in embedded}
        if callable(main_sources):
            main_sources = _read_once(main_sources, ids)
        if compare is not None and callable(sources):
            sources = _read_once(sources, ids)
    notes = list(main_sources.notes if isinstance(main_sources, CaseSources) else [])
    if not opts.redact:
        tokenizer = _tokenizer(main_results, kind)
        # (a function of the ids was called above: what is left is the texts or None)
        _attach_texts(embedded, kind, main_sources if isinstance(main_sources, CaseSources) else None, tokenizer)
        if kind == "answers":
            for r in embedded:
                _attach_key(r)
        if compare is not None and isinstance(sources, CaseSources) and kind == "answers":
            for r in embedded:
                t = sources.texts.get(r["id"]) or {}
                if r.get("a") is not None and t.get("final_query") is not None:
                    r["a"]["final_query"] = t.get("final_query")
    for r in embedded:
        r.pop("_recorded", None)
    title = f"goldeval report · {(main_run or {}).get('id') or (main_results.get('run') or {}).get('id') or 'results file'}"
    if cmp_view is not None:
        sides = [f"{s['side']} {s['id'] or '?'}" + (f" ({s['arm']})" if s.get("arm") else "") for s in cmp_view["verdict"]["runs"]]
        title = f"goldeval compare · {sides[0]} → {sides[1]}"
    return {
        "kind": kind,
        "title": title,
        "header": _header(main_results, main_run),
        "header_a": _header(results, run) if compare is not None else None,
        "decision": _decision(main_results),
        "decision_a": decision_a,
        "summary": summary,
        "summary_a": summary_a,
        "slices": slices_view(main_results),
        "charts": charts,
        "cases": embedded,
        "sample": sample,
        "notes": notes,
        "redacted": opts.redact,
        "min_f1": opts.min_f1,
        "llm": _llm_info(main_results) if kind == "answers" else None,
        "compare": cmp_view,
        "filters": case_filters(kind, min_f1=opts.min_f1, compare=compare is not None),
    }


def _read_once(sources: Callable[[set[str]], CaseSources], ids: set[str]) -> CaseSources:
    """The texts of *ids* from a function of the ids (a :class:`~goldeval.report.sources.TextLoader` is closed
    after it)."""
    try:
        return sources(ids)
    finally:
        close = getattr(sources, "close", None)
        if callable(close):
            close()


def _tokenizer(results: Mapping[str, Any], kind: str) -> Any:
    """The token rule that marks a free-text case's shared tokens (``None``: no marks; an unknown rule)."""
    if kind != "freetext":
        return None
    try:
        return get_tokenizer(((results.get("tokenizer") or {}).get("name")) or "openscribe")
    except Exception:  # an unknown rule: texts are shown without marks
        return None


class EmbeddedCases:
    """The cases a page embeds, held as their table rows, each chunk's texts (and shared-token marks) read and
    attached only when that chunk is written (:func:`goldeval.report.html.write_html` asks for :meth:`chunks`).

    Iterating it (or ``list(...)``) gives every case as :func:`build_model` without *records* gives it. It holds the
    rows of the embedded cases (numbers, verdicts, ids: ~1 KB a case); a chunk's texts are dropped once written.

    Args:
        rows: The embedded cases' rows, in the page's order, without texts.
        finish: ``chunk rows -> the chunk's cases`` with their texts: new dicts; *rows* are left as they are.
        close: Called when a pass over the chunks ends (the input file held open between chunks).
    """

    def __init__(self, rows: list[dict[str, Any]], finish: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
                 close: Callable[[], None] | None = None) -> None:
        self._rows, self._finish, self._close = rows, finish, close

    def __len__(self) -> int:
        return len(self._rows)

    def chunks(self, size: int) -> Iterator[list[dict[str, Any]]]:
        """The cases, *size* at a time, each chunk with its texts."""
        try:
            for start in range(0, len(self._rows), size):
                yield self._finish(self._rows[start : start + size])
        finally:
            if self._close is not None:
                self._close()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for chunk in self.chunks(1_000):
            yield from chunk


def _streamed_rows(records: Callable[[], Iterable[Any]], kind: str, opts: ReportOptions,
                   tally: CaseTally) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """:func:`_select` of the case rows of *records* (every case of one run), without holding them: one pass counts
    each row into *tally* and keeps what the choice needs (the positions of the cases that are not a pass, of the
    others, and the lowest F1s among them, at most ``max(1, max_cases // 2)``), a second builds the rows of the
    cases chosen. The same cases as :func:`_select` in the same order, the same sample note: the seeded sample
    draws positions among the others exactly as ``random.Random(seed).sample`` draws them from the list of those
    cases (it depends on their number, never on what they are)."""
    keep: list[int] = []
    rest = array("q")
    worst_pool: list[tuple[Any, str, int]] = []  # (F1, id, position): the sort of _select, ties in the run's order
    cap = max(1, opts.max_cases // 2)
    n_ranked, n, any_pass = 0, 0, False
    held: list[dict[str, Any]] | None = []  # every row while they fit: no second pass for a run that fits
    row_of = _freetext_row if kind == "freetext" else _case_row
    for c in records():
        if c.__class__ is not dict and not isinstance(c, Mapping):
            continue
        r = row_of(c, kind, opts)
        tally.add(r)
        if held is not None:
            held.append(r)
            if len(held) > opts.max_cases:
                held = None
        if r["bucket"] not in ("pass", "scored"):
            keep.append(n)
        else:
            rest.append(n)
            any_pass = any_pass or r["bucket"] == "pass"
            f1 = r.get("f1")
            if isinstance(f1, (int, float)):
                n_ranked += 1
                worst_pool.append((f1, r["id"], n))
                if len(worst_pool) >= 2 * cap + 4096:
                    worst_pool.sort()
                    del worst_pool[cap:]
        n += 1
    if held is not None:
        return held, None
    room = max(0, opts.max_cases - len(keep))
    worst_pool.sort()
    worst = worst_pool[:min(n_ranked, max(1, room // 2))] if room else []
    taken = {w[2] for w in worst}
    others = array("q", (p for p in rest if p not in taken))
    picks = random.Random(opts.seed).sample(range(len(others)), min(room - len(worst), len(others)))
    chosen = set(keep) | taken | {others[j] for j in picks}
    rows: list[dict[str, Any]] = []
    pos = 0
    for c in records():
        if c.__class__ is not dict and not isinstance(c, Mapping):
            continue
        if pos in chosen:
            rows.append(row_of(c, kind, opts))
        pos += 1
    if pos != n:
        raise InputError(f"report: the run's cases changed while the report was read ({n:,} cases, then {pos:,}). "
                         "Make the report again once the run is not being written.")
    what = "passing" if any_pass or not rest else "scored"
    lowest = (f", the {len(worst):,} {what} cases of lowest whole-note F1 (up to {worst[-1][0]:.4f})" if worst else "")
    note = (f"This run has {n:,} cases; the report embeds {len(rows):,}: every case that is not a pass or that "
            f"changed ({len(keep):,}){lowest} and a random sample of {len(picks):,} of the {len(others):,} other {what} "
            f"cases (seed {opts.seed}). The charts and the summary count every case. The whole run stays in the store: "
            "`goldeval runs export RUN` writes every case.")
    return rows, {"n_total": n, "n_embedded": len(rows), "n_kept": len(keep), "n_worst": len(worst),
                  "n_sampled": len(picks), "n_passing": len(rest), "note": note}


def _streamed_model(results: Mapping[str, Any], run: Mapping[str, Any] | None,
                    sources: CaseSources | Callable[[set[str]], CaseSources] | None, kind: str,
                    records: Callable[[], Iterable[Any]], opts: ReportOptions) -> dict[str, Any]:
    """:func:`build_model` of one run whose cases come from *records* (see there)."""
    tally = CaseTally(kind, _failure_ids(results))
    rows, sample = _streamed_rows(records, kind, opts, tally)
    summary = _summary(results, kind, tally, opts)
    charts = _chart_inputs(results, kind, tally, opts, summary)
    del tally
    notes: list[str] = []
    cases: list[dict[str, Any]] | EmbeddedCases
    chunked = getattr(sources, "chunked", False) and callable(getattr(sources, "notes", None))
    if opts.redact or sources is None:
        for r in rows:
            r.pop("_recorded", None)
        cases = rows
    elif chunked:
        loader: Any = sources
        notes = list(loader.notes())
        tokenizer = _tokenizer(results, kind)

        def finish(chunk: list[dict[str, Any]]) -> list[dict[str, Any]]:
            out = [dict(r) for r in chunk]
            lines = {r["id"]: r["line"] for r in out if isinstance(r.get("line"), int) and not isinstance(r.get("line"), bool)}
            _attach_texts(out, kind, loader({r["id"] for r in out}, lines), tokenizer)
            for r in out:
                if kind == "answers":
                    _attach_key(r)
                r.pop("_recorded", None)
            return out

        cases = EmbeddedCases(rows, finish, getattr(loader, "close", None))
    else:
        src = _read_once(sources, {r["id"] for r in rows}) if callable(sources) else sources
        notes = list(src.notes)
        _attach_texts(rows, kind, src, _tokenizer(results, kind))
        for r in rows:
            if kind == "answers":
                _attach_key(r)
            r.pop("_recorded", None)
        cases = rows
    return {
        "kind": kind,
        "title": f"goldeval report · {(run or {}).get('id') or (results.get('run') or {}).get('id') or 'results file'}",
        "header": _header(results, run),
        "header_a": None,
        "decision": _decision(results),
        "decision_a": None,
        "summary": summary,
        "summary_a": None,
        "slices": slices_view(results),
        "charts": charts,
        "cases": cases,
        "sample": sample,
        "notes": notes,
        "redacted": opts.redact,
        "min_f1": opts.min_f1,
        "llm": _llm_info(results) if kind == "answers" else None,
        "compare": None,
        "filters": case_filters(kind, min_f1=opts.min_f1, compare=False),
    }


def _compare_view(cmp: Mapping[str, Any], opts: ReportOptions) -> dict[str, Any]:
    """The comparison as the report shows it: the lines ``goldeval compare`` prints, flips with both whys, stable /
    flickering near_match, the biggest F1 movers."""

    from rich.console import Console  # start-up: rich loads only when a table is rendered


    buf = io.StringIO()
    # soft_wrap: a long line (the "measured differently" note) stays one line, so the page shows it whole (F7)
    render_compare(cmp, Console(file=buf, width=120, soft_wrap=True, color_system=None, force_terminal=False), max_rows=20)
    lines = buf.getvalue()
    v = cmp.get("verdicts") or {}
    s = cmp.get("scores") or {}

    def why(side: Any) -> Any:
        if not isinstance(side, Mapping):
            return side
        return {**side, "why": REDACTED if (opts.redact and side.get("why")) else side.get("why")}

    flips = {k: [{"id": f["id"], "a": why(f["a"]), "b": why(f["b"])} for f in (v.get("flips") or {}).get(k, [])]
             for k in ("pass_to_fail", "fail_to_pass")}
    nm = v.get("near_match") or {}
    # the lines of `goldeval compare` the page lists under the verdict; the cases, McNemar and the differences with
    # their intervals are in the verdict's table (comparison_verdict), not said twice
    stat_prefixes = ("pass rate A", "pass rate B", "stayed:", "near_match:", "decided in one run only",
                     "deciding golden changed", "labels A:", "labels B:", "missed positives:", "false positives:",
                     "scored in one run only", "note: the runs were measured differently",
                     "note: the definitions of done differ")
    movers = list(s.get("biggest_movers") or [])
    if v and cmp.get("labels"):
        flips_summary = (f"the cases whose label turned wrong ({len(flips['pass_to_fail'])}) or right "
                         f"({len(flips['fail_to_pass'])}), each with both runs' labels")
    elif v:
        flips_summary = (f"the flipped cases, each with both whys: {len(flips['pass_to_fail'])} pass → fail, "
                         f"{len(flips['fail_to_pass'])} fail → pass; near_match {len(nm.get('stable') or [])} stable, "
                         f"{len(nm.get('flickering') or [])} flickering")
    else:
        flips_summary = f"the biggest F1 movers ({len(movers)}), with each run's F1"
    return {
        "runs": cmp.get("runs"),
        "verdict": comparison_verdict(cmp),
        "warnings": list(cmp.get("warnings") or []),
        "text": None if opts.redact else lines,
        "stat_lines": [ln for ln in lines.splitlines() if ln.startswith(stat_prefixes)],
        "flips_summary": flips_summary,
        "flips": flips,
        "stable": list(nm.get("stable") or []),
        "flickering": [{"id": f["id"], "a": why(f["a"]), "b": why(f["b"])} for f in nm.get("flickering") or []],
        "movers": movers,
        "mcnemar": v.get("mcnemar"),
        "bootstrap": v.get("bootstrap") or s.get("bootstrap"),
        "added": list(cmp.get("added") or []),
        "removed": list(cmp.get("removed") or []),
        "n_common": cmp.get("n_common"),
    }
