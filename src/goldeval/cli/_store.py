"""The run-store options every scoring command shares (the policy they apply is :mod:`goldeval.pipeline.recording`).

Usage in a scoring command (``score``, ``labels``, ``judge``)::

    @click.command()
    ...
    @store_options            # adds --store PATH, --no-store, --no-texts, --arm NAME, --resume RUN_ID
    @guarded
    def score(..., run_store):
        with run_store.recording(
            scorer_name=SCORER_NAME, scorer_version=SCORER_VERSION,
            inputs={"predictions": file}, config={...resolved options...}, tokenizer="openscribe",
        ) as recorder:                         # None with --no-store
            results = score_file(file, ..., recorder=recorder)
        # recorder.run_id names the run; run_store.note tells the user (stderr) what was recorded or resumed

Only click and the pipeline's recording policy (standard library only) are imported at module level
(``goldeval --help`` must stay fast); the store is imported when a run is recorded.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

import click

from goldeval.cli._signals import sigterm_raises
from goldeval.errors import InputError
from goldeval.io.outputs import sqlite_files
from goldeval.pipeline.recording import FINISHED_RUNS, LARGE_INPUT_BYTES, STREAM_RUNS, RunRecording, store_file
from goldeval.runs.location import check_store_target, is_server_store, store_scheme

__all__ = ["StoreOptions", "store_options", "store_path_option", "store_file", "store_files", "check_store_path", "LARGE_INPUT_BYTES",
           "FINISHED_RUNS", "STREAM_RUNS"]

def check_store_path(ctx: click.Context | None, param: click.Parameter | None, value: str | None) -> str | None:
    """The ``--store`` callback: an empty or blank path, or a URL of a scheme goldeval does not serve
    (``mysql://…``), is a usage error (exit 2) that says what to pass.

    ``--store ''`` (an unset shell variable, ``--store "$STORE"``) was read as the current folder and failed with
    "run store .: cannot open it (unable to open database file)", exit 3."""
    if value is not None and store_scheme(value) is not None:
        try:
            check_store_target(value)  # mysql://… is refused, not made a local folder named 'mysql:'
        except InputError as exc:
            raise click.BadParameter(str(exc).split(": ", 1)[-1], ctx=ctx, param=param) from None
        return value
    if value is not None and not value.strip():
        raise click.BadParameter(
            f"expected the path of the run store's SQLite file (e.g. --store runs.db), got {value!r} (an empty "
            "path; an unset shell variable?). Give a file path, or drop --store to use $GOLDEVAL_HOME/goldeval.db "
            "(else ./.goldeval/goldeval.db); a scoring command also takes --no-store to record nothing.",
            ctx=ctx, param=param)
    return value


def store_files(store: str | None) -> list[str]:
    """The files of the run store *store* (``--store``, else the default) that no output may overwrite: the SQLite
    database and its companions, or none for a store on a PostgreSQL server."""
    path = store_file(store)
    return [] if is_server_store(path) else sqlite_files(path)


def store_path_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--store PATH`` alone (for ``runs``, ``compare``, ``review``): the database file to read."""
    return click.option(
        "--store",
        "store",
        type=click.Path(dir_okay=False, path_type=str),
        default=None,
        callback=check_store_path,
        help="Run store: a SQLite file or a postgresql://user@host/db URL. Default: $GOLDEVAL_STORE, else $GOLDEVAL_HOME/goldeval.db, else ./.goldeval/goldeval.db.",
    )(f)


class StoreOptions(RunRecording):
    """The parsed ``--store`` / ``--no-store`` / ``--arm`` / ``--resume`` options of one invocation: the
    pipeline's :class:`~goldeval.pipeline.recording.RunRecording`, with SIGTERM turned into an interrupt while a
    run is recorded (a terminated run commits its last batch and is left interrupted, as after Ctrl-C)."""

    __slots__ = ()

    def signal_guard(self) -> contextlib.AbstractContextManager[None]:
        return sigterm_raises()


_OPTIONS = [
    click.option(
        "--store",
        "store",
        type=click.Path(dir_okay=False, path_type=str),
        default=None,
        callback=check_store_path,
        help="Run store to record this run in: a SQLite file or a postgresql://user@host/db URL. Default: $GOLDEVAL_STORE, else $GOLDEVAL_HOME/goldeval.db, else ./.goldeval/goldeval.db.",
    ),
    click.option("--no-store", is_flag=True, default=False, help="Do not record this run."),
    click.option("--no-texts", is_flag=True, default=False,
                 help="Record the run without its texts (sensitive data): the input files are not kept in the store, so a "
                      "report shows texts only while the inputs are unchanged."),
    click.option("--arm", default=None, metavar="NAME", help="Arm name recorded with the run (model + prompt), e.g. 'gpt4-v2'."),
    click.option(
        "--resume",
        default=None,
        metavar="RUN_ID",
        help="Resume this interrupted run (same inputs and options). Without it an unfinished run of the same inputs is resumed.",
    ),
]


def store_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--store``, ``--no-store``, ``--no-texts``, ``--arm``, ``--resume``; the command receives them as ``run_store``
    (a :class:`StoreOptions`)."""

    @functools.wraps(f)
    def wrapper(*args: Any, store: str | None = None, no_store: bool = False, no_texts: bool = False, arm: str | None = None,
                resume: str | None = None, **kwargs: Any) -> Any:
        return f(*args, run_store=StoreOptions(store=store, no_store=no_store, no_texts=no_texts, arm=arm, resume=resume), **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper
