"""The rule-based data-answer judge: one verdict per case, and the batch over a case file and an attempt file.

Order of decisions for one case (each step says why in ``why`` and keeps its evidence in ``details``):

1. **mustNotUse** field entries, on the parsed final query: a hit is ``no_match`` (``decided_by="must_not_use"``),
   before anything else. Prose entries are kept for the LLM judge.
2. **Golden checks** set ``gold_status`` / ``gold_note`` (never the verdict).
3. **The rule verdict** by the golden's kind:

   * ``criteria``: no rule decides → ``needs_human`` with the breakdown;
   * ``unanswerable``: a refusal that names what is missing → ``match``; a generic refusal → ``near_match``; an
     answer with values → ``no_match``;
   * ``value``: a table prediction is paired (:mod:`~goldeval.answers.pairing`) and its rows compared
     (:mod:`~goldeval.answers.rows`); a prose prediction against a one-cell golden is judged on the value it
     states; a refusal is ``no_match``; prose against a larger table → ``needs_human`` (prose grain).

4. **Rubric** clauses that could move the verdict (``ACCEPT``/``PREFERRED``/``DIVERGENT`` on a non-match, any
   ``REQUIRED`` on a match) and prose mustNotUse entries on a match make the case ``needs_human``: the LLM judge
   decides, with this breakdown in its prompt.

``match`` is answered only when every golden row is located under an unambiguous pairing; ``no_match`` only when
the grain is the same (every golden column paired, no extra key column) and the values are wrong, a golden column
is missing, the rows are a shotgun superset, or the asked-for order is wrong. Confidence ≤ 5 sets
``needs_human``.

Source: ``DESIGN.md`` "Data answers", goldeval.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from goldeval.answers.forbidden import check_forbidden
from goldeval.answers.gold import check_golden, worse_status
from goldeval.answers.pairing import Pairing, pair_columns
from goldeval.answers.rows import RELABELLED, compare_rows
from goldeval.answers.sql import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S, QueryError, ReadOnlyDatabase
from goldeval.answers.text import read_prose
from goldeval.answers.values import (REL_TOL, Column, canonical_text, is_rate_name, make_column, name_tokens, numbers_close,
                                     role_tags, tolerances)
from goldeval.errors import InputError, shorten
from goldeval.verdict import GOLD_STATUSES, NEEDS_HUMAN_MAX_CONFIDENCE, CaseOutcome, Verdict, pass_rate

__all__ = [
    "JUDGE_NAME",
    "JUDGE_VERSION",
    "AnswerConfig",
    "CaseResult",
    "judge_answer",
    "judge_case",
    "judge_file",
    "judge_answer_file",
    "iter_judged",
    "llm_materials",
    "outcome_from_dict",
    "summarize",
]

JUDGE_NAME = "answer_judge"
#: Bump when a rule changes a verdict (recorded with every run).
JUDGE_VERSION = "1.1.0"  # 1.1.0: break-fix rules (tolerance of whole and computed numbers, prose hedges, mustNotUse USING/star, repeated columns)

_MARKERS = ("PREFERRED", "ACCEPT", "DIVERGENT", "WRONG", "REQUIRED", "CREDITED")
_MATERIAL_ROWS = 200


@dataclass(slots=True)
class AnswerConfig:
    """Options of a judging run (the CLI maps one option to one field; later options add fields here).

    Attributes:
        db: SQLite (or DuckDB) file to re-execute final queries and canonical queries on; ``None``: use the
            attempt's reported rows or text.
        timeout_s: Time limit per query, seconds.
        max_rows: Row limit per query (more rows: the case is unscored).
        rel_tol: Relative numeric tolerance.
        engine: ``sqlite`` | ``duckdb`` | ``None`` (by the file).
        check_canonical: Execute each golden's ``canonical_query`` (when a db is given) to fill in missing golden
            rows, or to check the given ones (a difference makes the golden ``suspect``).
    """

    db: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_rows: int = DEFAULT_MAX_ROWS
    rel_tol: float = REL_TOL
    engine: str | None = None
    check_canonical: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class CaseResult:
    """One judged case: the outcome (what is recorded and counted) and the materials an LLM judge would need."""

    outcome: CaseOutcome
    materials: dict[str, Any] = field(default_factory=dict)


# --- input shapes ---------------------------------------------------------------------------------------------

def _table(obj: Mapping[str, Any], where: str, *, columns_required: bool) -> tuple[list[str], list[list[Any]]]:
    """``(columns, rows)`` from ``{"columns", "rows"}`` (rows as lists, or as objects keyed by column)."""
    rows = obj.get("rows")
    cols = obj.get("columns")
    if not isinstance(rows, list):
        raise InputError(f"{where}: 'rows' must be a list of rows, got {shorten(rows)}. Give rows as lists of cells.")
    if rows and all(isinstance(r, dict) for r in rows):
        if cols is None:
            cols = list(rows[0].keys())
        if isinstance(cols, list):
            want = set(cols)
            for i, r in enumerate(rows):
                if r.keys() != want:  # a missing key is not NULL, and an unknown key is not dropped in silence
                    lacks, unknown = sorted(map(str, want - r.keys())), sorted(map(str, r.keys() - want))
                    raise InputError(f"{where}: row {i + 1} has keys {sorted(map(str, r.keys()))}, expected exactly the columns {cols}"
                                     + (f" (missing {lacks})" if lacks else "") + (f" (not a column: {unknown})" if unknown else "")
                                     + ". Give every row every column (null for NULL), or list the columns.")
            rows = [[r[c] for c in cols] for r in rows]
    if cols is None:
        if columns_required:
            raise InputError(f"{where}: 'columns' is required with 'rows'. List the column names.")
        width = len(rows[0]) if rows and isinstance(rows[0], list) else 1
        cols = [f"col{i + 1}" for i in range(width)]
    if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
        raise InputError(f"{where}: 'columns' must be a list of names, got {shorten(cols)}.")
    width = len(cols)
    if all(type(r) in (list, tuple) and len(r) == width for r in rows):
        return list(cols), rows  # the usual case: rows as lists or tuples (what a database cursor returns)
    out = []
    for i, r in enumerate(rows):
        if not isinstance(r, (list, tuple)):
            r = [r] if width == 1 else r
        if not isinstance(r, (list, tuple)) or len(r) != width:
            got = f"{len(r)} cells" if isinstance(r, (list, tuple)) else shorten(r)
            raise InputError(f"{where}: row {i + 1} has {got}, expected {width} cells (one per column). Fix the row.")
        out.append(r)
    return list(cols), out


def _golden_table(golden: Mapping[str, Any], where: str) -> tuple[list[str], list[list[Any]]] | None:
    """The golden as a table (a scalar ``value`` is a one-row table), or ``None`` when it has neither."""
    if "rows" in golden and golden["rows"] is not None:
        return _table(golden, f"{where} golden", columns_required=True)
    if "value" in golden:
        cols = golden.get("columns") or ["value"]
        if not isinstance(cols, list) or len(cols) != 1:
            raise InputError(f"{where} golden: a scalar 'value' takes one column name, got columns {shorten(cols)}.")
        return [str(cols[0])], [[golden["value"]]]
    return None


_DIRECTIONS = {"desc": "desc", "descending": "desc", "asc": "asc", "ascending": "asc"}


def _check_case_lists(case: Mapping[str, Any], where: str) -> None:
    """``must_not_use`` and ``rubric`` must be lists (a bare string would be read one character at a time)."""
    for key, what in (("must_not_use", "field names or prose entries"), ("rubric", "clauses")):
        val = case.get(key)
        if val is not None and not isinstance(val, list):
            raise InputError(f"{where}: '{key}' must be a list of {what}, got {shorten(val)}. "
                             f"Wrap it in a list, e.g. [{shorten(val)}].")


def _check_golden_options(golden: Mapping[str, Any], names: Sequence[str] | None, where: str) -> None:
    """The golden's options (``ordered``, ``top_n``, ``rate_columns``, ``gold_status``) are well formed.

    A malformed option is an input error (the case is unscored with this message), never a verdict: a ``top_n``
    whose ``by`` names no golden column would otherwise fail every answer, a ``rate_columns`` typo would silently
    drop the percentage rule, and a bare string ``top_n`` crashed the run.
    """
    ordered = golden.get("ordered")
    if ordered is not None and not isinstance(ordered, bool):
        raise InputError(f"{where} golden: 'ordered' must be true or false, got {shorten(ordered)}. Fix the case row.")
    cols = list(names or [])
    top = golden.get("top_n")
    if top is not None:
        if not isinstance(top, Mapping):
            raise InputError(f"{where} golden: 'top_n' must be an object {{\"n\", \"by\", \"direction\"}}, got {shorten(top)}. Fix the case row.")
        by = top.get("by")
        if not isinstance(by, str) or (names is not None and by not in cols):
            raise InputError(f"{where} golden: top_n 'by' must name one of the golden columns {cols}, got {shorten(by)}. "
                             "Name the column the top-N is ranked by.")
        direction = top.get("direction", "desc")
        if not isinstance(direction, str) or direction.lower() not in _DIRECTIONS:
            raise InputError(f"{where} golden: top_n 'direction' must be 'desc' or 'asc', got {shorten(direction)}. Fix the case row.")
        n = top.get("n")
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise InputError(f"{where} golden: top_n 'n' must be a positive integer, got {shorten(n)}. Fix the case row.")
    rates = golden.get("rate_columns")
    if rates is not None:
        if not isinstance(rates, list) or not all(isinstance(r, str) for r in rates):
            raise InputError(f"{where} golden: 'rate_columns' must be a list of column names, got {shorten(rates)}. Fix the case row.")
        unknown = [r for r in rates if names is not None and r not in cols]
        if unknown:
            raise InputError(f"{where} golden: rate_columns {unknown} are not golden columns {cols}. Fix the names (they are compared exactly).")
    status = golden.get("gold_status")
    if status is not None and status not in GOLD_STATUSES:
        raise InputError(f"{where} golden: 'gold_status' must be one of {list(GOLD_STATUSES)}, got {shorten(status)}. Fix the case row.")


_ROUNDING = re.compile(r"\b(?:round|printf|format|trunc|truncate|to_char)\s*\(", re.IGNORECASE)


def _computed_floats(golden: Mapping[str, Any]) -> bool:
    """True when the golden's numbers were computed by its canonical query (``rows_from: canonical_query``) and that
    query rounds nothing: such floats have no display precision (``AVG`` = 0.3 is exactly 0.3; reading it as
    "written to one decimal" accepted 0.33). A canonical query that rounds (``ROUND(x, 2)``) keeps the precision
    it rounded to, and rows typed by hand keep theirs."""
    canonical = golden.get("canonical_query")
    return (golden.get("rows_from") == "canonical_query" and isinstance(canonical, str)
            and not _ROUNDING.search(canonical))


def _columns(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[Column]:
    if not rows:
        return [make_column(n, []) for n in names]
    return [make_column(n, list(map(itemgetter(i), rows))) for i, n in enumerate(names)]


def _rubric(rubric: Any) -> list[tuple[str, str]]:
    """Rubric clauses as ``(marker, text)``; an unmarked clause is ``CREDITED``."""
    out = []
    for clause in rubric or []:
        if isinstance(clause, Mapping):
            marker = str(clause.get("marker") or clause.get("label") or "CREDITED").upper()
            text = str(clause.get("text") or clause.get("clause") or "")
        else:
            text = str(clause)
            m = re.match(r"\s*\[?\s*([A-Z]+)\s*\]?\s*[:\-–]\s*(.*)", text, re.S)
            marker = m.group(1) if m and m.group(1) in _MARKERS else "CREDITED"
            text = m.group(2) if m and m.group(1) in _MARKERS else text
        out.append((marker if marker in _MARKERS else "CREDITED", text))
    return out


# --- verdict helpers ------------------------------------------------------------------------------------------

def _verdict(verdict: str, confidence: int | None, why: str, **kw: Any) -> Verdict:
    needs = verdict == "needs_human" or confidence is None or confidence <= NEEDS_HUMAN_MAX_CONFIDENCE
    return Verdict(verdict=verdict, confidence=confidence, needs_human=needs, why=why, **kw)  # type: ignore[arg-type]


def _undecided(why: str, because: str, **kw: Any) -> Verdict:
    v = _verdict("needs_human", None, why, **kw)
    v.details["undecided_because"] = because
    return v


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return repr(v) if isinstance(v, str) else str(v)


# --- the table rule -------------------------------------------------------------------------------------------

def _judge_table(
    question: str,
    golden: Mapping[str, Any],
    g_names: list[str],
    g_rows: list[list[Any]],
    p_names: list[str],
    p_rows: list[list[Any]],
    *,
    rel_tol: float,
    gold: tuple[str, str | None],
    gcols: list[Column] | None = None,
) -> Verdict:
    rate_cols = list(golden.get("rate_columns") or [])
    gcols = gcols if gcols is not None else _columns(g_names, g_rows)
    pcols = _columns(p_names, p_rows)
    pairing = pair_columns(gcols, pcols, rate_columns=rate_cols, rel_tol=rel_tol)
    common = dict(column_pairing=pairing.mapping, gold_status=gold[0], gold_note=gold[1])
    details: dict[str, Any] = {"pairing": pairing.to_dict(), "golden_shape": [len(g_rows), len(g_names)],
                               "prediction_shape": [len(p_rows), len(p_names)]}
    n_g, n_p = len(g_rows), len(p_rows)
    located_empty = {"golden_rows": n_g, "found": 0, "missing": [], "extra": n_p}
    if n_g == 0:
        if n_p == 0:
            return _verdict("match", 9, "Both the golden and the prediction are empty results.",
                            located={"golden_rows": 0, "found": 0, "missing": [], "extra": 0}, details=details, **common)
        return _verdict("no_match", 8, f"The golden result is empty; the prediction returns {n_p} row(s).",
                        located=located_empty, mismatch="rows where the golden has none", details=details, **common)
    if n_p == 0:
        loc = {"golden_rows": n_g, "found": 0, "missing": [dict(zip(g_names, r)) for r in g_rows[:20]], "extra": 0}
        return _verdict("no_match", 9, f"The prediction returns no rows; the golden has {n_g}.", located=loc,
                        mismatch="empty result", details=details, **common)
    if pairing.unpaired:
        why = f"Golden column(s) {', '.join(map(repr, pairing.unpaired))} have no counterpart in the prediction (containment fails)"
        if pairing.rejected:
            r = pairing.rejected[0]
            why += f"; '{r['prediction']}' shares values with '{r['golden']}' but {r['why'].split(';')[0]}"
        return _verdict("no_match", 8, why + ".", located={"golden_rows": n_g, "found": 0, "missing": [], "extra": n_p},
                        mismatch="missing column: " + ", ".join(pairing.unpaired), details=details, **common)
    ordered = bool(golden.get("ordered"))
    top_n = golden.get("top_n") or None
    rc = compare_rows(gcols, pcols, pairing, ordered=ordered, top_n=top_n, rel_tol=rel_tol)
    resolved_by_rows = False
    if pairing.ambiguous:
        tried = [(pairing, rc)]
        by_rows = None if rc.complete else _pair_by_row_signatures(gcols, pcols, pairing)
        if by_rows is not None:
            tried.append((by_rows, compare_rows(gcols, pcols, by_rows, ordered=ordered, top_n=top_n, rel_tol=rel_tol)))
        if not any(r.complete for _, r in tried):
            # Single swaps of the chosen pairing, a bounded number (each is a full row comparison).
            for alt in pairing.alternatives[:_MAX_ALTERNATIVES]:
                p2 = pairing.with_index(alt, "values+rows")
                tried.append((p2, compare_rows(gcols, pcols, p2, ordered=ordered, top_n=top_n, rel_tol=rel_tol)))
                if tried[-1][1].complete:
                    break
            if len(pairing.alternatives) > _MAX_ALTERNATIVES:
                details["alternatives_not_tried"] = len(pairing.alternatives) - _MAX_ALTERNATIVES
        complete = [(p, r) for p, r in tried if r.complete]
        if complete:
            pairing, rc = complete[0]
            resolved_by_rows = True
            common["column_pairing"] = pairing.mapping
            details["pairing"] = pairing.to_dict() | {"ambiguous": [], "resolved_by_rows": True}
        else:
            details["pairing_candidates"] = [p.mapping for p, _ in tried]
            return _undecided(
                "Column pairing is ambiguous: " + "; ".join(f"'{a['golden']}' fits {', '.join([a['chosen'], *a['candidates']])} equally well"
                                                         for a in pairing.ambiguous) + ", and no candidate pairing locates every golden row.",
                "ambiguous pairing", located=rc.located(), mismatch=rc.mismatch, details=details, **common)
    tie_note = None
    if rc.top_n and rc.top_n.get("qualifies") and rc.top_n.get("tie_break_differs"):
        tie_rows = (top_n or {}).get("tie_rows")
        if isinstance(tie_rows, list):
            # Every prediction row must be a golden row or a row tied at the boundary in the golden population.
            pool = _columns(g_names, [list(r) for r in g_rows] + [list(r) for r in tie_rows if isinstance(r, list) and len(r) == len(g_names)])
            pool_rc = compare_rows(pool, pcols, pairing, rel_tol=rel_tol)
            if pool_rc.extra:
                rc.top_n["qualifies"] = False
                rc.top_n["why"] = (f"{pool_rc.extra} boundary row(s) of the prediction are not tied in the golden population "
                                   f"(checked against the {len(tie_rows)} row(s) at the boundary value)")
                rc.mismatch = "top-N: " + rc.top_n["why"]
            else:
                tie_note = "verified"
        else:
            tie_note = "not verified (no tie rows: run with --db and a canonical_query to check them)"
        rc.top_n["tie_check"] = tie_note
    details["rows"] = {"order": rc.order, "top_n": rc.top_n}
    located = rc.located()
    bases = set(pairing.basis.values())
    scaled = {pairing.golden_names[i]: s for i, s in pairing.scale.items() if s != 1.0}
    if rc.complete:
        conf = 10
        notes = []
        if bases - {"name+values"}:
            conf -= 1
            notes.append("paired by " + ", ".join(sorted(bases - {"name+values"})))
        if "elimination" in bases or resolved_by_rows:
            conf -= 1
        if scaled:
            conf -= 1
            notes.append("rate read as " + ", ".join(f"{k} ×{1 / v:g}" for k, v in scaled.items()))
        if rc.top_n and rc.top_n.get("tie_break_differs"):
            conf -= 1 if tie_note == "verified" else 2
            notes.append(f"a different valid tie-break at the boundary value {rc.top_n['boundary']:g}, "
                         + ("tie checked against the golden population" if tie_note == "verified" else "tie as the prediction reports it"))
        if rc.order == "ties reordered":
            conf -= 1
            notes.append("tied rows in another order")
        extra_cols = [n for j, n in enumerate(pairing.pred_names) if j not in pairing.index.values()]
        why = f"Every golden row ({n_g}) is located under the pairing {_pairs_text(pairing)}"
        if extra_cols:
            why += f"; extra column(s) {', '.join(map(repr, extra_cols))} do not reduce a containing answer"
        if notes:
            why += " (" + "; ".join(notes) + ")"
        return _verdict("match", max(conf, 6), why + ".", located=located, mismatch=rc.mismatch if rc.top_n else None,
                        details=details, **common)
    # Not complete. Mislabelled columns? The column named like a golden one is wrong but another holds its values.
    if pairing.name_value_conflicts and rc.top_n is None:
        c = pairing.name_value_conflicts[0]
        return _undecided(
            f"The column named '{c['named']}' does not hold the golden '{c['golden']}' values, but {', '.join(map(repr, c['values_in']))} "
            "does: mislabelled columns or a wrong answer, which rules cannot tell apart.", "names and values disagree",
            located=located, mismatch=rc.mismatch, details=details, **common)
    # Mislabelled columns the names cannot show: each named column holds the right *set* of values, but the rows
    # only line up with the labels swapped (two count columns under each other's names).
    single_cause = ("uniformly scaled", "one column", "extra rows", "missing rows", "different number of rows")
    if (rc.top_n is None and not pairing.ambiguous and len(pairing.index) >= 2 and rc.found < n_g and n_p == n_g
            and not (rc.mismatch or "").startswith(single_cause)):  # a swap of labels shows as several columns off
        swapped = _pair_by_row_signatures(gcols, pcols, pairing)
        if swapped is not None and compare_rows(gcols, pcols, swapped, ordered=ordered, rel_tol=rel_tol).complete:
            moved = [f"'{g}' is in '{p}'" for g, p in swapped.mapping.items() if pairing.mapping.get(g) != p]
            details["pairing_by_rows"] = swapped.mapping
            return _undecided(
                f"Under the column names the rows are wrong, but every golden row is there with the labels swapped ({', '.join(moved)}): "
                "mislabelled columns or a wrong answer, which rules cannot tell apart.", "names and values disagree",
                located=located, mismatch=rc.mismatch, details=details, **common)
    # A key column under other labels (names for codes) in every row, all else right: not wrong values by rule.
    if rc.mismatch and rc.mismatch.startswith(RELABELLED) and rc.top_n is None:
        return _undecided(f"The rows are the golden's, but {rc.mismatch.removeprefix(RELABELLED + ': ')}: whether that label "
                          "answers the question (a name where a code was given) is not a rule's call.", "relabelled key column",
                          located=located, mismatch=rc.mismatch, details=details, **common)
    # A canonical ORDER BY … LIMIT with ties beyond the limit: another tie-break may be right.
    pool = golden.get("tie_pool")
    if isinstance(pool, Mapping) and rc.top_n is None:
        above = [list(r) for r in pool.get("above") or []]
        ties = [list(r) for r in pool.get("ties") or []]
        got_above = compare_rows(_columns(g_names, above), pcols, pairing, rel_tol=rel_tol).found == len(above) if above else True
        in_pool = compare_rows(_columns(g_names, above + ties), pcols, pairing, rel_tol=rel_tol).extra == 0
        key = ", ".join(pool.get("order_key") or [])
        details["tie_pool"] = {"above": len(above), "ties": len(ties), "order_key": key}
        if got_above and in_pool and n_p == n_g:
            return _verdict("match", 8, f"Every prediction row is a golden row or tied with the boundary row on the order key ({key}): "
                            f"a valid tie-break among {len(ties)} tied rows.", located=located,
                            mismatch="a different tie-break at the boundary", details=details, **common)
        if got_above and in_pool and n_p == len(above) + len(ties):
            return _verdict("near_match", 7, f"The prediction returns every row tied at the boundary on the order key ({key}): "
                            f"{n_p} rows for the {n_g} asked.", located=located, mismatch="all tied rows returned",
                            details=details, **common)
    if rc.top_n is not None and rc.top_n.get("all_ties"):
        tie_rows = (top_n or {}).get("tie_rows")
        ok = True
        if isinstance(tie_rows, list):
            ok = compare_rows(_columns(g_names, [list(r) for r in g_rows] + [list(r) for r in tie_rows]), pcols, pairing,
                              rel_tol=rel_tol).extra == 0
        if ok:
            return _verdict("near_match", 7, f"Top-N: {rc.top_n['why']} (defensible, but more rows than asked).",
                            located=located, mismatch="all tied rows returned", details=details, **common)
    if rc.order == "unknown":
        return _undecided("The rows are right but in another order, and the order key is not among the columns to check a tie.",
                          "order not checkable", located=located, mismatch=rc.mismatch, details=details, **common)
    extra_keys = [pairing.pred_names[j] for j, c in enumerate(pcols)
                  if j not in pairing.index.values() and not c.numeric and c.kind != "null"]
    if extra_keys and n_p != n_g and rc.found < n_g:
        return _undecided(
            f"The prediction has extra key column(s) {', '.join(map(repr, extra_keys))} and {n_p} rows for the golden's {n_g}: "
            "a different grain, which rules cannot judge.", "different grain", located=located, mismatch=rc.mismatch,
            details=details, **common)
    conf = 8
    if "elimination" in bases or "values (partial)" in bases:
        conf = 7
    if rc.top_n is not None:
        why = f"Top-N answer does not qualify: {rc.top_n.get('why', 'rows differ')}."
    elif rc.order == "different":
        conf = 9
        why = "The rows are right but not in the order the question asks for."
    elif rc.found == n_g and rc.extra:
        conf = 7
        why = f"Every golden row is there, plus {rc.extra} extra row(s): extra rows are not containment."
    else:
        why = f"{rc.found} of {n_g} golden rows located under the pairing {_pairs_text(pairing)}; {rc.extra} prediction row(s) unmatched"
        if rc.mismatch:
            why += f" ({rc.mismatch})"
        why += "."
    return _verdict("no_match", conf, why, located=located, mismatch=rc.mismatch, details=details, **common)


#: Most alternative pairings (single swaps) re-compared when a pairing is ambiguous.
_MAX_ALTERNATIVES = 24


def _pair_by_row_signatures(gcols: list[Column], pcols: list[Column], pairing: Pairing) -> Pairing | None:
    """Resolve an ambiguous pairing from whole rows: a row's sorted cells do not depend on the column order, so
    golden and prediction rows with the same sorted cells are aligned first, and each golden column then takes the
    prediction column that agrees with it most often on the aligned rows (an assignment again, O(k³)).

    Columns that hold the same multiset of values (k permutations of 1…n) tie on every column-wise score; single
    swaps of one arbitrary pairing cannot undo a k-cycle, but the aligned rows show which column is which.
    Returns ``None`` when it cannot help (repeated golden columns, no aligned row, or the same pairing).
    """
    from scipy.optimize import linear_sum_assignment

    from goldeval.answers.values import name_tokens, role_tags, roles_conflict

    cols = sorted(set(pairing.index.values()))
    kg = len(gcols)
    if len(cols) != kg or kg < 2 or not gcols[0].n:
        return None

    def cells(col: Column) -> list[str]:
        return ["\x00NULL" if v is None else str(v) for v in col.text.tolist()]

    g_cells = [cells(c) for c in gcols]
    p_cells = [cells(pcols[j]) for j in cols]
    waiting: dict[tuple[str, ...], list[int]] = {}
    for b, row in enumerate(zip(*p_cells)):
        waiting.setdefault(tuple(sorted(row)), []).append(b)
    pairs = []
    for a, row in enumerate(zip(*g_cells)):
        stack = waiting.get(tuple(sorted(row)))
        if stack:
            pairs.append((a, stack.pop()))
    if not pairs:
        return None
    ga = np.array([a for a, _ in pairs])
    pb = np.array([b for _, b in pairs])
    g_arr = [np.array(c, dtype=object)[ga] for c in g_cells]
    p_arr = [np.array(c, dtype=object)[pb] for c in p_cells]
    agree = np.array([[float(np.mean(g == p)) for p in p_arr] for g in g_arr])
    for i, g in enumerate(gcols):
        for jj, j in enumerate(cols):
            if roles_conflict(role_tags(name_tokens(g.name)), role_tags(name_tokens(pcols[j].name))):
                agree[i, jj] = -1e6
    rows_i, cols_i = linear_sum_assignment(-agree)
    index = {int(i): cols[int(jj)] for i, jj in zip(rows_i, cols_i) if agree[i, jj] > 0}
    if len(index) != kg or index == pairing.index:
        return None
    return pairing.with_index(index, "values+rows")


def _pairs_text(p: Pairing) -> str:
    parts = []
    for g, pr in p.mapping.items():
        b = p.basis.get(g, "")
        parts.append(f"{g}→{pr}" + (f" [{b}]" if b and b != "name+values" else ""))
    return ", ".join(parts)


# --- prose rules ----------------------------------------------------------------------------------------------

def _judge_prose_value(question: str, golden: Mapping[str, Any], g_names: list[str], g_rows: list[list[Any]],
                       text: str, *, rel_tol: float, gold: tuple[str, str | None]) -> Verdict:
    prose = read_prose(text, question)
    common = dict(gold_status=gold[0], gold_note=gold[1])
    details: dict[str, Any] = {"prose": {"numbers": list(prose.numbers), "refusal": prose.refusal, "hedged": prose.hedged,
                                         "grader_text_ignored": prose.injected or None}}
    inj = " Text aimed at the grader was ignored (it is data)." if prose.injected else ""
    if prose.refusal and not prose.numbers and _ASSERTS.search(prose.answer_text):
        return _undecided("The answer has a refusal phrase but also asserts an answer ('O+ is the most common (Rh is not "
                          "recorded)'): whether it declines is a prose question." + inj, "prose grain", details=details, **common)
    if prose.refusal and not prose.numbers:
        return _verdict("no_match", 9, "The answer declines, but the golden has a value: a refusal passes only against an unanswerable golden." + inj,
                        mismatch="refusal", details=details, **common)
    if len(g_rows) != 1 or len(g_names) != 1:
        return _undecided(f"A prose answer against a {len(g_rows)}×{len(g_names)} golden table: the rules cannot read a table out of prose." + inj,
                          "prose grain", details=details, **common)
    gcol = make_column(g_names[0], [g_rows[0][0]])
    if not gcol.numeric:
        want = canonical_text(str(g_rows[0][0]))
        body = canonical_text(prose.answer_text)
        # The golden as a whole word: "Cardiology-East" or "Cardiology_2" is another name, not the golden.
        found = [m for m in re.finditer(r"(?<![\w-])" + re.escape(want) + r"(?![\w-])", body)] if want else []
        if found:
            alt = re.escape(want)
            neg = re.compile(r"(?:\bnot|n't|\bnever|\bno longer|\brather than|\binstead of|\bother than|\bexcept|\bexcluding|\bunlike|\bbesides)"
                             r"(?:\s+\w+){0,2}\s+[\"'(]?$")
            if re.search(r"\beither\b[^.;]*\b" + alt + r"\b|\b" + alt + r"[\"')]?\s*,?\s+or\s+\w|\w[\"')]?\s+or\s+[\"'(]?" + alt + r"\b", body):
                details["prose"]["hedged"] = True
                return _verdict("no_match", 7, f"The answer hedges between the golden {_fmt(g_rows[0][0])} and another candidate: "
                                "offering several candidates does not contain the golden." + inj,
                                mismatch="hedge: several candidate values", details=details, **common)
            if any(neg.search(body[: m.start()]) for m in found):
                return _undecided(f"The answer mentions the golden {_fmt(g_rows[0][0])} after a negation ('not …', 'rather than …'): "
                                  "the rules cannot tell an answer from an exclusion." + inj, "prose grain", details=details, **common)
            if _in_enumeration(prose.answer_text, str(g_rows[0][0])):
                return _undecided(f"The answer names the golden {_fmt(g_rows[0][0])} in a list of several names: whether it is the "
                                  "answer or one of several candidates is a prose question." + inj, "prose grain", details=details, **common)
            if prose.hedged or re.search(r"\b(?:maybe|perhaps|possibly|might be|could be)\b", body):
                return _undecided(f"The answer states the golden {_fmt(g_rows[0][0])} with a hedge ('maybe', 'possibly'): "
                                  "whether it commits to it is a prose question." + inj, "prose grain", details=details, **common)
            return _verdict("match", 7, f"The answer states the golden value {_fmt(g_rows[0][0])}." + inj, details=details, **common)
        return _undecided("A prose answer that does not state the golden text verbatim: the rules cannot tell a paraphrase from a miss." + inj,
                          "prose grain", details=details, **common)
    if prose.refusal:
        return _undecided("The answer both declines and states numbers." + inj, "prose grain", details=details, **common)
    g = float(gcol.num[0])
    half = tolerances(gcol)
    rate = is_rate_name(g_names[0], golden.get("rate_columns") or [])
    scales = (1.0, 0.01, 100.0) if rate else (1.0,)
    count = not rate and "count" in role_tags(name_tokens(g_names[0]))

    def close(x: float) -> bool:
        if count and prose.plain is not None and x not in prose.plain:
            return False  # stated only as "20%": a percentage, never a count of 20
        return any(bool(numbers_close(gcol.num, gcol.num * 0 + x * s, half, rel_tol=rel_tol)[0]) for s in scales)

    distinct = sorted(set(prose.numbers))
    if not distinct:
        return _undecided("The answer states no value to compare with the golden." + inj, "no stated value", details=details, **common)
    hits = [x for x in distinct if close(x)]
    if len(distinct) == 1:
        if hits:
            return _verdict("match", 8, f"The answer states {_fmt(distinct[0])}, the golden value {_fmt(g)}." + inj, details=details, **common)
        if count and prose.plain is not None and distinct[0] not in prose.plain and distinct[0] == g:
            return _verdict("no_match", 7, f"The answer states {_fmt(distinct[0])}%, a percentage; the golden {g_names[0]!r} is a "
                            f"count ({_fmt(g)}), and a count is never a percentage." + inj, mismatch="a percentage where a count was asked",
                            details=details, **common)
        return _verdict("no_match", 8, f"The answer states {_fmt(distinct[0])}; the golden is {_fmt(g)}." + inj,
                        mismatch=f"different value: {_fmt(distinct[0])} instead of {_fmt(g)}", details=details, **common)
    if prose.hedged:
        return _verdict("no_match", 7, f"The answer hedges between {', '.join(map(_fmt, distinct))}: offering several candidates does not contain the golden {_fmt(g)}." + inj,
                        mismatch="hedge: several candidate values", details=details, **common)
    if not hits:
        return _verdict("no_match", 7, f"None of the values the answer states ({', '.join(map(_fmt, distinct))}) is the golden {_fmt(g)}." + inj,
                        mismatch="different value", details=details, **common)
    return _undecided(f"The answer states several numbers ({', '.join(map(_fmt, distinct))}), one of them the golden: which one answers is a prose question." + inj,
                      "prose grain", details=details, **common)


_LIST_SEP = r"(?:\s*(?:,|;|/|&|\band\b|\bfollowed by\b|\bthen\b|\bvs\.?))+\s*"
_LIST_BEFORE = re.compile(r"[A-Z][\w'-]*[\"')]?" + _LIST_SEP + r"[\"'(]?$")
_LIST_AFTER = re.compile(r"^[\"')]?" + _LIST_SEP + r"[\"'(]?[A-Z]")


def _in_enumeration(text: str, golden: str) -> bool:
    """True when a mention of *golden* in *text* sits in a list of names ("Cardiology, Oncology and Surgery",
    "Oncology, followed by Cardiology"): another capitalised name right before or after it, joined by a comma,
    ``and``, ``then``, ``/``…"""
    if not golden.strip():
        return False
    for m in re.finditer(r"(?<![\w-])" + re.escape(golden.strip()) + r"(?![\w-])", text, re.IGNORECASE):
        if _LIST_BEFORE.search(text[: m.start()]) or _LIST_AFTER.match(text[m.end():]):
            return True
    return False


#: Phrases that assert an answer ("the answer is", "X is the most common", "it is A+").
_ASSERTS = re.compile(
    r"\b(?:the|my) answer is\b|\bis the (?:most|least|largest|smallest|highest|lowest|top|biggest)\b"
    r"|\b(?:it|that) (?:is|was|'s)\s+(?!not\b|impossible\b|unclear\b|unknown\b|possible\b|not possible\b)[\w+-]",
    re.IGNORECASE,
)


def _judge_unanswerable(question: str, prediction: Mapping[str, Any], *, gold: tuple[str, str | None]) -> Verdict:
    text = prediction.get("text") or ""
    rows = prediction.get("rows")
    prose = read_prose(text, question)
    common = dict(gold_status=gold[0], gold_note=gold[1])
    details: dict[str, Any] = {"prose": {"numbers": list(prose.numbers), "refusal": prose.refusal, "names_missing": prose.names_missing,
                                         "grader_text_ignored": prose.injected or None}}
    has_rows = isinstance(rows, list) and len(rows) > 0
    answers = bool(prose.numbers) or bool(_ASSERTS.search(prose.answer_text))
    if prose.refusal and not has_rows and answers:
        # "There is no data issue: the answer is 42", "O+ is the most common (the database does not record Rh)":
        # a refusal phrase beside an answer is not a refusal (both were match).
        details["prose"]["also_answers"] = True
        return _undecided("The golden is unanswerable; the answer has a refusal phrase but also states an answer: whether it "
                          "declines is a prose question.", "prose grain", details=details, **common)
    if prose.refusal and not has_rows:
        if prose.names_missing:
            return _verdict("match", 8, "The golden is unanswerable and the answer declines, naming what the data lacks.", details=details, **common)
        return _verdict("near_match", 7, "The golden is unanswerable and the answer declines, but without naming what is missing.", details=details, **common)
    if has_rows and not prose.refusal:
        return _verdict("no_match", 8, f"The golden says the data cannot answer this; the prediction returns {len(rows)} row(s) as an answer.",
                        mismatch="answered an unanswerable question", details=details, **common)
    if text and not prose.refusal and prose.numbers:
        return _verdict("no_match", 7, "The golden says the data cannot answer this; the answer states values instead of declining.",
                        mismatch="answered an unanswerable question", details=details, **common)
    return _undecided("Unanswerable golden; the answer neither clearly declines nor clearly answers.", "prose grain", details=details, **common)


# --- public: one case -----------------------------------------------------------------------------------------

def judge_answer(
    question: str,
    golden: Mapping[str, Any],
    prediction: Mapping[str, Any],
    *,
    must_not_use: Sequence[str] = (),
    final_query: str | None = None,
    rubric: Sequence[Any] = (),
    rel_tol: float = REL_TOL,
    schema: Mapping[str, Sequence[str]] | None = None,
    dialect: str | None = "sqlite",
    where: str = "case",
) -> Verdict:
    """Judge one data answer by rule.

    Args:
        question: The question asked (its numbers are not read as an answer's values).
        golden: ``{"kind": "value" | "unanswerable" | "criteria", "columns", "rows" | "value", "ordered"?,
            "top_n"?: {"n", "by", "direction"}, "rate_columns"?}``. A scalar ``value`` is a one-row table.
        prediction: ``{"columns", "rows"}`` (rows ``(n, k)``, lists or objects) and/or ``{"text"}``. When both are
            given the rows are judged.
        must_not_use: Field entries (``field`` / ``table.field``) are a veto on ``final_query``; prose entries go to
            the LLM judge.
        final_query: The SQL the answer came from (for mustNotUse).
        rubric: Clauses, plain strings with an optional marker prefix (``"REQUIRED: …"``) or
            ``{"marker", "text"}``.
        rel_tol: Relative numeric tolerance (the golden's display precision applies as well).
        schema: ``{table: [columns]}`` for mustNotUse on ``SELECT *``.
        dialect: sqlglot dialect of ``final_query``.
        where: Prefix for error messages (``"cases.jsonl:4 (id q7)"``).

    Returns:
        A :class:`~goldeval.verdict.Verdict`; ``needs_human`` (with ``details["undecided_because"]``) when no rule
        decides.

    Raises:
        InputError: the golden or the prediction is malformed (the batch turns this into an unscored case).
    """
    if not isinstance(golden, Mapping):
        raise InputError(f"{where}: 'golden' must be an object, got {shorten(golden)}.")
    kind = golden.get("kind", "value")
    if kind not in ("value", "unanswerable", "criteria"):
        raise InputError(f"{where}: golden kind must be 'value', 'unanswerable' or 'criteria', got {shorten(kind)}.")
    if not isinstance(prediction, Mapping):
        raise InputError(f"{where}: the prediction must be an object with 'columns'/'rows' or 'text', got {shorten(prediction)}.")
    fc = check_forbidden(final_query, list(must_not_use or []), dialect=dialect, schema=schema)
    forbidden_details = {"checked": bool(final_query), "hits": fc.hits, "prose": fc.prose, "parsed": fc.parsed, "note": fc.note,
                         "unsure": fc.unsure}
    gold: tuple[str, str | None] = ("verified", None)
    table = _golden_table(golden, where) if kind == "value" else None
    if kind == "value" and table is None:
        raise InputError(f"{where}: a 'value' golden needs 'rows' (with 'columns') or 'value'. Add them, or mark the golden 'unanswerable' / 'criteria'.")
    _check_golden_options(golden, table[0] if table is not None else None, where)
    if isinstance(must_not_use, str) or isinstance(rubric, str):
        raise InputError(f"{where}: 'must_not_use' and 'rubric' must be lists, got {shorten(must_not_use if isinstance(must_not_use, str) else rubric)}. Wrap the entry in a list.")
    gcols = _columns(*table) if table is not None else None
    if gcols is not None and _computed_floats(golden):
        gcols = [c.exact() for c in gcols]
    if table is not None and gcols is not None:
        gold = check_golden(gcols, rate_columns=list(golden.get("rate_columns") or []))
    if "gold_status" in golden and golden["gold_status"] in ("suspect", "verified_wrong", "verified_benign"):
        gold = worse_status(gold, (golden["gold_status"], golden.get("gold_note")))
    if fc.hits:
        h = fc.hits[0]
        return _verdict("no_match", 10, f"The final query reads the forbidden field {h['entry']} (as {h['where']}); mustNotUse is a hard veto.",
                        decided_by="must_not_use", gold_status=gold[0], gold_note=gold[1],  # type: ignore[arg-type]
                        mismatch=f"uses forbidden field {h['entry']}", details={"must_not_use": forbidden_details})
    has_rows = prediction.get("rows") is not None
    text = prediction.get("text")
    if text is not None and not isinstance(text, str):
        raise InputError(f"{where}: prediction 'text' must be a string, got {shorten(text)}.")
    if kind == "criteria":
        v = _undecided("A criteria golden: its rubric clauses are the whole key, which the LLM judge reads.", "criteria golden",
                       gold_status=gold[0], gold_note=gold[1])
    elif kind == "unanswerable":
        v = _judge_unanswerable(question, prediction, gold=gold)
    elif has_rows:
        p_names, p_rows = _table(prediction, f"{where} prediction", columns_required=False)
        assert table is not None
        v = _judge_table(question, golden, table[0], table[1], p_names, p_rows, rel_tol=rel_tol, gold=gold, gcols=gcols)
        if not p_rows and text and read_prose(text, question).refusal:
            v = _verdict("no_match", 9, "The answer declines (no rows), but the golden has a value.", mismatch="refusal",
                         gold_status=gold[0], gold_note=gold[1], located=v.located, details=v.details)  # type: ignore[arg-type]
    elif text is not None:
        assert table is not None
        v = _judge_prose_value(question, golden, table[0], table[1], text, rel_tol=rel_tol, gold=gold)
    else:
        raise InputError(f"{where}: the attempt gives no answer to judge (no final_query result, no 'rows', no 'text').")
    v.details["must_not_use"] = forbidden_details
    # Rubric clauses and prose mustNotUse entries that could move the verdict: hand the case to the LLM judge.
    clauses = _rubric(rubric)
    markers = {m for m, _ in clauses}
    if clauses:
        v.details["rubric"] = [{"marker": m, "text": t} for m, t in clauses]
    reasons = []
    if v.verdict == "match" and "REQUIRED" in markers:
        reasons.append("a REQUIRED rubric clause may be unmet")
    if v.verdict == "match" and v.mismatch and markers & {"DIVERGENT", "WRONG"}:
        reasons.append("a DIVERGENT/WRONG rubric clause may describe this answer's difference (" + v.mismatch + ")")
    if v.verdict in ("no_match", "near_match") and markers & {"ACCEPT", "PREFERRED", "DIVERGENT"} and v.decided_by == "rule":
        reasons.append("an ACCEPT/PREFERRED/DIVERGENT rubric clause may cover this answer")
    if v.verdict == "match" and fc.prose:
        reasons.append("a prose mustNotUse entry needs reading")
    if v.verdict == "match" and fc.unsure:
        u = fc.unsure[0]
        reasons.append(f"the query may read the forbidden field {u['entry']} ({u['where']})")
    if reasons and v.verdict != "needs_human":
        v.details["rule_verdict"] = {"verdict": v.verdict, "confidence": v.confidence, "why": v.why}
        v.details["undecided_because"] = "; ".join(reasons)
        v.verdict = "needs_human"
        v.confidence = None
        v.needs_human = True
        v.why = f"By rule: {v.why} Not final: {'; '.join(reasons)}."
    return v


def outcome_from_dict(d: Mapping[str, Any]) -> CaseOutcome:
    """Rebuild a :class:`CaseOutcome` from its ``to_dict()`` form (a recorded case, reused on resume)."""
    if d.get("status") != "scored" or d.get("verdict") is None:
        return CaseOutcome(str(d.get("id")), "unscored", None, d.get("reason"), d.get("raw"))
    names = set(Verdict.__dataclass_fields__)  # type: ignore[attr-defined]
    v = Verdict(**{k: d[k] for k in names if k in d})
    return CaseOutcome(str(d["id"]), "scored", v, d.get("reason"), d.get("raw"))


def _materials(case: Mapping[str, Any], attempt: Mapping[str, Any] | None, outcome: CaseOutcome,
               pred: Mapping[str, Any] | None, golden: Mapping[str, Any]) -> dict[str, Any]:
    from goldeval.answers.forbidden import split_entries

    _, prose = split_entries([str(x) for x in case.get("must_not_use") or []])
    rows = (pred or {}).get("rows")
    gold = {k: v for k, v in golden.items() if k not in ("tie_pool",)}
    if isinstance(gold.get("top_n"), Mapping) and "tie_rows" in gold["top_n"]:
        gold["top_n"] = {k: v for k, v in gold["top_n"].items() if k != "tie_rows"} | {"tie_rows_count": len(gold["top_n"]["tie_rows"])}
    if isinstance(gold.get("rows"), list) and len(gold["rows"]) > _MATERIAL_ROWS:
        gold["row_count"] = len(gold["rows"])
        gold["rows"] = gold["rows"][:_MATERIAL_ROWS]
        gold["rows_truncated"] = True
    return {
        "id": outcome.id,
        "rule": outcome.to_dict(),
        "question": case.get("question"),
        "golden": gold,
        "prediction": None if pred is None else {
            "columns": pred.get("columns"),
            "rows": rows[:_MATERIAL_ROWS] if isinstance(rows, list) else rows,
            "row_count": len(rows) if isinstance(rows, list) else None,
            "rows_truncated": isinstance(rows, list) and len(rows) > _MATERIAL_ROWS,
            "source": pred.get("source"),
        },
        "text": (attempt or {}).get("text"),
        "final_query": (attempt or {}).get("final_query"),
        "rubric": list(case.get("rubric") or []),
        "must_not_use_prose": prose,
        "breakdown": (outcome.verdict.details if outcome.verdict else {"reason": outcome.reason}),
    }


def _hidden_tie_pool(db: ReadOnlyDatabase, canonical: str, golden: Mapping[str, Any]) -> dict[str, Any] | None:
    """For a canonical query ``… ORDER BY k LIMIT n`` whose order key may not be an output column: the rows above
    the boundary and every row tied with the n-th one on the key (the canonical query re-run without LIMIT, with the
    key added as extra columns). ``None`` when there is no tie beyond the LIMIT or it cannot be worked out."""
    import sqlglot
    from sqlglot import exp

    dialect = "duckdb" if db.engine == "duckdb" else "sqlite"
    try:
        tree = sqlglot.parse_one(canonical, read=dialect)
    except sqlglot.errors.SqlglotError:
        return None
    if not isinstance(tree, exp.Select) or tree.args.get("distinct") or tree.args.get("offset"):
        return None
    limit, order = tree.args.get("limit"), tree.args.get("order")
    if limit is None or order is None or not isinstance(limit.expression, exp.Literal) or not limit.expression.is_int:
        return None
    projections = list(tree.expressions)
    if any(isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star)) for p in projections):
        return None
    aliases = {p.alias.lower(): p for p in projections if p.alias}
    keys = []
    for o in order.expressions:
        e = o.this
        if isinstance(e, exp.Literal) and e.is_int and 1 <= int(e.this) <= len(projections):
            e = projections[int(e.this) - 1]
        elif isinstance(e, exp.Column) and not e.table and e.name.lower() in aliases:
            e = aliases[e.name.lower()]
        keys.append(e.unalias().copy())
    full = tree.copy()
    full.set("limit", None)
    full = full.select(*[exp.alias_(k, f"__goldeval_k{i}") for i, k in enumerate(keys)], append=True)
    try:
        res = db.execute(full.sql(dialect=dialect))
        gt = _golden_table(golden, "golden")
    except (QueryError, InputError):
        return None
    if gt is None:
        return None
    m, width = len(gt[1]), len(gt[0])
    if m == 0 or len(res.rows) <= m or len(res.columns) != width + len(keys):
        return None
    key_of = [tuple(r[width:]) for r in res.rows]
    boundary = key_of[m - 1]
    first = next(i for i, k in enumerate(key_of) if k == boundary)
    ties = [list(r[:width]) for r, k in zip(res.rows, key_of) if k == boundary]
    if first + len(ties) <= m:
        return None  # nothing tied beyond the LIMIT: the golden rows are the only right answer
    return {"n": m, "above": [list(r[:width]) for r in res.rows[:first]], "ties": ties,
            "order_key": [k.sql(dialect=dialect) for k in keys]}


def _tie_rows(db: ReadOnlyDatabase, canonical: str, golden: Mapping[str, Any]) -> list[list[Any]] | None:
    """Rows of the canonical query *without its LIMIT* whose top-N value equals the golden's boundary value.

    These are the rows a valid tie-break may return. ``None`` when it cannot be worked out (no LIMIT to drop,
    the query fails, the top-N column is not numeric, or the shapes disagree).
    """
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(canonical, read="duckdb" if db.engine == "duckdb" else "sqlite")
        if not isinstance(tree, exp.Select) or tree.args.get("limit") is None:
            return None
        tree.set("limit", None)
        res = db.execute(tree.sql(dialect="duckdb" if db.engine == "duckdb" else "sqlite"))
        gt = _golden_table(golden, "golden")
    except (QueryError, InputError, sqlglot.errors.SqlglotError):
        return None
    if gt is None or len(res.columns) != len(gt[0]) or not gt[1]:
        return None
    top = golden.get("top_n") or {}
    try:
        k = gt[0].index(str(top.get("by")))
    except ValueError:
        return None
    by = make_column("by", [r[k] for r in gt[1]])
    full = make_column("by", [r[k] for r in res.rows])
    if not by.numeric or not full.numeric:
        return None
    desc = str(top.get("direction", "desc")).lower().startswith("desc")
    boundary = float(by.num[~by.null].min() if desc else by.num[~by.null].max())
    half = tolerances(by)[0] if by.n else 0.0
    at = numbers_close(full.num, full.num * 0 + boundary, full.num * 0 + half, rel_tol=REL_TOL)
    return [list(r) for r, hit in zip(res.rows, at.tolist()) if hit]


def judge_case(case: Mapping[str, Any], attempt: Mapping[str, Any] | None, *, db: ReadOnlyDatabase | None = None,
               config: AnswerConfig | None = None, where: str = "", attempt_where: str = "") -> CaseResult:
    """Judge one case row against its attempt row, re-executing queries on *db* when given.

    Args:
        case: ``{"id", "question", "golden", "rubric"?, "must_not_use"?}``.
        attempt: ``{"id", "final_query"?, "columns"?, "rows"?, "text"?}``, or ``None`` when there is none.
        db: Read-only database; the attempt's ``final_query`` result is the prediction (never the reported rows),
            and the golden's ``canonical_query`` fills in or checks the golden rows.
        config: Options (tolerance; ``check_canonical``).
        where: Prefix for messages (the case row).
        attempt_where: Prefix for messages about the attempt row (its query); defaults to *where*.

    Returns:
        :class:`CaseResult`. Unscored (with the reason, and the query as ``raw``) when the case or attempt is
        malformed, there is no attempt, or a query fails.
    """
    cfg = config or AnswerConfig()
    cid = str(case.get("id"))
    where = where or f"case {cid!r}"
    golden = case.get("golden")
    if attempt is None:
        oc = CaseOutcome(cid, "unscored", reason=f"{where}: no attempt with this id. Add the attempt, or drop the case.")
        return CaseResult(oc, {"id": cid})
    if not isinstance(golden, Mapping):
        oc = CaseOutcome(cid, "unscored", reason=f"{where}: 'golden' must be an object, got {shorten(golden)}. Fix the case row.")
        return CaseResult(oc, {"id": cid})
    golden = dict(golden)
    try:
        _check_case_lists(case, where)
        _check_golden_options(golden, golden.get("columns") if isinstance(golden.get("columns"), list) else None, where)
    except InputError as exc:
        return CaseResult(CaseOutcome(cid, "unscored", reason=str(exc)), {"id": cid})
    gold_extra: tuple[str, str | None] = ("verified", None)
    canonical = golden.get("canonical_query")
    # The golden's canonical query: fill in missing golden rows, or check the given ones.
    if db is not None and canonical and cfg.check_canonical and golden.get("kind", "value") == "value":
        try:
            res = db.execute(canonical)
        except QueryError as exc:
            if golden.get("rows") is None and "value" not in golden:
                oc = CaseOutcome(cid, "unscored", reason=f"{where}: the golden's canonical_query failed: {exc}", raw=canonical)
                return CaseResult(oc, {"id": cid})
            gold_extra = ("suspect", f"the canonical query failed: {exc}")
        else:
            if golden.get("rows") is None and "value" not in golden:
                cols = golden.get("columns")
                golden["columns"] = cols if isinstance(cols, list) and len(cols) == len(res.columns) else res.columns
                golden["rows"] = [list(r) for r in res.rows]
                golden["rows_from"] = "canonical_query"
            else:
                try:
                    gt = _golden_table(golden, where)
                    if gt is not None:
                        # The canonical query's columns are the golden's, in order: pair them by position.
                        names = gt[0] if len(gt[0]) == len(res.columns) else res.columns
                        check = _judge_table("", golden, gt[0], gt[1], names, [list(r) for r in res.rows],
                                             rel_tol=cfg.rel_tol, gold=("verified", None))
                        if check.verdict != "match":
                            gold_extra = ("suspect", f"the canonical query, re-executed, gives other rows ({check.mismatch or check.why})")
                except InputError:
                    pass  # the golden itself is malformed; judge_answer reports it
    top = golden.get("top_n")
    if db is not None and canonical and cfg.check_canonical and isinstance(top, Mapping) and "tie_rows" not in top:
        ties = _tie_rows(db, canonical, golden)
        if ties is not None:
            golden["top_n"] = dict(top) | {"tie_rows": ties}
    elif db is not None and canonical and cfg.check_canonical and not top and golden.get("kind", "value") == "value":
        pool = _hidden_tie_pool(db, canonical, golden)
        if pool is not None:
            golden["tie_pool"] = pool
    pred: dict[str, Any] | None = None
    final_query = attempt.get("final_query")
    if final_query is not None and not isinstance(final_query, str):
        oc = CaseOutcome(cid, "unscored", reason=f"{attempt_where or where}: 'final_query' must be a string, got {shorten(final_query)}. Fix the attempt row.")
        return CaseResult(oc, {"id": cid})
    if db is not None and final_query:
        try:
            res = db.execute(final_query)
        except QueryError as exc:
            oc = CaseOutcome(cid, "unscored", reason=f"{attempt_where or where}: the final query failed: {exc}", raw=final_query)
            return CaseResult(oc, _materials(case, attempt, oc, None, golden))
        pred = {"columns": res.columns, "rows": res.rows, "source": "executed"}
        if attempt.get("text") is not None:
            pred["text"] = attempt.get("text")
    elif attempt.get("rows") is not None:
        pred = {"columns": attempt.get("columns"), "rows": attempt.get("rows"), "source": "reported"}
        if attempt.get("text") is not None:
            pred["text"] = attempt.get("text")
    elif attempt.get("text") is not None:
        pred = {"text": attempt.get("text"), "source": "text"}
    if pred is None and final_query and case.get("must_not_use"):
        # Without --db the query's rows are unknown, but its mustNotUse veto is decided on the query text alone.
        fc = check_forbidden(final_query, [str(x) for x in case["must_not_use"]], dialect="sqlite")
        if fc.hits:
            pred = {"source": "none"}  # judge_answer vetoes before it reads the prediction
    if pred is None:
        oc = CaseOutcome(cid, "unscored", reason=f"{attempt_where or where}: the attempt gives nothing to judge (no rows, no text"
                                                 + (", and no --db to run its final_query" if final_query else "") + ").")
        return CaseResult(oc, _materials(case, attempt, oc, None, golden))
    try:
        v = judge_answer(
            str(case.get("question") or ""), golden, pred,
            must_not_use=[str(x) for x in case.get("must_not_use") or []],
            final_query=final_query, rubric=case.get("rubric") or [], rel_tol=cfg.rel_tol,
            schema=db.schema() if db is not None and case.get("must_not_use") else None,
            dialect="duckdb" if db is not None and db.engine == "duckdb" else "sqlite",
            where=where,
        )
    except InputError as exc:
        oc = CaseOutcome(cid, "unscored", reason=str(exc))
        return CaseResult(oc, _materials(case, attempt, oc, pred, golden))
    if gold_extra[0] != "verified":
        v.gold_status, v.gold_note = worse_status((v.gold_status, v.gold_note), gold_extra)  # type: ignore[assignment]
    v.details["prediction_source"] = pred.get("source")
    if pred.get("source") == "reported" and final_query:
        v.details["note"] = "final_query not re-executed (no --db): the reported rows were judged"
    oc = CaseOutcome(cid, "scored", v)
    return CaseResult(oc, _materials(case, attempt, oc, pred, golden))


# --- public: a batch ------------------------------------------------------------------------------------------

def _read_keyed(path: str | Path, label: str, failures: list[dict[str, Any]]) -> tuple[dict[str, tuple[int, dict[str, Any]]], list[str]]:
    from goldeval.io import Row, RowError, check_ids, read_jsonl

    p = Path(path)
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    order: list[str] = []
    for item in check_ids(read_jsonl(p), file_name=p.name):
        if isinstance(item, RowError):
            failures.append({"line": item.line, "id": item.id, "error": item.error, "file": label})
            continue
        assert isinstance(item, Row)
        rid = str(item.data["id"])
        out[rid] = (item.line, item.data)
        order.append(rid)
    return out, order


def iter_judged(
    cases_path: str | Path,
    attempts_path: str | Path,
    *,
    config: AnswerConfig | None = None,
    recorder: Any = None,
    failures: list[dict[str, Any]] | None = None,
) -> Iterator[CaseResult]:
    """Judge every case of a case file against the attempt with the same id, one :class:`CaseResult` at a time.

    Args:
        cases_path: JSONL of cases (see :func:`judge_answer` for the golden's shape).
        attempts_path: JSONL of attempts ``{"id", "final_query"?, "columns"?, "rows"?, "text"?}``.
        config: :class:`AnswerConfig` (``db`` to re-execute queries read-only).
        recorder: Optional run-store recorder: cases in ``recorder.previous()`` are reused, not redone; each
            finished case is passed to ``recorder.record``. ``finish`` is left to :func:`judge_file`.
        failures: A list to which unusable rows of either file are appended (``{"line", "id", "error", "file"}``).

    Raises:
        InputError: a file is missing, empty or not UTF-8; the database cannot be opened.
    """
    cfg = config or AnswerConfig()
    fails = failures if failures is not None else []
    cases, order = _read_keyed(cases_path, Path(cases_path).name, fails)
    attempts, _ = _read_keyed(attempts_path, Path(attempts_path).name, fails)
    for aid, (line, _) in attempts.items():
        if aid not in cases:
            fails.append({"line": line, "id": aid, "error": f"{Path(attempts_path).name}:{line}: attempt {aid!r} has no case in {Path(cases_path).name}.",
                          "file": Path(attempts_path).name})
    attempt_errors = {f["id"]: f["error"] for f in fails if f.get("id") and f.get("file") == Path(attempts_path).name}
    previous = dict(recorder.previous()) if recorder is not None else {}
    db = ReadOnlyDatabase(cfg.db, timeout_s=cfg.timeout_s, max_rows=cfg.max_rows, engine=cfg.engine) if cfg.db else None
    try:
        for cid in order:
            line, case = cases[cid]
            if cid in previous and previous[cid].get("status") in ("scored", "unscored"):
                yield CaseResult(outcome_from_dict(previous[cid]), {"id": cid, "reused": True})
                continue
            att = attempts.get(cid)
            where = f"{Path(cases_path).name}:{line} (id {cid!r})"
            if att is None and cid in attempt_errors:
                result = CaseResult(CaseOutcome(cid, "unscored", reason=attempt_errors[cid]), {"id": cid})
            else:
                a_where = f"{Path(attempts_path).name}:{att[0]} (id {cid!r})" if att else ""
                result = judge_case(case, att[1] if att else None, db=db, config=cfg, where=where, attempt_where=a_where)
            if recorder is not None:
                recorder.record(result.outcome.to_dict())
            yield result
    finally:
        if db is not None:
            db.close()


def summarize(outcomes: Iterable[CaseOutcome], failures: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The ``aggregate`` block: ``pass_rate`` and the PassRate counts, ``n``, ``n_scored``, ``n_failed``, ``undefined``."""
    outs = list(outcomes)
    pr = pass_rate(outs)
    n_scored = sum(1 for o in outs if o.status == "scored")
    agg: dict[str, Any] = {"pass_rate": pr.rate}
    agg.update({k: v for k, v in pr.to_dict().items() if k not in ("rate", "undefined")})
    agg.update({"n": len(outs), "n_scored": n_scored, "n_failed": len(outs) - n_scored, "n_row_failures": len(failures)})
    agg["undefined"] = {"pass_rate": "nothing was decided: no case came out match or no_match"} if pr.undefined else {}
    return agg


def judge_file(
    cases_path: str | Path,
    attempts_path: str | Path,
    *,
    config: AnswerConfig | None = None,
    recorder: Any = None,
    keep_materials: bool = False,
) -> dict[str, Any]:
    """Judge a case file against an attempt file; the results object every scorer writes.

    Args:
        cases_path: JSONL of cases.
        attempts_path: JSONL of attempts.
        config: :class:`AnswerConfig`.
        recorder: Optional run-store recorder (``previous`` / ``record`` / ``finish``).
        keep_materials: Add ``"llm_materials"``: for every ``needs_human`` case, what an LLM judge needs (see
            :func:`llm_materials`).

    Returns:
        ``{"scorer": {"name", "version"}, "config", "inputs", "aggregate": {"pass_rate", "match", "no_match",
        "decided", "near_match", "needs_human", "unscored", "verified_wrong", "n", "n_scored", "n_failed",
        "undefined"}, "per_example": [CaseOutcome.to_dict()...], "failures": [{"line", "id", "error"}],
        "elapsed_sec"}``. ``pass_rate = match / (match + no_match)``, unrounded.

    Raises:
        InputError: unreadable files or database.
    """
    from goldeval.io import file_sha256

    cfg = config or AnswerConfig()
    start = time.perf_counter()
    failures: list[dict[str, Any]] = []
    results = list(iter_judged(cases_path, attempts_path, config=cfg, recorder=recorder, failures=failures))
    outcomes = [r.outcome for r in results]
    out: dict[str, Any] = {
        "scorer": {"name": JUDGE_NAME, "version": JUDGE_VERSION},
        "config": cfg.to_dict(),
        "inputs": {
            "cases": str(cases_path), "cases_sha256": file_sha256(cases_path),
            "attempts": str(attempts_path), "attempts_sha256": file_sha256(attempts_path),
            "db": cfg.db, "db_sha256": file_sha256(cfg.db) if cfg.db else None,
        },
        "aggregate": summarize(outcomes, failures),
        "per_example": [o.to_dict() for o in outcomes],
        "failures": failures,
        "elapsed_sec": time.perf_counter() - start,
    }
    if keep_materials:
        out["llm_materials"] = [r.materials for r in results if r.outcome.verdict is not None and r.outcome.verdict.needs_human]
    if recorder is not None:
        recorder.finish(out)
    return out


#: The batch judge under the name the package exports (``goldeval.judge_answer_file``).
def judge_answer_file(cases_path: str | Path, attempts_path: str | Path, **kwargs: Any) -> dict[str, Any]:
    """Same as :func:`judge_file` (the name ``goldeval`` exports)."""
    return judge_file(cases_path, attempts_path, **kwargs)


def llm_materials(
    cases_path: str | Path,
    attempts_path: str | Path,
    *,
    config: AnswerConfig | None = None,
    only_undecided: bool = True,
) -> list[dict[str, Any]]:
    """Per case, the rule outcome plus what an LLM judge needs to decide it.

    Returns:
        ``[{"id", "rule": CaseOutcome.to_dict(), "question", "golden", "prediction": {"columns", "rows" (first 200),
        "row_count", "rows_truncated", "source": "executed" | "reported" | "text"}, "text", "final_query", "rubric",
        "must_not_use_prose", "breakdown"}]`` — for ``needs_human`` cases only unless *only_undecided* is False.
        The rule's verdict stays in ``rule`` so that rule/LLM agreement can be measured.
    """
    out = []
    for r in iter_judged(cases_path, attempts_path, config=config):
        v = r.outcome.verdict
        if only_undecided and (v is None or not v.needs_human):
            continue
        out.append(r.materials)
    return out

