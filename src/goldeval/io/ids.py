"""Repeated ids in memory that does not grow with the rows.

Every scorer refuses a row whose id repeats an earlier row's (the store keys cases by id). Keeping every id seen
costs about 100 bytes a row — 1 GB at 10M rows. Instead, a first pass over the input hashes each row's id
(:func:`hash`, 64 bits) into :class:`HashBuckets`: buckets of about 16,384 hashes, buffered 65,536 at a time and
appended to a temporary file per bucket, then read one bucket at a time into a set to find the hashes that occur more than
once (normally none). The scoring pass then looks up exactly — by the id text, in a dict holding only those ids —
just the rows whose id hashes to a repeated value (:class:`IdIndex`): a repeated id is found with the
line it repeats, and two different ids that share a hash are told apart. Memory: a few MiB whatever the rows.

Hashes are only compared within one process (Python randomises ``hash`` of a string per process), so both passes
must run in the same process.
"""

from __future__ import annotations

import array
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from typing import Any

from goldeval.io.reading import line_blocks

__all__ = ["HashBuckets", "IdIndex", "repeated_hashes", "scan_jsonl_ids"]

try:  # the optional C fast path (see _fast.c); the Python below stays the definition and the fallback
    from goldeval._fast import partition_hashes as _fast_partition
    from goldeval._fast import repeated_of as _fast_repeated_of
    from goldeval._fast import scan_ids as _fast_scan_ids
except ImportError:  # pragma: no cover - the extension is optional
    _fast_partition = _fast_repeated_of = _fast_scan_ids = None

#: Hashes per bucket (about), and hashes held in memory before they are partitioned into the buckets' files;
#: memory is about 16 bytes x this.
BUCKET_ROWS = 1 << 16

#: Hashes per bucket file (about): :meth:`HashBuckets.repeated` reads one bucket into a set (~50 bytes a hash).
BUCKET_SET = 1 << 14

#: Hashes kept in memory (8 bytes each: 1 MiB, 2 while :meth:`HashBuckets.repeated` reads them) before any goes to the
#: buckets' files: an input of fewer rows (e.g. 100k long notes, whose size made the hint ~8.7M rows) opens no file
#: (the 512 files' opening cost 0.25 s of a 0.6 s first pass). (1M: 1M short rows peaked 17 MiB higher.)
SPILL_ROWS = 1 << 17


class IdIndex:
    """Which rows repeat an earlier row's id.

    Args:
        repeated: The hashes of the ids that occur more than once (:meth:`HashBuckets.repeated`); only ids with one
            of those hashes are kept. ``None``: every id is kept (rows already in memory, no first pass).
    """

    __slots__ = ("repeated", "seen")

    def __init__(self, repeated: set[int] | None) -> None:
        self.repeated = repeated
        self.seen: dict[str, int] = {}

    def first_line(self, rid: str, line: int) -> int | None:
        """The line of the first row with id *rid* when that is an earlier row; else ``None`` (and *rid* is noted
        as first seen at *line*)."""
        if self.repeated is not None and hash(rid) not in self.repeated:
            return None
        first = self.seen.get(rid)
        if first is None:
            self.seen[rid] = line
        return first


class HashBuckets:
    """64-bit hashes, collected in memory up to :data:`BUCKET_ROWS` at a time, then partitioned by bucket and appended to a temporary file per bucket (a single bucket stays in memory). :meth:`repeated` reads
    one bucket at a time into a set to find the hashes added more than once.

    Args:
        n_rows_hint: About how many hashes will be added (the number of buckets is ``n_rows_hint / BUCKET_SET``,
            at least 1, at most 512; a wrong hint costs time or a little memory, never correctness).
    """

    def __init__(self, n_rows_hint: int) -> None:
        self.n = max(1, min(512, -(-n_rows_hint // BUCKET_SET)))
        self.buffer = array.array("q")
        self.kept: list[Any] = []  # the flushed blocks in memory: one bucket's, or any, up to SPILL_ROWS hashes
        self.n_kept = 0
        self.files: list[Any] = [None] * self.n
        self.tmpdir: Any = None
        #: ``buckets.append(hash(rid))`` is the fast way to add one hash (then call :meth:`maybe_flush` now and then)
        self.append = self.buffer.append

    def add(self, h: int) -> None:
        """Add one hash (an int in the signed 64-bit range, as :func:`hash` gives)."""
        self.append(h)
        if len(self.buffer) >= BUCKET_ROWS:
            self.flush()

    def extend(self, hashes: Iterable[int]) -> None:
        """Add many hashes (ints in the signed 64-bit range)."""
        self.buffer.extend(hashes)
        if len(self.buffer) >= BUCKET_ROWS:
            self.flush()

    def add_bytes(self, raw: bytes) -> None:
        """Add hashes given as the bytes of int64 values in native order (what :func:`goldeval._fast.scan_ids` gives)."""
        self.buffer.frombytes(raw)
        if len(self.buffer) >= BUCKET_ROWS:
            self.flush()

    def maybe_flush(self) -> None:
        """Flush when the in-memory block is full (for callers that use :attr:`append`)."""
        if len(self.buffer) >= BUCKET_ROWS:
            self.flush()

    def flush(self) -> None:
        """Move the in-memory block to the buckets."""
        if not self.buffer:
            return
        block = self.buffer
        self.buffer = array.array("q")
        self.append = self.buffer.append
        if self.n == 1 or (self.tmpdir is None and self.n_kept + len(block) <= SPILL_ROWS):
            # one bucket (a small input), or nothing spilled yet: it stays in memory (read as one bucket)
            self.kept.append(block)
            self.n_kept += len(block)
            return
        if self.tmpdir is None:
            self.tmpdir = tempfile.TemporaryDirectory(prefix="goldeval-ids-")
            kept, self.kept, self.n_kept = self.kept, [], 0
            for old in kept:  # what was kept goes to the buckets first
                self._partition(old)
        self._partition(block)

    def _partition(self, block: Any) -> None:
        """Append *block*'s hashes to their buckets' files."""
        n = self.n
        if _fast_partition is not None:  # C: the same parts, as one buffer ordered by bucket
            data, sizes = _fast_partition(block, n)
            view = memoryview(data)
            at = 0
            for b, k in enumerate(sizes):
                if k:
                    self._file(b).write(view[at:at + 8 * k])
                    at += 8 * k
            return
        parts = [array.array("q") for _ in range(n)]
        appends = [p.append for p in parts]
        for h in block:
            appends[h % n](h)
        for b, part in enumerate(parts):
            if part:
                part.tofile(self._file(b))

    def _file(self, b: int) -> Any:
        if self.files[b] is None:
            self.files[b] = open(os.path.join(self.tmpdir.name, f"{b}.bin"), "w+b")  # noqa: SIM115
        return self.files[b]

    def repeated(self) -> set[int]:
        """The hashes added more than once. Removes the temporary files; the buckets are empty afterwards."""
        self.flush()
        out: set[int] = set()
        # never spilled: every hash is in memory, read as one bucket (the same repeats as bucket by bucket)
        in_memory = self.tmpdir is None
        try:
            for b in range(1 if in_memory else self.n):
                values = array.array("q")
                if in_memory:
                    for block in self.kept:
                        values.extend(block)
                    self.kept, self.n_kept = [], 0
                fh = self.files[b]
                if fh is not None:
                    fh.seek(0)
                    values.frombytes(fh.read())
                    fh.close()
                if _fast_repeated_of is not None:  # C: sorted, then runs of equal values
                    out.update(_fast_repeated_of(values))
                    del values
                    continue
                distinct = set(values)  # (no repeat, the common case, is told by the size alone)
                if len(distinct) < len(values):
                    seen: set[int] = set()
                    add = seen.add
                    out.update(h for h in values if h in seen or add(h))
                del values, distinct
        finally:
            for fh in self.files:
                if fh is not None and not fh.closed:
                    fh.close()
            self.files = [None] * self.n
            if self.tmpdir is not None:
                self.tmpdir.cleanup()
                self.tmpdir = None
        return out

    def __del__(self) -> None:  # an interrupted first pass: do not leave the files behind
        tmp = getattr(self, "tmpdir", None)
        if tmp is not None:
            for fh in self.files:
                if fh is not None and not fh.closed:
                    fh.close()
            tmp.cleanup()


#: Bytes read at a time by :func:`scan_jsonl_ids` (then completed to the end of a line); its lists of ids cost
#: about 10 times this in memory.
SCAN_BLOCK = 1 << 17


def scan_jsonl_ids(
    path: str | os.PathLike[str],
    id_field: str,
    id_of: Callable[[Any], str | None],
    *,
    hasher: Any = None,
    slow_decode: Callable[[int, bytes], Any] | None = None,
    ids_as_text: bool = False,
    on_block: Callable[[int, int], None] | None = None,
) -> tuple[int, int, set[int]]:
    """The first pass over a JSONL file: ``(lines, non-blank lines, hashes of the ids on more than one row)``.

    Args:
        path: The JSONL file.
        id_field: The id field's name.
        id_of: The scorer's id rule: the field's value → the id text, or ``None`` for no usable id. The same
            function the scoring pass applies, so both passes agree on every row's id.
        hasher: A ``hashlib`` object fed every byte read (the input's sha256 in the same read).
        slow_decode: ``(line number, bytes) -> dict | None`` for lines orjson refuses, and for those whose id
            orjson read as a float (an integer past 64 bits, read exactly by :func:`goldeval.io.reading.decode_json`):
            it must read a line as the scoring pass does (None: such lines are skipped; the scoring pass reports
            them). May raise (a file that is not UTF-8).
        ids_as_text: The caller vouches that *id_of* gives every non-empty ASCII string without a backslash
            either as it is or, when it is blank (whitespace only), ``None`` (:func:`goldeval.labels.reader.label_id`,
            :func:`goldeval.io.reading.usable_id`, :meth:`goldeval.scoring.protocol.Scorer.id_of`): the prefix rule below then runs
            in C (:func:`goldeval._fast.scan_ids`, the hash of an ASCII id being that of its bytes) and only the
            lines it does not take are read here, one at a time, by the same rule. A blank id's hash is then counted
            as an id's: the repeated hashes may hold one more value (the scoring pass looks the ids up by text, so
            that costs a dict entry, never a wrong answer).
        on_block: Called after each block is read with ``(its bytes, its lines)`` (ints; a byte-order mark counted
            in the first block's bytes, blank lines and a last line without a newline counted as lines): the
            blocks are whole lines, in order, and joined they are the file (e.g. the local engine's chunks for its
            line kernel: :func:`goldeval.engines.local.run`).

    An ASCII line that starts ``{"<id_field>":"…"`` and names the field once is read without a full parse (the id is the
    text up to the next quote, taken only when it holds no escape); every other line is parsed by orjson. The file
    is read in blocks of about :data:`SCAN_BLOCK` bytes, whole lines each: a block whose every line is of that
    kind (one pattern match a line, the field named once a line, all ASCII, every id accepted by *id_of*) is read
    by one regular-expression pass; any other block line by line, with the same rule.
    """

    import orjson  # start-up: only the scan of a large file needs it

    buckets = HashBuckets(max(1, os.path.getsize(path) // 48))
    loads = orjson.loads
    quoted = b'"' + id_field.encode("utf-8") + b'"'
    prefixes = (b"{" + quoted + b':"', b"{" + quoted + b': "')
    # the prefix rule for a whole block at once: the id, when the line starts with one of *prefixes* and the text
    # up to the next quote holds no backslash (and no newline: a line ends there)
    fast = re.compile(rb"^\{" + re.escape(quoted) + rb': ?"([^"\\\n]+)"', re.M)
    update = hasher.update if hasher is not None else None

    n_lines = n_rows = 0
    hashes: list[int] = []
    add = hashes.append

    def one_line(lineno: int, raw: bytes) -> int:
        """Add the id hash of one line (any kind); 1 for a non-blank line, 0 for a blank one."""
        for prefix in prefixes if raw.isascii() else ():  # (a non-ASCII line is checked as UTF-8 by orjson)
            if raw.startswith(prefix):
                start = len(prefix)
                end = raw.find(b'"', start)
                if end > 0 and raw.count(quoted) == 1:
                    cand = raw[start:end]
                    if b"\\" not in cand:
                        rid = id_of(cand.decode("ascii"))
                        if rid is not None:
                            add(hash(rid))
                            return 1
                break
        try:
            data = loads(raw)
        except orjson.JSONDecodeError:
            if not raw.strip():
                return 0
            if slow_decode is None:
                return 1
            data = slow_decode(lineno, raw)
        else:
            if type(data) is dict and type(data.get(id_field)) is float and slow_decode is not None:
                data = slow_decode(lineno, raw)  # an integer id past 64 bits, which orjson rounds: its digits
        if type(data) is dict:
            rid = id_of(data.get(id_field))
            if rid is not None:
                add(hash(rid))
        return 1

    with open(path, "rb") as fh:
        for block in line_blocks(fh, SCAN_BLOCK):
            if update is not None:
                update(block)
            lines_before, size = n_lines, len(block)
            if n_lines == 0 and block.startswith(b"\xef\xbb\xbf"):
                block = block[3:]
            if ids_as_text and _fast_scan_ids is not None:
                k, found, slow = _fast_scan_ids(block, quoted)
                for idx, start, end in slow:  # (in order: the hashes' order does not matter, only which repeat)
                    n_rows += one_line(n_lines + idx + 1, block[start:end])
                n_rows += k - len(slow)
                n_lines += k
                buckets.extend(hashes)
                hashes.clear()
                buckets.add_bytes(found)
                if on_block is not None:
                    on_block(size, n_lines - lines_before)
                continue
            k = block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
            if block.isascii():
                ids = fast.findall(block)
                if len(ids) == k and block.count(quoted) == k:
                    rids = list(map(id_of, map(bytes.decode, ids)))
                    if None not in rids:
                        hashes.extend(map(hash, rids))
                        n_lines += k
                        n_rows += k
                        buckets.extend(hashes)
                        hashes.clear()
                        if on_block is not None:
                            on_block(size, k)
                        continue
            lines = block.split(b"\n")
            last = lines.pop()
            for raw in lines:
                n_lines += 1
                n_rows += one_line(n_lines, raw + b"\n")
            if last:
                n_lines += 1
                n_rows += one_line(n_lines, last)
            buckets.extend(hashes)
            hashes.clear()
            if on_block is not None:
                on_block(size, n_lines - lines_before)
    return n_lines, n_rows, buckets.repeated()


def repeated_hashes(ids: Iterable[str | None], n_rows_hint: int) -> set[int]:
    """The hashes of the ids that occur more than once in *ids* (``None`` entries skipped); see the module docstring."""
    buckets = HashBuckets(n_rows_hint)
    add = buckets.add
    for rid in ids:
        if rid is not None:
            add(hash(rid))
    return buckets.repeated()
