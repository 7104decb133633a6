"""The case texts kept with a run: its input files, as the scorer read them, compressed in the run store.

A report, ``review export`` and ``runs export`` show a case's texts (prediction, reference, question, golden,
answer) read from the run's inputs. Those files move, change and get deleted; so when a run finishes, each of its
input files is kept in the store's ``run_inputs`` table (migration ``m005_run_inputs``): the bytes the scorer read
(a stream's or a decoded ``.gz`` / UTF-16 / JSON-array file's plain copy), in parts of :data:`PART_BYTES`, each a
zstd frame (level :data:`ZSTD_LEVEL`). A file is kept whole, failed rows included, so the readers that parse an
input (:func:`goldeval.report.sources.load_sources`) read the kept copy exactly as they read the file.

``--no-texts`` (a scoring command's option, :attr:`goldeval.pipeline.recording.RunRecording.no_texts`) keeps
nothing: today's behaviour, for sensitive data. A database (``--db``) is not a text and is never kept.

Why whole files and zstd: the per-case texts are most of an input's bytes, and one compressor over a file's parts
shares its dictionary across rows (short rows compress several times better together than one by one); see
``benchmarks/README.md`` for the bytes a case costs with and without texts.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import zstandard

from goldeval.errors import InputError, StoreError
from goldeval.io.reading import file_memo_key

__all__ = ["PART_BYTES", "ZSTD_LEVEL", "KEPT_ROLES_SKIPPED", "InputCopy", "compressed_parts", "keep_inputs", "restore_input"]

#: Uncompressed bytes per stored part: each part is one zstd frame, so memory stays bounded whatever the file's size.
PART_BYTES = 8 << 20

#: zstd level 1: measured on this project's 2-core machine (issue 31 item 1), 8 MiB parts: 1M short label rows
#: (52.9 MB) 0.057 s and 2.92 MB against level 3's 0.070 s and 3.63 MB; 200k short free-text rows (42.5 MB) 0.12 s and
#: 11.9 MB against 0.22 s and 10.8 MB (+10 %). The copy is made while a run is recorded, so its CPU is the run's.
ZSTD_LEVEL = 1

#: Input roles that are not texts and are never kept (a database file can be gigabytes, and is not shown as text).
KEPT_ROLES_SKIPPED = frozenset({"db"})


class _Changed(Exception):
    """The file's bytes no longer hash to the sha256 the run recorded (it changed after it was scored)."""


def compressed_parts(path: str, sha256: str | None = None) -> Iterator[tuple[int, bytes]]:
    """``(uncompressed size, zstd frame)`` of each :data:`PART_BYTES` part of the file *path*, in order.

    Args:
        path: The file. sha256: When given, the bytes read must hash to it; if not, the last step raises
            (after every part was produced, so a caller writing the parts in one transaction rolls it back).

    Raises:
        _Changed: the file's sha256 is not *sha256* (a module-private exception: :func:`keep_inputs` handles it).

    Example:
        >>> import tempfile
        >>> f = tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False); _ = f.write(b'{"id": 1}\\n' * 1000); f.close()
        >>> [(size, len(frame) < 100) for size, frame in compressed_parts(f.name)]
        [(10000, True)]
    """
    comp = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(PART_BYTES)
            if not chunk:
                break
            h.update(chunk)
            yield len(chunk), comp.compress(chunk)
    if sha256 is not None and h.hexdigest() != sha256:
        raise _Changed(path)


class InputCopy:
    """The compressed parts of an input file made while a scorer reads it whole (its first pass, which hashes it), so
    that keeping the file with the finished run does not read, hash and compress it again.

    Fed every byte of the file in order, from the start (:meth:`update`, as a ``hashlib`` object is: it is one, the
    file's sha256, :meth:`hexdigest`), it cuts the bytes into the :data:`PART_BYTES` parts :func:`compressed_parts`
    makes, each one zstd frame that decompresses to the part's bytes and records its size in its header, held in
    a temporary file spooled to disk past :data:`SPOOL_BYTES` (memory does not grow with the file). :meth:`close`
    ends it; a copy fed anything else (an interrupted read, a file that changed while read) is dropped with
    :meth:`discard` and the file is kept from disk as before (:func:`keep_inputs`).

    Args:
        size: The file's size in bytes, when known (:meth:`goldeval.runs.recorder.Recorder.input_copy` gives it):
            each part is then compressed as it streams in (``ZstdCompressor.compressobj`` with the part's size
            pledged), so nothing but the compressor's window (~1 MiB at level 1) is held, whatever the part's size.
            A copy fed more or fewer bytes than *size* is discarded at :meth:`close`. ``None``: each part is gathered
            in one buffer and compressed whole, the frames :func:`compressed_parts` writes byte for byte (the copy
            holds up to a part, 8 MiB, while it is fed). The frames differ by a few bytes between the two ways;
            both decompress to the same bytes, which is what every reader of a kept input checks.
        path: With *size*, the file itself: a file of :data:`THREAD_BYTES` or more is then compressed by a thread
            that reads it on its own, beside the scorer (its first pass and its scoring: zstd and the reads release
            the GIL, so the compression takes the second core instead of the scorer's time), and the bytes fed
            are only hashed. The copy is usable (:meth:`ready`, which waits for the thread) when the thread read
            *size* bytes and the file's identity (:func:`goldeval.io.reading.file_memo_key`: path, inode, size,
            modification time in ns) is the same after its read as when the copy was made, i.e. before the first
            pass read it (the rule by which goldeval trusts a file's remembered sha256).

    Example:
        >>> copy = InputCopy()
        >>> copy.update(b'{"id": 1}\\n' * 1000); copy.close()
        >>> [(size, len(frame) < 100) for size, frame in copy.parts()], copy.hexdigest()[:12]
        ([(10000, True)], 'a360bac4d094')
        >>> streamed = InputCopy(size=10000)
        >>> streamed.update(b'{"id": 1}\\n' * 600); streamed.update(b'{"id": 1}\\n' * 400); streamed.close()
        >>> [(size, zstandard.ZstdDecompressor().decompress(frame) == b'{"id": 1}\\n' * 1000) for size, frame in streamed.parts()]
        [(10000, True)]
    """

    #: Compressed bytes held in memory before the temporary file goes to disk (a small input's copy stays in memory;
    #: 1 MiB, so that the peak memory of a run does not grow with its input: issue 15's memory tests).
    SPOOL_BYTES = 1 << 20
    #: With a path: the smallest file compressed on a thread (a smaller one is compressed as it is fed), and the
    #: bytes the thread reads at a time.
    THREAD_BYTES = 1 << 20
    READ_BYTES = 1 << 20

    def __init__(self, size: int | None = None, path: str | os.PathLike[str] | None = None) -> None:
        if size is not None and (not isinstance(size, int) or size < 0):
            raise ValueError(f"InputCopy: size must be a whole number of bytes >= 0 or None, got {size!r}.")
        self._sha = hashlib.sha256()
        self._cctx = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
        self._size = size
        self._fed = 0  # bytes fed so far
        self._at = 0  # size given: bytes compressed so far (by the thread, when one runs)
        self._cobj: Any = None  # size given: the streaming compressor of the part being compressed
        self._part = 0  # size given: that part's size and the compressed bytes written of it so far
        self._part_out = 0
        self._buf = bytearray()  # size None: the part being filled, up to _fill (it grows to a part's size, then is reused)
        self._fill = 0
        self._file: Any = tempfile.SpooledTemporaryFile(max_size=self.SPOOL_BYTES)
        self._sizes: list[tuple[int, int]] = []  # (uncompressed size, compressed size) of each part written
        self._thread: threading.Thread | None = None
        self._stop = False
        self._error: BaseException | None = None
        self.closed = False
        self.discarded = False
        if size is not None and path is not None and size >= self.THREAD_BYTES:
            self._key = file_memo_key(path)
            self._thread = threading.Thread(target=self._read_loop, args=(os.fspath(path),), name="goldeval-input-copy",
                                            daemon=True)
            self._thread.start()

    def update(self, data: bytes | bytearray | memoryview) -> None:
        """The next bytes of the file (and of its sha256)."""
        if self.closed:
            raise ValueError("InputCopy.update: the copy is closed")
        self._sha.update(data)
        if self._size is not None:
            self._fed += len(data)
            if self._thread is None and self._fed <= self._size:  # (past the size: not its copy, close discards it)
                self._stream(data)
            return
        buf, fill, start, n = self._buf, self._fill, 0, len(data)
        while n - start >= PART_BYTES - fill:  # (one buffer for every part: its pages are touched once)
            # (a slice assignment past the buffer's end extends it: buf stays the bytes up to fill, then the rest)
            take = PART_BYTES - fill
            buf[fill:PART_BYTES] = data[start:start + take] if start or take < n else data
            self._write(buf)
            start += take
            fill = 0
        if start < n:
            buf[fill:fill + n - start] = data[start:] if start else data
            fill += n - start
        self._fill = fill

    def _read_loop(self, path: str) -> None:
        """The compressing thread: the file read again from its start (from the page cache, as the first pass just
        read it), compressed part by part; its identity checked after."""
        try:
            with open(path, "rb") as fh:
                while not self._stop:
                    chunk = fh.read(self.READ_BYTES)
                    if not chunk:
                        break
                    if self._at + len(chunk) > (self._size or 0):
                        raise _Changed(path)
                    self._stream(chunk)
            if not self._stop and (self._at != self._size or file_memo_key(path) != self._key):
                raise _Changed(path)
        except BaseException as exc:  # (the copy is then not ready: the file is kept from disk, or not at all)
            self._error = exc

    def _stream(self, data: bytes | bytearray | memoryview) -> None:
        """Compress the next bytes (size given): each part's bytes go through its own streaming compressor."""
        size, n = self._size, len(data)
        assert size is not None
        view, start, write = memoryview(data).cast("B"), 0, self._file.write
        while start < n:
            if self._cobj is None:  # a part starts here: its size is pledged (written in the frame's header)
                self._part = min(PART_BYTES, size - self._at)
                self._part_out = 0
                self._cobj = self._cctx.compressobj(size=self._part)
            take = min(n - start, self._part - (self._at % PART_BYTES))
            out = self._cobj.compress(view[start:start + take])
            start += take
            self._at += take
            if self._at % PART_BYTES == 0 or self._at == size:  # the part is complete
                out += self._cobj.flush()
                self._cobj = None
                self._sizes.append((self._part, self._part_out + len(out)))
            else:
                self._part_out += len(out)
            if out:
                write(out)

    def _write(self, part: bytes | bytearray | memoryview) -> None:
        frame = self._cctx.compress(part)
        self._file.write(frame)
        self._sizes.append((len(part), len(frame)))

    def hexdigest(self) -> str:
        """The sha256 of the bytes fed so far."""
        return self._sha.hexdigest()

    def close(self) -> None:
        """The file was fed whole: compress its last part (with a thread: it goes on; :meth:`ready` waits for it).
        A copy given a size and fed other than that many bytes is discarded here: :meth:`parts` then refuses, and
        :func:`keep_inputs` reads the file instead."""
        if not self.closed:
            if self._size is not None:
                if self._fed != self._size:
                    self.discard()
                    return
            elif self._fill:
                self._write(memoryview(self._buf)[:self._fill])
            self._buf, self._fill = bytearray(), 0
            self.closed = True

    def _join(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()

    def ready(self) -> bool:
        """Whether the copy is whole and usable: closed, not discarded, and (with a thread) every part compressed
        from the same file without an error; waits for the thread to finish."""
        if not self.closed or self.discarded:
            return False
        self._join()
        return self._error is None

    def discard(self) -> None:
        """Drop the copy (it is not the file's bytes): :meth:`parts` then refuses. Stops the thread."""
        self.closed = self.discarded = True
        self._stop = True
        self._join()
        self._buf, self._fill, self._cobj = bytearray(), 0, None
        self._file.close()

    def parts(self) -> Iterator[tuple[int, bytes]]:
        """``(uncompressed size, zstd frame)`` of each part, in order, as :func:`compressed_parts` gives them (with
        a size given, frames that differ by a few bytes and decompress to the same parts)."""
        if not self.ready():
            raise ValueError("InputCopy.parts: the copy is not complete")
        self._file.seek(0)
        for size, stored in self._sizes:
            yield size, self._file.read(stored)


def keep_inputs(store: Any, run_id: str, paths: Mapping[str, str], inputs: Mapping[str, Any],
                copies: Mapping[str, InputCopy] | None = None) -> list[str]:
    """Keep each input file of a finished run in the store (:meth:`goldeval.runs.store.RunStore.keep_input`).

    Args:
        store: The open store (SQLite or PostgreSQL).
        run_id: The run.
        paths: role → the file the scorer read (for a stream or a decoded file: its plain temporary copy).
        inputs: The run's recorded ``inputs`` (role → ``{"path", "sha256", "stream"?, "decoded"?}``): a file read
            directly must still hash to its recorded sha256 (else it changed after it was scored and is not kept).
        copies: role → the :class:`InputCopy` the scorer made as it read that input: kept as it is when it is
            complete and hashes to the recorded sha256 (the bytes the run's hash is of), without reading the file
            again; any other role is kept from its file.

    Returns:
        One note per input not kept (changed since it was scored, or no sha256 recorded); empty when all were.

    Raises:
        StoreError: the store refused a write (the run itself is recorded already; its texts are not kept).
    """
    notes: list[str] = []
    for role, path in paths.items():
        spec = inputs.get(role) if isinstance(inputs, Mapping) else None
        if role in KEPT_ROLES_SKIPPED or not isinstance(spec, Mapping) or spec.get("identity"):
            continue
        sha = spec.get("sha256")
        if not isinstance(sha, str) or not sha:
            notes.append(f"the {role} input has no recorded sha256: its texts were not kept with run {run_id}")
            continue
        copied = bool(spec.get("stream") or spec.get("decoded"))  # our own temporary copy: nothing can change it
        made = (copies or {}).get(role)
        if made is not None and made.ready() and made.hexdigest() == sha:
            store.keep_input(run_id, role, sha, os.path.basename(path), made.parts())
            continue
        try:
            store.keep_input(run_id, role, sha, os.path.basename(path), compressed_parts(path, None if copied else sha))
        except _Changed:
            notes.append(f"the {role} input {spec.get('path')} changed while it was scored: its texts were not kept with run {run_id}")
        except OSError as exc:
            notes.append(f"the {role} input {spec.get('path')} could not be read again ({exc.strerror}): its texts were not kept")
    return notes


def restore_input(store: Any, run_id: str, role: str, sha256: str | None, folder: str) -> str | None:
    """Write the *role* input kept with *run_id* into *folder* and return its path, or ``None`` when none was kept
    (``--no-texts``, a run recorded before texts were kept) or the kept one is not the input with *sha256*.

    Args:
        store: The open store. run_id, role: Which input. sha256: The sha256 the run records for it (the kept copy
            must be of that input); ``None`` accepts whatever was kept. folder: An existing folder to write into.

    Raises:
        StoreError: a kept part cannot be decompressed or its size differs from the one recorded (a damaged store).
        InputError: *role* holds a path separator.
    """
    if os.sep in role or (os.altsep and os.altsep in role):
        raise InputError(f"restore_input: role {role!r} is not a plain name.")
    kept = store.kept_inputs(run_id).get(role)
    if kept is None or (sha256 is not None and kept["sha256"] != sha256):
        return None
    # the name as read (its ending says how to parse it: .jsonl, .csv, .parquet), made safe as one file name
    name = os.path.basename(str(kept.get("name") or "input.jsonl").replace("\\", "/")) or "input.jsonl"
    target = os.path.join(folder, f"{role}-{name}")
    dec = zstandard.ZstdDecompressor()
    written = 0
    with open(target, "wb") as out:
        for frame in store.kept_input_parts(run_id, role):
            try:
                data = dec.decompress(frame)
            except zstandard.ZstdError as exc:
                raise StoreError(f"run store: the kept {role} input of run {run_id} cannot be decompressed ({exc}).") from exc
            out.write(data)
            written += len(data)
    if written != kept["size"]:
        raise StoreError(f"run store: the kept {role} input of run {run_id} holds {written} bytes, {kept['size']} recorded.")
    return target
