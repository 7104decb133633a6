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
    The statement is parsed by PostgreSQL's own parser (libpg_query, through pglast) before it is sent, so every
    identifier is decoded as the server decodes it: ``U&"…"`` with ``\\XXXX``, ``\\+XXXXXX`` and ``UESCAPE``,
    quoted and schema-qualified names, comments anywhere. Refused: anything that does not parse; more than one
    statement; any statement but a query (``SELECT`` / ``WITH`` / set operation / ``VALUES``); inside a query,
    any node of the parse tree that is not a read-only part of a SELECT (:data:`_SAFE_NODES`), data-modifying
    CTEs, ``SELECT … INTO``, row locks and casts to ``regproc``-like types; and every function call — in the
    select list, in ``FROM``, anywhere in sub-queries, CTEs and set-operation branches, or through field-selection
    notation (``(x).f`` runs ``f(x)``) — that is not a read-only built-in
    (:mod:`goldeval.answers.readonly_functions`) or allowed by the user (``allow_functions``). A schema other
    than ``pg_catalog`` is never a built-in's. Functions that reach outside the read-only transaction (server
    files, large objects, settings, advisory locks, sequences, signals, dblink, SQL given as text) are refused
    even when allowed. The session is set so that the server reads as the parser does: ``standard_conforming_
    strings`` on, and ``pg_catalog`` first on the search path (an allowed unqualified name is the built-in).
The server (second guard)
    Each query runs in its own ``BEGIN READ ONLY`` transaction that is always rolled back, with
    ``SET LOCAL statement_timeout`` (from ``timeout_s``) and ``lock_timeout``, through a server-side cursor
    (``DECLARE … CURSOR FOR``: the server itself accepts only one query there, over the extended protocol) from
    which at most ``max_rows + 1`` rows, and about ``max_result_bytes`` of them as Python objects, are fetched
    (:func:`goldeval.answers.sql.fetch_bounded`; a value over the server's 1 GB limit fails on the server).
    A READ ONLY transaction does not stop a superuser's
    ``COPY … TO PROGRAM``, file functions or ``SET ROLE``: for those the parser is the guard, and a read-only role
    (README, "PostgreSQL") is the recommended way to connect.

An allowlisted name the server's ``pg_catalog`` does not define (``instr``, a DuckDB or SQLite name) is refused
too: unqualified, it could only find a function of the database's. Not checked by the parser: overloads and
operators resolve on the server — a function the database defines under a built-in's name with other argument
types, an operator it defines for its own types, a user-defined type's cast or input function, or ``t.f``
naming a function of ``t``'s row type is the database's own code (the READ ONLY transaction still stops its
writes).

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

Source: goldeval issues 13 and 25; PostgreSQL documentation, "SET TRANSACTION" (READ ONLY), "Client Connection
Defaults" (statement_timeout), "DECLARE", 4.1.1 "Identifiers and Key Words" (``U&"…"``); libpg_query / pglast;
psycopg 3 "Server-side cursors" and "Interrupting a query".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
import urllib.parse
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from goldeval.answers.query_bounds import (
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MAX_ROWS,
    DEFAULT_TIMEOUT_S,
    DatabaseLostError,
    QueryError,
    QueryResult,
    check_max_result_bytes,
    fetch_bounded,
)
from goldeval.answers.readonly_functions import (
    function_refusal,
    hard_refusal,
    normalize_allowed,
)
from goldeval.answers.transpile import to_postgres
from goldeval.errors import InputError

__all__ = ["PostgresDatabase", "PostgresTarget", "check_query", "is_postgres_url", "parse_url",
           "PRIVILEGED_ROLES", "READONLY_ROLE_SCRIPT"]

#: Predefined roles whose members read or write the server's files, run programs on it or write every table: a
#: member (directly or through other roles, inherited or not) is a privileged role.
PRIVILEGED_ROLES = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program", "pg_write_all_data")

#: The script that creates the read-only role goldeval should connect as (named in the refusal of a privileged one).
READONLY_ROLE_SCRIPT = "examples/sql/readonly_role.sql"

#: Tables named in a privileged role's findings; the rest are counted.
_TABLES_NAMED = 5

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


def parse_url(url: str, *, option: str = "--db") -> PostgresTarget:
    """Split the password out of a PostgreSQL URL.

    Args:
        url: ``postgresql://user[:password]@host[:port]/dbname[?param=value…]`` (libpq's URI form; a
            ``password=`` query parameter counts as a password too).
        option: The option the URL was given to, as error messages name it (``--db``, ``--store``).

    Returns:
        :class:`PostgresTarget` with the redacted URL and the password.

    Raises:
        InputError: not a ``postgresql://`` URL, or libpq cannot read it (the message never holds the password).
    """
    if not is_postgres_url(url):
        raise InputError(f"{option} {url!r}: expected a postgresql://user@host:port/dbname URL.")
    try:
        parts = urllib.parse.urlsplit(url)
        password = urllib.parse.unquote(parts.password) if parts.password is not None else None
    except ValueError as exc:  # urllib's words may quote the password: the message says what is wrong in its own
        raise InputError(f"{option} {_redact_unsplit(url)}: not a valid PostgreSQL URL ({_unsplit_reason(exc)}). Write "
                         "it as postgresql://user@host:port/dbname (an IPv6 host in brackets: "
                         "postgresql://user@[::1]:5432/dbname).") from None
    if "@" not in parts.netloc and "@" in url.partition("://")[2]:
        # user:pass@host where the password holds a '/', '?' or '#': urllib (and libpq) end the host part there,
        # and the password's pieces would be read, and shown, as the host, the path or the query
        raise InputError(f"{option} {_redact_unsplit(url)}: not a valid PostgreSQL URL (a '/', '?' or '#' comes before "
                         "its '@', so the host part ends inside the user or password). Percent-encode those characters "
                         "in a password (%2F, %3F, %23) and an '@' elsewhere (%40), or give the password in PGPASSWORD.")
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
    # put together by hand: urlunsplit drops the '//' of an empty host (postgresql:///dbname, libpq's URI for the
    # local socket or PGHOST), and libpq cannot read the postgresql:/dbname it leaves
    query_s = urllib.parse.urlencode(kept)
    redacted = (f"{parts.scheme}://{netloc_s}{parts.path}" + (f"?{query_s}" if query_s else "")
                + (f"#{parts.fragment}" if parts.fragment else ""))
    try:
        from psycopg.conninfo import conninfo_to_dict  # optional heavy dependency: psycopg / pglast (extra postgres)

        conninfo_to_dict(redacted)
    except ImportError:
        pass  # reported when connecting
    except Exception as exc:
        raise InputError(f"{option} {redacted}: not a valid PostgreSQL URL ({_scrub(str(exc).strip(), password)}). "
                         "Write it as postgresql://user@host:port/dbname.") from None
    return PostgresTarget(redacted, password)


def _redact_unsplit(url: str) -> str:
    """*url*, which urllib cannot split, as a message may show it: of everything between ``://`` and the last ``@``
    only the user name (what comes before a ``:``), and every ``password=`` value masked. A password holding ``@``
    or ``/`` is left out whole: the last ``@`` comes after it."""
    scheme, sep, rest = url.partition("://")
    at = rest.rfind("@")
    if at >= 0:
        rest = rest[:at].split(":", 1)[0] + rest[at:]
    return scheme + sep + re.sub(r"(?i)(password=)[^&#]*", r"\1***", rest)


def _unsplit_reason(exc: ValueError) -> str:
    """What urllib refused in a URL, in words that quote none of it (its own message may hold the password)."""
    text = str(exc)
    if "IPv6" in text:
        return "a '[' or ']' of an IPv6 host without its pair"
    if "NFKC" in text:
        return "the host holds a character that Unicode normalization turns into '/', '?', '#', '@' or ':'"
    return "urllib cannot split it into user, host, port and database"


def _scrub(message: str, password: str | None) -> str:
    if password:
        message = message.replace(password, "***").replace(urllib.parse.quote(password, safe=""), "***")
    return message


#: Node types of PostgreSQL's raw parse tree (pglast's names) that a judged query may hold: the parts of a
#: SELECT that only read. Any other node (a statement inside the query, a parameter, ``MERGE`` support …) is refused.
_SAFE_NODES = frozenset({
    "SelectStmt", "ResTarget", "ColumnRef", "A_Const", "A_Expr", "BoolExpr", "FuncCall", "NamedArgExpr", "RangeVar",
    "JoinExpr", "SubLink", "WithClause", "CommonTableExpr", "CTESearchClause", "CTECycleClause", "SortBy",
    "TypeCast", "TypeName", "CaseExpr", "CaseWhen", "CoalesceExpr", "MinMaxExpr", "NullTest", "BooleanTest",
    "RangeSubselect", "RangeFunction", "RangeTableSample", "RangeTableFunc", "RangeTableFuncCol", "ColumnDef",
    "Alias", "A_Star", "A_Indirection", "A_Indices", "A_ArrayExpr", "RowExpr", "WindowDef", "GroupingSet",
    "GroupingFunc", "SQLValueFunction", "CollateClause", "XmlExpr", "XmlSerialize",
    "String", "Integer", "Float", "Boolean", "BitString",
    # SQL/JSON constructors, predicates and JSON_TABLE (PostgreSQL 16+): they only read their arguments
    "JsonObjectConstructor", "JsonArrayConstructor", "JsonArrayQueryConstructor", "JsonObjectAgg", "JsonArrayAgg",
    "JsonAggConstructor", "JsonKeyValue", "JsonValueExpr", "JsonOutput", "JsonReturning", "JsonFormat",
    "JsonIsPredicate", "JsonParseExpr", "JsonScalarExpr", "JsonSerializeExpr", "JsonFuncExpr", "JsonBehavior",
    "JsonArgument", "JsonTable", "JsonTableColumn", "JsonTablePathSpec",
})
#: Types whose values name functions or operators by text (a cast to them is a look-up goldeval cannot check).
_FUNCTION_NAMING_TYPES = frozenset({"regproc", "regprocedure", "regoper", "regoperator"})
#: The built-in TABLESAMPLE methods (an extension's method is a function goldeval does not know).
_SAMPLE_METHODS = frozenset({"bernoulli", "system"})
#: The statement words of the most common non-query statements, for the refusal message.
_STATEMENT_WORDS = {
    "InsertStmt": "INSERT", "UpdateStmt": "UPDATE", "DeleteStmt": "DELETE", "MergeStmt": "MERGE", "CopyStmt": "COPY",
    "VariableSetStmt": "SET / RESET", "VariableShowStmt": "SHOW", "TransactionStmt": "transaction control",
    "DoStmt": "DO", "CallStmt": "CALL", "PrepareStmt": "PREPARE", "ExecuteStmt": "EXECUTE", "ExplainStmt": "EXPLAIN",
    "CreateTableAsStmt": "CREATE TABLE AS", "ListenStmt": "LISTEN", "NotifyStmt": "NOTIFY", "LockStmt": "LOCK",
    "TruncateStmt": "TRUNCATE", "GrantStmt": "GRANT", "GrantRoleStmt": "GRANT", "DeclareCursorStmt": "DECLARE",
    "VacuumStmt": "VACUUM / ANALYZE", "CheckPointStmt": "CHECKPOINT", "DiscardStmt": "DISCARD", "LoadStmt": "LOAD",
}


def check_query(sql: str, *, allowed_functions: Iterable[str] = (), builtins: Collection[str] | None = None) -> None:
    """Refuse, by parsing as the server parses, a statement that must not run on a customer's server (see the
    module docstring).

    The text is parsed by libpg_query (PostgreSQL's own parser, through pglast), so every identifier is read as the
    server reads it: ``U&"…"`` with its escapes and ``UESCAPE``, quoted and schema-qualified names, comments
    anywhere. The whole tree is then walked: only the node types of a read-only SELECT may appear
    (:data:`_SAFE_NODES`), and every function called — in the select list, in FROM, in a sub-query, a CTE or a
    set-operation branch, or through field-selection notation (``(x).f`` calls ``f(x)``) — must be a read-only
    built-in (:mod:`goldeval.answers.readonly_functions`) or named in *allowed_functions*.

    Args:
        sql: The statement as it will be sent (PostgreSQL dialect; ``standard_conforming_strings`` on, as the
            session sets it).
        allowed_functions: Extra function names the user allowed (``--allow-function``); ``name`` or
            ``schema.name``, matched exactly (PostgreSQL names are case-sensitive when quoted).
        builtins: The names of the server's own functions (``pg_catalog``); when given, a name on the allowlist
            that this server does not have is refused too (an unqualified ``instr()`` would find a function of the
            database's, not a built-in). ``None``: not checked (no server at hand).

    Raises:
        QueryError: ``refused: …`` naming what was found and why it is refused, or that it does not parse.

    Source: PostgreSQL 15 documentation, 4.1.1 "Identifiers and Key Words" (``U&"…"``, ``UESCAPE``), 8.16.5
    "Using Composite Types in Queries" (field-selection notation calls functions), 9.27 "System Administration
    Functions"; libpg_query / pglast ``parse_sql``.
    """
    try:
        from pglast import ast, parse_sql  # optional dependency: the postgres extra
        from pglast.parser import ParseError  # optional heavy dependency: psycopg / pglast (extra postgres)
    except ImportError:
        raise QueryError("refused: the query cannot be checked: pglast (PostgreSQL's parser) is not installed. "
                         "pip install 'goldeval[postgres]'.") from None
    if "\x00" in sql:
        raise QueryError("refused: the query holds a NUL character; PostgreSQL's parser would stop there, so the rest "
                         "cannot be checked.")
    try:
        statements = parse_sql(sql)
    except ParseError as exc:
        raise QueryError(f"refused: the query does not parse as PostgreSQL SQL, so it cannot be checked as read-only "
                         f"({str(exc).splitlines()[0][:200]}).") from None
    except Exception as exc:  # pglast raises a few other errors on input it cannot convert; any means "unchecked"
        raise QueryError(f"refused: the query cannot be read with certainty ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:200] if str(exc) else ''}).") from None
    if len(statements) != 1:
        kinds = ", ".join(_kind(s.stmt) for s in statements) or "nothing"
        raise QueryError(f"refused: only one statement may run, got {len(statements)} ({kinds}).")
    stmt = statements[0].stmt
    if not isinstance(stmt, ast.SelectStmt):
        raise QueryError(f"refused: only a read-only query (SELECT / WITH / VALUES) may run, got {_kind(stmt)}.")
    _Walk(tuple(allowed_functions), None if builtins is None else frozenset(builtins), ast).node(stmt)


class _Walk:
    """Walks a raw parse tree and raises QueryError at the first node or function that is not read-only."""

    __slots__ = ("allowed", "builtins", "ast")

    def __init__(self, allowed: tuple[str, ...], builtins: frozenset[str] | None, ast: Any) -> None:
        self.allowed = allowed
        self.builtins = builtins
        self.ast = ast

    def node(self, node: Any) -> None:
        if isinstance(node, (tuple, list)):
            for item in node:
                self.node(item)
            return
        if not isinstance(node, self.ast.Node):
            return  # a scalar attribute: a name, a flag, an enum
        name = type(node).__name__
        if name not in _SAFE_NODES:
            raise QueryError(f"refused: {_kind(node)} ({name} in PostgreSQL's parse tree) inside the query is not "
                             "part of a read-only SELECT; only reading is allowed.")
        check = getattr(self, name, None)
        if check is not None:
            check(node)
        for attr in node:
            self.node(getattr(node, attr))

    # -- per node type (named as pglast's classes) ---------------------------------------------------------------
    def SelectStmt(self, node: Any) -> None:  # noqa: N802 - pglast's class name
        if node.intoClause is not None:
            raise QueryError("refused: SELECT … INTO (it creates a table); only reading is allowed.")
        if node.lockingClause:
            raise QueryError("refused: a row lock (FOR UPDATE / FOR SHARE); only reading is allowed.")

    def CommonTableExpr(self, node: Any) -> None:  # noqa: N802
        if not isinstance(node.ctequery, self.ast.SelectStmt):
            raise QueryError(f"refused: the WITH query {node.ctename!r} is {_kind(node.ctequery)}, a data-modifying "
                             "CTE; only reading is allowed.")

    def FuncCall(self, node: Any) -> None:  # noqa: N802
        self._function([s.sval for s in node.funcname])

    def A_Indirection(self, node: Any) -> None:  # noqa: N802
        for part in node.indirection or ():
            if isinstance(part, self.ast.String):
                why = self._refusal(part.sval, None)
                if why is not None:
                    raise QueryError(f"refused: (…).{part.sval} is read by PostgreSQL as a call of {part.sval}() "
                                     f"when no field has that name, and {why.removeprefix('the function ')}.")

    def ColumnRef(self, node: Any) -> None:  # noqa: N802
        fields: Sequence[Any] = node.fields or ()
        if len(fields) >= 2 and isinstance(fields[-1], self.ast.String):
            name = fields[-1].sval
            # Only a name that is a function here: a column such as lo_value merely looks like lo_*.
            why = hard_refusal("postgresql", name) if self.builtins is None or name in self.builtins else None
            if why is not None:
                raise QueryError(f"refused: x.{fields[-1].sval} is read by PostgreSQL as a call of "
                                 f"{fields[-1].sval}(x) when x has no such column, and that function {why}; "
                                 "goldeval never runs it in a judged query, even with --allow-function.")

    def A_Expr(self, node: Any) -> None:  # noqa: N802
        self._operator(node.name)

    def SortBy(self, node: Any) -> None:  # noqa: N802
        self._operator(node.useOp)

    def SubLink(self, node: Any) -> None:  # noqa: N802 - x OPERATOR(s.op) ANY (SELECT …)
        self._operator(node.operName)

    def TypeName(self, node: Any) -> None:  # noqa: N802
        names = [s.sval for s in node.names or () if isinstance(s, self.ast.String)]
        if names and names[-1].lower() in _FUNCTION_NAMING_TYPES:
            raise QueryError(f"refused: a cast to {names[-1]} names a function or operator by text, which goldeval "
                             "cannot check; only reading known functions is allowed.")

    def RangeTableSample(self, node: Any) -> None:  # noqa: N802
        names = [s.sval for s in node.method or ()]
        if len(names) > 2 or (len(names) == 2 and names[0] != "pg_catalog") or names[-1] not in _SAMPLE_METHODS:
            raise QueryError(f"refused: TABLESAMPLE {'.'.join(names)} is not a built-in sampling method "
                             f"({', '.join(sorted(_SAMPLE_METHODS))}); its function cannot be checked.")

    # -- helpers -------------------------------------------------------------------------------------------------
    def _function(self, names: list[str]) -> None:
        name = names[-1]
        qualifier = names[:-1]
        schema = None if qualifier in ([], ["pg_catalog"]) else ".".join(qualifier)
        why = self._refusal(name, schema)
        if why is not None:
            raise QueryError(f"refused: {why}.")

    def _refusal(self, name: str, schema: str | None) -> str | None:
        why = function_refusal("postgresql", name, schema=schema, allowed=self.allowed, case_sensitive=True)
        if (why is None and schema is None and self.builtins is not None and name not in self.builtins
                and name not in self.allowed):
            why = (f"the function {name}() is not a built-in of this server (pg_catalog has no {name}), so the call "
                   f"would run the database's own {name}(), which goldeval cannot check; if it only reads, allow it "
                   f"with --allow-function {name}")
        return why

    def _operator(self, name: Any) -> None:
        parts = [s.sval for s in name or () if isinstance(s, self.ast.String)]
        if len(parts) >= 2 and parts[:-1] != ["pg_catalog"]:
            raise QueryError(f"refused: the operator OPERATOR({'.'.join(parts)}) is outside pg_catalog (it may be the "
                             "database's own code, which goldeval cannot check); only built-in operators may run.")


def _kind(node: Any) -> str:
    """The statement word(s) of a parse-tree node, for messages (``DELETE``, ``SET / RESET``, ``CREATE TABLE``)."""
    name = type(node).__name__
    if name in _STATEMENT_WORDS:
        return _STATEMENT_WORDS[name]
    if name == "SelectStmt":
        return "SELECT"
    words = re.findall(r"[A-Z][a-z]+|[A-Z]+(?![a-z])", name.removesuffix("Stmt"))
    return " ".join(w.upper() for w in words) or name


# --- value loading ----------------------------------------------------------------------------------------------

def _register_loaders(conn: Any) -> None:
    """numeric → int/Decimal; interval, uuid, network and range types → their PostgreSQL text."""
    from psycopg.adapt import Loader  # optional heavy dependency: psycopg / pglast (extra postgres)
    from psycopg.types.string import TextLoader  # optional heavy dependency: psycopg / pglast (extra postgres)

    class NumericLoader(Loader):
        def load(self, data: Any) -> Any:
            s = bytes(data).decode("ascii")
            if s.lstrip("-").isdigit():
                try:
                    return int(s)  # exact, as SQLite's and JSON's integers
                except ValueError:  # past Python's int-string limit (4,300 digits): a Decimal, exact as well
                    return Decimal(s)
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
        allow_functions: Function names (``name`` or ``schema.name``) a query may call besides goldeval's read-only
            built-ins (``--allow-function``); the names :func:`goldeval.answers.readonly_functions.hard_refusal`
            refuses stay refused.
        allow_privileged: Accept a privileged role (see below) knowingly (``--allow-privileged-role``); the query
            guard still applies, and :meth:`identity` records what was found.
        max_result_bytes: Most bytes a query's rows may hold as Python objects
            (:func:`goldeval.answers.sql.fetch_bounded`; more is a QueryError). One value is at most what the
            server allows (1 GB; a query building a larger one fails on the server), and it is read whole before
            it is counted.

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
        InputError: psycopg or pglast is not installed, the URL is malformed, an ``allow_functions`` name is not a
            function name, the server cannot be reached or refuses the login (the message names the redacted URL and what to check), or the role is privileged and
            *allow_privileged* is False (the message says what was found and names
            :data:`READONLY_ROLE_SCRIPT` and the opt-in). Asked on every connection, before any query runs.
        DatabaseLostError: from :meth:`execute` and :meth:`identity`, when the server went away (see there).
    """

    engine = "postgresql"

    def __init__(self, url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, max_rows: int = DEFAULT_MAX_ROWS,
                 sql_dialect: str | None = None, password: str | None = None,
                 allow_functions: Iterable[str] = (), allow_privileged: bool = False,
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
        self.allow_functions = normalize_allowed(allow_functions)
        self._builtins: frozenset[str] | None = None
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
            import psycopg  # optional heavy dependency: psycopg / pglast (extra postgres)
        except ImportError:
            raise InputError(f"--db {self.url}: a PostgreSQL database needs the optional extra: pip install 'goldeval[postgres]'.") from None
        try:
            import pglast  # noqa: F401 - the guard's parser; checked here so that a missing one fails before any query
        except ImportError:
            raise InputError(f"--db {self.url}: checking queries for PostgreSQL needs pglast (PostgreSQL's parser): "
                             "pip install 'goldeval[postgres]'.") from None
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
        try:
            # The guard parses as libpg_query does, which assumes standard_conforming_strings (with it off, 'a\\'' is
            # one string to the server and two tokens to the parser). pg_catalog first on the search path: an
            # unqualified built-in name the guard allowed can only mean the built-in, never a function of that name
            # that a role's or database's search_path would find first.
            conn.execute("SET standard_conforming_strings = on")
            conn.execute("SELECT pg_catalog.set_config('search_path', 'pg_catalog, ' || "
                         "pg_catalog.current_setting('search_path'), false)")
            if self._builtins is None:  # the names the server's own catalog defines (see check_query's builtins)
                self._builtins = frozenset(r[0] for r in conn.execute(
                    "SELECT DISTINCT p.proname FROM pg_catalog.pg_proc p "
                    "WHERE p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace").fetchall())
        except psycopg.Error as exc:
            with contextlib.suppress(Exception):
                conn.close()
            raise InputError(f"--db {self.url}: cannot set up the session ({_scrub(_first_line(exc), self._password)}).") from None
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
                for nsp, rel, _kind, col, _type, visible in self._read_catalog():
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
                ``timeout_s``, or returned more than ``max_rows`` rows or more than ``max_result_bytes``.
            DatabaseLostError: the connection was lost while the query ran, or cannot be made again.
            KeyboardInterrupt: passed on after the query was cancelled on the server and rolled back.
        """
        if not isinstance(sql, str) or not sql.strip():
            raise QueryError(f"final_query must be a non-empty SQL string, got {sql!r}.")
        notes: list[str] = []
        if self.sql_dialect is not None:
            sql = to_postgres(sql, read=self.sql_dialect, schema=self._catalog_columns())
            notes.append(f"transpiled from {self.sql_dialect}: {sql}")
        check_query(sql, allowed_functions=self.allow_functions, builtins=self._builtins)
        import psycopg  # optional heavy dependency: psycopg / pglast (extra postgres)

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
        except psycopg.OperationalError as exc:  # a lost connection is a DatabaseLostError (see _transaction)
            raise QueryError(f"PostgreSQL error: {_scrub(_first_line(exc), self._password)}") from None
        except psycopg.Error as exc:
            raise QueryError(f"PostgreSQL error: {_first_line(exc)}") from None
        return QueryResult(columns, rows, time.monotonic() - start, self.engine, notes)

    def _catalog_columns(self) -> dict[str, list[str]]:
        """``{table: [columns]}`` with the catalog's own spelling (for case-insensitive SQLite names)."""
        out: dict[str, list[str]] = {}
        for _nsp, rel, _k, col, _t, visible in self._read_catalog():
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
        import psycopg  # optional heavy dependency: psycopg / pglast (extra postgres)

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
