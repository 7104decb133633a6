"""A results file written as the rows are scored: ``per_example`` streams out, nothing is held back.

Two formats:

``json`` (default) — one JSON object, the same keys as the results dict, indented as ``goldeval`` writes JSON, except
that each ``per_example`` entry takes one line and the keys known only at the end (``input``, ``aggregate``,
``gates``…) come after the array::

    {
      "scorer": {...}, "tokenizer": {...}, "config": {...},
      "per_example": [
        {"id":"r1","line":1,"whole_note":{...},"tokens":{...}},
        ...
      ],
      "failures": [...], "input": {...}, "aggregate": {...}, "gates": {...}
    }

``jsonl`` — one ``per_example`` entry a line, then a last line holding every other key of the results (``failures``,
``aggregate``…; ``per_example`` left out). ``tail -n 1 results.jsonl | jq .aggregate`` reads the summary.

A file path is written through :func:`goldeval.io.outputs.open_output`: a temporary file in the same folder, renamed
over the path when the results are complete (:meth:`ResultsFile.close`); a run that fails or is interrupted leaves
the path as it was and removes the temporary file. ``-`` is standard output; character devices (``/dev/null``) and
FIFOs are written directly.

Memory: one entry at a time (plus the output buffer), whatever the number of rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, Any

import orjson

from goldeval.errors import InputError
from goldeval.io.outputs import open_output
from goldeval.io.outputs import write_output

__all__ = ["FORMATS", "ResultsFile", "dumps_results", "read_results", "write_results"]

FORMATS = ("json", "jsonl")
_OPTS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def _indented(value: Any, level: int) -> bytes:
    """*value* as goldeval's indented JSON, its continuation lines shifted right by *level* spaces."""
    text = orjson.dumps(value, option=orjson.OPT_INDENT_2 | _OPTS)
    return text.replace(b"\n", b"\n" + b" " * level) if level else text


def read_results(path: str, *, where: str | None = None, gateable: bool = False) -> dict[str, Any]:
    """Read a results JSON that a goldeval command wrote (``--out``): the one reader behind ``goldeval gate``,
    ``goldeval.testing.load_results`` and ``goldeval report --results``.

    Args:
        path: The file's path.
        where: How the messages name the file (default: the path itself, e.g. ``"--results r.json"``).
        gateable: Also require what a gate reads: an ``aggregate`` object (``goldeval gate``, ``assert_gates``).

    Returns:
        The decoded JSON object (with ``gateable``, one holding an ``aggregate`` object; callers check the other
        keys they need).

    Raises:
        InputError: the file is missing, is not JSON, or holds something other than a JSON object; with
            ``gateable``, an object without ``aggregate`` (``{}``, or another tool's JSON): the message names
            the file, what is missing, and the keys it does hold.
    """
    where = path if where is None else where
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        results = orjson.loads(data)
    except FileNotFoundError:
        raise InputError(f"{where}: no such file. Pass the JSON a goldeval scoring command wrote with --out.") from None
    except orjson.JSONDecodeError as exc:
        results = _from_jsonl(data)  # --out-format jsonl: goldeval's own other layout ('not JSON' it was called)
        if results is None:
            raise InputError(f"{where}: not JSON ({exc}). Pass the JSON a goldeval scoring command wrote with --out.") from None
    if not isinstance(results, dict):
        raise InputError(f"{where}: expected a goldeval results file (a JSON object), got {type(results).__name__}. Pass the JSON a goldeval scoring command wrote with --out.")
    if gateable and not isinstance(results.get("aggregate"), Mapping):
        keys = list(results)
        held = ("it is an empty object {}" if not keys else
                "it holds " + ", ".join(repr(str(k)) for k in keys[:8]) + (f" and {len(keys) - 8} more keys" if len(keys) > 8 else ""))
        what = ("it has no 'aggregate' object (the figures a gate reads)" if "aggregate" not in results else
                f"its 'aggregate' is {type(results['aggregate']).__name__}, not an object of the figures a gate reads")
        raise InputError(
            f"{where}: not a goldeval results file: {what}"
            + ("" if isinstance(results.get("scorer"), Mapping) else " and no 'scorer' (the scorer that wrote it)")
            + f"; {held}. Pass the JSON a goldeval scoring command wrote with --out "
            "(e.g. goldeval labels FILE --positive LABEL --out results.json)."
        )
    return results


def _from_jsonl(data: bytes) -> dict[str, Any] | None:
    """The results dict of a file written with ``--out-format jsonl`` (one ``per_example`` entry a line, then a last
    line with every other key), or ``None`` when *data* is not laid out so (every line an object, the last one
    holding ``scorer`` or ``aggregate``)."""
    lines = [line for line in data.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    try:
        rest = orjson.loads(lines[-1])
        entries = [orjson.loads(line) for line in lines[:-1]]
    except orjson.JSONDecodeError:
        return None
    if not isinstance(rest, dict) or "per_example" in rest or not ("aggregate" in rest or "scorer" in rest):
        return None
    if not all(isinstance(e, dict) for e in entries):
        return None
    return {**rest, "per_example": entries}


class ResultsFile:
    """Streams a results dict to *path* in *fmt*: :meth:`begin` with the keys known up front, :meth:`example` per
    ``per_example`` entry, :meth:`close` with the whole results (its ``per_example`` key is ignored).

    The file is opened through :func:`goldeval.io.outputs.open_output` (temporary file renamed into place by
    :meth:`close`; ``-``, devices and FIFOs written directly). Check the path first with
    :func:`goldeval.io.outputs.check_outputs` (an output onto an input is refused there).

    Args:
        path: A file path, ``-`` (stdout), a character device or a FIFO.
        fmt: ``json`` or ``jsonl`` (see the module docstring).
        role: The option's name, for error messages.

    Raises:
        InputError: unknown format; *path* cannot be written.

    Use as a context manager: leaving the block without :meth:`close` (an error, Ctrl-C) discards the temporary
    file, so a half-written results file never replaces a complete one.
    """

    def __init__(self, path: str, fmt: str = "json", *, role: str = "--out") -> None:
        if fmt not in FORMATS:
            raise InputError(f"--out-format {fmt}: expected one of {', '.join(FORMATS)}.")
        self.path, self.fmt, self.role = path, fmt, role
        self._n = 0
        self._began = False
        self._head_keys: tuple[str, ...] = ()
        self._head: dict[str, Any] | None = None
        self._cm: Any = open_output(path, role=role)
        self._fh: IO[bytes] | None = self._cm.__enter__()

    # -- writing -------------------------------------------------------------------------------------------------

    def _write(self, data: bytes | memoryview) -> None:
        assert self._fh is not None
        try:
            self._fh.write(data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise InputError(f"{self.role} {self.path}: cannot write ({exc.strerror}). Choose a writable path.") from None

    def begin(self, head: Mapping[str, Any]) -> None:
        """Give the keys known before scoring (e.g. ``scorer``, ``tokenizer``, ``config``). Called once, before
        :meth:`example`. Nothing is written until the first entry (or :meth:`close`): a run refused before any
        example (bad options, an empty file) leaves even ``-`` (stdout) untouched."""
        self._began = True
        self._head = dict(head)
        if self.fmt == "json":  # (jsonl writes every key but per_example on its last line)
            self._head_keys = tuple(head)

    def _open_array(self) -> None:
        head, self._head = self._head, None
        if head is not None and self.fmt == "json":
            parts = [b"{\n"] + [b"  " + orjson.dumps(k) + b": " + _indented(v, 2) + b",\n" for k, v in head.items()]
            self._write(b"".join(parts) + b'  "per_example": [')

    def example(self, entry: Mapping[str, Any]) -> None:
        """Write one ``per_example`` entry (one line)."""
        self.example_json(orjson.dumps(entry, option=_OPTS))

    def example_json(self, line: bytes) -> None:
        """Write one ``per_example`` entry given as its JSON (one line, no newline in it: what ``orjson.dumps``
        writes), e.g. serialized already by the process that scored it."""
        if not self._began:
            self.begin({})
        if self._head is not None:
            self._open_array()
        if self.fmt == "json":
            self._write((b"\n    " if self._n == 0 else b",\n    ") + line)
        else:
            self._write(line + b"\n")
        self._n += 1

    def examples(self, entries: Sequence[Mapping[str, Any]], *, flat: bool = False) -> None:
        """Write many ``per_example`` entries (one line each) in one write: the same bytes as :meth:`example` on
        each in turn.

        Args:
            entries: The entries, in order.
            flat: The caller vouches that every entry is a non-empty object whose values are all scalars (string,
                number, boolean, null: no nested object or array). The list is then serialized by one
                ``orjson.dumps`` call and cut into lines where one entry ends and the next begins (``},{"``: inside
                a JSON string a quote is always escaped, so those four bytes occur only between two entries):
                several times faster than one call per entry for a million small entries.
        """
        if not entries:
            return
        if not self._began:
            self.begin({})
        if self._head is not None:
            self._open_array()
        sep = b",\n    " if self.fmt == "json" else b"\n"
        if flat:
            body = orjson.dumps(entries, option=_OPTS)[1:-1].replace(b'},{"', b"}" + sep + b'{"')
        else:
            dumps = orjson.dumps
            body = sep.join([dumps(e, option=_OPTS) for e in entries])
        if self.fmt == "json":
            self._write((b"\n    " if self._n == 0 else sep) + body)
        else:
            self._write(body + b"\n")
        self._n += len(entries)

    def example_lines(self, body: bytes, n: int) -> None:
        """Write *n* ``per_example`` entries given as their JSON, each followed by a newline (what ``orjson.dumps``
        writes for each, no newline inside one: a newline in a JSON string is escaped): the same bytes as
        :meth:`example_json` on each in turn, in one write."""
        if not n:
            return
        if not self._began:
            self.begin({})
        if self._head is not None:
            self._open_array()
        if self.fmt == "json":
            self._write(b"\n    " if self._n == 0 else b",\n    ")
            self._write(memoryview(body.replace(b"\n", b",\n    "))[:-6])  # (no copy for the cut)
        else:
            self._write(body)
        self._n += n

    def close(self, results: Mapping[str, Any]) -> None:
        """Write the rest of *results* (every key but ``per_example`` and those :meth:`begin` wrote), then put the
        file in place (rename over the path; stdout and devices are flushed)."""
        if not self._began:
            self.begin({})
        if self._head is not None:
            self._open_array()
        rest = {k: v for k, v in results.items() if k != "per_example" and k not in self._head_keys}
        if self.fmt == "json":
            tail = [(b"\n  ]" if self._n else b"]")]
            for k, v in rest.items():
                tail.append(b",\n  " + orjson.dumps(k) + b": " + _indented(v, 2))
            self._write(b"".join(tail) + b"\n}\n")
        else:
            self._write(orjson.dumps(rest, option=_OPTS) + b"\n")
        cm, self._cm, self._fh = self._cm, None, None
        cm.__exit__(None, None, None)

    def discard(self, exc: BaseException | None = None) -> None:
        """Drop what was written: the temporary file is removed (a direct target keeps what reached it)."""
        cm, self._cm, self._fh = self._cm, None, None
        if cm is not None:
            exc = exc if exc is not None else _Discarded()
            cm.__exit__(type(exc), exc, exc.__traceback__)

    @property
    def n_examples(self) -> int:
        """Entries written so far."""
        return self._n

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, typ: Any, exc: BaseException | None, tb: Any) -> None:
        self.discard(exc)


class _Discarded(Exception):
    """Thrown into the output's context to make it drop the temporary file."""


def dumps_results(obj: Any) -> bytes:
    """*obj* as indented UTF-8 JSON (floats unrounded), as every ``goldeval`` JSON output is written."""
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | _OPTS)


def write_results(results: Mapping[str, Any], out: str, out_format: str = "json", *, role: str = "--out") -> None:
    """Write a results dict held in memory to *out* (``'-'``: stdout), atomically.

    Args:
        results: The results dict. out: The path. role: The option that named it (in messages).
        out_format: ``json`` — one indented object; ``jsonl`` — as :class:`ResultsFile` writes it (one
            ``per_example`` entry a line, when it is a list, then a line with every other key).

    Raises:
        InputError: the path cannot be written.
    """
    if out_format == "json":

        write_output(out, dumps_results(results) + b"\n", role=role)
        return
    with ResultsFile(out, out_format) as writer:
        per_example = results.get("per_example")
        for entry in per_example if isinstance(per_example, list) else ():
            writer.example(entry)
        writer.close(results)
