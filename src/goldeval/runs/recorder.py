"""The Recorder a batch scorer writes its per-case results through, and how a run is started or resumed.

Protocol (what a batch scorer may rely on; ``recorder=None`` means nothing is recorded)::

    done = recorder.previous()      # {case id: record} already finished in this run: reuse them, do not redo
    recorder.record(case)           # once per finished case: {"id", "status": "scored"|"unscored"|"error", ...}
    recorder.record(case, status="scored")  # optional: the same, stored as {"status", **case} without a copy
                                            # (the free-text scorer uses it when record takes status=, see
                                            # goldeval.freetext; else it passes {"status": "scored", **case})
    recorder.record_lines(records, n, ids)  # optional: n scored cases serialized in bulk, recorded once each
                                            # (the local engine's folded chunks for goldeval score, goldeval
                                            # labels with a recorder without record_coded; stored as compressed
                                            # blocks of JSON records, or coded where their shape allows: format 3)
    recorder.record_coded(ids, n, first_line, codes, used, tails)  # optional: n scored cases of the shape
                                            # {"id", "status": "scored", "line"} + a tail from a small table, as
                                            # columns (goldeval labels, C path and Python rows; coded blocks,
                                            # goldeval.runs.blocks)
    recorder.input_copy(path)               # optional: an InputCopy to feed while reading an input whole (its
                                            # first pass): the finished run keeps it instead of reading it again
    recorder.finish(results)        # the whole results dict; may be called again (e.g. after gates): last wins

Writes are batched: the pending records are handed over in one batch every ``batch_size`` (200) cases or every
``max_delay`` (0.5 s) since the last hand-over, whichever comes first, and on :meth:`Recorder.finish` /
:meth:`Recorder.close`; each batch is one transaction. What a scorer killed outright loses: its pending batch, and
with the writer thread at most the two batches handed over and not yet committed; a writer process outlives the
scorer and commits everything it received. The resumed run redoes exactly the cases not committed, and the
``(run, case id)`` key makes a redone case replace its row: never a duplicate.

Source: issue #5 ("Resume"); the protocol is the one in the project notes ("Run store hook").
"""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import orjson
import zstandard

from goldeval.errors import InputError, StoreError, shorten
from goldeval.io.reading import file_sha256
from goldeval.lifeline import arm_forkserver
from goldeval.runs.identity import (
    dataset_hash,
    hashes_from_results,
    input_entry,
    rubric_text,
    run_key,
)
from goldeval.runs.blocks import (
    FORMAT_CODED,
    FORMAT_CODED_STATUS_FIRST,
    ZSTD_BLOCK_LEVEL,
    check_tail,
    compress_block,
    encode_coded,
)
from goldeval.runs.store import RunMeta, RunStore, case_columns
from goldeval.runs.texts import KEPT_ROLES_SKIPPED, InputCopy
from goldeval.runs.writer import (  # noqa: F401  (message_columns, WRITER_MAX_ROWS_PER_TX: re-exported)
    WRITER_MAX_ROWS_PER_TX,
    batch_rows,
    batch_message,
    message_columns,
    widen_pipe,
    writer_main,
)
from goldeval.signals import signals_held

try:  # the optional C coder of record_lines' blocks (see _fast.c); a block of JSON lines stays the definition
    from goldeval._fast import code_records as _fast_code_records
    from goldeval._fast import tail_table as _fast_tail_table
except ImportError:  # pragma: no cover - (without the C build: every block is JSON lines, read back the same)
    _fast_code_records = _fast_tail_table = None

__all__ = ["RecorderProtocol", "Recorder", "run_key", "dataset_hash", "rubric_text", "hashes_from_results", "start_run"]


class RecorderProtocol(Protocol):
    """What a batch scorer receives as ``recorder=`` (the minimum: :class:`Recorder` also takes ``status=`` and
    ``record_serialized``, which scorers use only when they are there)."""

    def previous(self) -> dict[str, dict[str, Any]]: ...

    def record(self, case: dict[str, Any]) -> None: ...

    def finish(self, results: dict[str, Any]) -> None: ...


class Recorder:
    """Records one run's per-case results into a :class:`RunStore`, in batched transactions.

    Args:
        store: The open store.
        run_id: The run (already created or claimed, see :func:`start_run`).
        resumed: True when this run existed before (its finished cases are in :meth:`previous`).
        batch_size: Commit after this many pending records (default 200).
        max_delay: Commit when this many seconds passed since the last commit (default 0.5).
        clock: Monotonic clock in seconds (tests pass a fake one).
        background: Where full batches are committed: ``True`` or ``"thread"`` (default) on a writer thread, at
            most one batch waiting for it; ``"process"`` in a writer process (for large runs: the scorer's process
            only hands each batch over, the SQLite work runs beside it); ``False`` in the caller.
        deferred: For a new run created before its inputs were hashed (large inputs, nothing to resume): its key
            is a ``pending:`` placeholder until :meth:`finish` sets the real key, dataset hash and input hashes —
            taken from the results when the scorer reports the sha256 of an input by its path (it hashed the bytes
            it read), else computed then. ``{"inputs": {role: path}, "scorer_name", "scorer_version", "config",
            "arm"}``. A run interrupted before that keeps the inputs' path, size and modification time, by which
            the next identical invocation finds and resumes it.

    Notes:
        :meth:`record` serializes the record at once: changing the dict afterwards changes nothing stored.
        What a killed scorer loses: the pending records, plus (writer thread) at most the batch being written and
        one waiting; a writer process commits everything it received before it ends. All of it is redone by the
        resumed run; none is duplicated.
    """

    def __init__(
        self, store: RunStore, run_id: str, *, resumed: bool = False, batch_size: int = 200,
        max_delay: float = 0.5, clock: Callable[[], float] = time.monotonic, background: bool | str = True,
        deferred: dict[str, Any] | None = None,
    ) -> None:
        if batch_size < 1:
            raise InputError(f"Recorder: batch_size must be ≥ 1, got {batch_size}.")
        self.store = store
        self.run_id = run_id
        self.resumed = resumed
        self.batch_size = batch_size
        self.max_delay = max_delay
        self._clock = clock
        # One entry per record() call: ((case id, status, verdict, score, reason, raw), its JSON), or per
        # record_serialized() call: ([keys…], their JSON newline-joined). One list, each entry appended in one step,
        # so a Ctrl-C between two statements can never leave keys and records out of step.
        self._pending: list[tuple[Any, bytes]] = []
        self._n_pending = 0  # records in _pending (an entry of record_serialized holds several)
        # record_lines(): the records' JSON not handed over yet (older than anything in _pending), how many, bytes
        self._lines: list[bytes] = []
        self._line_ids: list[bytes] = []
        self._n_lines = 0
        self._lines_bytes = 0
        # record_coded(): the ids' JSON chunks, the codes' chunks, the [first line, count] runs and the codes used,
        # not handed over yet (older than anything in _pending, as _lines), and how many cases
        self._coded_ids: list[bytes | memoryview] = []
        self._coded_codes: list[bytes] = []
        self._coded_lines: list[list[int]] = []
        self._coded_used: set[int] = set()
        self._n_coded = 0
        self._coded_fmt = FORMAT_CODED  # the pending coded cases' format: 2 (record_coded) or 3 (record_lines)
        self._tails: list[bytes] = []  # code -> tail, as checked (the tails dict of record_coded, in code order)
        # record_lines() blocks coded by C (format 3): its table of tails (None: not coded, for the rest of the run),
        # the tails by code, how many of them are checked
        self._line_table: Any = _fast_tail_table() if _fast_tail_table is not None else None
        self._line_tails: list[bytes] = []
        self._line_tails_checked = 0
        self._line_members: dict[int, bytes] = {}  # code -> its member of a block header's tails (encode_coded)
        self._last_commit = clock()
        self._seq = store.next_seq(run_id)  # the seq of the next record handed to the writer
        self._seq0 = self._seq
        # The ids of the cases written in blocks (record_lines, record_coded), as the JSON array the store's check of
        # a streamed per_example hashes (RunStore.finish_run): hashed here as each block is written, so that the
        # finished run is not read back, decompressed and hashed again (1M label rows: ~14 ms of ~0.6 s). Kept only
        # for a run that had no case before this recorder; _others / _others_scored: record() or record_serialized()
        # recorded a case (of any status / a scored one), whose ids are not in it.
        self._ids_sha = hashlib.sha256(b"[")
        self._ids_n = 0
        self._others = self._others_scored = False
        self._previous: dict[str, dict[str, Any]] | None = None
        self.finished = False
        self.closed = False
        self.background = "thread" if background is True else background
        if self.background not in (False, "thread", "process"):
            raise InputError(f"Recorder: background must be True, False, 'thread' or 'process', got {background!r}.")
        self._proc: Any = None
        self._writer_gone = False  # a message to or from the writer process found it gone (see close)
        self._to_writer: Any = None
        self._from_writer: Any = None
        self._unanswered = 0  # sync / stop messages sent to the writer process whose reply was not read yet
        self._deferred = deferred
        self._queue: queue.Queue[tuple[Any, ...] | None] = queue.Queue(maxsize=1)
        self._thread: threading.Thread | None = None
        self._writer_error: BaseException | None = None
        #: Set by a scorer that records every ``per_example`` entry as a ``scored`` case (entry + ``"status"``), in
        #: order: the run row then does not store those entries a second time (see RunStore.finish_run).
        self.per_example_in_cases = False
        #: While True, :meth:`finish` only commits the pending cases: the run stays unfinished. A command that
        #: still has to evaluate gates after the scorer finished sets it, then clears it and finishes the run once,
        #: with the gate report; killed in between, the run is left interrupted (resumable), never finished
        #: without its decision.
        self.hold_finish = False
        #: role → path of the inputs the run keeps when it finishes (set by the recording policy unless
        #: ``--no-texts``): :meth:`input_copy` offers a copy of those only.
        self.keep_texts_of: dict[str, str] = {}
        #: role → the :class:`~goldeval.runs.texts.InputCopy` made through :meth:`input_copy`.
        self.input_copies: dict[str, InputCopy] = {}
        #: Called on the results dict before :meth:`finish` stores it, returning the dict to store (the CLI names
        #: an input read from stdin ``-`` there instead of its temporary copy); ``None``: stored as given.
        self.results_hook: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    @property
    def n_recorded(self) -> int:
        """Cases recorded through this Recorder (committed or not)."""
        return self._seq - self._seq0 + self._n_pending + self._n_lines + self._n_coded

    def input_copy(self, path: str | os.PathLike[str]) -> InputCopy | None:
        """A :class:`~goldeval.runs.texts.InputCopy` for a scorer about to read the input *path* whole, in order, from
        its start (its first pass): fed those bytes and closed, it is what the finished run keeps of that input (the
        file is not read again). ``None`` when the run keeps no texts, *path* is none of its inputs, or a copy of it
        was asked for already. The copy is told the file's size and path now: it compresses the file on a thread
        beside the scorer (a small file: as it is fed) and holds no part in memory (a file that is not fed as that
        many bytes, or that changed before the thread read it, is not kept from the copy)."""
        target = os.path.abspath(path)
        for role, p in self.keep_texts_of.items():
            if role not in KEPT_ROLES_SKIPPED and role not in self.input_copies and os.path.abspath(p) == target:
                try:
                    size = os.path.getsize(target)
                except OSError:  # (the scorer's own read reports it)
                    return None
                copy = self.input_copies[role] = InputCopy(size, target)
                return copy
        return None

    # -- the protocol ----------------------------------------------------------------------------------------
    def previous(self) -> dict[str, dict[str, Any]]:
        """case id → record already committed for this run before this process started (empty for a new run)."""
        if self._previous is None:
            self._previous = self.store.case_map(self.run_id) if self.resumed else {}
        return self._previous

    def record(self, case: dict[str, Any], *, status: str | None = None) -> None:
        """Queue one finished case; commits the batch when it is full or ``max_delay`` has passed.

        Args:
            case: ``{"id": str, "status": "scored"|"unscored"|"error", ...the per-case result}``. A failed row
                without an id may give its ``line`` instead; it is recorded under ``"line:<n>"``.
            status: Record ``{"status": status, **case}`` (status first) without building that dict: for a scorer
                whose result dicts carry no status. *case* must then have no ``"status"`` key.

        Raises:
            InputError: the record has neither an ``id`` nor a ``line``, holds a value JSON cannot represent, or
                has a ``"status"`` while *status* is given; *status* is not a string of Unicode text.
            StoreError: the commit failed.
        """
        if self.closed:
            self._check_open()
        if self._n_lines or self._n_coded:  # the bulk records before this one keep their place
            self._send_lines()
        cid = case.get("id")
        if cid is None:
            if case.get("line") is None:
                raise InputError(f"Recorder.record: a case record needs an 'id' (or a 'line' for a failed row), got {shorten(case)}.")
            cid = f"line:{case['line']}"
        try:
            # Serialized now: the bytes are the snapshot (no copy kept), and neither the writer nor this process
            # builds the dict again before it is stored.
            data = _dumps(case, option=_DUMPS_OPTIONS)
        except TypeError as exc:
            raise InputError(f"Recorder.record: case {case.get('id', case.get('line'))!r} cannot be stored as JSON ({exc}).") from exc
        if b"\n" in data:
            # Only raw JSON handed over as an orjson.Fragment is written as given, newlines included (orjson escapes
            # them in every string it writes). A batch separates its records by newlines: keep this one on one line.
            # In valid JSON a raw newline is whitespace between tokens (inside a string it must be escaped), so a
            # space in its place changes nothing the JSON says.
            data = data.replace(b"\n", b" ")
        # (status, verdict, score, reason, raw); a score JSON has no number for is kept as its text
        columns: tuple[str, str | None, float | str | None, str | None, str | None]
        if status is not None:
            if "status" in case:
                raise InputError(f"Recorder.record: case {case.get('id', case.get('line'))!r} has a 'status' "
                                 f"({case['status']!r}) and status={status!r} was given; give one of them.")
            # b'{"status":"scored",' then the members of case (not empty: it has an id or a line): the JSON of
            # {"status": status, **case}
            data = ((_STATUS_PREFIX.get(status) if status.__class__ is str else None) or _status_prefix(status)) + data[1:]
            columns = case_columns(case, status=status)
        else:
            columns = case_columns(case)
        if columns[2] in _SCORE_IN_JSON:  # ±inf: JSON has no infinity (orjson writes null), see _SCORE_IN_JSON
            columns = (columns[0], columns[1], _SCORE_IN_JSON[columns[2]], *columns[3:])
        self._pending.append(((cid if cid.__class__ is str else str(cid), *columns), data))
        self._n_pending += 1
        self._others = True
        if not self._others_scored and columns[0] == "scored":
            self._others_scored = True
        if self._n_pending >= self.batch_size or self._clock() - self._last_commit >= self.max_delay:
            self._send()

    def record_serialized(self, keys: list[tuple[Any, ...]], records: bytes) -> None:
        """Queue cases another process already serialized (the free-text workers do, to keep that work off the
        process every row passes through). Trusted as given: not parsed here, only counted.

        Args:
            keys: Per case ``(case id: str, status, verdict, score, reason, raw)``, as :func:`case_columns` gives
                them (with the case id first).
            records: The cases' JSON, in the same order, newline-joined: exactly what :meth:`record` would store
                for each (each on one line).

        Raises:
            InputError: the number of records is not the number of keys (nothing of the call is queued; the
                cases recorded before it are kept).
            StoreError: the commit failed, or the recorder is closed.
        """
        if self.closed:
            self._check_open()
        if not keys:
            return
        if self._n_lines or self._n_coded:
            self._send_lines()
        n_records = records.count(b"\n") + 1
        if n_records != len(keys):  # the writer would refuse the whole batch, with the cases recorded around these
            raise InputError(f"Recorder.record_serialized: {len(keys)} case keys and {n_records} record(s) (newline-joined); "
                             "give one record per key, each on one line.")
        self._pending.append((list(keys), records))
        self._n_pending += len(keys)
        self._others = True
        if not self._others_scored and any(key[1] == "scored" for key in keys):  # (each batch scanned until one is)
            self._others_scored = True
        if self._n_pending >= self.batch_size or self._clock() - self._last_commit >= self.max_delay:
            self._send()

    def record_lines(self, records: bytes, n: int, ids: bytes) -> None:
        """Queue *n* scored cases another part of goldeval serialized in bulk (``goldeval labels``' C reader, the local
        engine's workers for ``goldeval score``): they
        reach the store as compressed blocks of about :data:`BLOCK_BYTES` (:meth:`RunStore.write_case_block`), read
        back as the ``cases`` rows :meth:`record` would have stored for the same records; where the C build codes a
        call's records (each ``{"status":"scored","id":…,"line":…`` and a tail, ``goldeval score``'s), they are
        gathered as coded blocks of :data:`LINE_CODED_CASES` cases instead (format 3, :mod:`goldeval.runs.blocks`:
        the same rows read back). Blocks are compressed and written in the caller (on the writer thread when
        batches of :meth:`record` started one), whatever ``background`` says for batches.

        Args:
            records: The records' JSON, newline-separated, each on one line and each an object with a string
                ``"id"`` (the case id) and ``"status": "scored"``: exactly what :meth:`record` would store for each.
            n: How many records *records* holds.
            ids: Their ids' JSON as orjson writes it, comma-separated, in the same order.

        Notes:
            For cases this run records once: each id is recorded in no other call of this recorder and was not
            recorded before by the run (a resumed run with previous cases must use :meth:`record`), since a block
            is never replaced by a later record of the same id.

        Raises:
            StoreError: the commit failed (a block whose records are not as many as announced is refused whole by
                :meth:`RunStore.write_case_block`, on the writer thread: raised by the next call), or the recorder
                is closed.
        """
        if self.closed:
            self._check_open()
        if n <= 0:
            return
        if self._pending:  # the records before these keep their place
            self._send()
        coded = self._code_lines(records, ids, n)
        if coded is not None:  # goldeval score's records: gathered as a coded block (format 3), as record_coded's
            if self._n_lines:
                self._send_lines()
            if self._n_coded and self._coded_fmt != FORMAT_CODED_STATUS_FIRST:
                self._send_coded()
            codes, lines, used = coded
            self._coded_fmt = FORMAT_CODED_STATUS_FIRST
            self._coded_ids.append(ids)
            self._coded_codes.append(codes)
            runs = self._coded_lines
            if runs and runs[-1][0] + runs[-1][1] == lines[0][0]:
                runs[-1][1] += lines[0][1]
                runs.extend(lines[1:])
            else:
                runs.extend(lines)
            self._coded_used.update(used)
            self._n_coded += n
            if self._n_coded >= LINE_CODED_CASES:
                self._send_coded()
            return
        if self._n_coded:
            self._send_coded()
        self._lines.append(records)
        self._line_ids.append(ids)
        self._n_lines += n
        self._lines_bytes += len(records)
        if self._lines_bytes >= BLOCK_BYTES:
            self._send_lines()

    def record_coded(self, ids: bytes | memoryview, n: int, first_line: int, codes: bytes, used: Iterable[int],
                     tails: Mapping[bytes, int]) -> None:
        """Queue *n* scored cases whose records are ``{"id": <id>, "status": "scored", "line": <line>`` and a tail from a
        small table (``goldeval labels``: ``,"gold":…,"pred":…,"outcome":"tp"}``), given as columns: they reach the
        store as coded blocks (:data:`goldeval.runs.blocks.FORMAT_CODED`) of about :data:`CODED_BLOCK_CASES` cases,
        read back as the ``cases`` rows :meth:`record` would have stored for the same records (the record of a case
        is ``'{"id":' + id + ',"status":"scored","line":' + line + tail``). A block is written in the caller (on the
        writer thread when earlier batches started one), whatever ``background`` says: it is one INSERT of a blob
        of a few hundred KiB.

        Args:
            ids: The *n* cases' ids as JSON (orjson's spelling: strings), comma-separated, in order (bytes, or a
                memoryview of bytes: kept, not copied, until the block is stored).
            n: How many cases (≥ 1; 0 records nothing).
            first_line: The first case's line; the others follow it one a line (``first_line + i``).
            codes: One uint32 a case in native byte order (``array("I")`` bytes): its tail's code.
            used: The codes *codes* holds (each at least once; more are allowed).
            tails: tail bytes → code, every code used so far and never changed (the caller adds a new tail with the
                next code, ``len(tails)``: :func:`goldeval._fast.label_lines` does with ``emit & 4``). A tail is
                ``,"name":value…}`` (members and the closing brace, on one line, naming neither ``id``, ``status``
                nor ``line``).

        Notes:
            For cases this run records once, as :meth:`record_lines`. The count of *ids* is trusted here and
            checked when the block is read back (a block whose ids are not *n* is reported damaged).

        Raises:
            InputError: *codes* is not *n* uint32, a code is not one of *tails*', or a tail is not of that form
                (nothing of the call is queued).
            StoreError: the commit failed, or the recorder is closed.
        """
        if self.closed:
            self._check_open()
        if n <= 0:
            return
        if len(codes) != 4 * n:
            raise InputError(f"Recorder.record_coded: {n} cases and {len(codes)} bytes of codes; give one uint32 a case.")
        known = self._tails
        if len(tails) > len(known):  # new tails: checked once each, kept in code order
            new = list(tails.items())[len(known):]
            for tail, code in new:
                if code != len(known):
                    raise InputError(f"Recorder.record_coded: tail {tail[:60]!r} has code {code}; the next code is {len(known)} "
                                     "(codes are given in order, 0, 1, 2…, and never change).")
                try:
                    check_tail(tail)
                except StoreError as exc:
                    raise InputError(f"Recorder.record_coded: {exc}") from None
                known.append(tail)
        used = used if isinstance(used, (list, set, tuple)) else list(used)
        # Each code is checked once a block: the pending block's codes (format 2) were checked when first given, and
        # a code stays valid (tails are only added), so a call whose codes the block holds already needs no range
        # check (1M label rows: ~100 codes a call, 1,587 calls; their max and min took ~5 ms of CPU).
        in_block = bool(self._n_coded) and self._coded_fmt == FORMAT_CODED and self._coded_used.issuperset(used)
        if used and not in_block and (max(used) >= len(known) or min(used) < 0):
            raise InputError(f"Recorder.record_coded: a code of {sorted(used)[:10]} is not one of the {len(known)} tails given.")
        if self._pending:  # the records before these keep their place
            self._send()
        if self._n_lines:
            self._send_lines()
        if self._n_coded and self._coded_fmt != FORMAT_CODED:
            self._send_coded()
        self._coded_fmt = FORMAT_CODED
        self._coded_ids.append(ids)
        self._coded_codes.append(codes)
        runs = self._coded_lines
        if runs and runs[-1][0] + runs[-1][1] == first_line:
            runs[-1][1] += n
        else:
            runs.append([first_line, n])
        if not (in_block and self._n_coded):  # (the block may have been sent above: its set is then a new one)
            self._coded_used.update(used)
        self._n_coded += n
        if self._n_coded >= CODED_BLOCK_CASES:
            self._send_coded()

    def _send_coded(self) -> None:
        """Store the cases of :meth:`record_coded` as one coded block (compressed and written here, or queued for
        the writer thread when one runs: one connection is never used by two threads at once)."""
        if not self._n_coded:
            return
        self._raise_writer_error()
        n, fmt = self._n_coded, self._coded_fmt
        if fmt == FORMAT_CODED_STATUS_FIRST:  # (record_lines' cases: their tails table, its header members cached)
            known = self._line_tails
            data = encode_coded(self._coded_lines, b"".join(self._coded_codes),
                                {c: known[c] for c in sorted(self._coded_used)}, self._line_members)
        else:
            tails = self._tails
            data = encode_coded(self._coded_lines, b"".join(self._coded_codes), {c: tails[c] for c in sorted(self._coded_used)})
        ids = b",".join(self._coded_ids)
        self._coded_ids, self._coded_codes, self._coded_lines, self._coded_used, self._n_coded = [], [], [], set(), 0
        self._hash_ids(ids, n)
        seq0, self._seq = self._seq, self._seq + n
        cctx = zstandard.ZstdCompressor(level=ZSTD_BLOCK_LEVEL)
        block = (seq0, n, cctx.compress(data), cctx.compress(ids), fmt)
        if self._thread is not None:
            self._queue.put(("coded", *block))
        else:
            with signals_held():  # a Ctrl-C half-way would leave the transaction open
                self.store.write_coded_block(self.run_id, *block)
        self._last_commit = self._clock()

    def _send_lines(self) -> None:
        """Hand the records of :meth:`record_lines` over as one block (or store it here when not ``background``),
        and those of :meth:`record_coded` (:meth:`_send_coded`)."""
        if self._n_coded:
            self._send_coded()
        if not self._n_lines:
            return
        self._raise_writer_error()
        lines, line_ids, n = self._lines, self._line_ids, self._n_lines
        self._lines, self._line_ids, self._n_lines, self._lines_bytes = [], [], 0, 0
        seq0, self._seq = self._seq, self._seq + n
        body, ids = b"\n".join(lines), b",".join(line_ids)
        self._hash_ids(ids, n)
        if not self.background:
            self.store.write_case_block(self.run_id, seq0, n, body, ids)
        else:
            # Compressed and written here, with background="process" too: a block is one INSERT of a compressed
            # blob, so a writer process would only add its start-up and a copy of every byte through a pipe, and
            # a writer thread costs more than it overlaps: the scorer's compiled kernel holds the GIL, so each
            # hand-over waited for the thread to be scheduled (1M short rows, cProfile: 0.35 s of wall in
            # queue.put for 0.02 s of INSERTs; issue 31 item 1). On the writer thread only when batches of
            # record() started one (one connection is never used by two threads at once); flush() waits for both.
            n_ids = _count_ids(ids)
            if n_ids != n:
                raise StoreError(f"run store: a block of {n} cases of run {self.run_id} came with "
                                 f"{n_ids} ids; nothing of it was stored.")
            block = (seq0, n, *compress_block(body, ids))
            if self._thread is not None:
                self._queue.put(block)  # blocks while the writer is a batch behind
            else:
                with signals_held():  # a Ctrl-C half-way would leave the transaction open
                    self.store.write_case_block(self.run_id, *block, compressed=True)
        self._last_commit = self._clock()

    def _hash_ids(self, ids: bytes, n: int) -> None:
        """Add a block's ids (JSON, comma-separated) to the digest of the ids written in blocks."""
        if self._ids_n:
            self._ids_sha.update(b",")
        self._ids_sha.update(ids)
        self._ids_n += n

    def blocks_ids_digest(self) -> dict[str, Any] | None:
        """The ids of the cases this recorder wrote in blocks (:meth:`record_lines`, :meth:`record_coded`) and sent
        so far, for :meth:`goldeval.runs.store.RunStore.finish_run` to check a streamed ``per_example`` against
        without reading the cases back: ``{"n": cases, "ids_sha256": sha256 of their JSON array in recording order
        (orjson's spelling, ``[`` + ids comma-joined + ``]``), "statuses": the statuses whose cases they are}``,
        where *statuses* is ``"all"`` (no case was recorded otherwise) or ``"scored"`` (the others recorded were
        not ``scored``); ``None`` when the run had cases before this recorder (a resumed run) or a ``scored`` case
        was recorded one by one (:meth:`record`, :meth:`record_serialized`).

        Example:
            >>> rec.blocks_ids_digest()  # doctest: +SKIP
            {'n': 1000000, 'ids_sha256': '5f0c…', 'statuses': 'all'}
        """
        if self._seq0 != 0 or self.resumed or self._others_scored:
            return None
        sha = self._ids_sha.copy()
        sha.update(b"]")
        return {"n": self._ids_n, "ids_sha256": sha.hexdigest(), "statuses": "scored" if self._others else "all"}

    def _code_lines(self, body: bytes, ids: bytes, n: int) -> tuple[bytes, list[list[int]], list[int]] | None:
        """The records of one :meth:`record_lines` call as a coded block's columns (:data:`FORMAT_CODED_STATUS_FIRST`):
        ``(codes, [first line, count] runs, codes used)``, or ``None`` when they stay JSON lines: a record not of
        that format's shape (see :mod:`goldeval.runs.blocks`), ids that are not the records', no C build, or a run
        whose tails are too varied for a table to pay (a call bringing new tails for more than a quarter of its
        records, past 64, or the run's past :data:`LINE_TAILS_CAP`; not tried again in this run)."""
        table = self._line_table
        if table is None:
            return None
        known = self._line_tails
        before = len(known)
        got = _fast_code_records(body, ids, n, table, known, LINE_TAILS_CAP)
        for tail in known[self._line_tails_checked:]:  # each new tail checked once (an unused one stays harmless)
            try:
                check_tail(tail)
            except StoreError:  # (not from orjson: a member twice); nothing more is coded in this run
                self._line_table = None
                return None
        self._line_tails_checked = len(known)
        if len(known) - before > max(64, n // 4):
            # Most records of the call bring a tail of their own (long notes: their token counts), so a table does
            # not pay: the run stays JSON lines from its first call, and its readers keep the one-decode path of
            # a run whose blocks are all JSON lines (RunStore._case_records; a run with a coded block reads rows).
            self._line_table, self._line_tails, self._line_tails_checked = None, [], 0
            return None
        if got is None:
            if len(known) >= LINE_TAILS_CAP:
                self._line_table = None
            return None
        if not got[1]:  # (no record: nothing to gather)
            return None
        return got

    def finish(self, results: dict[str, Any]) -> None:
        """Commit what is pending, then store the whole results dict and mark the run ``finished``.

        May be called more than once; the last call wins. While :attr:`hold_finish` is set it only commits the
        pending cases.
        """
        self._check_open()
        self.flush()
        if self.hold_finish:
            return
        if self.results_hook is not None:
            results = self.results_hook(results)
        if self._deferred is not None:
            self._set_identity(results)
        self.store.finish_run(self.run_id, results, per_example_in_cases=self.per_example_in_cases,
                              blocks_ids=self.blocks_ids_digest())
        self.finished = True

    def _set_identity(self, results: Mapping[str, Any]) -> None:
        """Set a deferred run's key, dataset hash and input hashes (from the results when they carry them)."""

        d = self._deferred
        assert d is not None
        hashes = hashes_from_results(results, d["inputs"])
        for role, path in d["inputs"].items():
            if role not in hashes:
                hashes[role] = file_sha256(path)
        key = run_key(scorer_name=d["scorer_name"], scorer_version=d["scorer_version"], input_hashes=hashes,
                      config=d["config"], arm=d["arm"])
        inputs = {role: input_entry(str(path), hashes[role]) for role, path in d["inputs"].items()}
        self.store.set_identity(self.run_id, run_key=key, dataset_hash=dataset_hash(hashes), inputs=inputs)
        self._deferred = None

    # -- lifecycle -------------------------------------------------------------------------------------------
    def _send(self) -> None:
        """Hand the pending records to the writer (or commit them here when not ``background``)."""
        self._raise_writer_error()
        self._send_lines()
        if self._pending:
            pending, self._pending = self._pending, []
            self._n_pending = 0
            keys: list[Any] = []
            records: list[bytes] = []
            for key, record in pending:
                if key.__class__ is list:  # a record_serialized chunk
                    keys.extend(key)
                else:
                    keys.append(key)
                records.append(record)
            seq0, self._seq = self._seq, self._seq + len(keys)
            body = b"\n".join(records)
            if not self.background:
                self.store.write_case_columns(self.run_id, batch_rows(seq0, keys, body))
            elif self.background == "process":
                if self._proc is None:
                    self._start_process()
                data = batch_message(seq0, keys, body)
                try:
                    with signals_held():  # a Ctrl-C / SIGTERM half-way through would cut the message
                        self._to_writer.send_bytes(data)
                except (BrokenPipeError, OSError) as exc:
                    self._writer_gone = True
                    raise StoreError(f"run store: the writer process of run {self.run_id} is gone ({exc}); the run can be resumed.") from exc
            else:
                self._start_thread()
                self._queue.put(batch_rows(seq0, keys, body))  # blocks while the writer is a batch behind
        self._last_commit = self._clock()

    def _start_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._write_loop, name=f"goldeval-recorder-{self.run_id}", daemon=True)
            self._thread.start()

    def _write_loop(self) -> None:
        while True:
            batch = self._queue.get()
            try:
                if batch is None:
                    return
                if self._writer_error is None:
                    if batch[0] == "coded":  # a block of record_coded: ("coded", seq0, n, data, ids), compressed
                        self.store.write_coded_block(self.run_id, *batch[1:])
                    elif batch[1].__class__ is int:  # a block of record_lines: (seq0, n, records, ids), compressed
                        self.store.write_case_block(self.run_id, *batch, compressed=True)
                    else:
                        self.store.write_case_columns(self.run_id, batch)
            except BaseException as exc:  # handed to the caller's thread on its next call
                self._writer_error = exc
            finally:
                self._queue.task_done()

    def _raise_writer_error(self) -> None:
        if self._writer_error is not None:
            exc, self._writer_error = self._writer_error, None
            if isinstance(exc, StoreError):
                raise exc
            raise StoreError(f"run store: recording run {self.run_id} failed on the writer thread ({exc}).") from exc

    def flush(self) -> None:
        """Commit the pending records now and wait until every record handed over so far is committed."""
        self._send()
        if self._thread is not None:
            self._queue.join()
        if self._proc is not None:
            self._ask_writer(b"sync")
        self._raise_writer_error()

    def _start_process(self) -> None:
        ctx = mp.get_context("forkserver") if "forkserver" in mp.get_all_start_methods() else mp.get_context("spawn")
        arm_forkserver(ctx)  # the writer itself ends at the end of its pipe; the forkserver must not stay either
        child_in, self._to_writer = ctx.Pipe(duplex=False)
        self._from_writer, child_out = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(
            target=writer_main, args=(child_in, child_out, self.store.location, self.run_id),
            name=f"goldeval-recorder-{self.run_id}", daemon=True,
        )
        self._proc.start()
        child_in.close()
        child_out.close()
        widen_pipe(self._to_writer)

    def _ask_writer(self, message: bytes) -> dict[str, Any]:
        """Send ``sync`` / ``stop`` to the writer process and wait for its answer (everything before is committed).

        Sending and reading a reply are never cut half-way by Ctrl-C / SIGTERM (they are held for those moments);
        the wait in between is interruptible, so a writer that does not answer never makes Ctrl-C wait for
        ``WRITER_REPLY_TIMEOUT_S``. A reply left unread by an interrupted wait is read and dropped by the next call.
        """
        try:
            with signals_held():  # never leave a message half-sent
                self._to_writer.send_bytes(message)
                self._unanswered += 1
            deadline = time.monotonic() + WRITER_REPLY_TIMEOUT_S
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._from_writer.poll(remaining):  # Ctrl-C may interrupt this wait
                    raise StoreError(
                        f"run store: the writer process of run {self.run_id} did not answer within "
                        f"{WRITER_REPLY_TIMEOUT_S:.0f} s; the run can be resumed."
                    )
                with signals_held():  # never leave a reply half-read
                    reply = orjson.loads(self._from_writer.recv_bytes())
                    self._unanswered -= 1
                if self._unanswered == 0:
                    break
        except (EOFError, BrokenPipeError, OSError) as exc:
            self._writer_gone = True
            raise StoreError(f"run store: the writer process of run {self.run_id} ended unexpectedly ({exc!r}); the run can be resumed.") from exc
        if reply.get("error"):
            raise StoreError(f"run store: recording run {self.run_id} failed in the writer process: {reply['error']}")
        return reply

    def _stop_writer(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        if self._proc is not None:
            proc, self._proc = self._proc, None
            try:
                self._ask_writer(b"stop")
            finally:
                proc.join(timeout=60)
                self._to_writer.close()
                self._from_writer.close()

    def close(self, *, interrupted: bool = False) -> None:
        """Commit what is pending and stop the writer; a run that did not finish is marked ``interrupted``
        (resumable). Every step is tried even when an earlier one fails; the first error is raised after."""
        if self.closed:
            return
        errors: list[BaseException] = []
        for step in (self.flush, self._stop_writer):
            try:
                step()
            except BaseException as exc:
                errors.append(exc)
        self.closed = True
        marked = False
        if not self.finished:
            try:
                self.store.set_status(self.run_id, "interrupted")
                marked = True
            except BaseException as exc:
                errors.append(exc)
        stop = next((e for e in errors if isinstance(e, KeyboardInterrupt)), None) if interrupted else None
        if stop is not None:
            # A second Ctrl-C (or SIGTERM) while the interrupted run was being closed: the run stays resumable (marked
            # interrupted, or left 'running' by a process that is about to end), and what reaches the caller is the
            # interrupt (exit 130 / 143), not a store error met on the way (e.g. the writer process already gone).
            raise stop
        if errors and interrupted and marked and self._writer_gone and all(isinstance(e, StoreError) for e in errors):
            # Stopped by an exception (Ctrl-C reaches the whole process group: a writer process still starting, before
            # writer_main ignores SIGINT, ends with it) and the writer process is gone: the run is marked interrupted,
            # and what the writer had not committed is redone by the resumed run, as after a kill. The exception that
            # stopped the run is what the caller reports (Ctrl-C: exit 130), not the writer it took with it.
            return
        if errors:
            raise errors[0]

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.close(interrupted=exc_type is not None)

    def _check_open(self) -> None:
        if self.closed:
            raise StoreError(f"Recorder for run {self.run_id}: already closed; start or resume the run again.")


_DUMPS_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
#: A case's score travels to the writer in a JSON header, and JSON has no infinity (orjson writes null): an infinite
#: score goes as this text, which SQLite reads back as the same infinity (the score column has REAL affinity).
_SCORE_IN_JSON: dict[float, str] = {float("inf"): "1e999", float("-inf"): "-1e999"}
_dumps = orjson.dumps
_STATUS_PREFIX: dict[str, bytes] = {}


def _status_prefix(status: str) -> bytes:
    """``b'{"status":<status as JSON>,'``: what :meth:`Recorder.record` puts before a case's members."""
    if not isinstance(status, str):
        raise InputError(f"Recorder.record: status must be a string, got {shorten(status)}.")
    try:
        text = orjson.dumps(status)
    except TypeError as exc:  # a lone surrogate: not Unicode text
        raise InputError(f"Recorder.record: status must be Unicode text, got {shorten(status)} ({exc}).") from None
    return _STATUS_PREFIX.setdefault(status, b'{"status":' + text + b",")

#: Bytes of records :meth:`Recorder.record_lines` gathers before it stores them as one block of JSON lines (about
#: 2,500 label cases): large enough that a block compresses well (5 bytes a label case) and costs one row, small
#: enough that the block pending and its joined copy stay well under a MiB (the score memory tests' flat peak: 2 MiB
#: blocks took the 2,000 → 60,000-row ratio from 1.16 to 1.24). Records it codes (format 3) are gathered as
#: :meth:`Recorder.record_coded`'s are, :data:`LINE_CODED_CASES` a block.
BLOCK_BYTES = 1 << 18

#: Cases :meth:`Recorder.record_coded` gathers before it stores them as one coded block: ~1 MiB of ids and codes
#: pending (flat peak memory at any number of cases), one row and one transaction for 65,536 cases (a million label
#: cases: 16 blocks, where blocks of JSON records took 270).
CODED_BLOCK_CASES = 1 << 16

#: Cases :meth:`Recorder.record_lines` gathers before it stores those it codes as one block (format 3): a million
#: short score cases make 62 blocks (510 blocks of JSON lines before; one table of tails a block, ~40 KB before
#: compression for those cases). Fewer than CODED_BLOCK_CASES: the ids pending and their joined copy grow with the
#: cases up to here, and the score memory test's 2,000 → 60,000-row ratio (bound 1.2) read 1.17-1.19 with 65,536.
LINE_CODED_CASES = 1 << 14

#: Most distinct tails (a record's members after its line number) the coded blocks of :meth:`Recorder.record_lines`
#: hold in one run: 1M short token-F1 rows have 306 (their token counts), so a few thousand is room; records
#: whose tails are nearly all different (long notes' counts) stop being coded once past it (~1 MiB of tails kept).
LINE_TAILS_CAP = 1 << 13

#: How long the scorer waits for the writer process to commit what it was sent (``sync``) or to stop.
WRITER_REPLY_TIMEOUT_S = 600.0


def start_run(
    store: RunStore,
    meta: RunMeta,
    *,
    resume: str | None = None,
    auto_resume: bool = True,
    batch_size: int = 200,
    max_delay: float = 0.5,
    background: bool | str = True,
    deferred: dict[str, Any] | None = None,
) -> Recorder:
    """Start a new run, or resume one, and return its :class:`Recorder`.

    Args:
        store: The open store.
        meta: The run's identity and versions (``meta.run_key`` decides what "the same run" is).
        resume: A run id (or unique prefix) to resume. Its key must equal ``meta.run_key``.
        auto_resume: With no ``resume``, resume the newest unfinished run with the same key (default True).
        batch_size, max_delay, background: See :class:`Recorder`.
        deferred: Set the run's identity at :meth:`Recorder.finish` (see :class:`Recorder`); only for a new run
            (then ``meta.run_key`` is a placeholder starting ``pending:``, and nothing is resumed).

    Raises:
        InputError: ``resume`` names a run made from other inputs, configuration, scorer version or arm (the
            message names which parts differ), a run that has finished, or one another live process is scoring.
        InputError: ``resume`` names no run of this store.
    """
    if deferred is not None and (resume is not None or auto_resume):
        raise InputError("start_run: deferred hashing starts a new run; pass auto_resume=False and no resume.")
    if resume is not None:
        run = store.get_run(resume, with_results=False)
        if run["run_key"] != meta.run_key:
            diffs = []
            if run["scorer_name"] != meta.scorer_name or run["scorer_version"] != meta.scorer_version:
                diffs.append(f"scorer {run['scorer_name']} {run['scorer_version']} vs {meta.scorer_name} {meta.scorer_version}")
            old_inputs = {k: v.get("sha256") for k, v in (run["inputs"] or {}).items()}
            new_inputs = {k: v.get("sha256") for k, v in meta.inputs.items()}
            if None not in old_inputs.values() and old_inputs != new_inputs:  # (None: not hashed yet)
                diffs.append("input files")
            if run["config"] != meta.config:
                changed = sorted(k for k in set(run["config"]) | set(meta.config) if run["config"].get(k) != meta.config.get(k))
                diffs.append("configuration (" + ", ".join(changed) + ")")
            if run["arm"] != meta.arm:
                diffs.append(f"arm {run['arm']!r} vs {meta.arm!r}")
            raise InputError(
                f"--resume {resume}: run {run['id']} was made from different {'; '.join(diffs) or 'inputs'}; "
                "resuming would mix two runs. Drop --resume to start a new run, or rerun with the same inputs and options."
            )
        why = store.claim(run["id"])
        if why == "finished":
            raise InputError(f"--resume {resume}: run {run['id']} has finished; there is nothing to resume. Drop --resume "
                             "to score again as a new run (`goldeval runs show` prints the finished one).")
        if why == "running":
            raise InputError(f"--resume {resume}: run {run['id']} is being scored right now by another process (pid "
                             f"{run['pid']}). Wait for it to finish, or stop it and resume then.")
        return Recorder(store, run["id"], resumed=True, batch_size=batch_size, max_delay=max_delay, background=background)
    if auto_resume:
        # Several processes started together may find the same unfinished run: the claim is atomic, so exactly one
        # resumes it; the others look again (it is now running, so skipped) and end up starting a new run.
        for _ in range(100):
            run = store.find_unfinished(meta.run_key)
            if run is None:
                break
            if store.claim(run["id"]) is None:
                return Recorder(store, run["id"], resumed=True, batch_size=batch_size, max_delay=max_delay, background=background)
    run_id = store.create_run(meta)
    return Recorder(store, run_id, resumed=False, batch_size=batch_size, max_delay=max_delay, background=background, deferred=deferred)


def _count_ids(ids: bytes) -> int:
    """How many ids the comma-separated JSON of *ids* holds (as :meth:`Recorder.record_lines` takes them), parsed:
    a comma inside an id's string (``"a,1"``) is not a separator. ``-1`` when it is not such a list."""
    try:
        got = orjson.loads(b"[" + ids + b"]")
    except orjson.JSONDecodeError:
        return -1
    return len(got)
