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
  silent pass on no evidence.
- A gate on a metric the results file's scorer never produces (``whole_note_f1_mean`` on a labels run) is a
  usage error (:class:`~goldeval.errors.InputError`), not a failing gate.

Every gateable metric is described once, in :data:`METRICS` (:mod:`goldeval.gate_metrics`); a new scorer adds its
lines there.

Source: ``DESIGN.md`` "Terms" (gate, definition of done) and "Labels"; issue #3.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import hashlib
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

from goldeval.errors import InputError, shorten
from goldeval.gate_metrics import _UNIT_RANGE, FAMILY_SCORERS, METRICS, Metric, Words, _misses, _n, known_metrics

__all__ = [
    "Metric",
    "METRICS",
    "FAMILY_SCORERS",
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
]


# ----------------------------------------------------------------------------------------------------------------
# parsing


@dataclass(frozen=True, slots=True)
class Bound:
    """One bound of a gate: ``op`` ``min`` (observed ≥ limit) or ``max`` (observed ≤ limit), inclusive.

    ``value`` is the number, or ``None`` when ``ref`` names another metric whose observed value is the limit.
    ``text`` is the limit as written in the file (``"0.80"``), used on screen.
    """

    op: str
    value: float | None
    ref: str | None
    text: str


@dataclass(frozen=True, slots=True)
class GateSpec:
    """One line of ``[gates]``: a metric, its bounds, the line it was written on, and an optional note."""

    metric: str
    bounds: tuple[Bound, ...]
    line: int | None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class DefinitionOfDone:
    """A parsed definition of done.

    Attributes:
        gates: The gates, in file order.
        source: File path (or ``"<string>"``); sha256: hex sha256 of the file's bytes.
        agreed_by, agreed_on: Who agreed to it and when (``agreed_on`` as ISO text), when given.
        positive: The positive label for label runs, when given. positive_noun: How to name one positive case.
        title: Optional title. warnings: Odd but legal choices (``precision = {max = …}``), for the screen.
    """

    gates: tuple[GateSpec, ...]
    source: str
    sha256: str
    agreed_by: str | None = None
    agreed_on: str | None = None
    positive: str | None = None
    positive_noun: str | None = None
    title: str | None = None
    warnings: tuple[str, ...] = ()

    def describe(self) -> dict[str, Any]:
        """The part recorded in results files and the run store: ``path``, ``sha256``, who, when, positive."""
        return {
            "path": self.source,
            "sha256": self.sha256,
            "agreed_by": self.agreed_by,
            "agreed_on": self.agreed_on,
            "positive": self.positive,
            "title": self.title,
        }


_TOP_KEYS = ("agreed_by", "agreed_on", "positive", "positive_noun", "title", "gates")
_GATE_KEYS = ("min", "max", "note")

_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
_KEYLINE = re.compile(r"^\s*((?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-]+)(?:\s*\.\s*(?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-]+))*)\s*=(.*)$")


def _norm_key(raw: str) -> str:
    parts = re.findall(r"\"([^\"]*)\"|'([^']*)'|([A-Za-z0-9_\-]+)", raw)
    return ".".join(a or b or c for a, b, c in parts)


def _locate(text: str) -> dict[str, tuple[int, str]]:
    """Dotted key path → (1-based line, the text after ``=`` on that line), first occurrence; tables → header line."""
    where: dict[str, tuple[int, str]] = {}
    table = ""
    for lineno, line in enumerate(text.splitlines(), start=1):
        h = _HEADER.match(line)
        if h:
            table = _norm_key(h.group(1))
            where.setdefault(table, (lineno, ""))
            continue
        k = _KEYLINE.match(line)
        if k:
            key = _norm_key(k.group(1))
            full = f"{table}.{key}" if table else key
            where.setdefault(full, (lineno, k.group(2)))
            # inline tables: record their keys on the same line too (min = 0.80 inside { … })
            rest = k.group(2)
            if rest.strip().startswith("{"):
                for ik in re.finditer(r"([A-Za-z0-9_\-]+)\s*=\s*([^,}#]+)", rest):
                    where.setdefault(f"{full}.{ik.group(1)}", (lineno, ik.group(2)))
    return where


def _did_you_mean(name: str, names: list[str]) -> str:
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def _raw_number_text(after_eq: str) -> str:
    return after_eq.split("#", 1)[0].strip().strip(",}").strip()


def parse_gates(text: str, *, source: str = "<string>", sha256: str | None = None) -> DefinitionOfDone:
    """Parse the TOML text of a definition of done.

    Args:
        text: TOML (see the module docstring for the keys).
        source: Shown in error messages as ``source:line``.
        sha256: The file's hash; default the sha256 of ``text`` encoded as UTF-8.

    Returns:
        :class:`DefinitionOfDone`.

    Raises:
        InputError: not TOML; an unknown top-level key; no ``[gates]``; an unknown metric (with did-you-mean and
            the known names); a gate without ``min``/``max`` or with another key; a bound that is not a number (or
            a known metric name); a bound outside the metric's range (``precision = {min = 80}``). Each message
            gives ``source:line``.
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{source}: not valid TOML: {exc}. Fix that line (strings need quotes, tables need [brackets]).") from None
    where = _locate(text)

    def at(path: str) -> str:
        loc = where.get(path)
        if loc is None:  # e.g. `precision.min = 0.8` under [gates]: the first line of a key below the path
            below = [v for k, v in where.items() if k.startswith(path + ".")]
            loc = min(below) if below else None
        return f"{source}:{loc[0]}" if loc else source

    for key in doc:
        if key not in _TOP_KEYS:
            raise InputError(
                f"{at(key)}: unknown key {key!r} in the definition of done.{_did_you_mean(key, list(_TOP_KEYS))} "
                f"Known keys: {', '.join(_TOP_KEYS)}; gates go under [gates]."
            )
    for key in ("agreed_by", "positive", "positive_noun", "title"):
        if key in doc and not isinstance(doc[key], str):
            raise InputError(f"{at(key)}: {key} must be a string in quotes, got {shorten(doc[key])}.")
        if key in doc and not doc[key].strip():
            raise InputError(f"{at(key)}: {key} is blank. Write it (e.g. positive = \"escalate\") or drop the line.")
    agreed_on = doc.get("agreed_on")
    if isinstance(agreed_on, str):
        try:
            agreed_on = _dt.date.fromisoformat(agreed_on.strip())
        except ValueError:
            agreed_on = object()  # refused just below, with what was given
    if agreed_on is not None and not isinstance(agreed_on, _dt.date):
        raise InputError(
            f"{at('agreed_on')}: agreed_on must be a date (2026-11-02, without quotes), got "
            f"{shorten(doc['agreed_on'])}. Write the day the definition of done was agreed."
        )
    gates_table = doc.get("gates")
    if isinstance(gates_table, list):
        raise InputError(
            f"{at('gates')}: [[gates]] (an array of tables) is not the format; write one [gates] table with one line "
            "per gate, e.g. precision = { min = 0.80 }."
        )
    if not isinstance(gates_table, dict) or not gates_table:
        raise InputError(
            f"{at('gates')}: the definition of done has no gates. Add a [gates] table with one line per gate, e.g. "
            "precision = { min = 0.80 }."
        )
    names = known_metrics()
    gates: list[GateSpec] = []
    warnings: list[str] = []
    for metric, spec in gates_table.items():
        path = f"gates.{metric}"
        loc = at(path)
        if metric not in METRICS:
            raise InputError(
                f"{loc}: gate {metric!r} is not a metric goldeval computes.{_did_you_mean(metric, names)} "
                f"Known metrics: {', '.join(names)}."
            )
        info = METRICS[metric]
        if not isinstance(spec, dict):
            raise InputError(
                f"{loc}: gate {metric!r} must be a table of bounds, got {shorten(spec)}. "
                f"Write e.g. {metric} = {{ {'min' if info.better == 'higher' else 'max'} = {shorten(spec)} }}."
            )
        for k in spec:
            if k not in _GATE_KEYS:
                raise InputError(
                    f"{at(f'{path}.{k}') if f'{path}.{k}' in where else loc}: gate {metric!r}: unknown key {k!r}."
                    f"{_did_you_mean(k, list(_GATE_KEYS))} A gate takes min, max and an optional note."
                )
        bounds: list[Bound] = []
        for op in ("min", "max"):
            if op not in spec:
                continue
            raw = spec[op]
            bloc = at(f"{path}.{op}") if f"{path}.{op}" in where else loc
            written = _raw_number_text(where[f"{path}.{op}"][1]) if f"{path}.{op}" in where else None
            if isinstance(raw, str):
                if raw == metric:
                    raise InputError(
                        f"{bloc}: gate {metric!r}: {op} = {raw!r} compares the metric with itself, a gate that always "
                        "passes. Name another metric (e.g. kappa = { min = \"annotator_kappa\" }) or give a number."
                    )
                if raw in METRICS:
                    bounds.append(Bound(op, None, raw, raw))
                    continue
                raise InputError(
                    f"{bloc}: gate {metric!r}: {op} must be a number (or the name of a metric, to gate against it), "
                    f"got {raw!r}.{_did_you_mean(raw, names)} Write e.g. {op} = 0.80 without quotes."
                )
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or math.isnan(raw) or math.isinf(raw):
                raise InputError(
                    f"{bloc}: gate {metric!r}: {op} must be a finite number, got {shorten(raw)}. Write e.g. {op} = 0.80."
                )
            lo, hi = _UNIT_RANGE[info.unit]
            if not lo <= raw <= hi:
                hint = f" Did you mean {raw / 100:g}?" if info.unit == "fraction" and 1 < raw <= 100 else ""
                raise InputError(
                    f"{bloc}: gate {metric!r}: {op} = {raw!r} is outside the metric's range [{lo:g}, {hi:g}] "
                    f"({info.description}).{hint}"
                )
            text_form = written if written and re.fullmatch(r"[+-]?[0-9_.eE+-]+", written) else repr(raw)
            bounds.append(Bound(op, float(raw), None, text_form.replace("_", "")))
        if not bounds:
            raise InputError(f"{loc}: gate {metric!r} has no bound. Give min = … or max = … (inclusive).")
        lo_b = next((b for b in bounds if b.op == "min" and b.value is not None), None)
        hi_b = next((b for b in bounds if b.op == "max" and b.value is not None), None)
        if lo_b and hi_b and lo_b.value > hi_b.value:
            raise InputError(
                f"{loc}: gate {metric!r}: min = {lo_b.text} is above max = {hi_b.text}, so no value can pass. "
                "Swap them or drop one."
            )
        note = spec.get("note")
        if note is not None and not isinstance(note, str):
            raise InputError(f"{loc}: gate {metric!r}: note must be a string, got {shorten(note)}.")
        for b in bounds:
            if (b.op == "max") == (info.better == "higher") and info.unit != "count":
                warnings.append(
                    f"{loc}: gate {metric!r} has a {b.op} bound, but {metric} is better when {info.better}; check it is meant."
                )
        line = at(path)[len(source) + 1:]
        gates.append(GateSpec(metric, tuple(bounds), int(line) if line.isdigit() else None, note))
    return DefinitionOfDone(
        gates=tuple(gates),
        source=source,
        sha256=sha256 or hashlib.sha256(text.encode("utf-8")).hexdigest(),
        agreed_by=doc.get("agreed_by"),
        agreed_on=agreed_on.isoformat() if isinstance(agreed_on, _dt.date) else agreed_on,
        positive=doc.get("positive"),
        positive_noun=doc.get("positive_noun"),
        title=doc.get("title"),
        warnings=tuple(warnings),
    )


def load_gates(path: str | os.PathLike[str]) -> DefinitionOfDone:
    """Read and parse a definition-of-done TOML file; its sha256 (of the bytes) is recorded.

    Raises:
        InputError: the file is missing or not UTF-8, or :func:`parse_gates` refuses it.
    """
    p = os.fspath(path)
    try:
        data = open(p, "rb").read()
    except FileNotFoundError:
        raise InputError(f"--gates {p}: no such file. Check the path (relative paths start from {os.getcwd()}).") from None
    except IsADirectoryError:
        raise InputError(f"--gates {p}: is a folder, expected a TOML file.") from None
    try:
        text = data.decode("utf-8-sig")  # a BOM (Notepad's "UTF-8") is not part of the TOML
    except UnicodeDecodeError:
        raise InputError(f"--gates {p}: not UTF-8. Save the TOML file as UTF-8.") from None
    return parse_gates(text, source=p, sha256=hashlib.sha256(data).hexdigest())


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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


def _results_families(results: Mapping[str, Any], agg: Mapping[str, Any]) -> tuple[str | None, set[str]]:
    scorer = results.get("scorer")
    name = scorer.get("name") if isinstance(scorer, Mapping) else None
    for family, scorers in FAMILY_SCORERS.items():
        if name in scorers:
            return name, {family}
    return name, {m.family for key, m in METRICS.items() if key in agg and m.family != "common"}


def _capitalize(s: str) -> str:
    head = s.split(" ", 1)[0]
    if "_" in head or len(head) <= 2:  # metric names (missed_per_100) and abbreviations (fp, f1) stay as written
        return s
    return s[0].upper() + s[1:]


def check_scorer(dod: DefinitionOfDone, scorer_name: str) -> None:
    """Refuse, before any scoring, a definition of done that gates a metric ``scorer_name`` never produces.

    The same check :func:`evaluate_gates` makes on the results file, made early so that a long run is not scored
    (and recorded) only to be refused. A scorer not in :data:`FAMILY_SCORERS` is not checked.

    Raises:
        InputError: with the gate's line and the metrics this scorer can gate.
    """
    families = {f for f, names in FAMILY_SCORERS.items() if scorer_name in names}
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
    nothing_scored = _n(agg, "n_scored") == 0
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
            return None, f"{metric} is not a number in this results file (got {shorten(value)})"
        evidence = METRICS[metric].evidence
        missing = evidence(agg, words) if evidence is not None else None
        if missing:
            return None, f"{metric} has no evidence: {missing}"
        return float(value), None

    out: list[GateResult] = []
    for gate in dod.gates:
        where = f"{dod.source}:{gate.line}" if gate.line else dod.source
        check_family(gate.metric, where)
        info = METRICS[gate.metric]
        for b in gate.bounds:
            if b.ref is not None:
                check_family(b.ref, where)
            observed, why = read(gate.metric)
            limit, limit_why = (b.value, None) if b.ref is None else read(b.ref)
            limit_text = b.text
            if b.ref is not None:
                limit_text = f"{b.ref} {_shown(limit, METRICS[b.ref].unit, b.op, None)}" if limit is not None else b.ref
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
                    gp = agg.get("gold_positives")
                    short = f"on these {gp} gold {words.many} the limit allows {_misses(int(allowed))}"
            # the clause of the summary line
            if observed is None:
                if why and why.startswith(f"{gate.metric} undefined: "):
                    sentence = f"{gate.metric} undefined ({undefined[gate.metric]}) fails {limit_phrase}"
                elif why and why.startswith(f"{gate.metric} has no evidence: "):
                    sentence = f"{gate.metric} has no evidence ({why.split(': ', 1)[1]}) and fails {limit_phrase}"
                else:
                    sentence = f"{reason}, so it fails {limit_phrase}"
            else:
                value_text = _shown(observed, info.unit, b.op, limit)
                subject = info.subject(agg, value_text, words) if info.subject else f"{gate.metric} {value_text}"
                if limit is None:
                    sentence = f"{subject} fails: {reason}"
                elif info.unit == "per_100":
                    sentence = f"{subject} {'within' if passed else 'against'} {limit_phrase}"
                else:
                    sentence = f"{subject} {'passes' if passed else 'fails'} {limit_phrase}"
            no_evidence = bool(why and why.startswith(f"{gate.metric} has no evidence: "))
            if not passed and (short or allowed_text) and not no_evidence:
                sentence += f"; {short or allowed_text}"
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
                    sentence=sentence,
                    line=gate.line,
                    note=gate.note,
                    observed_text=None if observed is None else _shown(observed, info.unit, b.op, limit),
                )
            )
    all_pass = all(r.passed for r in out)
    ordered = [r for r in out if not r.passed] + [r for r in out if r.passed]
    summary = ("PASS: " if all_pass else "FAIL: ") + ". ".join(_capitalize(r.sentence) for r in ordered) + "."
    n_failed, n_scored = _n(agg, "n_failed"), _n(agg, "n_scored")
    if n_failed:  # never a silent decision on part of the input: the forwarded line says what was left out
        of = f" of {n_failed + n_scored}" if n_scored is not None else ""
        summary += (f" Not counted: {n_failed}{of} {'row' if n_failed + (n_scored or 0) == 1 else 'rows'} could not be "
                    "scored (listed under failures).")
    bad_rows = _n(agg, "n_row_failures")  # the answer judge: input rows unusable before any case was formed
    if bad_rows:
        summary += f" {bad_rows} input {'row was' if bad_rows == 1 else 'rows were'} unusable (listed under failures)."
    return GateReport(passed=all_pass, summary=summary, results=out, definition=dod.describe(), warnings=list(dod.warnings))
