"""The options that say how answers' SQL is run, shared by ``goldeval judge`` and ``goldeval replay``.

A replay must run the queries as the judging did: the same time limit, row limit, dialect translation and
canonical-query use. With its own defaults, a query that took 7 s under ``judge --timeout 10`` came back unscored
in the replay and was reported as a changed settled verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from goldeval.cli._types import Finite
from goldeval.errors import InputError

__all__ = ["query_options", "check_sql_dialect", "check_privileged_role", "max_result_bytes"]


def _dialect_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A --sql-dialect sqlglot knows, else a usage error listing the ones it does (a misspelt 'sqllite' came back as
    an error per query, or, on a file database, not at all)."""
    if value is None:
        return None
    from sqlglot.dialects.dialect import Dialect  # start-up: sqlglot loads only when a dialect is checked

    try:
        Dialect.get_or_raise(value)
    except ValueError:
        from sqlglot.dialects import Dialects  # start-up: sqlglot loads only when a dialect is checked

        known = ", ".join(sorted(d.value for d in Dialects if d.value))
        raise click.BadParameter(f"{value!r} is not a SQL dialect sqlglot knows; one of: {known}.") from None
    return value


def check_sql_dialect(sql_dialect: str | None, db: str | None, db_dir: str | None) -> None:
    """Refuse (InputError, exit 2) a --sql-dialect that would translate nothing: it applies to a PostgreSQL --db only.

    With a --db file the database refuses it when opened; with only --db-dir (every database there is a file, whose
    queries run as written) or with no database at all it was silently ignored, so a user who asked for a
    translation got a run without one.
    """
    if sql_dialect is None:
        return

    if db is not None:  # a PostgreSQL URL translates; a file refuses it itself, naming the file
        return
    where = (f"the --db-dir databases ({db_dir}) are files (SQLite, DuckDB), whose queries run as written"
             if db_dir is not None else "no --db is given, so no query is run")
    raise InputError(f"--sql-dialect {sql_dialect}: translating queries applies to a PostgreSQL --db; {where}. "
                     "Drop --sql-dialect, or give --db postgresql://... with it.")


def check_privileged_role(allow_privileged_role: bool, db: str | None) -> None:
    """Refuse (InputError, exit 2) ``--allow-privileged-role`` without a PostgreSQL ``--db``: only a server has roles,
    so the flag would accept nothing, and a run recorded with it would claim an acceptance that never happened."""
    if not allow_privileged_role:
        return
    from goldeval.answers.postgres import is_postgres_url  # start-up: the answer judge loads only when the command runs

    if not is_postgres_url(db):
        given = f"--db {db} is a file" if db is not None else "no --db is given"
        raise InputError(f"--allow-privileged-role accepts a privileged PostgreSQL role, and {given}: there is no role "
                         "to accept. Drop --allow-privileged-role, or give --db postgresql://... with it.")


def max_result_bytes(max_result_mb: float) -> int:
    """The bytes of ``--max-result-mb`` (MB: 10^6 bytes, as the messages print them; at least 1)."""
    return max(1, round(max_result_mb * 1_000_000))


def query_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--sql-dialect`` (``sql_dialect``), ``--timeout`` (``timeout_s``, seconds), ``--max-rows`` (``max_rows``),
    ``--no-canonical`` (``no_canonical``), ``--allow-function`` (``allow_functions``, repeatable),
    ``--allow-privileged-role`` (``allow_privileged_role``) and ``--max-result-mb`` (``max_result_mb``, megabytes of
    10^6 bytes) to *command*, with the meanings of :class:`goldeval.answers.judge.AnswerConfig`'s ``sql_dialect``,
    ``timeout_s``, ``max_rows``, ``not check_canonical``, ``allow_functions``, ``allow_privileged_role`` and
    ``max_result_bytes`` (:func:`max_result_bytes` converts)."""
    for option in reversed((
        click.option("--sql-dialect", default=None, metavar="DIALECT", callback=_dialect_name,
                     help="The queries are written for another engine (e.g. sqlite): translate them (sqlglot) to the "
                          "--db database's SQL before they run (PostgreSQL only)."),
        click.option("--timeout", "timeout_s", type=Finite(min=0, min_open=True, max=86_400), default=5.0,
                     show_default=True, help="Time limit per query, seconds."),
        click.option("--max-rows", type=click.IntRange(min=1), default=1_000_000, show_default=True,
                     help="Row limit per query (more: the case is unscored)."),
        click.option("--no-canonical", is_flag=True,
                     help="Do not execute the goldens' canonical_query (to fill in or check golden rows)."),
        click.option("--allow-function", "allow_functions", multiple=True, metavar="NAME",
                     help="A function a query may call besides goldeval's read-only built-ins (NAME or schema.NAME; "
                          "repeat for more). Recorded with the run. Functions that read files, run SQL given as "
                          "text or change settings stay refused."),
        click.option("--allow-privileged-role", is_flag=True,
                     help="Accept a PostgreSQL role that is a superuser, may read or write the server's files or run "
                          "programs, or may write a table (refused by default; examples/sql/readonly_role.sql creates "
                          "a read-only one). Recorded with the run; the query guard still applies."),
        click.option("--max-result-mb", type=Finite(min=0, min_open=True, max=1_000_000), default=256.0,
                     show_default=True, metavar="MB",
                     help="Size limit per query: megabytes its rows may take as Python objects (more: the case is "
                          "unscored, counted while fetching)."),
    )):
        command = option(command)
    return command
