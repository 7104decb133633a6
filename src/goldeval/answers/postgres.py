"""Read-only re-execution of final queries on a PostgreSQL server (psycopg 3; ``pip install 'goldeval[postgres]'``).

:class:`PostgresDatabase` has the interface of :class:`goldeval.answers.sql.ReadOnlyDatabase` (``execute``,
``schema``, ``close``, ``engine``, ``query_dialect``) plus :meth:`PostgresDatabase.identity`, which stands in for a
file's sha256. Running someone else's SQL on a customer's server must not change it, so the role is checked and
there are two guards:

The role (checked on every connection, before any query)
    The server is asked who the connection is. A superuser, a member (directly or through other roles) of a
    superuser role, ``pg_read_server_files``, ``pg_write_server_files``, ``pg_execute_server_program`` or ``pg_write_all_data``, or a
    role that may write any table, view or foreign table of the user schemas (INSERT / UPDATE / DELETE / TRUNCATE
    granted to it, to a role it inherits or to PUBLIC, or owned by it or a role it belongs to) is refused
    (InputError) with what was found, naming ``examples/sql/readonly_role.sql``, unless ``allow_privileged``
    (``--allow-privileged-role``) accepts it; the guards below apply either way, and the identity records what was
    accepted. CREATE on a schema is not refused: it creates objects and writes no data, and DDL is refused anyway.

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
    which at most ``max_rows + 1`` rows are fetched. A READ ONLY transaction does not stop a superuser's
    ``COPY … TO PROGRAM``, file functions or ``SET ROLE``: for those the parser is the guard, and a read-only role
    (README, "PostgreSQL") is the recommended way to connect.

A connection lost while idle is made again before the next query (the role checked again, and the catalog compared
with the one read before). One lost while a query runs (the server stopped, the backend terminated), one that cannot
be made again, or a server back with other tables or columns raises :class:`~goldeval.answers.sql.DatabaseLostError`:
the server going away is not the case's failure, so it stops the run (resumable) rather than making cases unscored.

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

from goldeval.answers.sql import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S, DatabaseLostError, QueryError, QueryResult
from goldeval.errors import InputError

__all__ = ["PostgresDatabase", "PostgresTarget", "check_query", "is_postgres_url", "parse_url", "DENIED_FUNCTIONS",
           "PRIVILEGED_ROLES", "READONLY_ROLE_SCRIPT"]

#: Predefined roles whose members read or write the server's files, run programs on it or write every table: a
#: member (directly or through other roles, inherited or not) is a privileged role.
PRIVILEGED_ROLES = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program", "pg_write_all_data")

#: The script that creates the read-only role goldeval should connect as (named in the refusal of a privileged one).
READONLY_ROLE_SCRIPT = "examples/sql/readonly_role.sql"

#: Tables named in a privileged role's findings; the rest are counted.
_TABLES_NAMED = 5

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


#: Who the connection is: superuser or not, the privileged roles it is a member of (``pg_has_role … MEMBER``: direct,
#: inherited or not, as a superuser is a member of every role), the superuser roles it is a member of (it may become
#: one with SET ROLE), and each table, view or foreign table of the user
#: schemas it may write: INSERT, UPDATE, DELETE or TRUNCATE granted to it, to a role it inherits or to PUBLIC
#: (``has_table_privilege``; INSERT and UPDATE on any one column count too: ``has_any_column_privilege``), or owned by it or by a role it is a member of (an owner may grant itself any of them).
_ROLE_SQL = """
SELECT current_user::text,
       coalesce((SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user), false),
       ARRAY(SELECT r.rolname::text FROM pg_catalog.pg_roles r
             WHERE r.rolname IN (ROLES) AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')),
       ARRAY(SELECT r.rolname::text FROM pg_catalog.pg_roles r
             WHERE r.rolsuper AND r.rolname <> current_user AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')
             ORDER BY 1),
       ARRAY(SELECT json_build_array(quote_ident(n.nspname) || '.' || quote_ident(c.relname),
                                     pg_catalog.pg_has_role(current_user, c.relowner, 'MEMBER'),
                                     ARRAY(SELECT p FROM unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) p
                                           WHERE CASE WHEN p IN ('INSERT', 'UPDATE')
                                                      THEN pg_catalog.has_any_column_privilege(c.oid, p)
                                                      ELSE pg_catalog.has_table_privilege(c.oid, p) END))::text
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
               AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'
               AND n.nspname NOT LIKE 'pg\\_temp\\_%'
               AND (pg_catalog.pg_has_role(current_user, c.relowner, 'MEMBER')
                    OR pg_catalog.has_table_privilege(c.oid, 'DELETE, TRUNCATE')
                    OR pg_catalog.has_any_column_privilege(c.oid, 'INSERT, UPDATE'))
             ORDER BY n.nspname, c.relname)
""".replace("ROLES", ", ".join(f"'{r}'" for r in PRIVILEGED_ROLES))


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
        allow_privileged: Accept a privileged role (see below) knowingly (``--allow-privileged-role``); the query
            guard still applies, and :meth:`identity` records what was found.

    Attributes:
        role: The role the connection runs as (``current_user``).
        privileges: What makes that role privileged, ``[]`` for a read-only one: ``"superuser"``, ``"member of the
            superuser role postgres"`` (it may ``SET ROLE`` to it), ``"member of pg_read_server_files"`` (also ``pg_write_server_files``, ``pg_execute_server_program``,
            ``pg_write_all_data``; direct or through other roles), ``"may write public.t (owner, INSERT, …)"`` for a
            table, view or foreign table of the user schemas it may write (granted to it, to a role it inherits or
            to PUBLIC, or owned by it or a role it belongs to), the first five named and the rest counted. CREATE on
            a schema is not counted: it creates objects, it changes no data, and the guard and the READ ONLY
            transaction refuse DDL.

    Raises:
        InputError: psycopg is not installed, the URL is malformed, the server cannot be reached or refuses the
            login (the message names the redacted URL and what to check), or the role is privileged and
            *allow_privileged* is False (the message says what was found and names
            :data:`READONLY_ROLE_SCRIPT` and the opt-in). Asked on every connection, before any query runs.
        DatabaseLostError: from :meth:`execute` and :meth:`identity`, when the server went away (see there).
    """

    engine = "postgresql"

    def __init__(self, url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, max_rows: int = DEFAULT_MAX_ROWS,
                 sql_dialect: str | None = None, password: str | None = None, allow_privileged: bool = False) -> None:
        if timeout_s <= 0:
            raise InputError(f"--timeout (timeout_s) must be > 0 seconds, got {timeout_s!r}. Pass a positive number of seconds.")
        if max_rows < 1:
            raise InputError(f"--max-rows (max_rows) must be ≥ 1, got {max_rows!r}. Pass a positive row limit.")
        target = parse_url(url)
        self.url = target.url
        self._password = password if password is not None else target.password
        self.timeout_s = float(timeout_s)
        self.max_rows = int(max_rows)
        self.sql_dialect = None if sql_dialect in (None, "postgres", "postgresql") else sql_dialect
        self._schema: dict[str, list[str]] | None = None
        self._catalog: list[tuple[Any, ...]] | None = None
        self._conn: Any = None
        self.allow_privileged = bool(allow_privileged)
        self.role: str | None = None
        self.privileges: list[str] = []
        self._connect()

    @property
    def query_dialect(self) -> str:
        """The sqlglot dialect queries handed to :meth:`execute` are read in (``postgres`` unless transpiling)."""
        return self.sql_dialect or "postgres"

    def _connect(self, *, again: bool = False) -> None:
        """Connect (and check the role). *again*: a connection this object had was lost, so a failure to connect
        means the server went away (DatabaseLostError), not a wrong URL."""
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
            if again:
                raise self._lost_error(f"the connection was lost and cannot be made again: {msg}") from None
            raise InputError(f"--db {self.url}: cannot connect ({msg}). Check the host, port, database and user, and the "
                             "password (PGPASSWORD or ~/.pgpass).") from None
        _register_loaders(conn)
        self._conn = conn
        self._check_role()
        if again and self._catalog is not None:
            # The server came back: if its tables or columns changed meanwhile, the cases judged so far were judged
            # on another database than the next ones would be.
            before, self._catalog = self._catalog, None
            if self._read_catalog() != before:
                self._catalog = before  # the identity stays the one the run started with
                self.close()  # and no query runs on this connection: the next one asks again
                raise DatabaseLostError(
                    f"--db {self.url}: the connection was lost, and the server came back with other tables or columns "
                    "than the run started with; the run stops here. Run the same command again: a changed database "
                    "starts a new run.")

    def _check_role(self) -> None:
        """Ask the server who this connection is; refuse a privileged role unless :attr:`allow_privileged`."""
        with self._transaction():
            user, superuser, roles, superusers, tables = self._conn.execute(_ROLE_SQL).fetchone()
        found: list[str] = []
        if superuser:
            found.append("superuser")  # a member of every role and the owner of every table: nothing more to say
        else:
            found.extend(f"member of the superuser role {r}" for r in superusers)
            found.extend(f"member of {r}" for r in PRIVILEGED_ROLES if r in roles)
            writable = [json.loads(t) for t in tables]
            for name, owner, privileges in writable[:_TABLES_NAMED]:
                found.append(f"may write {name} ({', '.join((['owner'] if owner else []) + privileges)})")
            if len(writable) > _TABLES_NAMED:
                found.append(f"may write {len(writable) - _TABLES_NAMED} more table(s)")
        self.role, self.privileges = user, found
        if found and not self.allow_privileged:
            self.close()
            raise InputError(
                f"--db {self.url}: the role {user!r} is privileged ({'; '.join(found)}). Judged queries are someone "
                "else's SQL, and with such a role the query guard would be the only thing between them and the "
                f"server's files, programs or data. Connect as a read-only role ({READONLY_ROLE_SCRIPT} creates one: "
                "LOGIN, SELECT on the tables, nothing else), or pass --allow-privileged-role to accept this role "
                "knowingly (recorded with the run; the query guard still applies).")

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
            not when rows do. A privileged role accepted with ``allow_privileged`` adds ``"role"`` and
            ``"privileges"`` (:attr:`privileges`), so the run records what was accepted.

        Raises:
            DatabaseLostError: the server went away.
        """
        cat = self._read_catalog()
        with self._transaction():
            version, dbname = self._conn.execute("SELECT current_setting('server_version'), current_database()").fetchone()
        blob = json.dumps([list(r[:5]) for r in cat], ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        out = {"engine": self.engine, "url": self.url, "server_version": version, "database": dbname,
               "catalog_sha256": hashlib.sha256(blob).hexdigest()}
        if self.privileges:
            out.update(role=self.role, privileges=list(self.privileges))
        return out

    def execute(self, sql: str) -> QueryResult:
        """Run one read-only query within the time and row limits.

        Args:
            sql: One SQL statement in :attr:`query_dialect` (a trailing ``;`` is fine).

        Returns:
            :class:`~goldeval.answers.sql.QueryResult` (engine ``postgresql``; when transpiled, ``notes`` holds
            the SQL that ran).

        Raises:
            QueryError: refused by the parser, refused or failed by the server (its message), ran past
                ``timeout_s``, or returned more than ``max_rows`` rows.
            DatabaseLostError: the connection was lost while the query ran, or cannot be made again.
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
                    rows: list[tuple[Any, ...]] = []
                    while True:
                        batch = cur.fetchmany(min(10_000, self.max_rows + 1 - len(rows)))
                        rows.extend(batch)
                        if len(rows) > self.max_rows:
                            raise QueryError(f"the query returned more than {self.max_rows} rows (the row limit). "
                                             "Narrow the query or raise --max-rows.")
                        if not batch:
                            break
                        left = deadline - time.monotonic()
                        if left <= 0:
                            raise QueryError(f"the query ran past the {self.timeout_s:g} s time limit and was stopped. "
                                             "Raise --timeout or simplify the query.")
                        self._conn.execute(f"SET LOCAL statement_timeout = {max(1, int(left * 1000))}")
                finally:
                    with contextlib.suppress(psycopg.Error):
                        cur.close()
        except psycopg.errors.QueryCanceled:
            raise QueryError(f"the query ran past the {self.timeout_s:g} s time limit and was stopped. Raise --timeout "
                             "or simplify the query.") from None
        except (psycopg.errors.ReadOnlySqlTransaction, psycopg.errors.InsufficientPrivilege) as exc:
            raise QueryError(f"refused: the server refused the query ({_first_line(exc)}); the connection only reads.") from None
        except psycopg.OperationalError as exc:  # a lost connection is a DatabaseLostError (see _transaction)
            raise QueryError(f"PostgreSQL error: {_scrub(_first_line(exc), self._password)}") from None
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

    def _lost(self, exc: BaseException) -> bool:
        """Whether *exc* (a psycopg error) means the connection is gone rather than that one statement failed: the
        connection is closed or broken, the error has no SQLSTATE (libpq lost the socket), or its SQLSTATE is a
        connection exception (class 08) or a shutdown (57P01 admin, 57P02 crash, 57P03 cannot connect now)."""
        state = getattr(exc, "sqlstate", None)
        conn = self._conn
        return (conn is None or conn.closed or conn.broken or state is None or state.startswith("08")
                or state in ("57P01", "57P02", "57P03"))

    def _lost_error(self, what: str) -> DatabaseLostError:
        return DatabaseLostError(
            f"--db {self.url}: the PostgreSQL server went away ({what}); the run stops here. Run the same command "
            "again once the server is back: a recorded run resumes from the cases judged so far.")

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """``BEGIN READ ONLY`` with the session limits set LOCAL; always rolled back, also on Ctrl-C.

        A connection lost while idle (found at ``BEGIN``, before any statement of the block ran) is made again
        once; one lost inside the block, or that cannot be made again, raises :class:`DatabaseLostError`."""
        import psycopg

        if self._conn is None or self._conn.closed or self._conn.broken:
            self._connect(again=True)
        ms = max(1, int(self.timeout_s * 1000))
        begin = (f"BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = {ms}; "
                 f"SET LOCAL lock_timeout = {ms}; SET LOCAL idle_in_transaction_session_timeout = {max(ms * 4, 60_000)}; "
                 "SET LOCAL TimeZone = 'UTC'")
        try:
            self._conn.execute(begin)
        except psycopg.OperationalError as exc:
            if not self._lost(exc):
                raise
            with contextlib.suppress(Exception):
                self._conn.close()
            self._connect(again=True)
            try:
                self._conn.execute(begin)
            except psycopg.OperationalError as exc2:
                if self._lost(exc2):
                    raise self._lost_error(_scrub(_first_line(exc2), self._password)) from None
                raise
        try:
            yield
        except psycopg.OperationalError as exc:
            if self._lost(exc):
                raise self._lost_error(_scrub(_first_line(exc), self._password)) from None
            raise
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
