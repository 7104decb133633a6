"""A literal that misses the data, and the probes the data doubts ask of the database.

:func:`literal_doubt` doubts a golden whose canonical query compares a column with a literal that no row holds by
the database's own comparison while some rows hold it trimmed and case-folded ('asia' for 'Asia', 'dog ' for
'dog'), in any comparison the query makes (:func:`~goldeval.answers.comparisons.query_comparisons`). Whether a
literal holds is always asked of the database (:func:`literal_counts`), never decided in Python: in SQLite
``year = '1970'`` holds an INTEGER 1970 through type affinity.

The probes (a count over one table, the distinct values of two columns) are this package's own read-only queries,
remembered per open database (:func:`probe_rows`); :mod:`goldeval.answers.fragile` asks the same ones.

Source: goldeval issue 11, item 2 (Spider dev-0583/0584 and dev-0810/0811 compare 'haiti' / 'north america'
case-sensitively); issue 26, item 1 (every comparison, decided by the database); DESIGN.md "Doubting the golden".
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from goldeval.answers.comparisons import Stored, query_comparisons
from goldeval.answers.doubt import may_compare, parsed_query, query_tokens, sql_dialect
from goldeval.answers.sql import DatabaseLostError, QueryError

__all__ = ["literal_doubt", "canonical_comparisons", "literal_counts", "literal_test", "golden_misses", "probe_literal",
           "probe_rows", "fold", "stored_column", "is_text_column", "foldable", "text_only", "sqlite_name", "sqlite_engine",
           "may_doubt_data", "column_dirty", "columns_dirty", "read_columns_dirty",
           "compared_columns"]


def golden_misses(rows: Sequence[Sequence[Any]]) -> bool:
    """True for golden rows that found nothing: empty, every cell NULL, or a single 0 (a count over nothing).

    Args:
        rows: The golden rows, ``(n, k)``.

    Returns:
        Whether they found nothing.
    """
    if not rows:
        return True
    cells = [c for r in rows for c in r]
    if all(c is None for c in cells):
        return True
    return len(cells) == 1 and isinstance(cells[0], (int, float)) and not isinstance(cells[0], bool) and cells[0] == 0


#: The data doubts' probes per open database, by the probe query's text (Spider's gold queries compare
#: ``Continent = 'Europe'`` again and again). A probe is a query of this package's own (a read-only count over
#: one table), so the same text on the same read-only database gives the same rows; only results are kept (a
#: failure, e.g. the time limit, is asked again), at most :data:`_FOLDED_ENTRIES` per database.
_FOLDED: weakref.WeakKeyDictionary[Any, dict[Any, list[Any]]] = weakref.WeakKeyDictionary()
_FOLDED_ENTRIES = 4096


def probe_rows(db: Any, sql: str | Callable[[], str], *, key: Hashable | None = None) -> list[Any]:
    """``db.execute(sql).rows`` of a probe (a query the data doubts write, never an answer's), remembered per open
    database (see :data:`_FOLDED`).

    Args:
        db: An open read-only database (``execute(sql)``).
        sql: The probe's text, or a function that writes it (called only when the probe is not remembered).
        key: What the probe is remembered by (the probe's text when ``None``): a tuple that names what it asks
            lets a repeated probe skip writing its text.

    Returns:
        Its rows (a new list each call).

    Raises:
        QueryError: as ``db.execute``.
    """
    text = sql if isinstance(sql, str) else None
    try:
        memo = _FOLDED.setdefault(db, {})
    except TypeError:  # a database object that takes no weak reference: asked each time
        return db.execute(text if text is not None else sql()).rows  # type: ignore[operator]
    k = key if key is not None else text
    rows = memo.get(k)
    if rows is None:
        rows = db.execute(text if text is not None else sql()).rows  # type: ignore[operator]
        if len(memo) >= _FOLDED_ENTRIES:
            memo.clear()
        memo[k] = rows
    return list(rows)


#: The data doubts' comparisons of each canonical query, per open database (the schema decides which table an
#: unqualified column belongs to, and whether SQLite reads a double-quoted word as a string): at most
#: :data:`_COMPARED_ENTRIES` queries a database.
_COMPARED: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], tuple[Any, list[Any]]]] = weakref.WeakKeyDictionary()
_COMPARED_ENTRIES = 1024


def canonical_comparisons(db: Any, canonical: str, dialect: str) -> tuple[Any, list[Any]]:
    """The canonical query parsed once and its comparisons, remembered per open database.

    Args:
        db: An open read-only database (its ``schema()`` read only when a column must be found among tables).
        canonical: The golden's canonical query.
        dialect: Its sqlglot dialect.

    Returns:
        ``(tree, comparisons)``: the tree of :func:`~goldeval.answers.doubt.parsed_query` (shared: not to be
        changed) and :func:`~goldeval.answers.comparisons.query_comparisons` of it; ``(None, [])`` when the query
        does not parse or holds no comparison token (:func:`~goldeval.answers.doubt.may_compare`).
    """
    if not may_compare(canonical, dialect):
        return None, []
    key = (canonical, dialect)
    try:
        memo = _COMPARED.setdefault(db, {})
    except TypeError:  # a database object that takes no weak reference: found each time
        memo = {}
    hit = memo.get(key)
    if hit is not None:
        return hit
    tree = parsed_query(canonical, dialect)
    found = (tree, [] if tree is None else query_comparisons(tree, dialect=dialect, schema=db.schema))
    if len(memo) >= _COMPARED_ENTRIES:
        memo.clear()
    memo[key] = found
    return found


def fold(e: Any, dialect: str) -> Any:
    """*e* as text, without surrounding spaces, case-folded: ``LOWER(TRIM(e))``.

    Args:
        e: A sqlglot node, used in the result as given (copy it first when it stays in a tree).
        dialect: The dialect the result is printed in. Outside SQLite the value is cast to text first (PostgreSQL
            has no ``TRIM`` of a number); SQLite's ``TRIM`` of a number is its text already.

    Returns:
        A new node.
    """
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    inner = e if dialect == "sqlite" else exp.Cast(this=e, to=exp.DataType.build("text"))
    return exp.Lower(this=exp.Trim(this=inner))


def probe_literal(node: Any, value: Any) -> Any:
    """A literal as a probe writes it.

    Args:
        node: The literal's node in the query (``exp.Literal``, ``exp.Neg``, or SQLite's double-quoted word).
        value: Its value (:attr:`~goldeval.answers.comparisons.Comparison.values`).

    Returns:
        A copy of *node*, or a string literal of *value* for the double-quoted word.
    """
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    return node.copy() if isinstance(node, (exp.Literal, exp.Neg)) else exp.Literal.string(str(value))


def sqlite_engine(db: Any) -> bool:
    """Whether *db* runs its queries on SQLite (a PostgreSQL database may read SQLite's dialect and translate it).

    Args:
        db: An open database (its ``engine``).

    Returns:
        True for SQLite (and for an object that names no engine).
    """
    return getattr(db, "engine", "sqlite") == "sqlite"


def text_only(column: Any, test: Any, dialect: str, *, guard: bool | None = None) -> Any:
    """A folded comparison kept to text values.

    Args:
        column: The compared column's node (copied into the guard).
        test: The folded comparison of *column*.
        dialect: The dialect the result is printed in.
        guard: Whether the engine is SQLite (default: *dialect* is ``sqlite``).

    Returns:
        On SQLite ``typeof(column) = 'text' AND test`` (a number's text compares otherwise: ``'2000000' BETWEEN
        '160000' AND '900000'``; a column declared ``bool`` may still hold the text 'T'); elsewhere *test* itself
        (only columns declared text are folded there).
    """
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    if not (dialect == "sqlite" if guard is None else guard):
        return test
    return exp.and_(exp.EQ(this=exp.Anonymous(this="typeof", expressions=[column.copy()]), expression=exp.Literal.string("text")),
                    test)


def literal_test(comparison: Any, column: Any, index: int, dialect: str, *, folded: bool, guard: bool | None = None) -> Any:
    """The test a literal of a comparison puts to a column, positively (``!=`` as ``=``, ``NOT IN`` as ``=`` with
    one item, ``NOT LIKE`` as ``LIKE``).

    Args:
        comparison: A :class:`~goldeval.answers.comparisons.Comparison` with literals.
        column: The column's node, used in the test as given.
        index: Which literal (an ``IN`` list's item; ignored for ``BETWEEN``, which tests both bounds).
        dialect: The dialect the test is printed in.
        folded: Both sides trimmed and case-folded (:func:`fold`), on text values only (:func:`text_only`).
        guard: As :func:`text_only`.

    Returns:
        A new node: the database's own comparison, or its folded form.
    """
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    f = (lambda e: fold(e, dialect)) if folded else (lambda e: e)
    lits = [probe_literal(n, v) for n, v in zip(comparison.literals, comparison.values)]
    typed = column.copy()
    test: exp.Condition  # (Between and the Binary comparisons)
    if comparison.op == "between":
        test = exp.Between(this=f(column), low=f(lits[0]), high=f(lits[1]))
    else:
        cls = {"=": exp.EQ, "like": exp.Like, "ilike": exp.ILike, "glob": exp.Glob}[comparison.op]
        test = cls(this=f(column), expression=f(lits[index]))
    return text_only(typed, test, dialect, guard=guard) if folded else test


def stored_column(stored: Any) -> tuple[Any, Any]:
    """Nodes for a stored column and its table, quoted as the query quoted them (PostgreSQL folds unquoted names
    to lower case; a quoted one keeps its case).

    Args:
        stored: A :class:`~goldeval.answers.comparisons.Stored` column.

    Returns:
        ``(column node, table node)``, new nodes.
    """
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    return (exp.column(stored.column, quoted=stored.column_quoted), exp.table_(stored.table, quoted=stored.table_quoted))


def sqlite_name(name: str) -> str:
    """*name* as a quoted SQLite identifier (SQLite matches names without regard to case, quoted or not).

    Args:
        name: A table or column name.

    Returns:
        ``"name"``, each ``"`` in it doubled.
    """
    return '"' + name.replace('"', '""') + '"'


def _sqlite_literal(value: Any) -> str:
    """A literal's value as SQLite text: a string quoted (``'`` doubled), a number as Python writes it."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def _sqlite_tests(comparison: Any, index: int) -> tuple[str, str, str, str] | None:
    """``(exact, folded, column, table)`` SQL of :func:`literal_test` for SQLite, written as text (sqlglot builds and
    prints the same tests in 0.5 ms, the probe itself runs in less on Spider's tables: tested equal on the data);
    ``None`` for ``ILIKE`` (sqlglot writes it for SQLite)."""
    if comparison.op == "ilike" or any(not isinstance(v, (str, int, float)) or isinstance(v, bool) for v in comparison.values):
        return None
    col, table = sqlite_name(comparison.stored.column), sqlite_name(comparison.stored.table)
    lits = [_sqlite_literal(v) for v in comparison.values]
    fc = f"LOWER(TRIM({col}))"
    fl = [f"LOWER(TRIM({x}))" for x in lits]
    if comparison.op == "between":
        exact, folded = f"{col} BETWEEN {lits[0]} AND {lits[1]}", f"{fc} BETWEEN {fl[0]} AND {fl[1]}"
    else:
        op = {"=": "=", "like": "LIKE", "glob": "GLOB"}[comparison.op]
        exact, folded = f"{col} {op} {lits[index]}", f"{fc} {op} {fl[index]}"
    return exact, f"typeof({col}) = 'text' AND {folded}", col, table


def _probe_conditions(db: Any, comparison: Any, index: int, dialect: str) -> tuple[str, str, str, str]:
    """``(exact, only_folded, column, table)`` as SQL text for the probes of a literal (:func:`literal_counts`,
    :func:`_folded_values`): the database's own test of the literal at *index*, the test that holds only trimmed
    and case-folded (``NOT (exact) AND folded``, text values only), the column and its table. Written as text on
    SQLite (:func:`_sqlite_tests`); elsewhere (and for ``ILIKE``) each part built with sqlglot and printed in
    *dialect*."""
    fast = _sqlite_tests(comparison, index) if dialect == "sqlite" and sqlite_engine(db) else None
    if fast is not None:
        exact, folded, col, table = fast
        return exact, f"NOT ({exact}) AND {folded}", col, table
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    col_e, tab = stored_column(comparison.stored)
    exact_e = literal_test(comparison, col_e, index, dialect, folded=False)
    only_folded = exp.and_(exp.Not(this=exp.Paren(this=exact_e.copy())),
                           literal_test(comparison, col_e.copy(), index, dialect, folded=True, guard=sqlite_engine(db)))
    d = sql_dialect(dialect)
    return exact_e.sql(dialect=d), only_folded.sql(dialect=d), col_e.sql(dialect=d), tab.sql(dialect=d)


def _literal_key(kind: str, comparison: Any, index: int, dialect: str) -> tuple[Any, ...]:
    """What a literal probe asks, as a memo key: the column, the test and the literal(s) (with their types: 1 and
    '1' are different literals)."""
    st = comparison.stored
    values = comparison.values if comparison.op == "between" else (comparison.values[index],)
    return (kind, dialect, st.table.lower(), st.column.lower(), st.table_quoted, st.column_quoted, comparison.op,
            tuple((type(v).__name__, v) for v in values))


def literal_counts(db: Any, comparison: Any, index: int, dialect: str) -> tuple[int, int] | None:
    """``(exact, folded_only)``: the rows of the compared column's table that hold the literal at *index* by the
    database's own comparison (type affinity, collation: ``year = '1970'`` holds an INTEGER 1970 in SQLite), and
    the rows that hold it only trimmed and case-folded (text values only: :func:`text_only`). One probe,
    remembered per database by what it asks (:func:`probe_rows`); ``None`` when the probe fails (a type the engine
    will not compare).

    Args:
        db: An open read-only database.
        comparison: A :class:`~goldeval.answers.comparisons.Comparison` with a literal and a ``stored`` column.
        index: Which literal (an ``IN`` list's item; 0 otherwise).
        dialect: sqlglot dialect of the database's SQL.

    Returns:
        The two counts, or ``None``.
    """

    def write() -> str:
        exact, only_folded, _, table = _probe_conditions(db, comparison, index, dialect)
        return (f"SELECT COALESCE(SUM(CASE WHEN {exact} THEN 1 ELSE 0 END), 0), COALESCE(SUM(CASE WHEN {only_folded} "
                f"THEN 1 ELSE 0 END), 0) FROM {table}")

    try:
        rows = probe_rows(db, write, key=_literal_key("counts", comparison, index, dialect))
    except QueryError:
        return None
    if not rows or len(rows[0]) != 2 or not all(isinstance(n, int) for n in rows[0]):
        return None
    return int(rows[0][0]), int(rows[0][1])


def column_dirty(db: Any, stored: Any, dialect: str) -> bool | None:
    """Whether a stored text column could make a comparison on it data-fragile: it holds a value that differs from
    its ``TRIM``, or two distinct values that are equal trimmed and case-folded (``'Asia'`` and ``'asia'``; under
    a collation that already folds case, such as SQLite's ``NOCASE``, ``COUNT(DISTINCT …)`` counts them as one and
    case does not make the column dirty).

    One aggregate query over the column's table (``SELECT COUNT(DISTINCT c) <> COUNT(DISTINCT LOWER(TRIM(c))) OR
    SUM(c <> TRIM(c)) > 0``, on text values only: :func:`text_only`'s guard on SQLite), run through
    :func:`probe_rows` like the other probes (the database's time limit and read-only guard; remembered per open
    database, bounded), so a column is asked once per database however many goldens compare it.

    Args:
        db: An open read-only database.
        stored: A :class:`~goldeval.answers.comparisons.Stored` column.
        dialect: The dialect the query is printed in (DuckDB and PostgreSQL through sqlglot).

    Returns:
        True for a dirty column, False for a clean one; ``None`` when the query fails (the caller treats the
        column as dirty: a column it cannot read is not called clean).

    Example:
        >>> column_dirty(db, Stored("country", "continent"), "sqlite")  # doctest: +SKIP
        True

    Source: goldeval issue 26, item 2 and "Speed" (a match on clean data runs no probe beyond this gate).
    """

    def write() -> str:
        if dialect == "sqlite" and sqlite_engine(db):
            col, table = sqlite_name(stored.column), sqlite_name(stored.table)
            return (f"SELECT COUNT(DISTINCT {col}) <> COUNT(DISTINCT LOWER(TRIM({col}))) "
                    f"OR COALESCE(SUM({col} <> TRIM({col})), 0) > 0 FROM {table} WHERE typeof({col}) = 'text'")
        from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

        col_e, tab = stored_column(stored)
        d = sql_dialect(dialect)
        col, table = col_e.sql(dialect=d), tab.sql(dialect=d)
        folded, trimmed = fold(col_e.copy(), dialect).sql(dialect=d), exp.Trim(this=col_e.copy()).sql(dialect=d)
        return (f"SELECT CASE WHEN COUNT(DISTINCT {col}) <> COUNT(DISTINCT {folded}) THEN 1 "
                f"WHEN SUM(CASE WHEN {col} <> {trimmed} THEN 1 ELSE 0 END) > 0 THEN 1 ELSE 0 END FROM {table}")

    try:
        rows = probe_rows(db, write, key=_dirty_key(stored, dialect))
    except QueryError:
        return None
    if not rows or not rows[0] or rows[0][0] is None:
        return None
    return bool(rows[0][0])


def columns_dirty(db: Any, table: str, columns: Sequence[str], dialect: str) -> dict[str, bool | None]:
    """:func:`column_dirty` of several columns of one table (names as stored, unquoted), asked in one aggregate query
    over the table on SQLite (one scan: each column's test of :func:`column_dirty` kept to its text values by a
    ``FILTER`` clause, so each ``COUNT(DISTINCT …)`` compares under the column's own collation, as alone);
    remembered per open database with :func:`column_dirty`'s answers, so a column is asked once however it is
    asked. Elsewhere, or when that query fails, each column by :func:`column_dirty`.

    Args:
        db: An open read-only database.
        table: The table's name.
        columns: Its columns' names.
        dialect: The dialect the queries are printed in.

    Returns:
        ``{column: True (dirty) / False (clean) / None (not read: the caller treats it as dirty)}``.

    Example:
        >>> columns_dirty(db, "country", ["continent", "name"], "sqlite")  # doctest: +SKIP
        {'continent': True, 'name': False}

    Source: goldeval issue 26, "Speed" (one query a table, not one a column).
    """
    stored = {c: Stored(table, c) for c in columns}
    if not (dialect == "sqlite" and sqlite_engine(db)):
        return {c: column_dirty(db, st, dialect) for c, st in stored.items()}
    try:
        memo = _FOLDED.setdefault(db, {})
    except TypeError:  # a database object that takes no weak reference: each column asked alone
        return {c: column_dirty(db, st, dialect) for c, st in stored.items()}
    keys = {c: _dirty_key(st, dialect) for c, st in stored.items()}
    missing = [c for c in columns if keys[c] not in memo]
    if len(missing) > 1:
        parts = []
        for c in missing:
            col = sqlite_name(c)
            only = f"FILTER (WHERE typeof({col}) = 'text')"
            parts.append(f"COUNT(DISTINCT {col}) {only} <> COUNT(DISTINCT LOWER(TRIM({col}))) {only} "
                         f"OR COALESCE(SUM({col} <> TRIM({col})) {only}, 0) > 0")
        try:
            row = db.execute(f"SELECT {', '.join(parts)} FROM {sqlite_name(table)}").rows[0]
        except QueryError:
            row = None  # (a SQLite before 3.30 has no FILTER): each column alone below
        if row is not None and len(row) == len(missing):
            if len(memo) + len(missing) >= _FOLDED_ENTRIES:
                memo.clear()
            for c, v in zip(missing, row):
                memo[keys[c]] = [(v,)]
    return {c: column_dirty(db, st, dialect) for c, st in stored.items()}


def _dirty_key(stored: Any, dialect: str) -> tuple[Any, ...]:
    """What :func:`column_dirty` is remembered by in :func:`probe_rows`' memory."""
    return ("dirty", dialect, stored.table.lower(), stored.column.lower(), stored.table_quoted, stored.column_quoted)


def _folded_values(db: Any, comparison: Any, index: int, dialect: str, *, limit: int = 3) -> list[tuple[Any, int]]:
    """The stored values (most rows first, at most *limit*) that hold the literal at *index* only trimmed and
    case-folded, each with its row count; ``[]`` when the probe fails."""

    def write() -> str:
        _, only_folded, col, table = _probe_conditions(db, comparison, index, dialect)
        return (f"SELECT {col}, COUNT(*) FROM {table} WHERE {only_folded} GROUP BY {col} "
                f"ORDER BY COUNT(*) DESC, {col} LIMIT {int(limit)}")

    try:
        return [(r[0], int(r[1])) for r in probe_rows(db, write, key=_literal_key(f"values{limit}", comparison, index, dialect))]
    except (QueryError, TypeError, ValueError):
        return []


def _rows(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def literal_doubt(db: Any, canonical: str, golden_rows: Sequence[Sequence[Any]], *, dialect: str = "sqlite") -> tuple[str, str | None]:
    """``(status, note)`` for a golden whose canonical query compares a column with a literal that no row holds by
    the database's own comparison while some rows hold it trimmed and case-folded ('asia' for 'Asia', 'dog ' for
    'dog').

    Every comparison counts (:func:`~goldeval.answers.comparisons.query_comparisons`: ``=``, ``!=``/``<>``, each
    item of an ``IN`` / ``NOT IN`` list, ``LIKE`` / ``GLOB`` patterns, ``BETWEEN`` bounds, in ``WHERE``, ``JOIN``,
    ``HAVING``, subqueries, CTEs and each branch of a set operation). Whether a literal holds is asked of the
    database (:func:`literal_counts`), never decided in Python: in SQLite ``year = '1970'`` holds an INTEGER 1970
    (type affinity) and is not doubted.

    Args:
        db: A :class:`~goldeval.answers.sql.ReadOnlyDatabase` (``execute(sql)``, ``schema()``).
        canonical: The golden's canonical query.
        golden_rows: The golden rows (the canonical query's result).
        dialect: sqlglot dialect.

    Returns:
        ``("verified_wrong", note)`` when the golden is empty, all-NULL or a single 0 and such a literal stands
        where a literal that matches nothing empties the result (``Comparison.positive``); ``("suspect", note)``
        for any other such literal (``!=`` keeps the rows it meant to drop; ``IN`` loses one item); else
        ``("verified", None)``. The note names the comparison, the literal, the column and both counts:
        ``the canonical query compares continent = 'asia': 'asia' holds 0 rows of country.continent, 51 trimmed
        and case-folded ('Asia' (51 rows))``.

    Source: goldeval issue 26, item 1; DESIGN.md "Doubting the golden".
    """
    tree, comparisons = canonical_comparisons(db, canonical, dialect)
    if tree is None:
        return ("verified", None)
    misses = golden_misses(golden_rows)
    notes: list[str] = []
    wrong = False
    for cmp in comparisons:
        if not cmp.literals or not foldable(db, cmp):
            continue
        for i in range(1 if cmp.op == "between" else len(cmp.literals)):
            counts = literal_counts(db, cmp, i, dialect)
            if counts is None or counts[0] or not counts[1]:
                continue
            shown = ", ".join(f"{v!r} ({_rows(n)})" for v, n in _folded_values(db, cmp, i, dialect))
            lit = (f"{cmp.values[0]!r} and {cmp.values[1]!r}" if cmp.op == "between" else repr(cmp.values[i]))
            held = "hold" if cmp.op == "between" else "holds"
            note = (f"the canonical query compares {cmp.shown(dialect)}: {lit} {held} 0 rows of "
                    f"{cmp.stored.label()}, {counts[1]} trimmed and case-folded" + (f" ({shown})" if shown else ""))
            if misses and cmp.positive:
                wrong = True
                note += ": the golden is empty because the literal misses the data"
            if note not in notes:
                notes.append(note)
    if not notes:
        return ("verified", None)
    return ("verified_wrong" if wrong else "suspect", "; ".join(notes[:3]))


_TYPES: weakref.WeakKeyDictionary[Any, dict[str, dict[str, str]]] = weakref.WeakKeyDictionary()


def _column_types(db: Any) -> dict[str, dict[str, str]]:
    """``{table (lower): {column (lower): declared type (upper)}}`` of an open database, read once (SQLite:
    ``PRAGMA table_info`` of each table of ``db.schema()``; DuckDB and PostgreSQL: ``information_schema.columns``).
    ``{}`` when they cannot be read."""
    try:
        hit = _TYPES.get(db)
    except TypeError:
        hit = None
    if hit is not None:
        return hit
    out: dict[str, dict[str, str]] = {}
    try:
        if getattr(db, "engine", "sqlite") == "sqlite":
            for table in db.schema():
                quoted = '"' + table.replace('"', '""') + '"'
                out[table.lower()] = {str(r[1]).lower(): str(r[2] or "").upper() for r in db.execute(f"PRAGMA table_info({quoted})").rows}
        else:
            for t, c, ty in db.execute("SELECT table_name, column_name, data_type FROM information_schema.columns").rows:
                out.setdefault(str(t).lower(), {})[str(c).lower()] = str(ty or "").upper()
    except DatabaseLostError:  # the database is gone: the run stops, no doubt made without it
        raise
    except Exception:  # noqa: BLE001 - types only choose which columns to fold; unknown: none outside SQLite
        out = {}
    try:
        _TYPES[db] = out
    except TypeError:
        pass
    return out


_TEXT_TYPES = ("VARCHAR", "TEXT", "CHAR", "CHARACTER", "BPCHAR", "STRING", "NVARCHAR", "NCHAR", "CLOB")


def is_text_column(db: Any, stored: Any) -> bool:
    """Whether a stored column is declared to hold text.

    Args:
        db: An open database (its declared types are read once: SQLite ``PRAGMA table_info``, elsewhere
            ``information_schema.columns``).
        stored: A :class:`~goldeval.answers.comparisons.Stored` column.

    Returns:
        In SQLite, TEXT affinity (the declared type holds ``CHAR``, ``CLOB`` or ``TEXT`` and not ``INT``: SQLite's
        rule); elsewhere a character type. False for a column whose type is unknown.

    Source: https://www.sqlite.org/datatype3.html ("Determination Of Column Affinity").
    """
    ty = _column_types(db).get(stored.table.lower(), {}).get(stored.column.lower())
    if ty is None:
        return False
    if getattr(db, "engine", "sqlite") == "sqlite":
        return "INT" not in ty and any(k in ty for k in ("CHAR", "CLOB", "TEXT"))
    return ty.startswith(_TEXT_TYPES)


def foldable(db: Any, comparison: Any) -> bool:
    """Whether a literal comparison's column may be probed folded.

    Args:
        db: An open database.
        comparison: A :class:`~goldeval.answers.comparisons.Comparison`.

    Returns:
        False when its column is not traced to a table; on SQLite True (the folded test reads text values only,
        ``typeof(col) = 'text'``, whatever the column's declared type); elsewhere whether the column is declared
        text (:func:`is_text_column`).
    """
    if comparison.stored is None:
        return False
    return sqlite_engine(db) or is_text_column(db, comparison.stored)


# --- a gate that needs no parse: the text values of the columns a query names, folded, read once -------------

#: A folded value that more than one stored value of a column folds to (``'Asia'`` and ``'asia '``).
_MANY = object()


@dataclass(frozen=True, slots=True)
class _ColumnText:
    """The distinct text values of one stored column, as the data doubts' gate reads them.

    Attributes:
        folded: Each folded value (``LOWER(TRIM(v))`` as SQLite computes it) → the one stored value that folds to
            it, or :data:`_MANY` when several do.
        padded: A stored value has spaces around it (a ``LIKE`` may change when trimmed).
        many: Some folded value is :data:`_MANY` in *folded* (two stored values fold alike), noted as *folded* is
            built, so that :func:`read_columns_dirty` does not scan every value again on each call.
    """

    folded: dict[str, Any]
    padded: bool
    many: bool = False


_COLUMNS: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], _ColumnText | None]] = weakref.WeakKeyDictionary()
_PAIRS: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], bool]] = weakref.WeakKeyDictionary()
_COLUMN_CHARS: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
#: Most distinct text values a column's entry holds, and most characters the entries of one database hold in all;
#: a column past either has none (the queries that name it take the parse and the probes).
_COLUMN_VALUES = 100_000
_DATABASE_CHARS = 4_000_000
_PAIRS_ENTRIES = 4096
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _sqlite_fold(text: str) -> str:
    """SQLite's ``LOWER(TRIM(text))`` in Python: spaces (only) trimmed at both ends, ASCII letters (only)
    lower-cased, as SQLite's built-in functions do without ICU."""
    return text.strip(" ").translate(_ASCII_LOWER)


def _column_text(db: Any, table: str, column: str) -> _ColumnText | None:
    """The :class:`_ColumnText` of ``table.column`` on an open SQLite database (:func:`_columns_text`)."""
    return _columns_text(db, table, [column]).get(column.lower())


def _text_select(table: str, column: str) -> str:
    """The query of one JSON cell of a column's distinct ``[folded, stored]`` text values (at most
    :data:`_COLUMN_VALUES` + 1 of them)."""
    c = sqlite_name(column)
    return (f"SELECT json_group_array(json_array(f, v)) FROM (SELECT DISTINCT LOWER(TRIM({c})) AS f, {c} AS v "
            f"FROM {sqlite_name(table)} WHERE typeof({c}) = 'text' LIMIT {_COLUMN_VALUES + 1})")


def _columns_text(db: Any, table: str, columns: Sequence[str]) -> dict[str, _ColumnText | None]:
    """The :class:`_ColumnText` of each of *columns* of *table* on an open SQLite database (by lower-cased name),
    each read once a database: those not read before in one statement (a JSON cell a column), each alone when
    that fails (so one column past a limit leaves only its own entry out). An entry is ``None`` when the column
    has more than :data:`_COLUMN_VALUES` distinct text values, would take the database's entries past
    :data:`_DATABASE_CHARS` characters, or cannot be read."""
    try:
        memo = _COLUMNS.setdefault(db, {})
    except TypeError:
        return {c.lower(): None for c in columns}
    t = table.lower()
    missing = [c for c in dict.fromkeys(c.lower() for c in columns) if (t, c) not in memo]
    cells: dict[str, Any] = {}
    if len(missing) > 1:
        # One JSON cell of [folded, stored] pairs a column, read by the C JSON parser: a row a value costs ~5 us of
        # Python decoding each (4,079 city names: 20 ms), one cell costs its parse.
        try:
            row = db.execute("SELECT " + ", ".join(f"({_text_select(table, c)})" for c in missing)).rows[0]
            cells = dict(zip(missing, row))
        except DatabaseLostError:  # the database is gone: the run stops, no doubt made without it
            raise
        except Exception:  # noqa: BLE001 - (a value over SQLite's length limit of 16 MB): each column alone below
            cells = {}
    for c in missing:
        out: _ColumnText | None
        try:
            cell = cells[c] if c in cells else db.execute(_text_select(table, c)).rows[0][0]
            rows = json.loads(cell) if isinstance(cell, str) else []
            if len(rows) > _COLUMN_VALUES:
                raise OverflowError
            chars = _COLUMN_CHARS.get(db, 0) + sum(len(f) + len(v) for f, v in rows)
            if chars > _DATABASE_CHARS:
                raise OverflowError
            _COLUMN_CHARS[db] = chars
            folded: dict[str, Any] = {}
            padded = many = False
            for f, v in rows:
                if folded.setdefault(f, v) != v:
                    folded[f] = _MANY
                    many = True
                padded = padded or v != v.strip(" ")
            out = _ColumnText(folded, padded, many)
        except DatabaseLostError:  # the database is gone: the run stops, no doubt made without it
            raise
        except Exception:  # noqa: BLE001 - no entry: the queries that name this column take the probes
            out = None
        memo[(t, c)] = out
    return {c.lower(): memo[(t, c.lower())] for c in columns}


def read_columns_dirty(db: Any, table: str, columns: Sequence[str]) -> dict[str, bool | None]:
    """:func:`column_dirty` of columns of one table of an open SQLite database, told from their text values as
    :func:`may_doubt_data` reads them (one statement a table for the columns not read before, each column read
    once a database and shared with the data doubts): a value with spaces around it, or two distinct values (under
    the column's collation, as ``COUNT(DISTINCT …)`` counts them) that fold alike.

    Args:
        db: An open read-only SQLite database.
        table: The table's name (lower-cased).
        columns: Its columns' names (lower-cased).

    Returns:
        ``{column: True (dirty) / False (clean) / None}``; ``None`` when the column is not read (past the read's
        bounds, or it fails): the caller asks :func:`column_dirty`.

    Example:
        >>> read_columns_dirty(db, "country", ["continent"])  # doctest: +SKIP
        {'continent': False}
    """
    return {c: None if text is None else text.padded or text.many
            for c, text in _columns_text(db, table, columns).items()}


def _meet_folded(db: Any, a: tuple[str, str], b: tuple[str, str], ta: _ColumnText, tb: _ColumnText) -> bool:
    """Some stored value of column *a* and some of *b* fold alike but differ (remembered per database)."""
    memo = _PAIRS.setdefault(db, {})
    key = (a, b) if a <= b else (b, a)
    hit = memo.get(key)
    if hit is None:
        small, large = (ta.folded, tb.folded) if len(ta.folded) <= len(tb.folded) else (tb.folded, ta.folded)
        hit = any(v is _MANY or (w := large.get(f)) is not None and (w is _MANY or w != v) for f, v in small.items()
                  if f in large)
        if len(memo) >= _PAIRS_ENTRIES:
            memo.clear()
        memo[key] = hit
    return hit


def _compared_names(tokens: Sequence[Any]) -> set[tuple[str, str]] | None:
    """The pairs of column names a query compares with ``=`` / ``!=`` (``T1.code = T2.countrycode`` gives
    ``("code", "countrycode")``; ``x IN (SELECT [DISTINCT] [t.]y FROM …)`` gives ``("x", "y")``), read off its
    tokens: a name (after an optional ``alias.``) right before the operator and one right after it. ``None`` when a
    subquery compared with ``IN`` projects anything else (any two columns may meet there)."""
    from sqlglot.tokens import TokenType  # start-up: sqlglot loads only when a query is parsed

    names = (TokenType.VAR, TokenType.IDENTIFIER)
    out: set[tuple[str, str]] = set()
    n = len(tokens)
    for i, tok in enumerate(tokens):
        kind = tok.token_type
        if kind is TokenType.IN and i + 2 < n and tokens[i + 1].token_type is TokenType.L_PAREN \
                and tokens[i + 2].token_type in (TokenType.SELECT, TokenType.WITH):
            projected = _projected_name(tokens, i + 2)
            j = i - 2 if i >= 2 and tokens[i - 1].token_type is TokenType.NOT else i - 1
            if projected is None or j < 0 or tokens[j].token_type not in names:
                return None
            out.add((tokens[j].text.lower(), projected))
            continue
        if kind not in (TokenType.EQ, TokenType.NEQ) or i == 0 or i + 1 >= n:
            continue
        left, right = tokens[i - 1], _right_operand(tokens, i)
        if left.token_type in names and right is not None and right.token_type in names:
            out.add((left.text.lower(), right.text.lower()))
    return out


def _projected_name(tokens: Sequence[Any], i: int) -> str | None:
    """The one column name a subquery starting at *i* (``SELECT``) projects: ``SELECT [DISTINCT] [alias.]name FROM``
    gives ``name``; ``None`` for anything else (several columns, an expression, a ``WITH``)."""
    from sqlglot.tokens import TokenType  # start-up: sqlglot loads only when a query is parsed

    names = (TokenType.VAR, TokenType.IDENTIFIER)
    n = len(tokens)
    if tokens[i].token_type is not TokenType.SELECT:
        return None
    k = i + 1
    if k < n and tokens[k].token_type is TokenType.DISTINCT:
        k += 1
    if k + 2 < n and tokens[k + 1].token_type is TokenType.DOT:
        k += 2
    if k + 1 < n and tokens[k].token_type in names and tokens[k + 1].token_type is TokenType.FROM:
        return tokens[k].text.lower()
    return None


def _right_operand(tokens: Sequence[Any], i: int) -> Any:
    """The name token right after the operator at *i*, past an ``alias.`` (``= T2.countrycode`` gives
    ``countrycode``); the token after the operator when it is no such name; ``None`` at the end."""
    from sqlglot.tokens import TokenType  # start-up: sqlglot loads only when a query is parsed

    n = len(tokens)
    if i + 1 >= n:
        return None
    if i + 3 < n and tokens[i + 2].token_type is TokenType.DOT:
        return tokens[i + 3]
    return tokens[i + 1]


#: The comparison tokens whose operands :func:`_operands` reads.
_OPERATOR_NAMES = ("EQ", "NEQ", "IN", "LIKE")


def _operands(tokens: Sequence[Any]) -> set[str]:
    """The names (lower-cased) right before or right after a comparison operator (``=``, ``!=``, ``IN``, ``LIKE``;
    before ``NOT IN`` / ``NOT LIKE`` too): the only columns :func:`~goldeval.answers.comparisons.query_comparisons`
    reads as compared (a bare column is next to its operator; ``lower(name) = 'x'`` compares an expression)."""
    from sqlglot.tokens import TokenType  # start-up: sqlglot loads only when a query is parsed

    ops = {getattr(TokenType, n) for n in _OPERATOR_NAMES}
    names = (TokenType.VAR, TokenType.IDENTIFIER)
    out: set[str] = set()
    n = len(tokens)
    for i, tok in enumerate(tokens):
        if tok.token_type not in ops:
            continue
        j = i - 2 if i >= 2 and tokens[i - 1].token_type is TokenType.NOT else i - 1
        for t in (tokens[j] if j >= 0 else None, _right_operand(tokens, i)):
            if t is not None and t.token_type in names:
                out.add(t.text.lower())
        if tok.token_type is TokenType.IN and i + 2 < n and tokens[i + 1].token_type is TokenType.L_PAREN:
            projected = _projected_name(tokens, i + 2)
            if projected is not None:
                out.add(projected)
    return out


def compared_columns(db: Any, canonical: str, dialect: str) -> list[tuple[str, str]] | None:
    """The ``(table, column)`` pairs (lower-cased) a canonical query may compare on an open SQLite database, read
    from its tokens without a parse: the columns of the tables it names whose names stand next to ``=``, ``!=``,
    ``IN`` or ``LIKE`` (:func:`_operands`), as :func:`may_doubt_data` reads them.

    Args:
        db: An open read-only database (its ``schema()``).
        canonical: The golden's canonical query.
        dialect: Its sqlglot dialect.

    Returns:
        The pairs (``[]`` when the query makes no comparison); ``None`` when the tokens cannot tell (another
        engine or dialect, a ``GLOB``, ``ILIKE`` or ``BETWEEN``, an ``IN (SELECT …)`` that projects more than a
        column name, no schema): the caller reads the parsed query's comparisons instead.

    Example:
        >>> compared_columns(db, "SELECT name FROM country WHERE continent = 'Asia'", "sqlite")  # doctest: +SKIP
        [('country', 'continent')]
    """
    from sqlglot.tokens import TokenType  # start-up: sqlglot loads only when a query is parsed

    if not may_compare(canonical, dialect):
        return []
    if dialect != "sqlite" or getattr(db, "engine", None) != "sqlite":
        return None
    read = query_tokens(canonical, dialect)
    if read is None or read.types & {TokenType.GLOB, TokenType.ILIKE, TokenType.BETWEEN} \
            or _compared_names(read.tokens) is None:
        return None
    try:
        schema = db.schema()
    except DatabaseLostError:  # the database is gone: the run stops, no doubt made without it
        raise
    except Exception:  # noqa: BLE001 - no schema: the parse decides
        return None
    compared = _operands(read.tokens)
    words = {t.text.lower() for t in read.tokens if t.token_type in (TokenType.VAR, TokenType.IDENTIFIER)}
    types = _column_types(db)
    return [(table, col) for table in sorted(words.intersection(schema)) for col in sorted(compared.intersection(schema[table]))
            if _text_or_untyped(types.get(table, {}).get(col))]


def _text_or_untyped(declared: str | None) -> bool:
    """Whether a SQLite column of this declared type keeps text as text: TEXT affinity, or BLOB affinity (no type,
    or ``BLOB``). A column of INTEGER, REAL or NUMERIC affinity turns a number typed with spaces around it into
    the number (SQLite's rule), so its values hold no stray spaces or case worth a gate. Unknown: True.

    Source: https://www.sqlite.org/datatype3.html ("Determination Of Column Affinity").
    """
    if declared is None:
        return True
    if "INT" in declared:
        return False
    if any(k in declared for k in ("CHAR", "CLOB", "TEXT")) or not declared or "BLOB" in declared:
        return True
    return False


def may_doubt_data(db: Any, canonical: str, dialect: str) -> bool:
    """Whether the data doubts (:func:`literal_doubt`, :mod:`goldeval.answers.fragile`) may find something in a
    canonical query, read from its tokens and the text values of the columns it may compare (:func:`_column_text`,
    read once a column), without a parse or a probe.

    Args:
        db: An open read-only database.
        canonical: The golden's canonical query.
        dialect: Its sqlglot dialect.

    Returns:
        False only when nothing can be found (below); the probes then need not run.

    The columns it may compare are those of the tables it names whose names stand next to a comparison operator
    (:func:`_operands`; a query with an ``IN (SELECT …)`` that projects more than one column name takes the probes). Nothing can be found when the query makes no comparison (:func:`~goldeval.answers.doubt.may_compare`), or when, on SQLite,
    every string, number and double-quoted word of the query folds to no stored value of those columns but itself
    (no literal matches more rows trimmed and case-folded), no two of those columns that the query compares by name
    (``a = b``: :func:`_compared_names`; any two with ``IN (SELECT …)``) hold values that fold alike but differ (no
    join key or column comparison changes), no ``LIKE`` meets a padded value, and
    there is no ``GLOB``, ``ILIKE`` or ``BETWEEN`` (patterns and ranges are left to the probes). Anything else, and
    other engines: True.
    """
    from sqlglot.tokens import TokenType  # start-up: sqlglot loads only when a query is parsed

    if not may_compare(canonical, dialect):
        return False
    if dialect != "sqlite" or getattr(db, "engine", None) != "sqlite":
        return True
    read = query_tokens(canonical, dialect)
    if read is None or read.types & {TokenType.GLOB, TokenType.ILIKE, TokenType.BETWEEN}:
        return True
    try:
        schema = db.schema()
    except DatabaseLostError:  # the database is gone: the run stops, no doubt made without it
        raise
    except Exception:  # noqa: BLE001 - no schema: the parse and the probes decide
        return True
    pairs = _compared_names(read.tokens)
    if pairs is None:
        return True
    compared = _operands(read.tokens)
    if not compared:
        return False
    words = {t.text.lower() for t in read.tokens if t.token_type in (TokenType.VAR, TokenType.IDENTIFIER)}
    columns: list[tuple[tuple[str, str], _ColumnText]] = []
    for table in words.intersection(schema):  # schema() names are lower-cased
        cols = sorted(compared.intersection(schema[table]))
        for col, text in _columns_text(db, table, cols).items():  # one statement a table for the columns not read
            if text is None:
                return True
            if text.folded:
                columns.append(((table, col), text))
    if not columns:
        return False  # no compared column holds text: no literal or key can fold to another value
    if TokenType.LIKE in read.types and any(t.padded for _, t in columns):
        return True
    for i, (a, ta) in enumerate(columns):
        for b, tb in columns[i:]:
            if ((a[1], b[1]) in pairs or (b[1], a[1]) in pairs) and _meet_folded(db, a, b, ta, tb):
                return True
    for tok in read.tokens:
        kind = tok.token_type
        if kind is TokenType.NUMBER:
            try:
                n = float(tok.text)
            except ValueError:
                return True
            texts = {tok.text, repr(n), str(int(n)) if n.is_integer() else repr(n)}
        elif kind is TokenType.STRING or kind is TokenType.IDENTIFIER:
            texts = {tok.text}
        else:
            continue
        for text in texts:
            f = _sqlite_fold(text)
            for _, t in columns:
                held = t.folded.get(f)
                if held is not None and held != text:
                    return True
    return False
