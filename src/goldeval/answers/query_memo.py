"""Query results remembered per open database: a text that runs again on the same read-only SQLite database gives
the rows it gave (issue 15).

A many-database set repeats its queries: Spider dev's 343 DIN-SQL answers hold 251 distinct final queries on six
databases ("SELECT count(*) FROM singer" answers both "How many singers do we have?" and "What is the total number
of singers?"), and some answers are their golden's canonical query, word for word. Each distinct text is run once
per open database; a repeat gets the same columns and rows (new lists of the same row tuples: a caller may change
its lists, never a tuple).

What is remembered, and when:

* only a :class:`~goldeval.answers.sql.ReadOnlyDatabase` on SQLite (a DuckDB file, a PostgreSQL server or any
  other database object runs every query);
* only a text that cannot give other rows the next time: no function that reads the clock or a random source or
  the connection's state (``random()``, ``date('now')``, ``CURRENT_TIMESTAMP``, ``changes()``…). The test is on
  the letters of the text (:data:`_VOLATILE`), cautious by design: a query that merely names a ``date`` column is
  run each time too;
* only results: a query that failed (an error, the time or row limit) is run again the next time;
* at most :data:`_ENTRIES` results, :data:`_CELLS` cells and :data:`_BYTES` bytes of cells (:func:`_size`) per
  database, least recently used out first; no result of more than :data:`_RESULT_CELLS` cells or a quarter of
  :data:`_BYTES`; none past the database's life (the memory is held weakly by the database object).

The database file is read-only to the judge and the run reads it as it was when the run began (its sha256 is in
the run's key); a process that changes the file under an open database can change what later queries return, as it
can for the golden memory (:mod:`goldeval.answers.case`) and the literal check's (:mod:`goldeval.answers.doubt`).

Source: goldeval issue 15 (the Spider set at ≤ 1 ms a case after start-up).
"""

from __future__ import annotations

import marshal
import weakref
from collections import OrderedDict
from typing import Any

from goldeval.answers.sql import QueryResult, ReadOnlyDatabase

__all__ = ["execute_remembered"]

#: Letters that may name a function whose value changes between two runs of the same text (SQLite's random(),
#: randomblob(), the date and time functions with 'now' or no argument, CURRENT_DATE / _TIME / _TIMESTAMP,
#: changes(), total_changes(), last_insert_rowid(), and sqlite_* functions): a text holding any (in any case) is never
#: remembered. Looked for with ``in`` on the lower-cased text: a case-insensitive regex alternation cost 110 k
#: instructions a query, more than the repeats it saved (counted by valgrind).
_VOLATILE = ("random", "now", "current", "date", "time", "julian", "epoch", "changes", "last_insert", "sqlite_")
_ENTRIES = 1024
_CELLS = 200_000
_RESULT_CELLS = 20_000
_BYTES = 8_000_000


class _Results(OrderedDict):
    """One database's remembered results, least recently used first: text -> ``(columns, rows, cells, bytes)``."""

    cells = 0
    bytes = 0


_MEMO: weakref.WeakKeyDictionary[ReadOnlyDatabase, _Results] = weakref.WeakKeyDictionary()


def _size(rows: list[tuple[Any, ...]]) -> int:
    """Bytes *rows* hold, about: the length of their ``marshal`` serialisation (each text as UTF-8, each blob as
    its bytes, a few bytes a cell besides), one C pass without a Python step a cell (a Python sum of the cells'
    lengths cost 1.4 % of a Spider pass); a cell of a type marshal cannot write counts the result as ``_BYTES`` (never kept)."""
    try:
        return len(marshal.dumps(rows))
    except ValueError:  # a cell marshal cannot write (never one of sqlite3's str, bytes, int, float, None)
        return _BYTES


def _volatile(sql: str) -> bool:
    """True when *sql* may call a function whose value changes between runs (see :data:`_VOLATILE`)."""
    low = sql.lower()
    return any(word in low for word in _VOLATILE)


def execute_remembered(db: ReadOnlyDatabase, sql: str) -> QueryResult:
    """``db.execute(sql)``, run once per distinct text on a read-only SQLite database (see the module docstring):
    a repeat returns a :class:`~goldeval.answers.sql.QueryResult` with new ``columns`` and ``rows`` lists holding
    the first run's names and row tuples, ``elapsed_s`` 0.0 and a note that says so.

    Args:
        db: The database (any object with ``execute``; only a SQLite ``ReadOnlyDatabase`` remembers).
        sql: One SQL statement.

    Returns:
        The query's result.

    Raises:
        QueryError: as ``db.execute`` (a failure is never remembered).
    """
    if type(db) is not ReadOnlyDatabase or db.engine != "sqlite" or not isinstance(sql, str) or _volatile(sql):
        return db.execute(sql)
    memo = _MEMO.get(db)
    if memo is None:
        memo = _MEMO[db] = _Results()
    hit = memo.get(sql)
    if hit is not None:
        memo.move_to_end(sql)
        return QueryResult(list(hit[0]), list(hit[1]), 0.0, "sqlite", ["remembered: the same text ran before on this database"])
    res = db.execute(sql)
    cells = len(res.rows) * max(len(res.columns), 1)
    if cells <= _RESULT_CELLS:
        # (text and blob cells can be long: the bytes held are bounded too, not only the cells)
        size = _size(res.rows)
        if size <= _BYTES // 4:
            memo[sql] = (list(res.columns), list(res.rows), cells, size)
            memo.cells += cells
            memo.bytes += size
            while len(memo) > _ENTRIES or memo.cells > _CELLS or memo.bytes > _BYTES:
                _, old = memo.popitem(last=False)
                memo.cells -= old[2]
                memo.bytes -= old[3]
    return res
