"""Data-fragile goldens: a canonical query whose result changes when its text comparisons and join keys are
trimmed and case-folded.

A golden computed by ``WHERE continent = 'Asia'`` over data that also stores ``'Asia '`` or ``'asia'``, or by a
join of a code column padded with a leading space to an unpadded one, answers its question only as the data
happen to be typed. Such a golden is re-run with those comparisons normalised (a sqlglot rewrite of the parsed
query: :func:`normalised_query`); when the result differs from the golden rows (compared as the judge compares
rows), the golden is ``suspect`` (:func:`data_doubts`), and the prediction is judged against both results
(:func:`judge_normalised`):

* the prediction equals the normalised result → the golden is ``verified_wrong`` (out of the pass rate) and the
  verdict is the ``match`` against the normalised result, never a confident ``no_match``;
* the prediction reproduces the golden's result → ``needs_human``: not a plain pass (the pass rate leaves it out and
  counts it beside, as DESIGN.md's pass rate does every needs_human);
* it equals neither → a ``no_match`` is not final (``needs_human``), as for every doubted golden.

The judge (``answers.case.judge_case``) asks these doubts when golden and prediction disagree, when both found
nothing (:func:`~goldeval.answers.literals.golden_misses`), and on a match only when the database could make the
golden fragile (:func:`data_may_be_fragile`: one read per table of its compared text columns per open database,
shared with the doubts' own reads, so a match on clean data costs no other probe: issue 26, speed); a prediction that reproduces a fragile golden is then
``needs_human``. :func:`data_doubts` and :func:`fragile_doubt`, called on their own with the golden and the
database, are the golden health check's.

Only comparisons where the normalised form can keep rows the engine's own comparison does not are rewritten, and
the query is re-run only when there is one: a literal that some stored value matches only trimmed and case-folded
(the probe of :func:`~goldeval.answers.doubt.literal_counts`), or two text columns compared (join keys,
correlations, ``IN (SELECT …)``) whose stored values meet only folded (:func:`keys_meet_folded`). Each probe is
asked once per open database; a golden whose data are clean costs those probes and nothing else.

Case-folding is what the engine's default comparison lacks: SQLite's ``BINARY`` collation, DuckDB's and
PostgreSQL's defaults are case-sensitive (a column declared ``COLLATE NOCASE``, or an ``ILIKE`` / SQLite ``LIKE``,
already folds ASCII case: folding it again changes nothing). ``GROUP BY`` keys are left as they are (grouping is
not a comparison of the question's values).

Source: goldeval issue 26, item 2; DESIGN.md "Doubting the golden".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from goldeval.answers.answer import judge_answer
from goldeval.answers.comparisons import query_comparisons
from goldeval.answers.doubt import sql_dialect
from goldeval.answers.gold import worse_status
from goldeval.answers.literals import (
    canonical_comparisons,
    column_dirty,
    columns_dirty,
    compared_columns,
    fold,
    foldable,
    golden_misses,
    is_text_column,
    literal_counts,
    literal_doubt,
    literal_test,
    may_doubt_data,
    probe_literal,
    probe_rows,
    read_columns_dirty,
    sqlite_engine,
    sqlite_name,
    stored_column,
    text_only,
)
from goldeval.answers.sql import DatabaseLostError, QueryError
from goldeval.errors import InputError
from goldeval.verdict import Verdict

__all__ = ["keys_meet_folded", "normalised_query", "fragile_doubt", "data_doubts", "data_may_be_fragile",
           "judge_normalised", "NORMALISED_KEY"]

#: The key of the golden (as the judge prepares it) that holds the normalised result:
#: ``{"query", "columns", "rows", "folded"}``.
NORMALISED_KEY = "normalised_result"

def keys_meet_folded(db: Any, a: Any, b: Any, dialect: str) -> bool | None:
    """Whether two text columns hold values that are equal trimmed and case-folded but not by the database's own
    comparison (``' AF'`` and ``'AF'``; ``'Asia'`` and ``'asia'``): a join or comparison of the two that the
    normalisation would change.

    Args:
        db: An open read-only database.
        a: A :class:`~goldeval.answers.comparisons.Stored` text column.
        b: Another (or the same: a self-join).
        dialect: The dialect the probe is printed in.

    Returns:
        The answer of one probe over their distinct text values, remembered per database; ``None`` when it fails.
    """
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed


    def side(stored: Any, alias: str) -> Any:
        col, table = stored_column(stored)
        inner = (exp.select(exp.alias_(fold(col, dialect), "k"), exp.alias_(col.copy(), "v")).distinct()
                 .from_(table).where(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null()))))
        return exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias)))

    def write() -> str:
        if dialect == "sqlite" and sqlite_engine(db):
            sides = []
            for st in (a, b):
                col, table = sqlite_name(st.column), sqlite_name(st.table)
                sides.append(f"(SELECT DISTINCT LOWER(TRIM({col})) AS k, {col} AS v FROM {table} WHERE typeof({col}) = 'text')")
            return f"SELECT 1 FROM {sides[0]} AS x JOIN {sides[1]} AS y ON x.k = y.k WHERE NOT (x.v = y.v) LIMIT 1"
        x, y = side(a, "x"), side(b, "y")
        q = (exp.select(exp.Literal.number(1)).from_(x).join(y, on=exp.column("k", "x").eq(exp.column("k", "y")))
             .where(exp.Not(this=exp.Paren(this=exp.column("v", "x").eq(exp.column("v", "y"))))).limit(1))
        return q.sql(dialect=sql_dialect(dialect))

    key = ("keys", dialect, *sorted([(a.table.lower(), a.column.lower(), a.table_quoted, a.column_quoted),
                                     (b.table.lower(), b.column.lower(), b.table_quoted, b.column_quoted)]))
    try:
        return bool(probe_rows(db, write, key=key))
    except QueryError:
        return None


def data_may_be_fragile(db: Any, canonical: str, dialect: str) -> bool:
    """Whether the database could make a golden of *canonical* data-fragile: some text column the query compares,
    filters or joins on (the columns :func:`normalised_query` would fold) is dirty
    (:func:`~goldeval.answers.literals.column_dirty`: a value with spaces around it, or two values equal trimmed
    and case-folded).

    The judge asks it on a match (``answers.case.judge_case``): on SQLite a clean column costs one read of its
    distinct text values per open database (:func:`~goldeval.answers.literals.read_columns_dirty`, one statement a
    table, the same read :func:`~goldeval.answers.literals.may_doubt_data` makes, so a later doubt of a golden on
    that column reads nothing again; a column past the read's bounds by its aggregate, one query a table:
    :func:`~goldeval.answers.literals.columns_dirty`), and the match costs nothing more; a dirty one sends the
    golden to :func:`data_doubts`, so a prediction that reproduces a fragile golden is not a plain pass.

    Args:
        db: An open read-only database.
        canonical: The golden's canonical query.
        dialect: Its sqlglot dialect.

    Returns:
        True when a compared text column is dirty or cannot be read; False when every one is clean, or the query
        compares none (or does not parse).

    Example:
        >>> data_may_be_fragile(db, "SELECT name FROM country WHERE continent = 'Asia'", "sqlite")  # doctest: +SKIP
        True

    Source: goldeval issue 26, item 2 and "Speed".

    Not covered by this gate (left to :func:`data_doubts` when golden and prediction disagree): a literal whose
    case misses every stored value of a clean column (item 1's literal doubt), and two clean columns whose values
    meet only case-folded (``'Asia'`` in one, ``'asia'`` in the other).
    """
    named = compared_columns(db, canonical, dialect)
    if named is not None:  # SQLite: read off the query's tokens, no parse (a match pays for no parse)
        tables: dict[str, list[str]] = {}
        for table, col in named:
            tables.setdefault(table, []).append(col)
        for table, cols in tables.items():
            # The columns' text values, read in one statement a table and shared with the data doubts
            # (may_doubt_data reads the same); a column past the read's bounds by its aggregate (columns_dirty).
            read = read_columns_dirty(db, table, cols)
            if any(read.values()):
                return True
            unread = [c for c, v in read.items() if v is None]
            if unread and any(v is not False for v in columns_dirty(db, table, unread, dialect).values()):
                return True
        return False
    _, comparisons = canonical_comparisons(db, canonical, dialect)
    asked: set[Any] = set()
    for cmp in comparisons:
        if cmp.literals:
            columns = [cmp.stored] if foldable(db, cmp) else []
        elif cmp.other is not None and cmp.stored is not None and cmp.other_stored is not None \
                and is_text_column(db, cmp.stored) and is_text_column(db, cmp.other_stored):
            columns = [cmp.stored, cmp.other_stored]
        else:
            columns = []
        for st in columns:
            key = (st.table.lower(), st.column.lower())
            if key in asked:
                continue
            asked.add(key)
            if column_dirty(db, st, dialect) is not False:
                return True
    return False


def _to_fold(db: Any, comparisons: Sequence[Any], dialect: str) -> list[int]:
    """The indexes of the comparisons whose normalised form may keep rows their own does not (see the module)."""
    out = []
    for i, cmp in enumerate(comparisons):
        if cmp.literals:
            if not foldable(db, cmp):
                continue
            for j in range(1 if cmp.op == "between" else len(cmp.literals)):
                counts = literal_counts(db, cmp, j, dialect)
                if counts is not None and counts[1] > 0:
                    out.append(i)
                    break
        elif cmp.other is not None and cmp.stored is not None and cmp.other_stored is not None:
            if is_text_column(db, cmp.stored) and is_text_column(db, cmp.other_stored) \
                    and keys_meet_folded(db, cmp.stored, cmp.other_stored, dialect):
                out.append(i)
    return out


def _folded_form(cmp: Any, dialect: str, guard: bool) -> Any:
    """The node that replaces *cmp*'s: its own test OR the same test trimmed and case-folded (the OR keeps every
    row the engine's comparison keeps, type affinity included), negated where the comparison is (``!=``,
    ``NOT LIKE``); a ``NOT`` above it stays above it. Two text columns compare folded only (folded equality holds
    wherever their own does)."""
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    node = cmp.node
    negate = isinstance(node, exp.NEQ) or bool(node.args.get("negate"))
    if cmp.literals:
        col = cmp.column
        if isinstance(node, exp.In):
            lits = [probe_literal(e, v) for e, v in zip(cmp.literals, cmp.values)]
            own = exp.In(this=col.copy(), expressions=lits)
            folded = text_only(col, exp.In(this=fold(col.copy(), dialect), expressions=[fold(e.copy(), dialect) for e in lits]),
                               dialect, guard=guard)
        else:
            own = literal_test(cmp, col.copy(), 0, dialect, folded=False)
            folded = literal_test(cmp, col.copy(), 0, dialect, folded=True, guard=guard)
        new: Any = exp.Paren(this=exp.Or(this=own, expression=folded))
    elif isinstance(node, exp.In):
        query = node.args["query"]
        sub = (query.this if isinstance(query, exp.Subquery) else query).copy()
        proj = sub.expressions[0]
        target = proj.this if isinstance(proj, exp.Alias) else proj
        target.replace(fold(target.copy(), dialect))
        new = exp.In(this=fold(cmp.column.copy(), dialect), query=exp.Subquery(this=sub))
    else:
        new = exp.EQ(this=fold(cmp.column.copy(), dialect), expression=fold(cmp.other.copy(), dialect))
    return exp.Not(this=exp.Paren(this=new)) if negate else new


def normalised_query(db: Any, canonical: str, dialect: str) -> tuple[str, list[str]] | None:
    """The canonical query with its text comparisons and join keys trimmed and case-folded, where that may change
    what they keep (see the module), as SQL in *dialect*, with the comparisons it folded (as the query wrote them);
    ``None`` when there is none to fold (or the query does not parse).

    Args:
        db: The open read-only database the probes ask.
        canonical: The golden's canonical query.
        dialect: Its sqlglot dialect.

    Returns:
        ``(sql, folded)``: the rewritten query and the comparisons it folded, or ``None``.
    """

    tree, comparisons = canonical_comparisons(db, canonical, dialect)
    if tree is None or not comparisons:
        return None
    chosen = _to_fold(db, comparisons, dialect)
    if not chosen:
        return None
    try:
        copy = tree.copy()
        mine = query_comparisons(copy, dialect=dialect, schema=db.schema)
        if len(mine) != len(comparisons):
            return None
        shown = [comparisons[i].shown(dialect) for i in chosen]
        # Replaced innermost first: a comparison inside another's subquery is folded before its parent is copied.
        for i in sorted(chosen, key=lambda i: -mine[i].node.depth):
            mine[i].node.replace(_folded_form(mine[i], dialect, sqlite_engine(db)))
        return copy.sql(dialect=sql_dialect(dialect)), shown
    except DatabaseLostError:  # the database is gone: the run stops, no doubt made without it
        raise
    except Exception:  # noqa: BLE001 - a tree sqlglot cannot rewrite or print: no re-run, no doubt (never a crash)
        return None


def _count(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def fragile_doubt(db: Any, canonical: str, golden_columns: Sequence[str] | None, golden_rows: Sequence[Sequence[Any]], *,
                  dialect: str = "sqlite", rel_tol: float | None = None) -> tuple[tuple[str, str | None], dict[str, Any] | None]:
    """``((status, note), normalised)`` for a golden whose canonical query compares or joins on text.

    Args:
        db: An open read-only database (``execute``, ``schema``).
        canonical: The golden's canonical query.
        golden_columns: The golden's column names, ``(k,)``; ``None``: the re-run's, by position.
        golden_rows: The golden rows, ``(n, k)``.
        dialect: sqlglot dialect of *canonical*.
        rel_tol: The judge's relative tolerance (``None``: its default).

    Returns:
        ``(("suspect", note), normalised)`` when the query re-run with its text comparisons normalised
        (:func:`normalised_query`) gives rows that the judge does not call a ``match`` of the golden rows; the note
        names the folded comparisons and both row counts. ``normalised`` is ``{"query", "columns", "rows",
        "folded"}``, kept for :func:`judge_normalised`. Otherwise ``(("verified", None), None)``: nothing to fold,
        the re-run fails, or it gives the golden's rows.
    """
    found, normalised, _ = _fragile(db, canonical, golden_columns, golden_rows, dialect=dialect, rel_tol=rel_tol)
    return found, normalised


def _fragile(db: Any, canonical: str, golden_columns: Sequence[str] | None, golden_rows: Sequence[Sequence[Any]], *,
             dialect: str, rel_tol: float | None) -> tuple[tuple[str, str | None], dict[str, Any] | None, bool]:
    """:func:`fragile_doubt`, and whether the normalised query ran and gave the golden's rows."""

    built = normalised_query(db, canonical, dialect)
    if built is None:
        return ("verified", None), None, False
    sql, folded = built
    try:
        res = db.execute(sql)
    except QueryError:
        return ("verified", None), None, False
    rows = [list(r) for r in res.rows]
    kw: dict[str, Any] = {} if rel_tol is None else {"rel_tol": rel_tol}
    try:
        names = list(res.columns) if golden_columns is None else list(golden_columns)
        same = judge_answer("", {"kind": "value", "columns": names, "rows": [list(r) for r in golden_rows]},
                            {"columns": list(res.columns), "rows": rows}, **kw).verdict == "match"
    except InputError:  # golden rows the judge cannot read: judge_answer reports them with the case
        return ("verified", None), None, False
    if same:
        return ("verified", None), None, True
    what = ", ".join(folded[:3]) + (f" and {len(folded) - 3} more" if len(folded) > 3 else "")
    note = (f"the canonical query gives {_count(len(golden_rows))} as the data are typed, {_count(len(rows))} with its text "
            f"comparisons trimmed and case-folded ({what}): a data-fragile golden")
    return ("suspect", note), {"query": sql, "columns": list(res.columns), "rows": rows, "folded": folded}, False


def data_doubts(db: Any, canonical: str, golden_columns: Sequence[str] | None, golden_rows: Sequence[Sequence[Any]], *,
                dialect: str = "sqlite", rel_tol: float | None = None) -> tuple[tuple[str, str | None], dict[str, Any] | None]:
    """The doubts a query against the data tests, together: a literal that misses the data
    (:func:`~goldeval.answers.doubt.literal_doubt`) and a data-fragile result (:func:`fragile_doubt`).

    Nothing is parsed or probed when the query's tokens and the database's text values show there is nothing to
    find (:func:`~goldeval.answers.literals.may_doubt_data`): a golden on clean data costs a look-up per literal.

    A literal doubt says ``verified_wrong`` (the golden is empty because its literal misses the data) only when the
    normalised query gives something; when it gives nothing either, the literal is not why the golden is empty
    and the doubt is ``suspect``.

    Args:
        db: An open read-only database.
        canonical: The golden's canonical query.
        golden_columns: The golden's column names, or ``None``.
        golden_rows: The golden rows.
        dialect: sqlglot dialect of *canonical*.
        rel_tol: The judge's relative tolerance (``None``: its default).

    Returns:
        ``((status, note), normalised)`` as :func:`fragile_doubt`, the two statuses merged (the worse, both notes).

    Source: goldeval issue 26, items 1 and 2.
    """
    if not may_doubt_data(db, canonical, dialect):
        return ("verified", None), None
    lit = literal_doubt(db, canonical, golden_rows, dialect=dialect)
    frag, norm, same = _fragile(db, canonical, golden_columns, golden_rows, dialect=dialect, rel_tol=rel_tol)
    if lit[0] == "verified_wrong" and (norm is None or golden_misses(norm["rows"])):
        note = (lit[1] or "").replace(": the golden is empty because the literal misses the data", "")
        lit = ("suspect", note + ("; trimmed and case-folded, the query gives nothing either" if same or norm is not None else ""))
    return worse_status(lit, frag), norm


def judge_normalised(v: Verdict, question: str, golden: Mapping[str, Any], prediction: Mapping[str, Any], *,
                     rel_tol: float | None = None, dialect: str | None = "sqlite", where: str = "case",
                     **judge_options: Any) -> Verdict:
    """A rule verdict against a data-fragile golden (one that carries :data:`NORMALISED_KEY`), settled against both
    results (see the module): returns *v* changed in place, or the verdict against the normalised result.

    Args:
        v: The rule verdict against the golden as given.
        question: The case's question.
        golden: The golden as the judge prepared it (with :data:`NORMALISED_KEY`).
        prediction: ``{"columns", "rows"}`` (a prediction without rows is left as judged).
        rel_tol: The judge's relative tolerance (``None``: its default).
        dialect: sqlglot dialect of the final query.
        where: Prefix for messages.
        judge_options: The rest of :func:`~goldeval.answers.answer.judge_answer`'s options the verdict *v* was
            judged with (``must_not_use``, ``final_query``, ``rubric``, ``schema``): the answer is judged against the
            normalised result as it was against the golden (a rubric clause that hands it to the LLM judge still
            does).

    Returns:
        * the prediction equals the normalised result (and not the golden's): the ``match`` against it, with
          ``gold_status`` ``verified_wrong`` (out of the pass rate), the verdict against the golden as given in
          ``details["rule_verdict"]``;
        * it reproduces the golden's result: ``needs_human`` (not a plain pass), the rule's ``match`` kept in
          ``details["rule_verdict"]``, ``gold_status`` at least ``suspect``;
        * neither: a ``no_match`` becomes ``needs_human``; other verdicts stay.
    """
    norm = golden.get(NORMALISED_KEY)
    if not isinstance(norm, Mapping) or not isinstance(norm.get("rows"), list) or not isinstance(norm.get("columns"), list) \
            or v.decided_by != "rule" or prediction.get("rows") is None:
        return v
    alt = {k: val for k, val in golden.items()
           if k not in ("rows", "columns", "value", "tie_pool", NORMALISED_KEY, "gold_status", "gold_note", "rows_from")}
    top = alt.get("top_n")
    if isinstance(top, Mapping):
        alt["top_n"] = {k: val for k, val in top.items() if k != "tie_rows"}
        if alt["top_n"].get("by") not in norm["columns"]:
            alt.pop("top_n")
    alt["columns"], alt["rows"] = list(norm["columns"]), norm["rows"]
    kw: dict[str, Any] = {} if rel_tol is None else {"rel_tol": rel_tol}
    try:
        vn = judge_answer(question, alt, prediction, dialect=dialect, where=where, **judge_options, **kw)
    except InputError:
        vn = None
    n = len(norm["rows"])
    reading = f"the canonical query with its text comparisons trimmed and case-folded ({_count(n)})"
    rule = {"verdict": v.verdict, "confidence": v.confidence, "why": v.why}
    # The answer meets the normalised result by rule (a rubric clause may still hand that match to the LLM judge).
    meets = vn is not None and vn.decided_by == "rule" and (
        vn.verdict == "match" or (vn.details.get("rule_verdict") or {}).get("verdict") == "match")
    if v.verdict == "match":
        if meets:
            return v  # both readings give this answer's rows as the judge compares them
        v.details["rule_verdict"] = rule
        v.details["undecided_because"] = "data-fragile golden"
        v.verdict, v.confidence, v.needs_human = "needs_human", None, True
        v.why = (f"By rule: {v.why} Not final: the answer reproduces a data-fragile golden, while {reading} gives "
                 "other rows.")
        v.gold_status, v.gold_note = worse_status((v.gold_status, v.gold_note), ("suspect", None))  # type: ignore[assignment]
        return v
    if meets:
        assert vn is not None
        vn.details.setdefault("rule_verdict", rule)
        vn.details["verdict_against_golden"] = rule
        vn.details["normalised"] = {"query": norm.get("query"), "rows": n, "folded": list(norm.get("folded") or [])}
        vn.why = f"Against {reading}: {vn.why} The golden as given is data-fragile; this answer is its corrected reading."
        vn.gold_status, vn.gold_note = worse_status(  # type: ignore[assignment]
            (v.gold_status, v.gold_note), ("verified_wrong", f"the answer equals {reading}, which the golden misses"))
        return vn
    if v.verdict == "no_match":
        v.details["rule_verdict"] = rule
        v.details["undecided_because"] = "doubted golden"
        v.verdict, v.confidence, v.needs_human = "needs_human", None, True
        v.why = (f"By rule: {v.why} Not final: the golden is data-fragile; the answer matches neither it nor {reading}.")
    return v
