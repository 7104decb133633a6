"""Input arguments that may be streams: ``-`` (stdin), a FIFO or ``<(...)``, a device such as ``/dev/null``.

``type=INPUT`` on a click argument or option marks it as an input file. A regular file (or a missing path: its
reader says "no such file") passes through as click.Path(dir_okay=False) passes it. A stream is spooled by
:func:`spooling` (called by :func:`goldeval.cli._common.guarded`, so that a Ctrl-C while stdin is read exits 130
and a bad stream exits 2 like any bad input) into a temporary file (:mod:`goldeval.io.streams`); the command sees that
file's path, and messages and results name the stream again (:func:`goldeval.io.streams.relabel`).

A regular file that is compressed, UTF-16/32, or (for a rows input) one JSON array is decoded the same way into a
plain UTF-8 temporary file (:func:`goldeval.io.streams.decoded`); the definition of done (``--gates``) and a results
file are documents, only decompressed and decoded.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import click

from goldeval.cli._signals import sigterm_raises
from goldeval.errors import GoldevalError, InputError

__all__ = ["INPUT", "FileArg", "InterruptedWhileReading", "StreamArg", "spooling"]


class InterruptedWhileReading(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) while a stream was being read, before any scoring: nothing was recorded."""


class StreamArg(str):
    """The value of an input that names a stream; ``role`` is how the command calls it (``FILE``, ``--gates``)."""

    role: str = "input"


class FileArg(str):
    """The value of an input that names a regular file (it may need decoding: see the module's docstring); ``rows``
    says whether it holds rows (a JSON array is then read as rows)."""

    rows: bool = True


#: Inputs that hold one document, not rows: a JSON array there is no list of rows.
_DOCUMENTS = ("--gates", "--rules", "RESULTS_FILE", "RESULTS.JSON")


class InputPath(click.ParamType):
    """click type of an input file that may also be ``-``, a FIFO or a device (see the module's docstring)."""

    name = "file"

    def __init__(self) -> None:
        self._path = click.Path(dir_okay=False, path_type=str)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from goldeval.io.streams import is_stream  # start-up: loaded only when the command runs, not for --help

        if isinstance(value, (StreamArg, FileArg)) or not isinstance(value, str):
            return value
        if not is_stream(value):
            path = FileArg(self._path.convert(value, param, ctx))
            if param is not None:
                role = param.opts[0] if isinstance(param, click.Option) else (param.human_readable_name or "input").upper()
                path.rows = role not in _DOCUMENTS and not path.lower().endswith((".toml", ".parquet", ".pq"))
            return path
        arg = StreamArg(value)
        if param is not None:
            arg.role = param.opts[0] if isinstance(param, click.Option) else (param.human_readable_name or "input").upper()
        return arg


INPUT = InputPath()


@contextlib.contextmanager
def spooling(kwargs: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """*kwargs* with every :class:`StreamArg` replaced by the path of its spooled copy; the copies are removed on
    leaving. A :class:`goldeval.GoldevalError` raised inside gets the streams' names back in its message.

    Raises:
        InputError: stdin given for two inputs (it can be read once), or a stream that cannot be spooled.
    """
    from goldeval.io.streams import STDIN, decoded, relabel, spool  # start-up: loaded only when the command runs, not for --help

    streams = {k: v for k, v in kwargs.items() if isinstance(v, StreamArg)}
    files = {k: v for k, v in kwargs.items() if isinstance(v, FileArg)}
    if not streams and not files:
        yield kwargs
        return
    on_stdin = [v.role for v in streams.values() if v == STDIN]
    if len(on_stdin) > 1:
        raise InputError(f"{' and '.join(on_stdin)} are both '-' (stdin), which can be read once. Give a file for all "
                         "but one of them.")
    opened = []
    try:
        out = dict(kwargs)
        for key, path in files.items():
            out[key] = str(path)
            if os.path.isfile(path) and (sp := decoded(path, rows=path.rows)) is not None:
                opened.append(sp)
                out[key] = sp.path
        if not streams and not opened:
            yield out
            return
        for key, arg in streams.items():
            try:
                with sigterm_raises():  # a terminated read removes its temporary copy too
                    sp = spool(str(arg), role=arg.role)
            except KeyboardInterrupt:
                raise InterruptedWhileReading("- (stdin)" if arg == STDIN else str(arg)) from None
            opened.append(sp)
            out[key] = sp.path
            # gzip or UTF-16 piped in (`cat preds.jsonl.gz | goldeval score -`): decoded as a file would be
            if (dec := decoded(sp.path, rows=arg.role not in _DOCUMENTS, of=sp)) is not None:
                opened.append(dec)
                out[key] = dec.path
        try:
            yield out
        except GoldevalError as exc:
            if exc.args and isinstance(exc.args[0], str):
                exc.args = (relabel(exc.args[0]), *exc.args[1:])
            raise
    finally:
        for sp in opened:
            sp.close()
