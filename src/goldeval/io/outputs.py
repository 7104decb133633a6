"""Where a command's outputs go: never onto a file the command reads or writes, and never half-written.

Every CLI command that writes a file uses this module, in two steps::

    from goldeval.io.outputs import check_outputs, write_output

    # 1. before any work: refuse an output that is one of the command's own files (exit 2, nothing written)
    check_outputs(
        {"--out": out, "--junit": junit},                      # the outputs (None = not given)
        {"CASES": cases, "--db": db, "--gates": gates,         # every file the command reads or writes
         "--store": store_path, "judge cache": cache_path},
    )
    ...
    # 2. at the end: write each output
    write_output(out, data)                                   # bytes; '-' is stdout
    write_output(summary_md, text.encode(), append=True)      # a file appended to by design (CI step summary)

    with open_output(out) as fh:                              # streaming: a binary file object
        for chunk in chunks:
            fh.write(chunk)

Rules (issue 10):

* **Same file** means the same resolved path (symlinks followed, ``..`` folded) or, when both exist, the same
  inode on the same device (hard links). See :func:`same_file`. An input ``-`` is the file standard input is
  redirected from, when it is one (``goldeval score - --out preds.jsonl < preds.jsonl``; ``--out /dev/stdin``).
* A **regular file** (or a path that does not exist yet) is written atomically: a temporary file in the same
  folder as the target (the symlink's target when the path is a symlink), flushed and fsynced, then
  ``os.replace``. A crash or Ctrl-C while writing leaves the old file (or no file), never half of one. A
  replaced file keeps its permission bits; a new one gets ``0o666 & ~umask``, as ``open`` would give it.
* ``-`` is standard output; a **character device** (``/dev/null``, a terminal), a **FIFO** or a socket is opened
  and written directly, never replaced.
* ``append=True`` appends to the file (created when missing), for files that are appended to by design.

Errors are :class:`goldeval.errors.InputError` (exit 2 in the CLI): :class:`OutputClashError` for an output that
is one of the command's files, plain ``InputError`` for a folder that does not exist, a path that is a folder, or a
place that cannot be written. This module never prints or exits.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import IO

from goldeval.errors import InputError
from goldeval.io.streams import STDIN, spooled

__all__ = ["OutputClashError", "check_outputs", "same_file", "sqlite_files", "write_output", "open_output"]

PathLike = str | os.PathLike[str]


class OutputClashError(InputError):
    """An output names a file the command also reads or writes (writing it would destroy that file)."""


def _is_stdout(path: PathLike | None) -> bool:
    return path is not None and os.fspath(path) == "-"


def same_file(a: PathLike, b: PathLike) -> bool:
    """True when paths *a* and *b* name the same file.

    Args:
        a, b: Paths (need not exist).

    Returns:
        ``True`` when their resolved paths (``os.path.realpath``: symlinks followed, ``..`` folded) are equal, or
        when both exist and share device and inode (hard links). ``-`` is never a file: ``same_file("-", "-")``
        is ``False``.
    """
    if _is_stdout(a) or _is_stdout(b):
        return False
    a, b = os.fspath(a), os.fspath(b)
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def sqlite_files(path: PathLike | None) -> list[str]:
    """The files an SQLite database at *path* consists of: itself and its ``-wal``, ``-shm`` and ``-journal``
    companions (an output onto any of them corrupts the database). ``[]`` for ``None``."""
    if path is None:
        return []
    p = os.fspath(path)
    return [p, p + "-wal", p + "-shm", p + "-journal"]


def _special(path: str) -> bool:
    """True for an existing path that is not a regular file or folder: a device, FIFO or socket."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_outputs(
    outputs: Mapping[str, PathLike | None],
    others: Mapping[str, PathLike | Sequence[PathLike] | None],
) -> None:
    """Refuse, before any work, an output that would overwrite one of the command's own files.

    Args:
        outputs: role → output path, e.g. ``{"--out": "r.json", "--junit": None}``. ``None`` (not given) is skipped.
            Two outputs onto the same file are refused too, and so are two onto one stream (``-`` twice, ``-`` and
            ``/dev/stdout``, one FIFO twice); ``/dev/null`` takes any number.
        others: role → path (or list of paths, e.g. :func:`sqlite_files`) of every file the command reads or
            writes: inputs, ``--db``, the run store, ``--gates``, ``--rules``, the regressions file, the judge
            cache. ``None`` entries are skipped; paths need not exist yet (a store about to be created counts).
            ``-`` is standard input: when stdin is redirected from a regular file, no output may be that file. The
            temporary copy of an input (:func:`goldeval.io.streams.spooled`: stdin, a FIFO, a decoded ``.gz`` or
            UTF-16 file) stands for the input the user named.

    Raises:
        OutputClashError: an output is the same file (:func:`same_file`) as another output or one of *others*,
            or the same stream as another output; the message names both roles and says what to do.
        InputError: an output's folder does not exist, the output is a folder, or it cannot be written.

    Devices, FIFOs and sockets (``/dev/null``) never clash with an input: writing them destroys nothing.
    """
    flat: list[tuple[str, str]] = []
    stdin_roles: list[str] = []  # roles read from standard input ('-')
    for role, value in others.items():
        for p in [value] if value is None or isinstance(value, (str, os.PathLike)) else list(value):
            if p is None:
                continue
            # an input read through a temporary copy (stdin, a FIFO, a decoded .gz or UTF-16 file) is guarded as the
            # file the user named: the copy is no file of theirs, the original is
            sp = spooled(p)
            name = sp.name if sp is not None else os.fspath(p)
            if name == STDIN:
                stdin_roles.append(role)
            else:
                flat.append((role, name))
    stdin_file = _stdin_file() if stdin_roles else None
    seen: list[tuple[str, str]] = []
    streams: list[tuple[str, str, tuple[int, int] | None]] = []  # (role, path, (dev, ino)) of stdout / devices / FIFOs
    for role, value in outputs.items():
        if value is None:
            continue
        path = os.fspath(value)
        if _is_stdout(path) or _special(path):
            if not _is_stdout(path):
                _check_writable(role, path)
            _check_one_stream(role, path, streams)
            continue
        _check_writable(role, path)
        for other_role, other in flat + seen:
            if same_file(path, other):
                via = "" if os.path.realpath(path) == os.path.realpath(other) else f" (the same file as {other}, by a link)"
                noun = "output" if (other_role, other) in seen else "input"
                raise OutputClashError(
                    f"{role} {path}: is the {other_role} {noun}; writing the results there would overwrite it{via}. "
                    f"Choose another path for {role}."
                )
        if stdin_file is not None and _identity(path) == stdin_file:
            raise OutputClashError(
                f"{role} {path}: is the file standard input reads (the {stdin_roles[0]} input '-', redirected from "
                f"it); writing the results there would overwrite it. Choose another path for {role}."
            )
        seen.append((role, path))


def _identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file at *path*, ``None`` when it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _stdin_file() -> tuple[int, int] | None:
    """(device, inode) of the regular file standard input is redirected from (``goldeval score - < preds.jsonl``),
    ``None`` when stdin is a terminal, a pipe, closed, or not a real file descriptor (a test runner's)."""
    try:
        st = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _stream_identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the stream an output ``-`` (stdout) or a device / FIFO path writes to; ``None`` when it
    cannot be told (stdout closed)."""
    try:
        st = os.fstat(sys.stdout.fileno()) if _is_stdout(path) else os.stat(path)
    except (OSError, ValueError, AttributeError):
        return None
    return (st.st_dev, st.st_ino)


def _check_one_stream(role: str, path: str, streams: list[tuple[str, str, tuple[int, int] | None]]) -> None:
    """Refuse a second output onto the stream of an earlier one (``--out - --junit -``: the JSON and the XML would be
    mixed on stdout, and neither parses). ``/dev/null`` takes any number of outputs."""
    if not _is_stdout(path) and os.path.realpath(path) == os.devnull:
        return
    ident = _stream_identity(path)
    for other_role, other, other_ident in streams:
        if (_is_stdout(path) and _is_stdout(other)) or (ident is not None and ident == other_ident):
            what = "standard output" if _is_stdout(path) or _is_stdout(other) else path
            raise OutputClashError(
                f"{role} {path}: {what} is also the {other_role} output ({other}); the two would be mixed in one "
                f"stream and neither could be read back. Write {role} to a file."
            )
    streams.append((role, path, ident))


def _check_writable(role: str, path: str) -> None:
    if os.path.isdir(path):
        raise InputError(f"{role} {path}: is a folder; name a file, e.g. {os.path.join(path, 'results.json')}.")
    if _special(path):
        if not os.access(path, os.W_OK):
            raise InputError(f"{role} {path}: not writable. Choose a writable path.")
        return
    target = os.path.realpath(path)
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise InputError(f"{role} {path}: the folder {parent} does not exist. Create it or choose another path.")
    if not os.access(parent, os.W_OK | os.X_OK) or (os.path.exists(target) and not os.access(target, os.W_OK)):
        raise InputError(f"{role} {path}: not writable. Choose a writable path.")


@contextlib.contextmanager
def open_output(path: PathLike, *, append: bool = False, role: str = "--out") -> Iterator[IO[bytes]]:
    """A binary file object for the output *path*, committed when the block ends without an exception.

    Args:
        path: ``-`` (stdout), a device / FIFO (written directly), or a file path (written atomically).
        append: Append to the file instead of replacing it (files appended to by design).
        role: The option's name, for error messages.

    Yields:
        A writable binary file object. For a regular file it is a temporary file beside the target; it replaces
        the target (``os.replace``) only when the block ends normally, and is removed when it raises.

    Raises:
        InputError: the path cannot be written (message names *role*, the path and the OS's reason).
    """
    p = os.fspath(path)
    if _is_stdout(p):
        yield sys.stdout.buffer
        sys.stdout.flush()
        return
    try:
        if append or _special(p):
            with open(p, "ab" if append else "wb") as fh:
                yield fh
            return
        target = os.path.realpath(p)
        folder = os.path.dirname(target)
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InputError(f"{role} {p}: cannot write ({exc.strerror}). Choose a writable path.") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise InputError(f"{role} {p}: cannot write ({exc.strerror}). Choose a writable path.") from None
        raise


def write_output(path: PathLike, data: bytes, *, append: bool = False, role: str = "--out") -> None:
    """Write *data* (bytes) to the output *path* by the rules of :func:`open_output` (atomic for a file)."""
    with open_output(path, append=append, role=role) as fh:
        fh.write(data)
