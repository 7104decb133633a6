"""The definition of done: a TOML file of gates a customer signed — parse it, evaluate a results file, explain.

A definition of done looks like::

    agreed_by = "Head of underwriting"
    agreed_on = 2026-11-02
    positive = "escalate"            # the positive label (labels scorer)
    positive_noun = "escalation"     # optional: how the summary names one positive case
    [gates]
    missed_per_100 = { max = 2 }     # missed per 100 gold positives
    precision      = { min = 0.80 }
    kappa          = { min = "annotator_kappa" }   # a limit may name another metric: "the agreement line"

Rules:
- Gates are independent; a run passes only when every gate passes. A bound is inclusive (0.80 passes
  ``min = 0.80``). Values are compared unrounded (2 misses in 99 = 2.0202… per 100 fails ``max = 2``).
- A gate on a metric the results list in ``aggregate["undefined"]`` fails and says why ("precision undefined:
  nothing was predicted positive"); a metric absent from the results file fails with a clear reason. Never a
  silent pass on no evidence. So does a value no value of the metric can be (a precision of 1.5 or ``Infinity``,
  -1 misses: outside its unit's range), on whichever side of the bound it lies.
- A gate on a metric the results file's scorer never produces (``whole_note_f1_mean`` on a labels run) is a
  usage error (:class:`~goldeval.errors.InputError`), not a failing gate.

Every gateable metric is described once, in :data:`METRICS` (:mod:`goldeval.gates.metrics`); a new scorer adds its
lines there. The file's parser (:func:`parse_gates`, :func:`load_gates` and the types they return) lives in
:mod:`goldeval.gates.definition`; every name is importable from here.

Source: ``DESIGN.md`` "Terms" (gate, definition of done) and "Labels"; issue #3.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

from goldeval.errors import InputError, shorten
from goldeval.intervals import interval_words
from goldeval.gates.definition import (
    Bound,
    DefinitionOfDone,
    GateSpec,
    load_gates,
    parse_gates,
)
from goldeval.gates.metrics import (
    CONFIDENCE,
    METRICS,
    PRODUCERS,
    UNIT_RANGE,
    Metric,
    Words,
    misses_text,
    int_field,
    known_metrics,
    families_of,
    register_producer,
)

__all__ = [
    "Metric",
    "METRICS",
    "PRODUCERS",
    "families_of",
    "register_producer",
    "Bound",
    "GateSpec",
    "DefinitionOfDone",
    "GateResult",
    "GateReport",
    "parse_gates",
    "load_gates",
    "evaluate_gates",
    "known_metrics",
    "check_scorer",
    "interval_text",
]


# ----------------------------------------------------------------------------------------------------------------
# evaluation


@dataclass(slots=True)
class GateResult:
    """One bound of one gate, evaluated.

    Attributes:
        metric, op: The metric and ``min`` / ``max``. line: Its line in the gates file.
        limit: The limit as a number (``None`` when it could not be read from the results: see ``reason``).
        limit_text: The limit as written (``"0.80"``) or the metric it names. limit_metric: that metric, if any.
        observed: The unrounded observed value, ``None`` when absent from the results file.
        passed: True only when the value is defined and within the bound (inclusive). status: ``pass`` / ``fail``.
        reason: Why it failed without a comparison (undefined, absent), else ``None``.
        allowed_on_this_set: What the limit allows on this set, in words (``None`` when nothing useful can be
            said). allowed: That allowance as a number (e.g. misses allowed), when it is a count.
        sentence: The gate in one clause of the summary line. note: The note written in the gates file.
        observed_text: The observed value as shown on screen (rounded, never so far that it seems to contradict
            the verdict: 2.0202 per 100 shows as ``2.02``, not ``2.0``).
        ci_low, ci_high: The observed value's confidence interval, in the metric's unit (``None`` when the metric
            has none or the results lack its counts). interval_method: ``wilson`` (a proportion: Wilson score
            interval) or ``bootstrap_percentile`` (the label F1). interval_confidence: Its coverage (0.95).
        interval_warning: Set when the gate passes on the observed value but the interval's unfavourable end (the
            low end under ``min``, the high end under ``max``) lies beyond the bound: a warning beside the decision,
            never a different decision.
        slice: The slice the gate read (``[gates.slices.NAME]``), ``None`` for the whole run (then absent from
            :meth:`to_dict`). A slice gate reads ``results["slices"][NAME]``; a run without slices, a slice no case
            is in, or one the scorer could not aggregate fails it, with the reason.
    """

    metric: str
    op: str
    limit: float | None
    limit_text: str
    limit_metric: str | None
    observed: float | None
    passed: bool
    status: str
    reason: str | None
    allowed_on_this_set: str | None
    allowed: float | None
    sentence: str
    line: int | None = None
    note: str | None = None
    observed_text: str | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    interval_method: str | None = None
    interval_confidence: float | None = None
    interval_warning: str | None = None
    slice: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if out["slice"] is None:  # a gate on the whole run: its dict as before slices were gateable
            del out["slice"]
        return out


@dataclass(slots=True)
class GateReport:
    """All gates of a definition of done evaluated on one results file.

    ``passed`` is True only when every gate passed. ``summary`` is the one line a team lead can forward
    (``"FAIL: 4 escalations missed (10.0 per 100) against the agreed 2 per 100; …"``).
    """

    passed: bool
    summary: str
    results: list[GateResult]
    definition: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "pass" if self.passed else "fail"

    def to_dict(self) -> dict[str, Any]:
        """The ``"gates"`` object of a results file: ``passed``, ``status``, ``summary``, ``gates``, ``definition``."""
        return {
            "passed": self.passed,
            "status": self.status,
            "summary": self.summary,
            "gates": [r.to_dict() for r in self.results],
            "definition": self.definition,
            "warnings": self.warnings,
        }


_SHORT_METHOD = {"wilson": "Wilson", "bootstrap_percentile": "bootstrap", "lang_reiczigel": "Lang–Reiczigel"}


def interval_text(gate: Mapping[str, Any]) -> str:
    """A gate's interval as a table cell: ``"0.845–1.000 (95% Wilson)"``, or ``"—"`` when it has none.

    Args:
        gate: One gate as :meth:`GateResult.to_dict` writes it (the ``gates.gates`` list of a results file).

    Returns:
        The two ends in the metric's unit (3 decimals for a fraction, 1 per 100), the coverage and the method.

    Example:
        >>> interval_text({"metric": "pass_rate", "ci_low": 0.84536, "ci_high": 1.0, "interval_method": "wilson",
        ...                "interval_confidence": 0.95})
        '0.845–1.000 (95% Wilson)'
    """
    low, high = gate.get("ci_low"), gate.get("ci_high")
    if not _is_number(low) or not _is_number(high):
        return "—"
    metric = METRICS.get(str(gate.get("metric")))
    digits = 1 if metric is not None and metric.unit == "per_100" else 3
    conf = gate.get("interval_confidence") or CONFIDENCE
    method = _SHORT_METHOD.get(str(gate.get("interval_method")), str(gate.get("interval_method")))
    return f"{low:.{digits}f}–{high:.{digits}f} ({round(100 * conf, 1):g}% {method})"


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not (isinstance(v, float) and math.isnan(v))


def _holds(value: float, op: str, limit: float) -> bool:
    return value >= limit if op == "min" else value <= limit


def _shown(value: float, unit: str, op: str, limit: float | None) -> str:
    """The value as shown on screen: rounded, but never so far that the shown value seems to contradict the verdict."""
    if unit == "count" and float(value).is_integer():
        return str(int(value))
    digits = 1 if unit == "per_100" else 3
    if limit is None:
        return f"{value:.{digits}f}"
    truth = _holds(value, op, limit)
    for d in range(digits, 13):
        text = f"{value:.{d}f}"
        if _holds(float(text), op, limit) == truth:
            return text
    return repr(value)


def _shown_against(value: float, limit: float, unit: str, limit_unit: str, op: str) -> tuple[str, str]:
    """*value* and the *limit* another metric's value sets, as shown: rounded to the same digits, as many as it takes
    for the two shown numbers to compare as the values do (and the shown value against the true limit)."""
    if unit == limit_unit == "count" and float(value).is_integer() and float(limit).is_integer():
        return str(int(value)), str(int(limit))
    truth = _holds(value, op, limit)
    for d in range(1 if unit == "per_100" else 3, 13):
        v, lim = f"{value:.{d}f}", f"{limit:.{d}f}"
        if _holds(float(v), op, float(lim)) == truth and _holds(float(v), op, limit) == truth:
            return v, lim
    return repr(value), repr(limit)


def _results_families(results: Mapping[str, Any], agg: Mapping[str, Any]) -> tuple[str | None, set[str]]:
    scorer = results.get("scorer")
    name = scorer.get("name") if isinstance(scorer, Mapping) else None
    registered = families_of(name)
    if registered is not None:
        return name, set(registered)
    return name, {m.family for key, m in METRICS.items() if key in agg and m.family != "common"}


def _capitalize(s: str) -> str:
    head = s.split(" ", 1)[0]
    if "_" in head or len(head) <= 2:  # metric names (missed_per_100) and abbreviations (fp, f1) stay as written
        return s
    return s[0].upper() + s[1:]


def check_scorer(dod: DefinitionOfDone, scorer_name: str) -> None:
    """Refuse, before any scoring, a definition of done that gates a metric ``scorer_name`` never produces.

    The same check :func:`evaluate_gates` makes on the results file, made early so that a long run is not scored
    (and recorded) only to be refused. Results whose name is not registered (:data:`PRODUCERS`) are not checked.

    Raises:
        InputError: with the gate's line and the metrics this scorer can gate.
    """
    families = families_of(scorer_name)
    if not families:
        return
    for gate in dod.gates:
        for metric in (gate.metric, *(b.ref for b in gate.bounds if b.ref is not None)):
            fam = METRICS[metric].family
            if fam != "common" and fam not in families:
                produced = sorted(k for k, m in METRICS.items() if m.family in families or m.family == "common")
                where = f"{dod.source}:{gate.line}" if gate.line else dod.source
                raise InputError(
                    f"{where}: gate on {metric!r} ({fam} metric), but scorer {scorer_name!r} never produces it; it can "
                    f"gate: {', '.join(produced)}. Use the definition of done written for this scorer."
                )


def evaluate_gates(results: Mapping[str, Any], dod: DefinitionOfDone) -> GateReport:
    """Apply a definition of done to a results file goldeval wrote (any scorer).

    Args:
        results: A results dict (``{"scorer", "aggregate", …}``); the observed values are read from ``aggregate``,
            the undefined ones from ``aggregate["undefined"]``.
        dod: The parsed definition of done (:func:`load_gates`).

    Returns:
        :class:`GateReport`; one :class:`GateResult` per bound, in file order.

    Raises:
        InputError: ``results`` is not a results file (no ``aggregate`` object); a gate names a metric that the
            results file's scorer never produces; the gates file's ``positive`` differs from the run's.
    """
    agg = results.get("aggregate") if isinstance(results, Mapping) else None
    if not isinstance(agg, Mapping):
        raise InputError("results: not a goldeval results file (no 'aggregate' object). Pass the JSON a goldeval scoring command wrote with --out.")
    undefined = agg.get("undefined", {})
    if not isinstance(undefined, Mapping):
        raise InputError(
            f"results: aggregate.undefined must be an object of metric -> reason, got {shorten(undefined)}. "
            "Pass the JSON a goldeval scoring command wrote with --out, unedited."
        )
    scorer_name, families = _results_families(results, agg)
    run_positive = results.get("positive")
    if dod.positive is not None and run_positive is not None and str(run_positive) != dod.positive:
        raise InputError(
            f"{dod.source}: positive = {dod.positive!r}, but the run scored the positive label {str(run_positive)!r}. "
            "Score the run with the agreed positive label, or use the gates file written for this label."
        )
    words = Words.for_positive(run_positive if run_positive is not None else dod.positive, dod.positive_noun)

    def check_family(metric: str, where: str) -> None:
        fam = METRICS[metric].family
        if families and fam != "common" and fam not in families:
            produced = sorted(k for k, m in METRICS.items() if m.family in families or m.family == "common")
            raise InputError(
                f"{where}: gate on {metric!r} ({fam} metric), but this results file comes from scorer "
                f"{scorer_name!r}, which never produces it; it can gate: {', '.join(produced)}. "
                "Use the definition of done written for this scorer."
            )

    def gate_results(agg: Mapping[str, Any], gate: GateSpec, label: str) -> list[GateResult]:
        """The results of one gate's bounds on *agg* (the whole run's aggregate, or one slice's); *label* starts
        each sentence (``""`` for the whole run, ``"slice difficulty = hard: "`` for a slice)."""
        undefined = agg.get("undefined") or {}
        undefined = undefined if isinstance(undefined, Mapping) else {}
        # upstream run_eval.py's aggregate (and a third-party scorer's) may count the scored rows in `n` alone
        scored = int_field(agg, "n_scored")
        nothing_scored = (scored if scored is not None else int_field(agg, "n")) == 0
        out: list[GateResult] = []

        def read(metric: str) -> tuple[float | None, str | None]:
            """(value, None) or (None, reason it cannot be compared)."""
            if metric in agg:
                value = agg[metric]
            elif isinstance(agg.get("counts"), Mapping) and metric in agg["counts"]:
                value = agg["counts"][metric]  # the llm_judge nests the pass-rate counts
            else:
                return None, f"{metric} is absent from this results file (the scorer did not produce it for this run)"
            if nothing_scored:
                return None, f"{metric} has no evidence: nothing was scored on this set"
            if metric in undefined:
                return None, f"{metric} undefined: {undefined[metric]}"
            if not _is_number(value):
                # as the file spells it: a JSON null is 'null', not Python's 'None'

                spelled = json.dumps(value, ensure_ascii=False, default=str)
                return None, f"{metric} is not a number in this results file (got {spelled if len(spelled) <= 60 else spelled[:59] + '…'})"
            lo, hi = UNIT_RANGE.get(METRICS[metric].unit, (-math.inf, math.inf))
            if not (math.isfinite(value) and lo <= value <= hi):
                # no value of the metric (a precision of 1.5 or inf, -1 misses: an edited file or a broken scorer)
                # is evidence of nothing: it fails, as NaN does, and never passes on the side it lies
                return None, (f"{metric} is {json.dumps(value)} in this results file, outside its range "
                              f"[{lo:g}, {hi:g}] ({METRICS[metric].description})")
            if METRICS[metric].unit == "count" and not float(value).is_integer():
                # 2.5 misses: no count (its sentence read "2 positives missed fails 2")
                return None, f"{metric} is {json.dumps(value)} in this results file, not a whole number ({METRICS[metric].description})"
            evidence = METRICS[metric].evidence
            missing = evidence(agg, words) if evidence is not None else None
            if missing:
                return None, f"{metric} has no evidence: {missing}"
            return float(value), None

        where = f"{dod.source}:{gate.line}" if gate.line else dod.source
        check_family(gate.metric, where)
        info = METRICS[gate.metric]
        for b in gate.bounds:
            if b.ref is not None:
                check_family(b.ref, where)
            observed, why = read(gate.metric)
            limit, limit_why = (b.value, None) if b.ref is None else read(b.ref)
            limit_text = b.text
            obs_text = None if observed is None else _shown(observed, info.unit, b.op, limit)
            if b.ref is not None and limit is not None:
                # another metric's value is the limit: both shown alike, never so rounded that they seem to contradict
                # the decision ("Kappa 0.400 fails annotator_kappa 0.400" for 0.4004 against 0.40045)
                if observed is not None:
                    obs_text, lim_shown = _shown_against(observed, limit, info.unit, METRICS[b.ref].unit, b.op)
                else:
                    lim_shown = _shown(limit, METRICS[b.ref].unit, b.op, None)
                limit_text = f"{b.ref} {lim_shown}"
            elif b.ref is not None:
                limit_text = b.ref
            limit_phrase = f"the agreed {limit_text} per 100" if info.unit == "per_100" else limit_text
            if observed is not None and limit is not None:
                passed = _holds(observed, b.op, limit)
                reason = None
            else:
                passed = False
                reason = why or f"the limit {limit_why}"
            allowed_text = allowed = short = None
            if limit is not None and info.allowance is not None:
                try:
                    exact = Fraction(b.text) if b.ref is None else Fraction(limit)
                except (ValueError, ZeroDivisionError):
                    exact = Fraction(limit)
                allowed_text, allowed = info.allowance(agg, b.op, exact, words)
                if gate.metric == "missed_per_100" and allowed is not None and b.op == "max":
                    gp = int(agg.get("gold_positives") or 0)  # (an allowance is computed only from a count)
                    short = f"on {words.these_gold(gp)} the limit allows {misses_text(int(allowed))}"
            # the clause of the summary line
            if observed is None:
                if why and why.startswith(f"{gate.metric} undefined: "):
                    sentence = f"{gate.metric} undefined ({undefined[gate.metric]}) fails {limit_phrase}"
                elif why and why.startswith(f"{gate.metric} has no evidence: "):
                    sentence = f"{gate.metric} has no evidence ({why.split(': ', 1)[1]}) and fails {limit_phrase}"
                else:
                    sentence = f"{reason}, so it fails {limit_phrase}"
            else:
                value_text = str(obs_text)
                subject = info.subject(agg, value_text, words) if info.subject else f"{gate.metric} {value_text}"
                if limit is None:
                    sentence = f"{subject} fails: {reason}"
                elif info.unit == "per_100" and b.op == "max":
                    sentence = f"{subject} {'within' if passed else 'against'} {limit_phrase}"
                elif info.unit == "per_100":  # a floor is never something a rate is 'within'
                    sentence = f"{subject} {'at or above' if passed else 'below'} the agreed minimum of {limit_text} per 100"
                else:
                    sentence = f"{subject} {'passes' if passed else 'fails'} {limit_phrase}"
            no_evidence = bool(why and why.startswith(f"{gate.metric} has no evidence: "))
            if not passed and (short or allowed_text) and not no_evidence:
                sentence += f"; {short or allowed_text}"
            iv = info.interval(agg, CONFIDENCE) if info.interval is not None and observed is not None else None
            interval_warning = None
            if iv is not None and passed and limit is not None and observed is not None:
                end, side = (iv["low"], "low") if b.op == "min" else (iv["high"], "high")
                if not _holds(end, b.op, limit):
                    interval_warning = (
                        f"{gate.metric} {_shown(observed, info.unit, b.op, limit)} passes on the point but not on its "
                        f"{interval_words(iv['method'], CONFIDENCE)}, whose {side} end is "
                        f"{_shown(end, info.unit, b.op, limit)}")
            out.append(
                GateResult(
                    metric=gate.metric,
                    op=b.op,
                    limit=limit,
                    limit_text=b.text,
                    limit_metric=b.ref,
                    observed=observed,
                    passed=passed,
                    status="pass" if passed else "fail",
                    reason=reason,
                    allowed_on_this_set=allowed_text,
                    allowed=allowed,
                    sentence=label + sentence,
                    line=gate.line,
                    note=gate.note,
                    observed_text=obs_text,
                    ci_low=None if iv is None else iv["low"],
                    ci_high=None if iv is None else iv["high"],
                    interval_method=None if iv is None else iv["method"],
                    interval_confidence=None if iv is None else CONFIDENCE,
                    interval_warning=label + interval_warning if interval_warning else None,
                    slice=gate.slice,
                )
            )
        return out

    slices = results.get("slices")
    slice_by = results.get("slice_by")

    def slice_gate(gate: GateSpec) -> list[GateResult]:
        """A gate under ``[gates.slices.NAME]``: evaluated on that slice's aggregate; fails, with the reason, on a
        run without slices, a slice no case is in, or a slice the scorer could not aggregate."""
        name = str(gate.slice)
        label = f"slice {slice_by} = {name}: " if isinstance(slice_by, str) else f"slice {name}: "
        sagg = slices.get(name) if isinstance(slices, Mapping) else None
        if isinstance(sagg, Mapping) and "error" not in sagg:
            return gate_results(sagg, gate, label)
        check_family(gate.metric, f"{dod.source}:{gate.line}" if gate.line else dod.source)
        if not isinstance(slices, Mapping):
            why = ("this results file has no slices (the run was not scored with --slice-by); score it with "
                   "--slice-by FIELD to gate a slice")
        elif sagg is None:
            known = ", ".join(repr(k) for k in slices) or "none"
            why = (f"slice {name!r} is absent: no case has {slice_by or 'the slice field'} = {name!r} "
                   f"(slices in this run: {known})")
        else:
            why = f"slice {name!r} could not be aggregated: {sagg.get('error') if isinstance(sagg, Mapping) else shorten(sagg)}"
        return [GateResult(metric=gate.metric, op=b.op, limit=b.value, limit_text=b.text, limit_metric=b.ref,
                           observed=None, passed=False, status="fail", reason=why, allowed_on_this_set=None,
                           allowed=None, sentence=f"{label}{gate.metric} fails {b.text}: {why}", line=gate.line,
                           note=gate.note, slice=gate.slice)
                for b in gate.bounds]

    out: list[GateResult] = []
    for gate in dod.gates:
        out.extend(gate_results(agg, gate, "") if gate.slice is None else slice_gate(gate))
    all_pass = all(r.passed for r in out)
    ordered = [r for r in out if not r.passed] + [r for r in out if r.passed]
    summary = ("PASS: " if all_pass else "FAIL: ") + ". ".join(_capitalize(r.sentence) for r in ordered) + "."
    narrow = [r.interval_warning for r in out if r.interval_warning]
    if narrow:  # a warning beside the decision, never another decision: this set cannot show the bound holds beyond it
        summary += f" Warning: {'; '.join(narrow)}."
    n_failed, n_scored = int_field(agg, "n_failed"), int_field(agg, "n_scored")
    if n_failed:  # never a silent decision on part of the input: the forwarded line says what was left out
        of = f" of {n_failed + n_scored}" if n_scored is not None else ""
        summary += (f" Not counted: {n_failed}{of} {'row' if n_failed + (n_scored or 0) == 1 else 'rows'} could not be "
                    "scored (listed under failures).")
    bad_rows = int_field(agg, "n_row_failures")  # the answer judge: input rows unusable before any case was formed
    if bad_rows:
        summary += f" {bad_rows} input {'row was' if bad_rows == 1 else 'rows were'} unusable (listed under failures)."
    return GateReport(passed=all_pass, summary=summary, results=out, definition=dod.describe(), warnings=list(dod.warnings))
