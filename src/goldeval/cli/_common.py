"""Helpers shared by the CLI commands: error → exit-code mapping, JSON output, the stderr console."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, TypeVar

import click
import orjson

from goldeval.cli._help import EXIT_CODES_LINE, exit_codes  # noqa: F401  (re-exported for the commands)
from goldeval.cli._signals import exit_code, stopped_by
from goldeval.errors import GoldevalError, InputError
from goldeval.io.outputs import check_outputs, write_output

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
EXIT_BROKEN_PIPE = 141

#: Set by ``goldeval --debug``: print the traceback of an internal error.
DEBUG = {"on": False}

F = TypeVar("F", bound=Callable[..., Any])


def quiet_option(help: str = "Print no summary on the console (errors still go to stderr; the exit code says the outcome).") -> Callable[[F], F]:
    """``-q/--quiet`` (passed as ``quiet``), the same flag on every command."""
    return click.option("--quiet", "-q", is_flag=True, help=help)


def out_option(help: str, *, default: str | None = None, required: bool = False, metavar: str = "PATH") -> Callable[[F], F]:
    """``-o/--out PATH`` (passed as ``out``), the same option on every command that writes a file; ``-`` is stdout."""
    return click.option("--out", "-o", "out", default=default, required=required, metavar=metavar,
                        show_default=default is not None, help=help)


def calibration_option(func: F) -> F:
    """``--calibration FILE|RUN`` (passed as ``calibration``): the human verdicts the pass rate is corrected with
    (``judge``, ``report``, ``compare``, ``gate``)."""
    return click.option(
        "--calibration", "calibration", default=None, metavar="FILE|RUN",
        help="Human verdicts that measure the judge (a `review stats --out` JSON, a regressions file, or a run whose "
             "reviews were imported): also show the pass rate corrected for the judge's sensitivity and specificity "
             "(Rogan-Gladen), with a 95% interval that carries the run's and the calibration's sampling error.",
    )(func)
#: Columns of the console when no terminal says how wide it is and $COLUMNS is not set (a CI log): wide enough
#: that a table does not wrap, as it did at rich's 80.
LOG_WIDTH = 160
#: The widest a table column grows on such a console: a longer cell folds onto more lines of its own row.
LOG_COLUMN_CAP = 60


def _console(**kw: Any):
    from goldeval.io.printable import escaping_console  # start-up: loaded only when the command runs, not for --help

    console = escaping_console(**kw)  # control characters in ids, arms, labels are printed escaped
    if not console.is_terminal and "width" not in kw:
        # A CI log: $COLUMNS (rich reads it) or a terminal on another standard stream (``cmd | less``) says the
        # width; else a wide default. One long label folds in its own row instead of widening every row.
        console.column_cap = LOG_COLUMN_CAP
        if not (os.environ.get("COLUMNS") or "").isdigit() and not _any_terminal_width():
            console.width = LOG_WIDTH
    return console


def _any_terminal_width() -> bool:
    """Whether stdin, stdout or stderr is a terminal that reports its width (rich then uses it)."""
    for fd in (0, 1, 2):
        try:
            if os.get_terminal_size(fd).columns:
                return True
        except (OSError, ValueError):
            continue
    return False


def stderr_console():
    """A rich Console on stderr (diagnostics and tables go there when --out - sends JSON to stdout). Control
    characters in what it prints are escaped (:mod:`goldeval.io.printable`)."""
    return _console(stderr=True)


def stdout_console():
    """A rich Console on stdout; control characters in what it prints are escaped."""
    return _console()


def echo(message: str, *, err: bool = True) -> None:
    """``click.echo`` of a line that may hold the user's data (ids, labels, paths): control characters escaped,
    a spooled stream named as given."""
    from goldeval.io.printable import printable  # start-up: loaded only when the command runs, not for --help
    from goldeval.io.streams import relabel  # start-up: loaded only when the command runs, not for --help

    click.echo(printable(relabel(message)), err=err)


def fail(message: str, code: int = EXIT_BAD_INPUT) -> None:
    """Print ``goldeval: error: message`` to stderr and exit with *code* (through :func:`echo`: control characters
    escaped, a spooled stream's temporary file named as the stream)."""
    echo(f"goldeval: error: {message}")
    sys.exit(code)


def guarded(func: F) -> F:
    """Wrap a command body: InputError → exit 2, other GoldevalError → exit 3, anything else → exit 3 with a note;
    Ctrl-C → 130 and SIGTERM → 143, with one line on what became of the run."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from goldeval.cli._inputs import spooling  # start-up: loaded only when the command runs, not for --help

        try:
            with spooling(kwargs) as spooled_kwargs:  # inputs given as '-', a FIFO or a device, read once
                return func(*args, **spooled_kwargs)
        except InputError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
        except GoldevalError as exc:
            fail(str(exc), EXIT_INTERNAL)
        except KeyboardInterrupt as exc:
            stopped(exc)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except click.exceptions.Abort:  # a confirmation with no answer (no terminal, EOF)
            fail("aborted: a confirmation got no answer (no terminal?). Pass --yes to confirm on the command line.", EXIT_BAD_INPUT)
        except BrokenPipeError:
            # the reader stopped reading (`| head`): stop quietly, as a shell pipeline expects (128 + SIGPIPE)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(EXIT_BROKEN_PIPE)
        except Exception as exc:  # an internal bug: say so plainly, keep the traceback on request
            import traceback

            # start-up: loaded only when the command runs, not for --help
            from goldeval.cli._signals import interrupt_in_chain

            cause = interrupt_in_chain(exc)
            if cause is not None:  # a Ctrl-C that Python wrapped (e.g. in RuntimeError, raised while a class was built)
                stopped(cause)
            if DEBUG["on"]:
                traceback.print_exc()
            fail(
                f"internal error: {type(exc).__name__}: {exc} (please report it; run again as `goldeval --debug ...` "
                "for the traceback)",
                EXIT_INTERNAL,
            )

    return wrapper  # type: ignore[return-value]


def stopped(exc: KeyboardInterrupt) -> NoReturn:
    """Say what a Ctrl-C (or SIGTERM, as :class:`~goldeval._startup.Terminated`) stopped, in one line, and exit 130
    (128 + SIGINT) or 143 (128 + SIGTERM), never 1: exit 1 means "a gate failed" to the scripts that call us."""
    # start-up: loaded only when the command runs, not for --help
    from goldeval.cli._inputs import InterruptedWhileReading

    # start-up: loaded only when the command runs, not for --help
    from goldeval.cli._store import FINISHED_RUNS, STREAM_RUNS

    how = stopped_by(exc)
    if isinstance(exc, InterruptedWhileReading):
        click.echo(f"goldeval: {how} while reading {exc}; nothing was scored or recorded.", err=True)
    elif FINISHED_RUNS:  # stopped after the run was finished in the store, before its outputs were written
        run_id = FINISHED_RUNS[-1]
        click.echo(
            f"goldeval: {how} after run {run_id} was finished and recorded; its results file may not have "
            f"been written. Write it from the store: goldeval runs show {run_id} --out RESULTS.json "
            f"(or goldeval runs export {run_id} --format json --out RUN.json).", err=True)
    elif STREAM_RUNS:  # its input was stdin or a FIFO: no later invocation can be known to be the same
        run_id, names = STREAM_RUNS[-1]
        click.echo(
            f"goldeval: {how}; run {run_id} read {names} as a stream, so it is not resumed by running the "
            f"command again: add --resume {run_id} and feed it the same bytes (their sha256 is recorded).",
            err=True)
    else:
        click.echo(f"goldeval: {how}; a recorded run resumes when the same command is run again.", err=True)
    sys.exit(exit_code(exc))


def dumps(obj: Any, *, newline: bool = False) -> bytes:
    """Serialize results as indented UTF-8 JSON (floats unrounded); with *newline*, ending in ``\n`` (written by
    orjson into the same buffer: ``dumps(obj) + b"\n"`` copied a 15 MB comparison once more at its peak)."""
    option = orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
    return orjson.dumps(obj, option=option | orjson.OPT_APPEND_NEWLINE if newline else option)


def check_writable(out: str | None) -> None:
    """Fail fast (InputError) when ``--out`` names a file that cannot be written, before any work is done."""

    check_outputs({"--out": out}, {})


def guard_outputs(outputs: dict[str, Any], others: dict[str, Any]) -> None:
    """Refuse (InputError, exit 2) before any work an output that is one of the command's own files, or cannot be
    written: see :func:`goldeval.io.outputs.check_outputs`. Database roles should be given as
    ``goldeval.io.outputs.sqlite_files(path)`` so that their -wal / -shm companions are protected too."""

    check_outputs(outputs, others)


def run_inputs(store: Any, *runs: str) -> dict[str, list[str]]:
    """``role → [path, ...]`` of the input files of the stored *runs* (ids, prefixes, ``latest~N``), for
    :func:`guard_outputs`: an export, a review file or a comparison written over a run's own cases, attempts or
    predictions destroys the data the run was made of (``review export RUN --out cases.jsonl`` replaced the 22
    cases with 2 review rows, exit 0). *store* is an open :class:`goldeval.runs.store.RunStore`."""
    # start-up: the run store's modules load only when a command reads a store
    from goldeval.runs.inputs import stored_run_inputs

    out: dict[str, list[str]] = {}
    for ref in runs:
        for role, path in stored_run_inputs(store, ref).items():
            out.setdefault(f"run's {role}", []).append(path)
    return out


def write_json(obj: Any, out: str, *, role: str = "--out") -> None:
    """Write *obj* as JSON to the path *out* (atomically), or to stdout when *out* is ``-``."""

    write_output(out, dumps(obj, newline=True), role=role)


def write_results(results: Mapping[str, Any], out: str, out_format: str = "json") -> None:
    """Write a results dict held in memory to *out* in *out_format*: :func:`goldeval.io.resultsfile.write_results`."""
    # start-up: loaded only when the command runs, not for --help
    from goldeval.io.resultsfile import write_results as write

    write(results, out, out_format)


def report_console(out: str | None, *, quiet: bool = False):
    """The console for the human-readable summary: stdout, or stderr when JSON goes to stdout (``--out -``); with
    *quiet* (``-q``) a console that prints nothing."""
    if quiet:
        from rich.console import Console  # start-up: rich loads only when a table is rendered

        return Console(quiet=True)
    return stderr_console() if out == "-" else stdout_console()
