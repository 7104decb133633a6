"""Read-only re-execution of an attempt's final query (SQLite; DuckDB when the optional extra is installed).

The rows a query returns are the prediction — never the answerer's self-reported rows when a query exists.
Running someone else's SQL against a customer's database must not change it, so every layer says no:

SQLite
    * opened through a ``file:…?mode=ro`` URI (the OS-level open is read-only) with ``PRAGMA query_only=ON``;
    * an authorizer that allows only reading (``SELECT``, ``READ``, ``FUNCTION`` except ``load_extension`` and
      ``fts3_tokenizer``,
      recursive CTEs, and a few read-only ``PRAGMA`` look-ups) and denies every write, ``ATTACH``/``DETACH``,
      ``CREATE``/``DROP``/``ALTER`` (temp objects too), transactions, ``PRAGMA`` assignments;
    * extension loading stays disabled;
    * a value (string or blob) longer than :data:`MAX_VALUE_BYTES` fails the query (the time limit cannot stop a
      single step that builds a huge value);
    * one statement per call (the driver refuses a second one).
DuckDB
    * ``read_only=True``, ``enable_external_access=false`` (no ATTACH of files, no COPY, no reading other files),
      extension auto-install/auto-load off, configuration locked; and the statement must parse (sqlglot) as one
      query (``SELECT`` / ``WITH`` / set operation).

Each query has a wall-clock time limit (SQLite: a progress handler aborts the VM; DuckDB: ``interrupt()``, then
the worker process killed), a row limit and a size limit (more rows, or rows whose Python objects hold more bytes,
than the limit is a failure, not a silent cut: :func:`fetch_bounded`). A query that fails raises
:class:`QueryError` with the database's own message; the judge turns that into an *unscored* case.

Memory: the size limit counts the result as it is fetched, block by block, so that a query returning gigabytes stops
after about the limit. One value is bounded by the engine before it reaches Python: SQLite's
:data:`MAX_VALUE_BYTES`; DuckDB runs with a ``memory_limit`` of :data:`DUCKDB_MEMORY_LIMIT`, no spilling to disk and
at most two threads, in a worker process (:mod:`goldeval.answers.duckdb_worker`) under an address-space limit that
the time limit may kill: DuckDB checks an interrupt only between vectors of 2,048 rows, and one call that builds a
huge value (``repeat('y', 2000000000)``) allocates outside its ``memory_limit``.

Source: ``DESIGN.md`` "Data formats" (``--db``), goldeval; SQLite authorizer:
https://www.sqlite.org/c3ref/set_authorizer.html
"""

from __future__ import annotations

import contextlib
import _signal
import os
import signal
import sqlite3
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from goldeval.errors import GoldevalError, InputError

__all__ = ["QueryError", "QueryResult", "ReadOnlyDatabase", "open_database", "fetch_bounded", "result_bytes",
           "size_limit_message", "check_max_result_bytes", "DEFAULT_TIMEOUT_S", "DEFAULT_MAX_ROWS", "DEFAULT_MAX_RESULT_BYTES", "DUCKDB_MEMORY_LIMIT"]

DEFAULT_TIMEOUT_S = 5.0
DEFAULT_MAX_ROWS = 1_000_000
#: Most bytes a query's result may hold as Python objects (:func:`result_bytes`), by default: 256 MB. Judging a
#: result took about twice its estimate at the peak (1,000,000 rows of an int, a text and a float: 183 MB
#: estimated, 464 MB peak RSS with the interpreter's 85 MB), and a case may hold the golden's result beside the
#: answer's: 256 MB keeps a case near 1 GB, which a 2-core, 4 GB CI machine survives beside DuckDB's own
#: :data:`DUCKDB_MEMORY_LIMIT`. The shipped examples' largest result (Spider, 0.66 MB) is 1/390 of it.
DEFAULT_MAX_RESULT_BYTES = 256_000_000
#: DuckDB's ``memory_limit`` on a judged query's connection (sorts, hash tables, aggregates; spilling to disk off).
DUCKDB_MEMORY_LIMIT = "1GB"
#: Longest string or blob a query may build, bytes (SQLite ``SQLITE_LIMIT_LENGTH``). The time limit is checked
#: between VM steps, so one step that builds a huge value (``randomblob(9e8)``, ``printf('%.*c', 9e8, 'x')``)
#: would run — and allocate — past it; with this limit such a step fails at once with "string or blob too big".
MAX_VALUE_BYTES = 16_000_000

# Functions no answer needs that reach outside the database: loading code, and fts3_tokenizer (its one-argument
# form returns a C pointer; its two-argument form registers one).
_DENIED_FUNCTIONS = {"load_extension", "fts3_tokenizer"}

# PRAGMAs that only look things up (allowed with any argument); every other PRAGMA is denied.
_READ_PRAGMAS = {"table_info", "table_xinfo", "index_list", "index_info", "foreign_key_list", "database_list",
                 "collation_list", "function_list", "table_list"}


class QueryError(GoldevalError):
    """A query could not be run read-only within the limits; the message is the database's, with context."""


@dataclass(slots=True)
class QueryResult:
    """Rows a query returned.

    Attributes:
        columns: ``(k,)`` column names as the database reports them (duplicates kept).
        rows: ``(n, k)`` row tuples of Python values (NULL is ``None``).
        elapsed_s: Wall-clock seconds the query took.
    """

    columns: list[str]
    rows: list[tuple[Any, ...]]
    elapsed_s: float = 0.0
    engine: str = "sqlite"
    notes: list[str] = field(default_factory=list)


#: How sqlite3 (the driver) begins the message of a text cell it cannot decode as UTF-8.
_NOT_UTF8 = "Could not decode to UTF-8"


def _decode(b: bytes) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b.decode("latin-1")


class ReadOnlyDatabase:
    """A read-only connection to one database file; use as a context manager or call :meth:`close`.

    Args:
        path: SQLite file, or DuckDB file (``.duckdb`` / ``.ddb``, or ``engine="duckdb"``).
        timeout_s: Wall-clock limit per query, seconds (> 0).
        max_rows: Most rows a query may return (more is a :class:`QueryError`).
        engine: ``"sqlite"``, ``"duckdb"``, or ``None`` to choose by the file (DuckDB files start with ``DUCK`` at
            byte 8; everything else is opened as SQLite).
        max_result_bytes: Most bytes a query's rows may hold as Python objects (:func:`result_bytes`; more is a
            :class:`QueryError`), counted as they are fetched.

    Raises:
        InputError: the file does not exist, is not a database, or DuckDB is asked for but not installed.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_rows: int = DEFAULT_MAX_ROWS, engine: str | None = None,
                 max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES) -> None:
        p = Path(path)
        if not p.is_file():
            raise InputError(f"--db {p}: no such database file. Pass the path of a SQLite (or DuckDB) file.")
        if timeout_s <= 0:
            raise InputError(f"--timeout (timeout_s) must be > 0 seconds, got {timeout_s!r}. Pass a positive number of seconds.")
        if max_rows < 1:
            raise InputError(f"--max-rows (max_rows) must be ≥ 1, got {max_rows!r}. Pass a positive row limit.")
        check_max_result_bytes(max_result_bytes)
        self.path = p
        self.timeout_s = float(timeout_s)
        self.max_rows = int(max_rows)
        self.max_result_bytes = int(max_result_bytes)
        self.engine = engine or _guess_engine(p)
        self._schema: dict[str, list[str]] | None = None
        if self.engine == "sqlite":
            self._conn = self._open_sqlite(p)
        elif self.engine == "duckdb":
            self._conn = self._open_duckdb(p)
        else:
            raise InputError(f"engine must be 'sqlite' or 'duckdb', got {engine!r}.")

    # -- SQLite -----------------------------------------------------------------------------------------------
    def _open_sqlite(self, p: Path) -> sqlite3.Connection:
        uri = "file:" + urllib.parse.quote(str(p.resolve())) + "?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA query_only=ON")
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"--db {p}: not a SQLite database ({exc}). Pass a SQLite file, or a DuckDB file with the duckdb extra installed.") from None
        conn.set_authorizer(_authorize)
        return conn

    # -- DuckDB -----------------------------------------------------------------------------------------------
    def _open_duckdb(self, p: Path) -> Any:
        try:
            import duckdb  # noqa: F401 - present here, or the file cannot be opened
        except ImportError:
            raise InputError(f"--db {p}: a DuckDB file needs the optional extra: pip install 'goldeval[duckdb]'.") from None
        config = {
            "enable_external_access": False,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            # Memory: intermediates bounded, never spilled next to the user's database file; two threads (CI
            # machines have two cores, and each thread keeps its own buffers).
            "memory_limit": DUCKDB_MEMORY_LIMIT,
            "temp_directory": "",
            "threads": min(2, os.cpu_count() or 1),
        }
        # The worker module, like DuckDB, only for a DuckDB file; it runs the queries in a process of its own.
        from goldeval.answers.duckdb_worker import DuckDBWorker, worker_address_space

        return DuckDBWorker(p, config, address_space=worker_address_space(self.max_result_bytes))

    # -- public -----------------------------------------------------------------------------------------------
    @property
    def query_dialect(self) -> str:
        """The sqlglot dialect the queries are read in (``sqlite`` or ``duckdb``)."""
        return "duckdb" if self.engine == "duckdb" else "sqlite"

    def schema(self) -> dict[str, list[str]]:
        """``{table: [columns]}``, lower-cased (for mustNotUse on ``SELECT *``)."""
        if self._schema is None:
            # The reads below call Python back (the authorizer, the text factory); a Ctrl-C raised inside such a
            # callback is swallowed by sqlite3 (the statement is merely denied), so here too the signals are
            # deferred and re-raised once the reads are done.
            with _signals_deferred([]) if self.engine == "sqlite" else contextlib.nullcontext():
                self._schema = self._read_schema()
        return self._schema

    def _read_schema(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        try:
            if self.engine == "sqlite":
                names = [r[0] for r in self._conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")]
                for t in names:
                    cols = self._conn.execute(f"SELECT * FROM \"{t.replace(chr(34), chr(34) * 2)}\" LIMIT 0").description or []
                    out[t.lower()] = [c[0].lower() for c in cols]
            else:
                _, rows = self._conn.query("SELECT table_name, column_name FROM information_schema.columns",
                                           timeout_s=self.timeout_s, max_rows=self.max_rows,
                                           max_result_bytes=self.max_result_bytes)
                for t, c in rows:
                    out.setdefault(t.lower(), []).append(c.lower())
        except Exception:  # schema is a convenience for mustNotUse; a failure leaves it empty
            out = {}
        return out

    def execute(self, sql: str) -> QueryResult:
        """Run one read-only query within the time and row limits.

        Args:
            sql: One SQL statement (a trailing ``;`` is fine).

        Returns:
            :class:`QueryResult` with every row (at most ``max_rows``).

        Raises:
            QueryError: the database refused or failed the query (message included), the query wrote or tried
                to, ran past ``timeout_s``, or returned more than ``max_rows`` rows.
        """
        if not isinstance(sql, str) or not sql.strip():
            raise QueryError(f"final_query must be a non-empty SQL string, got {sql!r}.")
        if self.engine == "duckdb":
            return self._execute_duckdb(sql)
        return self._execute_sqlite(sql)

    def _execute_sqlite(self, sql: str) -> QueryResult:
        start = time.monotonic()
        # A Ctrl-C (or SIGTERM) whose KeyboardInterrupt were raised inside the progress callback would be swallowed
        # by sqlite3 and come back as OperationalError("interrupted"): a case unscored, the run going on. So while
        # the query runs the signals only set a flag; the callback stops the VM on it, and the signal's own handler
        # runs (raises KeyboardInterrupt) once the query has stopped.
        watch = _Progress(start + self.timeout_s)
        with _signals_deferred(watch.caught):
            return self._execute_sqlite_inner(sql, watch, start)

    def _execute_sqlite_inner(self, sql: str, watch: _Progress, start: float) -> QueryResult:
        self._conn.set_progress_handler(watch.progress, 1000)
        try:
            try:
                cur = self._conn.execute(sql)
                columns, rows = self._fetch_limited(cur)
            except sqlite3.OperationalError as exc:
                if not str(exc).startswith(_NOT_UTF8):
                    raise
                # A text cell that is not UTF-8: the query again, every text cell read by _decode (UTF-8, else
                # Latin-1). Cells are read by the driver's own UTF-8 decoding first (no Python call per cell; the
                # same strings wherever it succeeds).
                self._conn.text_factory = _decode
                try:
                    cur = self._conn.execute(sql)
                    columns, rows = self._fetch_limited(cur)
                finally:
                    self._conn.text_factory = str
            if cur.description is None:
                raise QueryError("the statement returned no result set (only a SELECT query can be judged).")
        except sqlite3.Error as exc:
            if watch.timed_out:
                raise QueryError(f"the query ran past the {self.timeout_s:g} s time limit and was stopped. Raise --timeout or simplify the query.") from None
            msg = str(exc)
            if "string or blob too big" in msg:
                raise QueryError(f"the query built a string or blob over {MAX_VALUE_BYTES:,} bytes (the value limit) and was stopped "
                                 f"(SQLite: {msg}). An answer never needs such a value; fix the query.") from None
            if "not authorized" in msg or "authorization denied" in msg or "prohibited" in msg or "readonly" in msg.replace("-", "") or "read-only" in msg:
                raise QueryError(f"refused: the connection is read-only and the query tried to change the database or its connection (SQLite: {msg}).") from None
            raise QueryError(f"SQLite error: {msg}") from None
        except sqlite3.Warning as exc:  # e.g. "You can only execute one statement at a time."
            raise QueryError(f"SQLite refused the query: {exc}") from None
        finally:
            self._conn.set_progress_handler(None, 0)
        return QueryResult(columns, rows, time.monotonic() - start, "sqlite")

    def _fetch_limited(self, cur: Any) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of an executed cursor, within the row and size limits (:func:`fetch_bounded`; a
        SQLite value is at most :data:`MAX_VALUE_BYTES`, a DuckDB one unbounded)."""
        columns = [d[0] for d in cur.description] if cur.description else []
        rows = fetch_bounded(cur, len(columns), max_rows=self.max_rows, max_result_bytes=self.max_result_bytes,
                             value_bytes=MAX_VALUE_BYTES if self.engine == "sqlite" else None)
        return columns, rows

    def _execute_duckdb(self, sql: str) -> QueryResult:
        import duckdb
        import sqlglot
        from sqlglot import exp

        try:
            trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
        except Exception as exc:
            raise QueryError(f"the query does not parse as DuckDB SQL ({str(exc).splitlines()[0][:200]}).") from None
        if len(trees) != 1 or not isinstance(trees[0], (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Subquery)):
            kind = type(trees[0]).__name__ if trees else "nothing"
            raise QueryError(f"refused: only one read-only query (SELECT / WITH) may run, got {kind} ({len(trees)} statement(s)).")
        start = time.monotonic()
        # In the DuckDB worker process (goldeval.answers.duckdb_worker): killed past the time limit, bounded in
        # memory, stopped by a Ctrl-C here.
        columns, rows = self._conn.query(sql, timeout_s=self.timeout_s, max_rows=self.max_rows,
                                         max_result_bytes=self.max_result_bytes)
        return QueryResult(columns, rows, time.monotonic() - start, "duckdb")

    def close(self) -> None:
        try:
            self._conn.close()
        except Exception:  # closing twice is harmless
            pass

    def __enter__(self) -> ReadOnlyDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _guess_engine(p: Path) -> str:
    if p.suffix.lower() in (".duckdb", ".ddb"):
        return "duckdb"
    try:
        with p.open("rb") as fh:
            head = fh.read(16)
    except OSError:
        return "sqlite"
    if head[8:12] == b"DUCK":
        return "duckdb"
    return "sqlite"


def _authorize(action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None) -> int:
    """SQLite authorizer: read-only statements pass; everything that writes or reaches outside is denied."""
    if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE):
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION:
        return sqlite3.SQLITE_DENY if (arg2 or "").lower() in _DENIED_FUNCTIONS else sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA:
        # arg1 = pragma name, arg2 = its argument; the listed pragmas only look things up, whatever the argument.
        if (arg1 or "").lower() in _READ_PRAGMAS:
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_DENY


def open_database(path: str | os.PathLike[str] | None, *, sql_dialect: str | None = None, password: str | None = None,
                  **options: Any) -> Any:
    """The read-only database for ``--db``: a :class:`ReadOnlyDatabase` for a file, a
    :class:`goldeval.answers.postgres.PostgresDatabase` for a ``postgresql://`` URL, ``None`` for ``None``.

    Args:
        path: A SQLite or DuckDB file, or a PostgreSQL URL.
        sql_dialect: The dialect the queries are written in (PostgreSQL only: they are translated first).
        password: A PostgreSQL password given apart from the URL.
        options: ``timeout_s``, ``max_rows``, ``max_result_bytes``, ``engine`` (files only).

    Raises:
        InputError: the database cannot be opened, or ``sql_dialect`` is given for a file database.
    """
    if path is None:
        return None
    from goldeval.answers.postgres import PostgresDatabase, is_postgres_url

    if is_postgres_url(path):
        options.pop("engine", None)
        return PostgresDatabase(str(path), sql_dialect=sql_dialect, password=password, **options)
    db = ReadOnlyDatabase(path, **options)
    if sql_dialect not in (None, db.query_dialect):
        db.close()
        raise InputError(f"--sql-dialect {sql_dialect}: translating queries applies to a PostgreSQL --db; {path} is a "
                         f"{db.engine} file, whose queries run as written. Drop --sql-dialect.")
    return db


def rows_as_lists(result: QueryResult) -> list[list[Any]]:
    """Rows as lists, JSON-ready: a ``Decimal`` (DuckDB ``DECIMAL``, PostgreSQL ``numeric``) as the text of its exact
    digits (``"1234567.80"``: a float would drop the scale, and JSON writers refuse a Decimal), ``bytes`` as hex
    (as the judge compares them)."""
    from decimal import Decimal

    def cell(v: Any) -> Any:
        if isinstance(v, Decimal):
            return str(v)
        if isinstance(v, (bytes, bytearray, memoryview)):
            return bytes(v).hex()
        return v

    return [[cell(v) if isinstance(v, (Decimal, bytes, bytearray, memoryview)) else v for v in r] for r in result.rows]


#: Most rows fetched from a cursor at a time (see :func:`fetch_bounded`).
_FETCH_BLOCK = 10_000
#: The part of the size limit one block of rows is sized to (1/16: a result stops within 1/16 over its limit).
_BLOCK_SHARE = 16
#: Python objects that hold other objects (PostgreSQL arrays and json, DuckDB lists, structs and maps).
_NESTED = (list, tuple, dict, set, frozenset)


def result_bytes(rows: Sequence[Sequence[Any]], *, nested: bool = True) -> int:
    """Estimated memory of *rows* as Python objects, bytes: what the size limit (:func:`fetch_bounded`) counts.

    Every row and every value counts its ``sys.getsizeof``, containers with everything they hold, and each row
    8 bytes for its slot in the list of rows. On CPython 3.11 (64-bit) a row of ``k`` values is ``40 + 8k``
    bytes, a text of ``n`` ASCII characters ``49 + n`` (``73 + n`` to ``76 + 4n`` beyond ASCII), a blob
    ``33 + n``, an int 28, a float 24, a ``Decimal`` 104, a ``None`` 16: a result costs several times its raw
    bytes in small values (1,000,000 rows of an int, a 10-character text and a float: 183 MB).

    Args:
        rows: ``(n, k)`` row tuples (or lists) as a cursor returns them.
        nested: Values may be containers (PostgreSQL, DuckDB); ``False`` (SQLite, whose values never are) skips
            looking for them.

    Returns:
        The estimate, bytes (0 for no rows). Shared objects (``None``, small ints) are counted at each use: an
        upper bound of what the rows keep alive.

    Examples:
        >>> result_bytes([(1, "abc")])  # row 56 + slot 8 + int 28 + text 52
        144

    Source: CPython's ``sys.getsizeof`` (object header, ``PyASCIIObject``/``PyTupleObject`` layouts); goldeval.
    """
    if not rows:
        return 0
    size = sys.getsizeof
    cells = chain.from_iterable(rows)
    first = rows[0]
    if type(first) is tuple:  # a cursor's rows: tuples of one width, whose size depends on the width alone
        total = len(rows) * (size(first) + 8) + sum(map(size, cells))
    else:
        total = sum(map(size, rows)) + 8 * len(rows) + sum(map(size, cells))
    if nested and not _NESTED_TYPES.isdisjoint(map(type, chain.from_iterable(rows))):
        total += sum(_inner_bytes(v) for v in chain.from_iterable(rows) if isinstance(v, _NESTED))
    return total


_NESTED_TYPES = frozenset(_NESTED)


def _inner_bytes(value: Any) -> int:
    """What a container holds (its own ``getsizeof`` excluded), recursively."""
    size = sys.getsizeof
    items = chain.from_iterable(value.items()) if isinstance(value, dict) else value
    total = 0
    for item in items:
        total += size(item)
        if isinstance(item, _NESTED):
            total += _inner_bytes(item)
    return total


def size_limit_message(max_result_bytes: int, counted: int, n_rows: int) -> str:
    """The reason a case is unscored when its query's result is over the size limit (shared by every engine)."""
    return (f"the query's result is over {max_result_bytes / 1e6:,.6g} MB (the size limit): {_mb(counted)} MB "
            f"of Python objects in the first {n_rows:,} row{'' if n_rows == 1 else 's'}, and it was stopped there. "
            "Narrow the query (fewer rows or columns, shorter values) or raise --max-result-mb.")


def _mb(n_bytes: int) -> str:
    """Megabytes (10^6 bytes) as the messages print them: one decimal from 1 MB, three significant digits below."""
    return f"{n_bytes / 1e6:,.1f}" if n_bytes >= 1_000_000 else f"{n_bytes / 1e6:.3g}"


def check_max_result_bytes(max_result_bytes: Any) -> None:
    """Refuse a size limit that is not a positive whole number of bytes.

    Raises:
        InputError: *max_result_bytes* is not an int ≥ 1.
    """
    if isinstance(max_result_bytes, bool) or not isinstance(max_result_bytes, int) or max_result_bytes < 1:
        raise InputError(f"--max-result-mb (max_result_bytes) must be a positive number of bytes, got "
                         f"{max_result_bytes!r}. Pass a positive size, e.g. --max-result-mb 256.")


def fetch_bounded(cur: Any, width: int, *, max_rows: int, max_result_bytes: int, value_bytes: int | None = None,
                  between_blocks: Callable[[], None] | None = None) -> list[tuple[Any, ...]]:
    """Every row of an executed cursor, fetched in blocks and counted (:func:`result_bytes`) as they come, so that
    a result over a limit stops after about the limit and the database is not asked for the rest.

    Blocks: the first holds as many rows as fit in the limit at the largest size a row can have (*value_bytes*
    per value; one row when values are unbounded); each later one as many as fit in 1/16 of the limit at the
    largest mean row size of the blocks so far (at most 10,000, at most one past *max_rows*). A result of alike
    rows thus stops within 1/16 over the limit; rows that grow suddenly can pass it by one block. A block shorter
    than asked for ends the fetch (the drivers return one only at the end of the rows); when *value_bytes* bounds
    it within what is left of the limit it is not counted (a small SQLite result, the common case, is not counted
    at all).

    Args:
        cur: A DB-API cursor with ``fetchmany`` (sqlite3, DuckDB, a psycopg server-side cursor).
        width: ``k``, the result's columns.
        max_rows: Most rows (> 0).
        max_result_bytes: Most bytes of Python objects (> 0).
        value_bytes: The most bytes one value can hold (SQLite's length limit), or ``None`` when unbounded.
        between_blocks: Called after each block but the last (PostgreSQL renews its time limit there).

    Returns:
        ``(n, k)`` row tuples, ``n <= max_rows``.

    Raises:
        QueryError: more than *max_rows* rows, or more than *max_result_bytes* bytes (:func:`size_limit_message`).

    Source: ``DESIGN.md`` "Re-executing queries safely" (every query bounded in time, rows and bytes), goldeval.
    """
    rows: list[tuple[Any, ...]] = []
    counted = 0
    largest = 0  # largest mean bytes of a row in a block so far
    if value_bytes is not None:
        worst_row = 40 + 8 * width + 8 + width * (value_bytes + 49)
        n = max_result_bytes // worst_row
    else:
        worst_row = 0
        n = 1
    while True:
        n = max(1, min(n, _FETCH_BLOCK, max_rows + 1 - len(rows)))
        batch = cur.fetchmany(n)
        if not batch:
            break
        rows.extend(batch)
        if len(rows) > max_rows:
            raise QueryError(f"the query returned more than {max_rows} rows (the row limit). Narrow the query or raise --max-rows.")
        if len(batch) < n and worst_row and counted + len(batch) * worst_row <= max_result_bytes:
            break  # the last block, within the limit at the largest values it could hold
        size = result_bytes(batch, nested=value_bytes is None)
        counted += size
        if counted > max_result_bytes:
            raise QueryError(size_limit_message(max_result_bytes, counted, len(rows)))
        if len(batch) < n:
            break
        if between_blocks is not None:
            between_blocks()
        largest = max(largest, -(-size // len(batch)))
        n = max_result_bytes // _BLOCK_SHARE // largest
    return rows


class _Progress:
    """The SQLite progress callback of one query: stops the VM once a deferred signal was caught (*caught*, filled
    by :class:`_signals_deferred`) or the *deadline* (``time.monotonic()`` seconds) has passed, and says which.
    One object a query, its bound method the callback (no closures to build a query, issue 15)."""

    __slots__ = ("caught", "deadline", "timed_out")

    def __init__(self, deadline: float) -> None:
        self.caught: list[int] = []
        self.deadline = deadline
        self.timed_out = False

    def progress(self) -> int:
        """0 to go on; 1 (stop the VM) after a caught signal or past the deadline (then :attr:`timed_out`)."""
        if self.caught:
            return 1
        if time.monotonic() > self.deadline:
            self.timed_out = True
            return 1
        return 0


class _signals_deferred:  # noqa: N801 - used as a function: ``with _signals_deferred(caught):``
    """For the block, SIGINT and SIGTERM only append their number to *caught*; on leaving it the handlers in force
    before are restored and, for each signal caught, called (``default_int_handler`` raises KeyboardInterrupt; the
    run store's SIGTERM handler does too; a default SIGTERM disposition terminates the process as it would have).
    Outside the main thread (where handlers cannot be set) the block runs unchanged.

    The handlers are swapped with ``_signal``, the C module that :mod:`signal` wraps: the same calls without the
    enum conversions, which made the swap cost more than a small query (34 µs against 1.5 µs, issue 15). A class,
    not a ``contextlib.contextmanager`` generator: every query enters one, and the generator's machinery cost
    about as much as the swap itself."""

    __slots__ = ("caught", "previous")

    def __init__(self, caught: list[int]) -> None:
        self.caught = caught
        self.previous: dict[int, Any] = {}

    def _note(self, signum: int, frame: Any) -> None:
        self.caught.append(signum)

    def __enter__(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        previous, note = self.previous, self._note
        try:
            for sig in _DEFERRED:
                prev = _signal.getsignal(sig)
                if prev is None or (not callable(prev) and prev == _signal.SIG_IGN):
                    continue
                previous[sig] = prev
                _signal.signal(sig, note)
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *exc: object) -> None:
        previous = self.previous
        for sig, prev in previous.items():
            _signal.signal(sig, prev)
        for sig in dict.fromkeys(self.caught):
            prev = previous.get(sig)
            if callable(prev):
                prev(sig, None)
            elif prev == _signal.SIG_DFL:
                os.kill(os.getpid(), sig)


#: The signals :func:`_signals_deferred` holds back (plain ints, as ``_signal`` takes them).
_DEFERRED = (int(signal.SIGINT), int(signal.SIGTERM))
