"""Read-only re-execution of final queries on a PostgreSQL server (psycopg 3; ``pip install 'goldeval[postgres]'``).

:class:`PostgresDatabase` has the interface of :class:`goldeval.answers.sql.ReadOnlyDatabase` (``execute``,
``schema``, ``close``, ``engine``, ``query_dialect``) plus :meth:`PostgresDatabase.identity`, which stands in for a
file's sha256. Running someone else's SQL on a customer's server must not change it, so there are two guards:

The parser (first guard, :func:`check_query`)
    The statement is parsed with sqlglot (dialect ``postgres``) before it is sent. Refused: anything that does not
    parse; more than one statement; any statement but a query (``SELECT`` / ``WITH`` / set operation /
    ``VALUES``): transaction control (``BEGIN``, ``COMMIT``, ``ROLLBACK``, ``SET TRANSACTION``), every ``SET`` and
    ``RESET`` (``SET ROLE``, ``SET SESSION AUTHORIZATION``, ``SET default_transaction_read_only``), ``SHOW``,
    ``COPY``, DDL, ``DO``, ``CALL``, ``PREPARE``/``EXECUTE``, ``LISTEN``/``NOTIFY``; inside a query, data-modifying
    CTEs (``WITH x AS (DELETE …)``), ``SELECT … INTO`` and row locks (``FOR UPDATE``/``FOR SHARE``); and the
    functions of :data:`DENIED_FUNCTIONS` (``dblink``, large objects, server file access such as
    ``pg_read_file``, settings (``set_config``), signalling or administering the server, session-level advisory
    locks, sequences, and ``query_to_xml``-style functions that run SQL given as text).
The server (second guard)
    Each query runs in its own ``BEGIN READ ONLY`` transaction that is always rolled back, with
    ``SET LOCAL statement_timeout`` (from ``timeout_s``) and ``lock_timeout``, through a server-side cursor
    (``DECLARE … CURSOR FOR``: the server itself accepts only one query there, over the extended protocol) from
    which at most ``max_rows + 1`` rows, and about ``max_result_bytes`` of them as Python objects, are fetched
    (:func:`goldeval.answers.sql.fetch_bounded`; a value over the server's 1 GB limit fails on the server).
    A READ ONLY transaction does not stop a superuser's
    ``COPY … TO PROGRAM``, file functions or ``SET ROLE``: for those the parser is the guard, and a read-only role
    (README, "PostgreSQL") is the recommended way to connect.

``pg_sleep`` is allowed and stopped by the time limit. Ctrl-C during a query cancels it on the server (psycopg
sends a cancel request) and the transaction is rolled back before ``KeyboardInterrupt`` propagates.

Values come back as the judge reads SQLite's, except that ``numeric`` is exact: ``int`` when whole (at any size)
and ``Decimal`` otherwise (``NaN``/``Infinity`` as floats), so the judge compares it exactly or within the
golden's display precision, never within 1e-6 relative (:mod:`goldeval.answers.numbers`); ``bool`` as ``bool`` (which meets ``1``/``0``), ``date``/``timestamp`` as Python dates, and
``timestamp with time zone`` in UTC (the session's ``TimeZone`` is set to UTC); arrays as lists and ``json``/
``jsonb`` as Python objects; ``interval``, ``uuid``, network addresses and ranges as PostgreSQL's own text.

The password: from ``PGPASSWORD`` or ``~/.pgpass`` (libpq reads them), or written in the URL. A password in the URL
is accepted but kept only in memory: :func:`parse_url` splits it out, the URL recorded anywhere is the redacted
one, and error messages are scrubbed of it.

Source: goldeval issue 13; PostgreSQL documentation, "SET TRANSACTION" (READ ONLY), "Client Connection Defaults"
(statement_timeout), "DECLARE"; psycopg 3 "Server-side cursors" and "Interrupting a query".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from goldeval.answers.sql import (DEFAULT_MAX_RESULT_BYTES, DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S, QueryError, QueryResult,
                                  check_max_result_bytes, fetch_bounded)
from goldeval.errors import InputError

__all__ = ["PostgresDatabase", "PostgresTarget", "check_query", "is_postgres_url", "parse_url", "DENIED_FUNCTIONS"]

#: Function names (lower case, any schema) a judged query may not call: each reaches outside the read-only
#: transaction (files, programs, other servers, the server's own state) or could switch off a guard.
DENIED_FUNCTIONS = re.compile(
    r"^(?:"
    r"dblink\w*"                                            # connections to other servers (dblink extension)
    r"|lo_\w+|loread|lowrite|be_lo_\w+"                     # large objects (lo_import / lo_export touch server files)
    r"|pg_read_file|pg_read_binary_file|pg_ls_\w+|pg_stat_file|pg_file_\w+|pg_logdir_ls"  # server file access
    r"|set_config"                                          # settings (could lift statement_timeout or read-only)
    r"|pg_terminate_backend|pg_cancel_backend|pg_reload_conf|pg_rotate_logfile\w*|pg_promote|pg_switch_wal"
    r"|pg_create_restore_point|pg_backup_\w+|pg_start_backup|pg_stop_backup|pg_wal_replay_\w+"
    r"|pg_log_backend_memory_contexts|pg_stat_reset\w*|pg_import_system_collations|binary_upgrade_\w+"
    r"|pg_\w*replication_slot\w*|pg_replication_origin_\w+|pg_logical_\w+"   # replication
    r"|pg_advisory\w*|pg_try_advisory\w*"                   # session-level locks outlive the rollback
    r"|pg_notify"                                           # messages to other sessions
    r"|nextval|setval"                                      # sequences change outside transactions
    r"|query_to_xml\w*|query_to_xmlschema|cursor_to_xml\w*|cursor_to_xmlschema"  # run SQL given as text
    r")$"
)

#: Statement (and clause) kinds that are refused wherever they appear in the parsed tree.
_DENIED_NODES = ("Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "Command", "Copy", "Set",
                 "Transaction", "Commit", "Rollback", "Lock", "Into", "TruncateTable", "Grant", "Revoke", "Use",
                 "Pragma", "Analyze", "Kill", "LoadData", "Describe", "Show", "Comment", "Cache", "Uncache",
                 "Refresh", "Declare", "Execute")
#: Statement kinds that may run (one of them, alone).
_QUERY_NODES = ("Select", "SetOperation", "Union", "Intersect", "Except", "Subquery", "Values")

_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(target: object) -> bool:
    """True for a ``postgresql://`` or ``postgres://`` URL (what ``--db`` takes for a server)."""
    return isinstance(target, str) and target.lower().startswith(_SCHEMES)


@dataclass(frozen=True, slots=True)
class PostgresTarget:
    """A parsed ``--db`` URL.

    Attributes:
        url: The URL without any password (what is recorded, printed and written).
        password: The password written in the URL, or ``None`` (then libpq reads ``PGPASSWORD`` / ``~/.pgpass``).
            Never recorded; excluded from ``repr``.
    """

    url: str
    password: str | None

    def __repr__(self) -> str:
        return f"PostgresTarget(url={self.url!r}, password={'***' if self.password else None})"


def parse_url(url: str) -> PostgresTarget:
    """Split the password out of a PostgreSQL URL.

    Args:
        url: ``postgresql://user[:password]@host[:port]/dbname[?param=value…]`` (libpq's URI form; a
            ``password=`` query parameter counts as a password too).

    Returns:
        :class:`PostgresTarget` with the redacted URL and the password.

    Raises:
        InputError: not a ``postgresql://`` URL, or libpq cannot read it (the message never holds the password).
    """
    if not is_postgres_url(url):
        raise InputError(f"--db {url!r}: expected a postgresql://user@host:port/dbname URL.")
    parts = urllib.parse.urlsplit(url)
    password = urllib.parse.unquote(parts.password) if parts.password is not None else None
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    kept = []
    for k, v in query:
        if k.lower() == "password":
            password = v
        else:
            kept.append((k, v))
    netloc = parts.netloc.rsplit("@", 1)
    if len(netloc) == 2:
        user = netloc[0].split(":", 1)[0]
        host = netloc[1]
        netloc_s = f"{user}@{host}"
    else:
        netloc_s = parts.netloc
    redacted = urllib.parse.urlunsplit((parts.scheme, netloc_s, parts.path, urllib.parse.urlencode(kept), parts.fragment))
    try:
        from psycopg.conninfo import conninfo_to_dict

        conninfo_to_dict(redacted)
    except ImportError:
        pass  # reported when connecting
    except Exception as exc:
        raise InputError(f"--db {redacted}: not a valid PostgreSQL URL ({_scrub(str(exc).strip(), password)}). "
                         "Write it as postgresql://user@host:port/dbname.") from None
    return PostgresTarget(redacted, password)


def _scrub(message: str, password: str | None) -> str:
    if password:
        message = message.replace(password, "***").replace(urllib.parse.quote(password, safe=""), "***")
    return message


@contextlib.contextmanager
def _quiet_sqlglot() -> Iterator[None]:
    """sqlglot logs a warning when it falls back to an opaque Command; library code does not print."""
    log = logging.getLogger("sqlglot")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def check_query(sql: str) -> None:
    """Refuse, by parsing, a statement that must not run on a customer's server (see the module docstring).

    Args:
        sql: The statement as it will be sent (PostgreSQL dialect).

    Raises:
        QueryError: ``refused: …`` naming what was found and why it is refused, or that it does not parse.

    Source: goldeval issue 13 (the list of refusals); sqlglot's PostgreSQL parser.
    """
    import sqlglot
    from sqlglot import exp

    try:
        with _quiet_sqlglot():
            trees = [t for t in sqlglot.parse(sql, read="postgres") if t is not None]
    except Exception as exc:  # sqlglot raises several error types; any means "cannot be checked"
        raise QueryError(f"refused: the query does not parse as PostgreSQL SQL, so it cannot be checked as read-only "
                         f"({str(exc).splitlines()[0][:200]}).") from None
    trees = [t for t in trees if type(t).__name__ != "Semicolon"]
    if len(trees) != 1:
        raise QueryError(f"refused: only one statement may run, got {len(trees)} "
                         f"({', '.join(_kind(t) for t in trees) or 'nothing'}).")
    tree = trees[0]
    query_types = tuple(getattr(exp, n) for n in _QUERY_NODES if hasattr(exp, n))
    if not isinstance(tree, query_types):
        raise QueryError(f"refused: only a read-only query (SELECT / WITH / VALUES) may run, got {_kind(tree)}.")
    denied = tuple(getattr(exp, n) for n in _DENIED_NODES if hasattr(exp, n))
    for node in tree.walk():
        if isinstance(node, denied):
            if isinstance(node, exp.Into):
                what = "SELECT … INTO (it creates a table)"
            elif isinstance(node, exp.Lock):
                what = "a row lock (FOR UPDATE / FOR SHARE)"
            else:
                what = f"{_kind(node)} inside the query"
            raise QueryError(f"refused: {what}; only reading is allowed.")
        if isinstance(node, exp.Func):
            for name in _function_names(node):
                if DENIED_FUNCTIONS.match(name):
                    raise QueryError(f"refused: the function {name}() is not allowed in a judged query (it reaches "
                                     "outside the read-only transaction: files, programs, other servers, settings or "
                                     "the server's state).")


def _function_names(node: Any) -> list[str]:
    names = []
    if type(node).__name__ == "Anonymous":
        names.append(str(node.name).lower())
    else:
        names.extend(n.lower() for n in type(node).sql_names())
    return names


def _kind(node: Any) -> str:
    if type(node).__name__ == "Command":
        word = str(node.this or "").split()[0:1]
        return (word[0].upper() if word else "a command") + " (a command)"
    return type(node).__name__.upper()


# --- value loading ----------------------------------------------------------------------------------------------

def _register_loaders(conn: Any) -> None:
    """numeric → int/Decimal; interval, uuid, network and range types → their PostgreSQL text."""
    from psycopg.adapt import Loader
    from psycopg.types.string import TextLoader

    class NumericLoader(Loader):
        def load(self, data: Any) -> Any:
            s = bytes(data).decode("ascii")
            if s.lstrip("-").isdigit():
                return int(s)  # exact at any size, as SQLite's and JSON's integers
            if s[-1:].isdigit():
                return Decimal(s)  # a fraction, exactly as the server holds it (issue 11: decimals compare exactly)
            return float(s)  # NaN, Infinity, -Infinity

    conn.adapters.register_loader("numeric", NumericLoader)
    for name in ("interval", "uuid", "inet", "cidr", "macaddr", "macaddr8", "int4range", "int8range", "numrange",
                 "tsrange", "tstzrange", "daterange", "int4multirange", "int8multirange", "nummultirange",
                 "tsmultirange", "tstzmultirange", "datemultirange", "money"):
        try:
            conn.adapters.register_loader(name, TextLoader)
        except Exception:  # a type this server version does not have
            pass


_CATALOG_SQL = """
SELECT n.nspname, c.relname, c.relkind::text, a.attname, format_type(a.atttypid, a.atttypmod),
       pg_catalog.pg_table_is_visible(c.oid)
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'
  AND n.nspname NOT LIKE 'pg\\_temp\\_%'
ORDER BY n.nspname, c.relname, a.attnum
"""


class PostgresDatabase:
    """A read-only view of one PostgreSQL database; use as a context manager or call :meth:`close`.

    Args:
        url: ``postgresql://user[:password]@host:port/dbname`` (a password in it is kept in memory only).
        timeout_s: Time limit per query, seconds (> 0): ``SET LOCAL statement_timeout`` and a wall-clock check
            between fetches.
        max_rows: Most rows a query may return; at most ``max_rows + 1`` are fetched (more is a QueryError).
        sql_dialect: The dialect the queries handed to :meth:`execute` are written in: ``None``/``"postgres"``
            runs them as written; ``"sqlite"`` (or any sqlglot dialect) transpiles them first
            (:func:`goldeval.answers.transpile.to_postgres`).
        password: A password given apart from the URL (it wins over one in the URL).
        max_result_bytes: Most bytes a query's rows may hold as Python objects
            (:func:`goldeval.answers.sql.fetch_bounded`; more is a QueryError). One value is at most what the
            server allows (1 GB; a query building a larger one fails on the server), and it is read whole before
            it is counted.

    Raises:
        InputError: psycopg is not installed, the URL is malformed, or the server cannot be reached or refuses
            the login (the message names the redacted URL and what to check).
    """

    engine = "postgresql"

    def __init__(self, url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, max_rows: int = DEFAULT_MAX_ROWS,
                 sql_dialect: str | None = None, password: str | None = None,
                 max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES) -> None:
        if timeout_s <= 0:
            raise InputError(f"--timeout (timeout_s) must be > 0 seconds, got {timeout_s!r}. Pass a positive number of seconds.")
        if max_rows < 1:
            raise InputError(f"--max-rows (max_rows) must be ≥ 1, got {max_rows!r}. Pass a positive row limit.")
        check_max_result_bytes(max_result_bytes)
        target = parse_url(url)
        self.url = target.url
        self._password = password if password is not None else target.password
        self.timeout_s = float(timeout_s)
        self.max_rows = int(max_rows)
        self.max_result_bytes = int(max_result_bytes)
        self.sql_dialect = None if sql_dialect in (None, "postgres", "postgresql") else sql_dialect
        self._schema: dict[str, list[str]] | None = None
        self._catalog: list[tuple[Any, ...]] | None = None
        self._conn: Any = None
        self._connect()

    @property
    def query_dialect(self) -> str:
        """The sqlglot dialect queries handed to :meth:`execute` are read in (``postgres`` unless transpiling)."""
        return self.sql_dialect or "postgres"

    def _connect(self) -> None:
        try:
            import psycopg
        except ImportError:
            raise InputError(f"--db {self.url}: a PostgreSQL database needs the optional extra: pip install 'goldeval[postgres]'.") from None
        kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": 10, "application_name": "goldeval"}
        if self._password is not None:
            kwargs["password"] = self._password
        try:
            conn = psycopg.connect(self.url, **kwargs)
        except psycopg.Error as exc:
            msg = _scrub(str(exc).strip().replace("\n", " "), self._password)
            raise InputError(f"--db {self.url}: cannot connect ({msg}). Check the host, port, database and user, and the "
                             "password (PGPASSWORD or ~/.pgpass).") from None
        _register_loaders(conn)
        self._conn = conn

    # -- public -----------------------------------------------------------------------------------------------
    def _read_catalog(self) -> list[tuple[Any, ...]]:
        if self._catalog is None:
            with self._transaction():
                self._catalog = [tuple(r) for r in self._conn.execute(_CATALOG_SQL).fetchall()]
        return self._catalog

    def schema(self) -> dict[str, list[str]]:
        """``{table: [columns]}``, lower-cased, from the catalog (for mustNotUse on ``SELECT *``).

        Tables and views the search path finds are keyed by their bare name; every table also by
        ``schema.table``.
        """
        if self._schema is None:
            out: dict[str, list[str]] = {}
            try:
                for nsp, rel, _kind_, col, _type, visible in self._read_catalog():
                    out.setdefault(f"{nsp}.{rel}".lower(), []).append(col.lower())
                    if visible:
                        out.setdefault(rel.lower(), []).append(col.lower())
            except QueryError:
                out = {}
            self._schema = out
        return self._schema

    def identity(self) -> dict[str, Any]:
        """What names this database in a run, in place of a file's sha256.

        Returns:
            ``{"engine": "postgresql", "url" (redacted), "server_version", "database", "catalog_sha256"}``; the
            catalog hash is the sha256 of every table's and view's schema, name, kind and columns (name and type,
            in order), outside ``pg_catalog`` and ``information_schema``. It changes when the schema changes,
            not when rows do.
        """
        cat = self._read_catalog()
        with self._transaction():
            version, dbname = self._conn.execute("SELECT current_setting('server_version'), current_database()").fetchone()
        blob = json.dumps([list(r[:5]) for r in cat], ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        return {"engine": self.engine, "url": self.url, "server_version": version, "database": dbname,
                "catalog_sha256": hashlib.sha256(blob).hexdigest()}

    def execute(self, sql: str) -> QueryResult:
        """Run one read-only query within the time and row limits.

        Args:
            sql: One SQL statement in :attr:`query_dialect` (a trailing ``;`` is fine).

        Returns:
            :class:`~goldeval.answers.sql.QueryResult` (engine ``postgresql``; when transpiled, ``notes`` holds
            the SQL that ran).

        Raises:
            QueryError: refused by the parser, refused or failed by the server (its message), ran past
                ``timeout_s``, or returned more than ``max_rows`` rows or more than ``max_result_bytes``.
            KeyboardInterrupt: passed on after the query was cancelled on the server and rolled back.
        """
        if not isinstance(sql, str) or not sql.strip():
            raise QueryError(f"final_query must be a non-empty SQL string, got {sql!r}.")
        notes: list[str] = []
        if self.sql_dialect is not None:
            from goldeval.answers.transpile import to_postgres

            sql = to_postgres(sql, read=self.sql_dialect, schema=self._catalog_columns())
            notes.append(f"transpiled from {self.sql_dialect}: {sql}")
        check_query(sql)
        import psycopg

        start = time.monotonic()
        deadline = start + self.timeout_s
        try:
            with self._transaction():
                cur = self._conn.cursor(name="goldeval_query")
                try:
                    cur.execute(sql.strip().rstrip(";"))
                    columns = [d.name for d in cur.description or []]

                    def renew_time_limit() -> None:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            raise QueryError(f"the query ran past the {self.timeout_s:g} s time limit and was stopped. "
                                             "Raise --timeout or simplify the query.")
                        self._conn.execute(f"SET LOCAL statement_timeout = {max(1, int(left * 1000))}")

                    rows = fetch_bounded(cur, len(columns), max_rows=self.max_rows,
                                         max_result_bytes=self.max_result_bytes, between_blocks=renew_time_limit)
                finally:
                    with contextlib.suppress(psycopg.Error):
                        cur.close()
        except (psycopg.errors.ProgramLimitExceeded, psycopg.errors.OutOfMemory) as exc:  # e.g. a value over 1 GB
            raise QueryError(f"the query needed more than the server allows (a value over its 1 GB limit, or more "
                             f"memory) and the server stopped it (PostgreSQL: {_first_line(exc)}). An answer never "
                             "needs that; fix the query.") from None
        except psycopg.errors.QueryCanceled:
            raise QueryError(f"the query ran past the {self.timeout_s:g} s time limit and was stopped. Raise --timeout "
                             "or simplify the query.") from None
        except (psycopg.errors.ReadOnlySqlTransaction, psycopg.errors.InsufficientPrivilege) as exc:
            raise QueryError(f"refused: the server refused the query ({_first_line(exc)}); the connection only reads.") from None
        except psycopg.OperationalError as exc:
            raise QueryError(f"PostgreSQL connection error: {_scrub(_first_line(exc), self._password)}") from None
        except psycopg.Error as exc:
            raise QueryError(f"PostgreSQL error: {_first_line(exc)}") from None
        return QueryResult(columns, rows, time.monotonic() - start, self.engine, notes)

    def _catalog_columns(self) -> dict[str, list[str]]:
        """``{table: [columns]}`` with the catalog's own spelling (for case-insensitive SQLite names)."""
        out: dict[str, list[str]] = {}
        for nsp, rel, _k, col, _t, visible in self._read_catalog():
            if visible:
                out.setdefault(rel, []).append(col)
        return out

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """``BEGIN READ ONLY`` with the session limits set LOCAL; always rolled back, also on Ctrl-C."""
        import psycopg

        if self._conn is None or self._conn.closed or self._conn.broken:
            self._connect()
        ms = max(1, int(self.timeout_s * 1000))
        self._conn.execute(f"BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = {ms}; "
                           f"SET LOCAL lock_timeout = {ms}; SET LOCAL idle_in_transaction_session_timeout = {max(ms * 4, 60_000)}; "
                           "SET LOCAL TimeZone = 'UTC'")
        try:
            yield
        finally:
            try:
                self._conn.execute("ROLLBACK")
            except psycopg.Error:
                # The connection broke (or the query could not be cancelled): close it; the next query reconnects.
                with contextlib.suppress(Exception):
                    self._conn.close()

    def close(self) -> None:
        """Close the connection (twice is harmless)."""
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()

    def __enter__(self) -> PostgresDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
