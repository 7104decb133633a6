"""One case row judged against its attempt row: re-execution on the database, the golden filled in or checked
from its canonical query, the materials an LLM judge needs, and a recorded outcome rebuilt.

Source: ``DESIGN.md`` "Data answers", goldeval.
"""

from __future__ import annotations

import json
import math
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from goldeval.answers.answer import judge_answer, not_confident_against_doubt
from goldeval.answers.canonical import deferred_tie_pool, limit_tie_rows
from goldeval.answers.config import AnswerConfig, CaseResult
from goldeval.answers.direction import direction_doubt
from goldeval.answers.doubt import filter_doubt
from goldeval.answers.forbidden import check_forbidden, split_entries
from goldeval.answers.fragile import NORMALISED_KEY, data_doubts, data_may_be_fragile, judge_normalised
from goldeval.answers.gold import worse_status
from goldeval.answers.literals import golden_misses
from goldeval.answers.query_memo import execute_remembered
from goldeval.answers.relabel import relabel_verdict
from goldeval.answers.shapes import check_case_lists, check_golden_options, golden_table, golden_alternatives
from goldeval.answers.sql import QueryError, ReadOnlyDatabase
from goldeval.answers.table import judge_table
from goldeval.errors import InputError, shorten
from goldeval.verdict import CaseOutcome, Verdict

__all__ = ["judge_case", "outcome_from_dict"]

_MATERIAL_ROWS = 200


def outcome_from_dict(d: Mapping[str, Any]) -> CaseOutcome:
    """Rebuild a :class:`CaseOutcome` from its ``to_dict()`` form (a recorded case, reused on resume)."""
    if d.get("status") != "scored" or d.get("verdict") is None:
        return CaseOutcome(str(d.get("id")), "unscored", None, d.get("reason"), d.get("raw"))
    names = set(Verdict.__dataclass_fields__)
    v = Verdict(**{k: d[k] for k in names if k in d})
    return CaseOutcome(str(d["id"]), "scored", v, d.get("reason"), d.get("raw"), golden_used=d.get("golden_used"),
                       golden_verdicts=d.get("golden_verdicts"))


def _json_ready(rows: list[Any]) -> list[Any]:
    """Rows with every ``Decimal`` cell (DuckDB ``DECIMAL``, PostgreSQL ``numeric``) as the text of its exact digits:
    the materials travel as JSON (the run store, Spark records, the LLM prompt), and JSON writers refuse a Decimal."""

    if not any(isinstance(v, Decimal) for r in rows if isinstance(r, (list, tuple)) for v in r):
        return rows
    return [[str(v) if isinstance(v, Decimal) else v for v in r] if isinstance(r, (list, tuple)) else r for r in rows]


def _materials(case: Mapping[str, Any], attempt: Mapping[str, Any] | None, outcome: CaseOutcome,
               pred: Mapping[str, Any] | None, golden: Mapping[str, Any]) -> dict[str, Any]:

    _, prose = split_entries([str(x) for x in case.get("must_not_use") or []])
    rows = (pred or {}).get("rows")
    gold = {k: v for k, v in golden.items() if k not in ("tie_pool",)}
    if isinstance(gold.get("top_n"), Mapping) and "tie_rows" in gold["top_n"]:
        gold["top_n"] = {k: v for k, v in gold["top_n"].items() if k != "tie_rows"} | {"tie_rows_count": len(gold["top_n"]["tie_rows"])}
    if isinstance(gold.get("rows"), list) and len(gold["rows"]) > _MATERIAL_ROWS:
        gold["row_count"] = len(gold["rows"])
        gold["rows"] = gold["rows"][:_MATERIAL_ROWS]
        gold["rows_truncated"] = True
    if isinstance(gold.get("rows"), list):
        gold["rows"] = _json_ready(gold["rows"])
    norm = gold.get(NORMALISED_KEY)
    if isinstance(norm, Mapping):
        gold[NORMALISED_KEY] = dict(norm) | {"rows": _json_ready(norm["rows"][:_MATERIAL_ROWS]), "row_count": len(norm["rows"])}
    return {
        "id": outcome.id,
        "rule": outcome.to_dict(),
        "question": case.get("question"),
        "golden": gold,
        "prediction": None if pred is None else {
            "columns": pred.get("columns"),
            "rows": _json_ready(rows[:_MATERIAL_ROWS]) if isinstance(rows, list) else rows,
            "row_count": len(rows) if isinstance(rows, list) else None,
            "rows_truncated": isinstance(rows, list) and len(rows) > _MATERIAL_ROWS,
            "source": pred.get("source"),
        },
        "text": (attempt or {}).get("text"),
        "final_query": (attempt or {}).get("final_query"),
        "rubric": list(case.get("rubric") or []),
        "must_not_use_prose": prose,
        "breakdown": (outcome.verdict.details if outcome.verdict else {"reason": outcome.reason}),
        **({"coverage": case["coverage"]} if case.get("coverage") else {}),
    }

def _note_derived(v: Verdict, attempt: Mapping[str, Any]) -> None:
    """A case marked ``coverage: "derivable"`` (the answer had to build the concept from parts): a derived answer
    that matches is a match with no deduction for naming no such measure, and the why says so (LLM doctrine 14,
    issue 16). What the answer built is its final query (or its text when it gives none)."""
    v.details["coverage"] = "derivable"
    if v.verdict != "match":
        return
    built = attempt.get("final_query") or attempt.get("text")
    what = f" (it built: {shorten(built, 160)})" if isinstance(built, str) and built.strip() else ""
    v.why = (f"{v.why.rstrip()} Coverage derivable: the answer derived the measure from parts{what}; naming no such "
             "measure is no deduction.")


#: Goldens prepared from their canonical query, per open database (issue 15): a many-database set asks the same
#: canonical query again and again (Spider dev words its 343 questions with 193 distinct gold queries), and what
#: the read-only database tells about it (its rows, the doubts, the tie rows) is the same each time. Bounded per
#: database by :data:`_PREPARED_ENTRIES` goldens and :data:`_PREPARED_CELLS` cells in all (least recently used
#: out first).
_PREPARED: weakref.WeakKeyDictionary[Any, _Prepared] = weakref.WeakKeyDictionary()
_PREPARED_ENTRIES = 512
_PREPARED_CELLS = 200_000


def _prepared_key(canonical: Any, golden: Mapping[str, Any], cfg: AnswerConfig) -> Any:
    """The cache key of a golden whose rows its canonical query gives, or ``None`` when it is not cached (rows
    given, a scalar value, a canonical query that is not a string, a golden that is not plain JSON).

    The key is ``json.dumps([canonical, golden, rel_tol], sort_keys=True)``; a golden whose values are all text or
    booleans (Spider's ``{"kind", "canonical_query", "ordered"}``) with a finite float tolerance is keyed by the same
    content as a tuple instead, built without the JSON writer (issue 15): two such goldens have equal tuples
    exactly when they have equal JSON (a ``str`` never equals a ``bool``; the tolerance is keyed by its ``repr``,
    the text JSON gives it, so ``-0.0`` stays apart from ``0.0``), and a tuple never equals a JSON text."""
    if not isinstance(canonical, str) or golden.get("rows") is not None or "value" in golden:
        return None
    tol = cfg.rel_tol
    if type(tol) is float and math.isfinite(tol) and all(type(k) is str and type(v) in _PLAIN for k, v in golden.items()):
        return (canonical, repr(tol), *sorted(golden.items()))
    try:
        return json.dumps([canonical, golden, tol], sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None


#: The value types a golden keyed by a tuple holds (see :func:`_prepared_key`).
_PLAIN = (str, bool)


def _fresh(golden: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a prepared golden that shares no list the preparation built (a caller may change its copy): its
    rows (lists or tuples, as the cache keeps them: see :func:`_kept`) as new lists."""
    out = dict(golden)
    if isinstance(out.get("rows"), (list, tuple)):
        out["rows"] = [list(r) if isinstance(r, (list, tuple)) else r for r in out["rows"]]
    if isinstance(out.get("columns"), list):
        out["columns"] = list(out["columns"])
    top = out.get("top_n")
    if isinstance(top, Mapping) and isinstance(top.get("tie_rows"), list):
        out["top_n"] = dict(top) | {"tie_rows": [list(r) for r in top["tie_rows"]]}
    pool = out.get("tie_pool")  # (a DeferredTiePool is shared: it keeps no rows, and gives a caller its own)
    if isinstance(pool, Mapping):
        out["tie_pool"] = {k: ([list(r) for r in v] if k in ("above", "ties") else list(v) if isinstance(v, list) else v)
                           for k, v in pool.items()}
    norm = out.get(NORMALISED_KEY)
    if isinstance(norm, Mapping):
        out[NORMALISED_KEY] = dict(norm) | {"rows": [list(r) for r in norm["rows"]], "columns": list(norm["columns"]),
                                            "folded": list(norm.get("folded") or [])}
    return out


def _kept(golden: Mapping[str, Any], query_rows: list[tuple[Any, ...]] | None) -> dict[str, Any]:
    """The cache's own copy of a prepared golden: :func:`_fresh`, except that rows filled in from the canonical
    query are kept as the query's row tuples (*query_rows*, which nothing else holds: the golden's lists were
    copied from them) in a tuple: no row is copied to store them, and none can change (issue 15)."""
    if query_rows is None:
        return _fresh(golden)
    return _fresh({k: v for k, v in golden.items() if k != "rows"}) | {"rows": tuple(query_rows)}


def _cells(golden: Mapping[str, Any]) -> int:
    """Cells a prepared golden holds (its rows, tie rows, tie pool and normalised result)."""
    rows = golden.get("rows") or []
    if isinstance(rows, tuple):  # the query's rows (_kept): every one as wide as the golden's columns
        n = len(rows) * len(rows[0]) if rows else 0
    else:
        n = sum(len(r) for r in rows if isinstance(r, (list, tuple)))
    top, pool = golden.get("top_n"), golden.get("tie_pool")
    if isinstance(top, Mapping):
        n += sum(len(r) for r in top.get("tie_rows") or [])
    if isinstance(pool, Mapping):
        n += sum(len(r) for k in ("above", "ties") for r in pool.get(k) or [])
    norm = golden.get(NORMALISED_KEY)
    if isinstance(norm, Mapping):
        n += sum(len(r) for r in norm["rows"])
    return n


class _Prepared(OrderedDict):
    """One open database's prepared goldens, least recently used first: key -> ``(kept golden, gold status, cells,
    shared rows or None)`` or a failure's message; :attr:`cells` is the sum of their cells (kept as they come and
    go, not summed again at each one, issue 15)."""

    cells = 0


def _prepared_golden(db: Any, canonical: Any, golden: dict[str, Any], cfg: AnswerConfig, *, share_rows: bool = False
                     ) -> tuple[dict[str, Any], tuple[tuple[str, str | None], tuple[str, str | None]]] | str:
    """:func:`_golden_from_database`, remembered per open database for the goldens that only name their canonical
    query: the same query, options and tolerance give the same golden, doubts and tie rows. A canonical query that
    failed is remembered as its message (a query that ran into the time limit is not run again).

    A golden taken from the memory gets row lists of its own (a caller may change them), unless *share_rows*: then
    every such golden of that query gets the same row lists, made once. Only for a caller that hands the golden to
    nothing but the judge (``judge_case`` without materials), which reads rows and never changes them (tested)."""
    key = _prepared_key(canonical, golden, cfg) if db is not None and canonical and cfg.check_canonical else None
    cache = None
    if key is not None:
        try:
            cache = _PREPARED.setdefault(db, _Prepared())
        except TypeError:  # a database object that takes no weak reference is not cached
            cache = None
    if cache is not None and key in cache:
        cache.move_to_end(key)
        hit = cache[key]
        if isinstance(hit, str):
            return hit
        kept, extra, n, shared = hit
        if share_rows and isinstance(kept.get("rows"), tuple):
            if shared is None:
                shared = [list(r) for r in kept["rows"]]
                cache[key] = (kept, extra, n, shared)
            fresh = _fresh(kept | {"rows": ()})  # the rest copied as below; the rows, in their place, shared
            fresh["rows"] = shared
            golden.update(fresh)
        else:
            golden.update(_fresh(kept))  # this case's keys keep their places; the filled-in ones follow, as when run
        return golden, extra
    filled: dict[str, Any] = {}
    out = _golden_from_database(db, canonical, golden, cfg, filled=filled)
    if cache is not None and key is not None:
        if isinstance(out, str):
            cache[key] = out
        elif (n := _cells(kept := _kept(out[0], filled.get("rows")))) <= _PREPARED_CELLS // 4:
            # Judged without materials, the golden's row lists (made from the query's tuples, read and never
            # changed by the judge) are the ones every later such golden of this query shares: made once, not again.
            cache[key] = (kept, out[1], n, out[0]["rows"] if share_rows and "rows" in filled else None)
            cache.cells += n
        while len(cache) > _PREPARED_ENTRIES or cache.cells > _PREPARED_CELLS:
            _, old = cache.popitem(last=False)
            cache.cells -= 0 if isinstance(old, str) else old[2]
    return out


def _golden_from_database(db: Any, canonical: Any, golden: dict[str, Any], cfg: AnswerConfig, *,
                          filled: dict[str, Any] | None = None
                          ) -> tuple[dict[str, Any], tuple[tuple[str, str | None], tuple[str, str | None]]] | str:
    """What the database tells about a golden with a canonical query, whatever the prediction: *golden* (changed in
    place and returned) with its rows filled in by the query (or checked against it), its tie rows
    (``top_n.tie_rows``) or hidden tie pool (``tie_pool``), and two ``(status, note)`` pairs: the canonical query's
    (it fails or gives other rows) and the filter doubt's (a filter that filters nothing); the data doubts are
    :func:`_data_doubts`', asked only when a prediction disagrees. The query's error message (a ``str``) when the
    golden has no rows of its own and its canonical query fails. *filled*, when given, receives the query's own
    rows (``"rows"``, the tuples the golden's row lists were copied from) when they fill in the golden's."""
    gold_extra: tuple[str, str | None] = ("verified", None)
    where = "golden"  # messages of golden_table: a malformed golden is reported by judge_answer, not here
    # The golden's canonical query: fill in missing golden rows, or check the given ones.
    if db is not None and canonical and cfg.check_canonical and golden.get("kind", "value") == "value":
        try:
            res = execute_remembered(db, canonical)
        except QueryError as exc:
            if golden.get("rows") is None and "value" not in golden:
                return str(exc)
            gold_extra = ("suspect", f"the canonical query failed: {exc}")
        else:
            if golden.get("rows") is None and "value" not in golden:
                cols = golden.get("columns")
                golden["columns"] = cols if isinstance(cols, list) and len(cols) == len(res.columns) else res.columns
                golden["rows"] = [list(r) for r in res.rows]
                golden["rows_from"] = "canonical_query"
                if filled is not None:
                    filled["rows"] = res.rows
            else:
                try:
                    gt = golden_table(golden, where)
                    if gt is not None:
                        # The canonical query's columns are the golden's, in order: pair them by position.
                        names = gt[0] if len(gt[0]) == len(res.columns) else res.columns
                        check = judge_table("", golden, gt[0], gt[1], names, [list(r) for r in res.rows],
                                             rel_tol=cfg.rel_tol, gold=("verified", None))
                        if check.verdict != "match":
                            gold_extra = ("suspect", f"the canonical query, re-executed, gives other rows ({check.mismatch or check.why})")
                except InputError:
                    pass  # the golden itself is malformed; judge_answer reports it
    filtered: tuple[str, str | None] = ("verified", None)
    if _data_doubted(db, canonical, golden, cfg):
        # A golden the judge should doubt: a filter that filters nothing. (The data doubts, a literal that misses
        # the data and a data-fragile result, run only when the prediction disagrees: _data_doubts.)
        n_rows = len(golden["rows"]) if isinstance(golden["rows"], list) else 0
        filtered = filter_doubt(db, canonical, dialect=_dialect(db), golden_rows=n_rows)
    top = golden.get("top_n")
    if db is not None and canonical and cfg.check_canonical and isinstance(top, Mapping) and "tie_rows" not in top:
        ties = limit_tie_rows(db, canonical, golden)
        if ties is not None:
            golden["top_n"] = dict(top) | {"tie_rows": ties}
    elif db is not None and canonical and cfg.check_canonical and not top and golden.get("kind", "value") == "value":
        # The hidden tie pool, worked out only if the table rule asks for it (a prediction that does not match
        # row for row): a match never runs its query (issue 31 item 5).
        pool = deferred_tie_pool(db, canonical, golden)
        if pool is not None:
            golden["tie_pool"] = pool
    return golden, (gold_extra, filtered)


def _found_nothing(rows: Any) -> bool:
    """:func:`~goldeval.answers.literals.golden_misses` of a golden's rows (those that are rows), read until the
    answer is known: a cell that is not NULL and a second cell settle it (more than one cell and not all NULL), so
    a match of a long golden does not list every cell (issue 31 item 5). ``golden_misses`` stays the definition
    (tests/unit/test_judge_fast_paths.py compares them)."""
    if not isinstance(rows, list):
        return golden_misses([])
    seen, first, all_null = 0, None, True
    for r in rows:
        if not isinstance(r, (list, tuple)):
            continue
        for c in r:
            seen += 1
            if seen == 1:
                first = c
            if c is not None:
                all_null = False
            if seen >= 2 and not all_null:
                return False
    if seen == 0 or all_null:
        return True  # no rows or no cells, or every cell NULL
    return seen == 1 and isinstance(first, (int, float)) and not isinstance(first, bool) and first == 0


def _dialect(db: Any) -> str:
    """The sqlglot dialect the doubts read a golden's canonical query in on *db*."""
    return getattr(db, "query_dialect", None) or ("duckdb" if db.engine == "duckdb" else "sqlite")


def _data_doubted(db: Any, canonical: Any, golden: Mapping[str, Any], cfg: AnswerConfig) -> bool:
    """Whether the golden's canonical query is one the database-backed doubts read (the filter doubt, the data
    doubts): a database, a canonical query checked, a value golden with rows."""
    return (db is not None and bool(canonical) and cfg.check_canonical and golden.get("kind", "value") == "value"
            and golden.get("rows") is not None)


#: :func:`_match_may_be_fragile` per open database, by canonical query (at most :data:`_PREPARED_ENTRIES`).
_MATCH_GATE: weakref.WeakKeyDictionary[Any, dict[str, bool]] = weakref.WeakKeyDictionary()


def _match_may_be_fragile(db: Any, canonical: str) -> bool:
    """:func:`~goldeval.answers.fragile.data_may_be_fragile` of a golden's canonical query (a text column it
    compares is dirty), remembered per open database: a match of a query asked before costs a look-up, not the
    token read of its columns again."""
    try:
        memo = _MATCH_GATE.setdefault(db, {})
    except TypeError:  # a database object that takes no weak reference: asked each time
        memo = {}
    hit = memo.get(canonical)
    if hit is None:
        hit = data_may_be_fragile(db, canonical, _dialect(db))
        if len(memo) >= _PREPARED_ENTRIES:
            memo.clear()
        memo[canonical] = hit
    return hit


#: The data doubts of a golden (:func:`~goldeval.answers.fragile.data_doubts`), per open database, by the golden as
#: the case gave it (:func:`_prepared_key`): asked when a prediction disagrees, or matches a golden on a dirty
#: column (:func:`~goldeval.answers.fragile.data_may_be_fragile`), then once per golden. Bounded as :data:`_PREPARED` (least recently used out first).
_DOUBTED: weakref.WeakKeyDictionary[Any, _Prepared] = weakref.WeakKeyDictionary()


def _data_doubts(db: Any, canonical: Any, golden: Mapping[str, Any], key: Any, cfg: AnswerConfig
                 ) -> tuple[tuple[str, str | None], dict[str, Any] | None]:
    """:func:`~goldeval.answers.fragile.data_doubts` of a prepared golden (its rows, its columns), remembered per
    open database by *key* (the prepared golden's key; ``None``: asked each time). The normalised result is a copy
    the caller may keep in its golden."""
    cache = None
    if key is not None:
        try:
            cache = _DOUBTED.setdefault(db, _Prepared())
        except TypeError:  # a database object that takes no weak reference is not cached
            cache = None
    if cache is not None and key in cache:
        cache.move_to_end(key)
        found, normalised, _ = cache[key]
    else:
        rows = [r for r in golden["rows"] if isinstance(r, (list, tuple))] if isinstance(golden["rows"], list) else []
        cols = golden.get("columns")
        found, normalised = data_doubts(db, canonical, cols if isinstance(cols, list) else None, rows, dialect=_dialect(db),
                                        rel_tol=cfg.rel_tol)
        n = sum(len(r) for r in normalised["rows"]) if normalised is not None else 0
        if cache is not None and n <= _PREPARED_CELLS // 4:
            cache[key] = (found, normalised, n)
            cache.cells += n
            while len(cache) > _PREPARED_ENTRIES or cache.cells > _PREPARED_CELLS:
                _, old = cache.popitem(last=False)
                cache.cells -= old[2]
    if normalised is not None:
        normalised = dict(normalised) | {"rows": [list(r) for r in normalised["rows"]], "columns": list(normalised["columns"]),
                                         "folded": list(normalised.get("folded") or [])}
    return found, normalised


def judge_case(case: Mapping[str, Any], attempt: Mapping[str, Any] | None, *, db: ReadOnlyDatabase | None = None,
               config: AnswerConfig | None = None, where: str = "", attempt_where: str = "",
               materials: bool = True) -> CaseResult:
    """Judge one case row against its attempt row, re-executing queries on *db* when given.

    Args:
        case: ``{"id", "question", "golden", "rubric"?, "must_not_use"?}``.
        attempt: ``{"id", "final_query"?, "columns"?, "rows"?, "text"?}``, or ``None`` when there is none.
        db: Read-only database; the attempt's ``final_query`` result is the prediction (never the reported rows),
            and the golden's ``canonical_query`` fills in or checks the golden rows.
        config: Options (tolerance; ``check_canonical``).
        where: Prefix for messages (the case row).
        attempt_where: Prefix for messages about the attempt row (its query); defaults to *where*.
        materials: Build :attr:`CaseResult.materials` (what an LLM judge is given); False leaves ``{"id": …}``
            there, for a caller that never sends the case to one (the outcome is the same either way).

    Returns:
        :class:`CaseResult`. Unscored (with the reason, and the query as ``raw``) when the case or attempt is
        malformed, there is no attempt, or a query fails.

    Notes:
        A golden with ``alternatives`` (other right answers, each a full golden: see
        :func:`~goldeval.answers.shapes.golden_alternatives`) is judged against the primary golden and each
        alternative in turn, every one the way a golden is (its canonical query re-executed, its doubts); the best
        verdict decides (match > near_match > needs_human > no_match; a tie goes to the primary, then to the lowest
        index), with that golden's ``gold_status`` and ``gold_note``. The outcome names it in ``golden_used``
        (``"primary"`` or ``"alternatives[i]"``) and keeps each golden's verdict in ``golden_verdicts``; a malformed
        alternative, or one whose canonical query fails, leaves the case unscored with the field path.
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
    if "alternatives" in golden:
        return _judge_alternatives(case, golden, attempt, db=db, config=cfg, where=where, attempt_where=attempt_where,
                                   materials=materials)
    golden = dict(golden)
    golden.pop(NORMALISED_KEY, None)  # the judge's own key (the folded result of the canonical query), never a case's
    try:
        check_case_lists(case, where)
        check_golden_options(golden, golden.get("columns") if isinstance(golden.get("columns"), list) else None, where)
    except InputError as exc:
        return CaseResult(CaseOutcome(cid, "unscored", reason=str(exc)), {"id": cid})
    canonical = golden.get("canonical_query")
    given = dict(golden)  # the golden as the case gave it (the data doubts' memory is keyed by it)
    prepared = _prepared_golden(db, canonical, golden, cfg, share_rows=not materials)
    if isinstance(prepared, str):
        oc = CaseOutcome(cid, "unscored", reason=f"{where}: the golden's canonical_query failed: {prepared}", raw=canonical)
        return CaseResult(oc, {"id": cid})
    golden, (gold_extra, filtered) = prepared
    pred: dict[str, Any] | None = None
    final_query = attempt.get("final_query")
    if final_query is not None and not isinstance(final_query, str):
        oc = CaseOutcome(cid, "unscored", reason=f"{attempt_where or where}: 'final_query' must be a string, got {shorten(final_query)}. Fix the attempt row.")
        return CaseResult(oc, {"id": cid})
    if db is not None and final_query:
        try:
            res = execute_remembered(db, final_query)  # a text run before on this database: its rows
        except QueryError as exc:
            oc = CaseOutcome(cid, "unscored", reason=f"{attempt_where or where}: the final query failed: {exc}", raw=final_query)
            return CaseResult(oc, _materials(case, attempt, oc, None, golden) if materials else {"id": cid})
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
        return CaseResult(oc, _materials(case, attempt, oc, None, golden) if materials else {"id": cid})
    options: dict[str, Any] = dict(must_not_use=[str(x) for x in case.get("must_not_use") or []], final_query=final_query,
                   rubric=case.get("rubric") or [], schema=db.schema() if db is not None and case.get("must_not_use") else None)
    try:
        v = judge_answer(
            str(case.get("question") or ""), golden, pred, rel_tol=cfg.rel_tol,
            dialect=db.query_dialect if db is not None else "sqlite",
            where=where, attempt_where=attempt_where, **options,
        )
    except InputError as exc:
        oc = CaseOutcome(cid, "unscored", reason=str(exc))
        return CaseResult(oc, _materials(case, attempt, oc, pred, golden) if materials else {"id": cid})
    if _data_doubted(db, canonical, golden, cfg) and (v.verdict != "match" or _found_nothing(golden["rows"])
                                                      or _match_may_be_fragile(db, str(canonical))):
        # The data doubts (a literal that misses the data, a data-fragile golden) probe the database, so they are
        # asked when golden and prediction disagree, when both found nothing (an empty golden matched by an empty
        # answer: both may miss the data the same way), and on a match only when a text column the golden compares
        # is dirty (one read a table a database, shared with the doubts: issue 26, a match on clean data costs
        # what it did, and a prediction that reproduces a fragile golden is not a plain pass). goldeval
        # check-goldens asks them of every golden.
        data_found, normalised = _data_doubts(db, canonical, golden, _prepared_key(canonical, given, cfg), cfg)
        gold_extra = worse_status(gold_extra, data_found)
        if normalised is not None:
            golden[NORMALISED_KEY] = normalised
            v = judge_normalised(v, str(case.get("question") or ""), golden, pred, rel_tol=cfg.rel_tol,
                                 dialect=db.query_dialect if db is not None else "sqlite", where=where, **options)
    gold_extra = worse_status(gold_extra, filtered)
    if (v.verdict != "match" and v.decided_by == "rule" and pred.get("rows") is not None and not case.get("rubric")
            and isinstance(golden.get("rows"), list)):
        # Relabelled columns (names for codes): read back through a mapping the database shows, one-to-one on
        # these rows; only when golden and prediction disagree.
        relabelled = relabel_verdict(str(case.get("question") or ""), golden, pred, v, db=db, rel_tol=cfg.rel_tol)
        if relabelled is not None:
            v = relabelled
    if v.verdict != "match" and v.decided_by == "rule" and golden.get("kind", "value") == "value":
        # A golden whose direction runs against its question, where the prediction took the other one: looked
        # for only when golden and prediction disagree (its probe, the reversed canonical query, runs only then).
        found = direction_doubt(str(case.get("question") or ""), golden, pred, final_query=final_query,
                                db=db if cfg.check_canonical else None,
                                dialect=db.query_dialect if db is not None else "sqlite", rel_tol=cfg.rel_tol)
        if found is not None:
            gold_extra = worse_status(gold_extra, (found.status, found.note))
            v.details["direction"] = found.details
    if gold_extra[0] != "verified":
        v.gold_status, v.gold_note = worse_status((v.gold_status, v.gold_note), gold_extra)  # type: ignore[assignment]
        not_confident_against_doubt(v)
    v.details["prediction_source"] = pred.get("source")
    if case.get("coverage") == "derivable":
        _note_derived(v, attempt)
    if pred.get("source") == "reported" and final_query:
        v.details["note"] = "final_query not re-executed (no --db): the reported rows were judged"
    oc = CaseOutcome(cid, "scored", v)
    return CaseResult(oc, _materials(case, attempt, oc, pred, golden) if materials else {"id": cid})


#: A verdict's place when the goldens of one case compete (the lowest wins): an alternative golden that the answer
#: matches is the answer's golden; needs_human (the rules could not decide, or doubt the golden) ranks above a
#: confident no_match, which an alternative that leaves the case open must not be reported as.
_BEST = {"match": 0, "near_match": 1, "needs_human": 2, "no_match": 3}


def _judge_alternatives(case: Mapping[str, Any], golden: Mapping[str, Any], attempt: Mapping[str, Any], *,
                        db: ReadOnlyDatabase | None, config: AnswerConfig, where: str, attempt_where: str,
                        materials: bool) -> CaseResult:
    """:func:`judge_case` of a case whose golden carries ``alternatives``: the case judged against the primary golden
    (the golden without them) and against each alternative, each through :func:`judge_case` itself (so an
    alternative's canonical query is re-executed and doubted as the primary's is); the best verdict decides (see
    :data:`_BEST`; ties go to the primary, then to the lowest index). The attempt's final query runs once on a
    SQLite database (remembered, :mod:`goldeval.answers.query_memo`), once per golden elsewhere."""
    cid = str(case.get("id"))
    try:
        alternatives = golden_alternatives(golden, where)
    except InputError as exc:
        return CaseResult(CaseOutcome(cid, "unscored", reason=str(exc)), {"id": cid})
    primary = {k: v for k, v in golden.items() if k != "alternatives"}
    first = judge_case({**case, "golden": primary}, attempt, db=db, config=config, where=where,
                       attempt_where=attempt_where, materials=materials)
    if not alternatives or first.outcome.verdict is None:
        return first  # no alternative (an empty list), or unscored: the attempt or the primary golden is unusable
    judged: list[tuple[str, CaseResult, Verdict]] = [("primary", first, first.outcome.verdict)]
    for i, alt in enumerate(alternatives):
        label = f"alternatives[{i}]"
        res = judge_case({**case, "golden": alt}, attempt, db=db, config=config, where=f"{where} golden.{label}",
                         attempt_where=attempt_where or where, materials=materials)
        if res.outcome.verdict is None:
            return res  # this alternative cannot be judged (its canonical query failed): the case file needs a fix
        judged.append((label, res, res.outcome.verdict))
    summary = [{"golden": label, "verdict": v.verdict, "confidence": v.confidence, "needs_human": v.needs_human,
                "gold_status": v.gold_status, "gold_note": v.gold_note, "why": v.why} for label, _, v in judged]
    best = min(range(len(judged)), key=lambda k: (_BEST[judged[k][2].verdict], k))
    label, chosen, v = judged[best]
    n = len(alternatives)
    if best:
        v.why = f"Against golden.{label} (the primary golden: {judged[0][2].verdict}): {v.why}"
    elif v.verdict != "match":
        tried = ", ".join(f"{s['golden']} {s['verdict']}" for s in summary[1:])
        v.why = f"{v.why} Judged against the primary golden: {n} alternative golden{'s' if n > 1 else ''} tried, none better ({tried})."
    out = CaseOutcome(cid, "scored", v, chosen.outcome.reason, chosen.outcome.raw, golden_used=label,
                      golden_verdicts=summary)
    mats = chosen.materials
    if "rule" in mats:
        mats = {**mats, "rule": out.to_dict()}
    return CaseResult(out, mats)
