"""The definition of done as a file: the gates a customer signed, parsed from TOML (:func:`parse_gates`,
:func:`load_gates`) into a :class:`DefinitionOfDone` of :class:`GateSpec` lines with their :class:`Bound` s.

The rules a definition of done follows, and how a results file is evaluated against it, are in
:mod:`goldeval.gates` (which re-exports every public name here; import from there). Moved out of it unchanged.

Source: ``DESIGN.md`` "Terms" (gate, definition of done) and "Data formats"; issue #3.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import hashlib
import json
import math
import os
import re
import sys
import tomllib
from dataclasses import dataclass
from typing import Any

from goldeval.errors import InputError
from goldeval.gates.metrics import UNIT_RANGE, METRICS, known_metrics


def _toml(value: Any, depth: int = 0) -> str:
    """*value* as TOML spells it (``true``, ``"text"``, ``[1, 2]``, ``{ min = 0.8 }``, ``2026-11-02``), for the
    messages about a definition of done: the user wrote TOML, so the message quotes TOML, not Python's ``True``.
    Arrays and tables nested past 20 levels are shown as ``…`` (a message quotes 60 characters of it)."""

    if depth > 20 and isinstance(value, (list, tuple, dict)):
        return "…"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string: the same escapes
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v, depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v, depth + 1)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    return repr(value)


def _toml_short(value: object, width: int = 60) -> str:
    """:func:`_toml` of *value* cut to *width* characters with an ellipsis."""
    text = _toml(value)
    return text if len(text) <= width else text[: width - 1] + "…"

__all__ = ["Bound", "GateSpec", "DefinitionOfDone", "parse_gates", "load_gates"]


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
    """One line of ``[gates]``: a metric, its bounds, the line it was written on, and an optional note.

    ``slice`` names the slice the gate reads (a line under ``[gates.slices.NAME]``: the metric of that slice of a
    run scored with ``--slice-by``), ``None`` for the whole run."""

    metric: str
    bounds: tuple[Bound, ...]
    line: int | None
    note: str | None = None
    slice: str | None = None


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
    open_string: str | None = None  # the delimiter of a multi-line string still open: its lines are text, not keys
    for lineno, line in enumerate(text.splitlines(), start=1):
        if open_string is not None:
            if line.count(open_string) % 2:
                open_string = None
            continue
        open_string = next((d for d in ('"""', "'''") if line.count(d) % 2), None)
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


def _spells(written: str, value: int | float) -> bool:
    """Whether *written*, the text :func:`_locate` found after ``min =`` / ``max =``, is a TOML number equal to the
    *value* TOML parsed: only then is it the bound's text on screen. The locator reads lines, not TOML, so it can
    find a ``min = 0.75`` inside a note (``note = "signed 2026-11-02, min = 0.75, raised"``) or a multi-line string;
    that text must never stand for the bound compared (the summary read "precision 0.780 fails 0.75" with min = 0.80).
    """
    if not re.fullmatch(r"[+-]?[0-9_.eE+-]+", written):
        return False
    try:
        parsed = tomllib.loads(f"v = {written}")["v"]
    except (tomllib.TOMLDecodeError, ValueError):
        return False
    return isinstance(parsed, (int, float)) and not isinstance(parsed, bool) and parsed == value


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
    except RecursionError:
        raise InputError(f"{source}: arrays or inline tables nested too deep to read (hundreds of levels inside each "
                         "other). A definition of done nests two: [gates] and e.g. precision = { min = 0.80 }. Fix "
                         "the file.") from None
    except ValueError:  # tomllib's int() of an integer past Python's int-string limit
        raise InputError(f"{source}: an integer of more than {sys.get_int_max_str_digits():,} digits, too "
                         "long to read. A bound is a number such as 0.80 or 2; fix that line.") from None
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
            raise InputError(f"{at(key)}: {key} must be a string in quotes, got {_toml_short(doc[key])}.")
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
            f"{_toml_short(doc['agreed_on'])}. Write the day the definition of done was agreed."
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

    def one_gate(metric: str, spec: Any, path: str, slice_name: str | None) -> None:
        loc = at(path)
        if metric not in METRICS:
            raise InputError(
                f"{loc}: gate {metric!r} is not a metric goldeval computes.{_did_you_mean(metric, names)} "
                f"Known metrics: {', '.join(names)}."
            )
        info = METRICS[metric]
        if not isinstance(spec, dict):
            raise InputError(
                f"{loc}: gate {metric!r} must be a table of bounds, got {_toml_short(spec)}. "
                f"Write e.g. {metric} = {{ {'min' if info.better == 'higher' else 'max'} = "
                f"{_toml(spec) if isinstance(spec, (int, float)) and not isinstance(spec, bool) else '0.80'} }}."
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
                    f"got {_toml(raw)}.{_did_you_mean(raw, names)} Write e.g. {op} = 0.80 without quotes."
                )
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or math.isnan(raw) or math.isinf(raw):
                raise InputError(
                    f"{bloc}: gate {metric!r}: {op} must be a finite number, got {_toml_short(raw)}. Write e.g. {op} = 0.80."
                )
            lo, hi = UNIT_RANGE[info.unit]
            if not lo <= raw <= hi:
                hint = f" Did you mean {raw / 100:g}?" if info.unit == "fraction" and 1 < raw <= 100 else ""
                raise InputError(
                    f"{bloc}: gate {metric!r}: {op} = {raw!r} is outside the metric's range [{lo:g}, {hi:g}] "
                    f"({info.description}).{hint}"
                )
            text_form = written if written is not None and _spells(written, raw) else repr(raw)
            bounds.append(Bound(op, float(raw), None, text_form.replace("_", "")))
        if not bounds:
            raise InputError(f"{loc}: gate {metric!r} has no bound. Give min = … or max = … (inclusive).")
        lo_b = next((b for b in bounds if b.op == "min" and b.value is not None), None)
        hi_b = next((b for b in bounds if b.op == "max" and b.value is not None), None)
        if lo_b and hi_b and lo_b.value is not None and hi_b.value is not None and lo_b.value > hi_b.value:
            raise InputError(
                f"{loc}: gate {metric!r}: min = {lo_b.text} is above max = {hi_b.text}, so no value can pass. "
                "Swap them or drop one."
            )
        note = spec.get("note")
        if note is not None and not isinstance(note, str):
            raise InputError(f"{loc}: gate {metric!r}: note must be a string, got {_toml_short(note)}.")
        for b in bounds:
            if (b.op == "max") == (info.better == "higher") and info.unit != "count":
                warnings.append(
                    f"{loc}: gate {metric!r} has a {b.op} bound, but {metric} is better when {info.better}; check it is meant."
                )
        line = at(path)[len(source) + 1:]
        gates.append(GateSpec(metric, tuple(bounds), int(line) if line.isdigit() else None, note, slice_name))

    for metric, spec in gates_table.items():
        if metric != "slices":
            one_gate(metric, spec, f"gates.{metric}", None)
            continue
        # [gates.slices.hard] pass_rate = { min = 0.6 }: gates on one slice of a run scored with --slice-by
        if not isinstance(spec, dict) or not spec:
            raise InputError(
                f"{at('gates.slices')}: gates.slices must hold one table per slice, e.g. [gates.slices.hard] then "
                f"pass_rate = {{ min = 0.6 }} on the next line; got {_toml_short(spec)}."
            )
        for name, table in spec.items():
            spath = f"gates.slices.{name}"
            if not isinstance(table, dict) or not table:
                raise InputError(
                    f"{at(spath)}: slice {name!r} must be a table of gates, e.g. [gates.slices.{name}] then "
                    f"pass_rate = {{ min = 0.6 }}; got {_toml_short(table)}."
                )
            for sm, sspec in table.items():
                one_gate(sm, sspec, f"{spath}.{sm}", name)
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
