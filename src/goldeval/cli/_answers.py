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

__all__ = ["query_options"]


def query_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--sql-dialect`` (``sql_dialect``), ``--timeout`` (``timeout_s``, seconds), ``--max-rows`` (``max_rows``)
    and ``--no-canonical`` (``no_canonical``) to *command*, with the meanings of :class:`goldeval.answers.judge.
    AnswerConfig`'s ``sql_dialect``, ``timeout_s``, ``max_rows`` and ``not check_canonical``."""
    for option in reversed((
        click.option("--sql-dialect", default=None, metavar="DIALECT",
                     help="The queries are written for another engine (e.g. sqlite): translate them (sqlglot) to the "
                          "--db database's SQL before they run (PostgreSQL only)."),
        click.option("--timeout", "timeout_s", type=Finite(min=0, min_open=True, max=86_400), default=5.0,
                     show_default=True, help="Time limit per query, seconds."),
        click.option("--max-rows", type=click.IntRange(min=1), default=1_000_000, show_default=True,
                     help="Row limit per query (more: the case is unscored)."),
        click.option("--no-canonical", is_flag=True,
                     help="Do not execute the goldens' canonical_query (to fill in or check golden rows)."),
    )):
        command = option(command)
    return command
