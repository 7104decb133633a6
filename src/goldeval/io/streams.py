"""Inputs that are streams, not files: ``-`` (stdin), a FIFO (``mkfifo``, bash's ``<(zcat preds.jsonl.gz)``), a
character device (``/dev/null``) (issue 10 item 11).

goldeval reads an input file more than once (a first pass counts the rows and finds repeated ids; the run store
hashes it; the report reads case texts back), and a stream can be read once. So a stream is *spooled*: read once,
to its end, into a temporary file in a folder of its own, its sha256 and size taken on the way; that file is then
the input, and is removed when the command ends. Memory does not grow with the stream (it is copied in blocks of
1 MiB); the disk holds one copy while the command runs.

The temporary file is named after the stream, so that a row's message reads ``stdin:3: not valid JSON`` (or
``preds.csv:3:`` for a FIFO of that name). stdin is sniffed for its format: a first byte ``{`` (after a BOM or
blanks) is JSONL (``stdin``), ``PAR1`` Parquet (``stdin.parquet``), anything else CSV (``stdin.csv``). A FIFO or
device keeps its own name, whose ending says the format as for a file; one whose name has no ending (bash's
``<(...)`` is ``/dev/fd/63``) is sniffed as stdin is (``63.csv``, ``63.parquet``, ``63``).

What is recorded: the stream's own name (``-`` for stdin) as the input's path, and the sha256 of the bytes read.
Where a message or a result names the temporary file, :func:`relabel` puts the stream's name back.

Source: POSIX ``stat`` file types (``S_ISREG``, ``S_ISFIFO``, ``S_ISCHR``, ``S_ISSOCK``); the spooling is the
pattern of ``tempfile.SpooledTemporaryFile``, always on disk here since later readers need a path.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from goldeval.errors import InputError
from goldeval.io.decoding import compression_of, decode_into, encoding_of, new_folder, sniff
from goldeval.io.reading import file_sha256, remember_sha256

__all__ = ["STDIN", "STREAM_KINDS", "Spooled", "active", "decoded", "display_name", "input_sha256", "is_stream", "relabel",
           "spool", "spooled"]

#: The kinds of a :class:`Spooled` that was read once from a stream (a decoded file can be read again).
STREAM_KINDS = frozenset({"stdin", "fifo", "device", "socket"})

#: The argument that names stdin.
STDIN = "-"

_BLOCK = 1 << 20

#: temporary path -> the spool it belongs to, for every spool not yet closed (see :func:`spooled`, :func:`relabel`).
_ACTIVE: dict[str, Spooled] = {}


@dataclass(slots=True)
class Spooled:
    """One stream read to its end into a temporary file.

    Attributes:
        name: What the user gave: ``-`` for stdin, else the FIFO's or device's path.
        path: The temporary regular file that holds every byte read (``os.fspath``-able string).
        sha256: Hex sha256 of those bytes.
        size: How many bytes were read.
        kind: ``"stdin"``, ``"fifo"``, ``"device"`` or ``"socket"``; for a file decoded by :func:`decoded`, what
            was decoded (``"gzip"``, ``"utf-16-le"``, ``"json array"``, joined by ", ").
        unit: What a row's number counts in messages: ``"line"``, or ``"element"`` for a JSON array
            (``preds.json element 3: …``).
    """

    name: str
    path: str
    sha256: str
    size: int
    kind: str
    _folder: str = field(default="", repr=False)
    unit: str = "line"

    @property
    def is_stream(self) -> bool:
        """Read once from stdin, a FIFO, a device or a socket (a decoded file can be read again)."""
        return self.kind.split(", ", 1)[0] in STREAM_KINDS

    def close(self) -> None:
        """Remove the temporary file and its folder (idempotent)."""
        _ACTIVE.pop(self.path, None)
        if self._folder:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = ""


def is_stream(path: str | os.PathLike[str]) -> bool:
    """Whether *path* is ``-`` or names something that exists and is neither a regular file nor a folder (a FIFO,
    a character or block device, a socket). A missing path is not a stream (its reader says "no such file")."""
    text = os.fspath(path)
    if text == STDIN:
        return True
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _kind(name: str) -> str:
    if name == STDIN:
        return "stdin"
    mode = os.stat(name).st_mode
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


def _stdin_name(head: bytes) -> str:
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if head.startswith(b"PAR1"):
        return "stdin.parquet"
    if not text or text.startswith((b"{", b"[")) or compression_of(head) or encoding_of(head):
        return "stdin"  # JSONL, or a JSON array, compressed or UTF-16/32 bytes: decoded next (see decoded)
    if b"\t" in text.split(b"\n", 1)[0]:
        return "stdin.tsv"
    return "stdin.csv"


def spool(path: str | os.PathLike[str], *, stdin: IO[bytes] | None = None, role: str = "input") -> Spooled:
    """Read the stream *path* (``-`` for stdin) to its end into a temporary file; see the module's docstring.

    Args:
        path: ``-`` or the path of a FIFO, device or socket (:func:`is_stream`).
        stdin: The binary stream ``-`` reads (default ``sys.stdin.buffer``).
        role: How the command calls this input (``FILE``, ``CASES``, ``--gates``), for messages.

    Returns:
        The :class:`Spooled` stream; call :meth:`Spooled.close` when done (it stays listed by :func:`active` until
        then).

    Raises:
        InputError: stdin is a terminal (nothing is piped in: it would wait for typing), the stream cannot be
            opened, or it was empty (``/dev/null``, an empty pipe), each with what to do.
    """
    name = os.fspath(path)
    kind = _kind(name)
    where = "- (stdin)" if kind == "stdin" else name
    if kind == "stdin":
        source = stdin if stdin is not None else sys.stdin.buffer
        if source.isatty():
            raise InputError(f"{role} {where}: stdin is a terminal, so there is nothing to read. Pipe the rows in "
                             f"(`goldeval score - < preds.jsonl`, `zcat preds.jsonl.gz | goldeval score -`) or give a file.")
        close_source = False
    else:
        try:
            source = open(name, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise InputError(f"{role} {where}: cannot be opened for reading ({exc.strerror}). Check it, or give a file.") from None
        close_source = True
    folder = tempfile.mkdtemp(prefix="goldeval-stream-")
    try:
        digest = hashlib.sha256()
        size = 0
        head = source.read(_BLOCK) or b""
        if kind == "stdin":
            base = _stdin_name(head)
        else:
            base = os.path.basename(name) or "stream"
            if "." not in base:  # bash's <(...) is /dev/fd/63: no ending says the format, so it is sniffed as stdin is
                base += _stdin_name(head)[len("stdin"):]
        target = os.path.join(folder, base)
        with open(target, "wb") as out:
            block = head
            while block:
                digest.update(block)
                out.write(block)
                size += len(block)
                block = source.read(_BLOCK)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        if close_source:
            source.close()
    if size == 0:
        shutil.rmtree(folder, ignore_errors=True)
        what = "stdin was empty" if kind == "stdin" else f"the {kind} was empty"
        expected = ("Expected the definition of done (TOML: agreed_by, [gates] ...); give the file that holds it."
                    if role == "--gates" else
                    "Expected rows, e.g. one JSON object per line; give the file that holds them.")
        raise InputError(f"{role} {where}: read as a stream, and nothing was read ({what}). {expected}")
    result = Spooled(name=name, path=target, sha256=digest.hexdigest(), size=size, kind=kind, _folder=folder)
    _ACTIVE[target] = result

    remember_sha256(target, result.sha256)  # the store and the results need the sha256: never read the copy again
    return result


def decoded(path: str | os.PathLike[str], *, rows: bool = True, of: Spooled | None = None) -> Spooled | None:
    """The regular file *path* decoded into a plain UTF-8 temporary file when it is compressed, UTF-16/32 or (with
    *rows*) one JSON array (:mod:`goldeval.io.decoding`); ``None`` when it is plain already.

    Args:
        path: A regular input file.
        rows: It holds rows (a JSON array is read as rows); ``False`` for a document (TOML, a results JSON).
        of: The spooled stream *path* is the copy of (stdin read as gzip): the result is named as that stream, and
            recorded as read from it.

    Returns:
        A :class:`Spooled` named *path*, with the sha256 of *path*'s own bytes; call :meth:`Spooled.close` when done.

    Raises:
        InputError: a compressed file that cannot be decompressed, text invalid in the encoding its byte order mark
            names, a broken JSON array (:func:`goldeval.io.decoding.decode_into`).
    """
    name = os.fspath(path)
    how = sniff(name, rows=rows)
    if how is None:
        return None
    folder = new_folder()
    try:
        target = decode_into(name, how, folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    result = Spooled(name=of.name if of else name, path=target, sha256=of.sha256 if of else file_sha256(name),
                     size=os.path.getsize(target), kind=f"{of.kind}, {how.kind}" if of else how.kind, _folder=folder,
                     unit="element" if how.json_array else "line")
    _ACTIVE[target] = result
    # the run's dataset hash is the input's own (as recorded, and as a report checks it): never the decoded copy's
    remember_sha256(target, result.sha256)
    return result


def spooled(path: str | os.PathLike[str] | None) -> Spooled | None:
    """The open :class:`Spooled` whose temporary file is *path*, else ``None``."""
    if path is None:
        return None
    return _ACTIVE.get(os.fspath(path))


def display_name(path: str | os.PathLike[str]) -> str:
    """How results and messages name the input *path*: the stream's name (``-`` for stdin, the FIFO's path) when
    *path* is the temporary copy of an open spool, else ``str(path)``."""
    sp = spooled(path)
    return sp.name if sp is not None else os.fspath(path)


def input_sha256(path: str | os.PathLike[str], computed: str | None = None) -> str:
    """The sha256 results record for the input *path*: the stream's or the original file's when *path* is the
    temporary copy of an open spool (a decoded ``.gz`` is recorded by the bytes on disk), else *computed* (a hash the
    caller took while reading), else :func:`goldeval.io.reading.file_sha256`."""
    sp = spooled(path)
    if sp is not None:
        return sp.sha256
    return computed if computed is not None else file_sha256(path)


def active() -> list[Spooled]:
    """Every spool not closed yet, oldest first."""
    return list(_ACTIVE.values())


def relabel(obj: Any) -> Any:
    """*obj* with every temporary path of an open spool, wherever it appears in a string, replaced by the stream's
    name (``-`` for stdin): for messages and results. Dicts and lists are changed in place and returned; a string
    is returned changed. Nothing is done when no spool is open."""
    if not _ACTIVE:
        return obj
    pairs = sorted(((s.path, s.name) for s in _ACTIVE.values()), key=lambda p: -len(p[0]))
    # A row's place 'name:N:' names the decoded copy's file: it reads as the user's file ('preds.jsonl.gz:3:'), and
    # a JSON array's rows are its elements ('preds.json element 3:'). A stream keeps its copy's name ('stdin:3:').
    places = [(re.compile(r"(?<![\w.-])" + re.escape(os.path.basename(s.path)) + r":(\d+):"),
               os.path.basename(s.name) + (" element " if s.unit == "element" else ":"))
              for s in _ACTIVE.values() if not s.is_stream and (s.unit == "element" or os.path.basename(s.path) != os.path.basename(s.name))]
    return _relabel(obj, pairs, places)


def _place(head: str) -> Callable[[re.Match[str]], str]:
    """The replacement of a row's place ``name:N:``: *head* (``"preds.jsonl.gz:"``, ``"preds.json element "``), N, ``:``."""
    return lambda m: f"{head}{m.group(1)}:"


def _relabel(obj: Any, pairs: list[tuple[str, str]], places: list[tuple[re.Pattern[str], str]] | None = None) -> Any:
    places = places or []
    if isinstance(obj, str):
        for tmp, label in pairs:
            if tmp in obj:
                obj = obj.replace(tmp, label)
        for pattern, head in places:
            obj = pattern.sub(_place(head), obj)
        return obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (str, dict, list)):
                obj[k] = _relabel(v, pairs, places)
        return obj
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            if isinstance(v, (str, dict, list)):
                obj[i] = _relabel(v, pairs, places)
        return obj
    return obj
