"""The local engine: any :class:`~goldeval.scoring.protocol.Scorer` over a file or rows, in one process or on every core,
streamed, recorded into the run store as it goes. ``goldeval score`` (every scorer, every input format),
:func:`goldeval.pipeline.files.score_file` and ``goldeval judge`` run through :func:`run`; Spark runs the same
``score_batch`` / partials in :mod:`goldeval.engines.spark`.

What it does, in order:

1. **First pass** over a file (bounded memory): its line count, its sha256, and the hashes of the ids that occur
   on more than one row (:mod:`goldeval.io.ids`; the scorer's :meth:`~goldeval.scoring.protocol.Scorer.id_of` is the id rule).
   Rows given in memory skip it (their ids are kept instead). With more than one worker the sha256 is taken in a
   thread beside it and the scoring (:class:`_FileHash`). For JSONL it also cuts the chunks a line kernel scores
   (:class:`_Spans`).
2. **Scoring** in chunks of 500 rows (or 2 MiB): each chunk is decoded (:func:`goldeval.io.reading.decode_line`, the
   scorer's ``lenient_json``) and scored by ``score_batch``, in this process or, for JSONL with ``workers`` > 1, in a
   pool of processes (a window of ``2 × workers`` chunks in flight, results taken in order). A pool's chunk is a
   byte range of the file (offset, length, first line number: :func:`_range_chunks`), which the worker reads and
   decodes itself (:func:`_range_lines`), so neither the rows' bytes nor their decoding pass through this process,
   which only finds the ranges' line boundaries (a count of newlines, in C). A worker also
   serializes a chunk's records for the store when every row of it is a new scored case, so that work stays off
   this process, which every record passes through. Where the scorer's compiled line kernel reads the rows (token
   F1's ``openscribe`` rule, no repeated id) the chunks are scored in ``workers`` threads of this process instead
   (:func:`_score_in_threads`): the kernel tokenizes and counts without the GIL, and no process is started.
3. **Per record**, in input order: a row whose id repeats an earlier row's becomes unscored
   (:func:`~goldeval.scoring.protocol.duplicate_record`); the record is folded into the scorer's partial
   (:meth:`~goldeval.scoring.protocol.Scorer.new_partial`, ``keep_cases`` or not), its ``per_example`` entry goes to
   ``on_example`` (e.g. the ``--out`` writer), and it is recorded (rows without an id, and repeated ids, are listed
   under failures only).
4. **Resume**: a case the recorder's run already holds, scored at the same line, is taken from the store, not
   scored again (then the chunks are scored in this process: the stored cases stay in one place).
5. :meth:`~goldeval.scoring.protocol.Scorer.finish`, ``input`` added, ``recorder.finish``.

Memory does not grow with the rows unless ``keep_cases`` is set: partials hold counts and exact sums, ids are
checked against the first pass's few repeated hashes, each record is dropped once it is written.
Ctrl-C and SIGTERM: the pool's workers ignore them; the main process stops the pool and the ``KeyboardInterrupt`` goes up to the
CLI (exit 130, or 143 after SIGTERM), leaving the recorded cases committed and the run resumable.
"""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple, cast

import orjson

from goldeval import lifeline
from goldeval.errors import InputError
from goldeval.io.ids import IdIndex, repeated_hashes, scan_jsonl_ids
from goldeval.io.reading import (
    Row,
    RowError,
    check_input_file,
    check_unchanged,
    decode_line,
    file_memo_key,
    file_sha256,
    is_delimited,
    is_parquet,
    line_blocks,
    read_rows,
)
from goldeval.io.streams import display_name, input_sha256, spooled
from goldeval.lifeline import watch
from goldeval.runs.columns import case_columns
from goldeval.scoring.protocol import Reused, Scorer, duplicate_record, numbered
from goldeval.scoring.registry import with_extra

__all__ = ["PARALLEL_MIN_ROWS", "Stretch", "kernel_records", "run"]

#: Files with at least this many rows are scored on every core when ``workers`` is ``None``.
PARALLEL_MIN_ROWS = 10_000
_CHUNK_ROWS = 500
_CHUNK_BYTES = 2 << 20  # a chunk also ends at 2 MiB, so memory stays flat when rows are large
#: About the lines of a chunk a line kernel scores (no record is made per row there, so a chunk can be larger: fewer
#: chunks through the pool's pipes, and still a bounded output a chunk, ~0.4 MB for short rows).
_KERNEL_ROWS = 4 * _CHUNK_ROWS


def run(
    scorer: Scorer,
    source: str | os.PathLike[str] | Iterable[Any],
    config: Mapping[str, Any],
    *,
    workers: int | None = 1,
    recorder: Any = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    on_example: Callable[[dict[str, Any]], None] | None = None,
    on_example_json: Callable[[bytes], None] | None = None,
    on_example_lines: Callable[[bytes, int], None] | None = None,
    keep_cases: bool = True,
    extra: Mapping[str, Any] | None = None,
    unique_ids: bool = False,
    finish: bool = True,
    record_blocks: bool = False,
) -> dict[str, Any]:
    """Score *source* with *scorer*, record each case, aggregate: the results dict of :meth:`Scorer.finish`.

    Args:
        scorer: Any :class:`~goldeval.scoring.protocol.Scorer`.
        source: A file's path (JSONL, CSV or Parquet by extension, read with :func:`goldeval.io.reading.read_rows`'s rules),
            or rows in memory (:class:`~goldeval.io.reading.Row` / :class:`~goldeval.io.reading.RowError` items or dicts, numbered
            from 1).
        config: What ``scorer.configure`` returned (its ``source`` names the input in messages).
        workers: Processes to score a JSONL file with (default 1). ``None``: one below :data:`PARALLEL_MIN_ROWS`
            rows, else every core. Where the scorer's compiled line kernel scores the file (token F1 under
            ``openscribe`` on plain rows, no repeated id) the workers are threads of this process (the kernel counts
            without the GIL), and ``None`` means every core only when the lines average :data:`LONG_ROW_BYTES` or
            more, else one (measured: benchmarks/README.md, "Issue 31 item 2, two workers"). Capped at the number of
            cores. CSV, Parquet, rows in memory and a resumed run are scored in this process (a resumed run's
            ``input.workers`` is still the count the command asked for, as resolved for the uninterrupted run: the
            results of a run stopped and resumed equal an uninterrupted run's; only its remaining cases were scored
            here). More than one worker starts processes, so a script that asks for them
            needs the usual ``if __name__ == "__main__":`` guard (Python's multiprocessing rule); the scorer must
            pickle.
        recorder: Run-store recorder (``previous()``, ``record(case)``, ``finish(results)``; ``record_serialized``
            when it has one) or ``None``.
        progress: Called with the number of rows just finished (for a progress bar).
        on_total: Called once with the number of lines of a file before scoring starts.
        on_example: Called with each ``per_example`` entry (:meth:`Scorer.example_entry`), in order, as soon as
            its row is scored; the entry must not be changed.
        on_example_json: Instead of *on_example*: called with each entry's JSON (bytes, one line, as
            ``orjson.dumps`` writes it), serialized where the row was scored (e.g.
            :meth:`goldeval.io.resultsfile.ResultsFile.example_json`).
        on_example_lines: Instead of *on_example* / *on_example_json*: called with ``(body, n)``, *n* entries' JSON
            each followed by a newline (e.g. :meth:`goldeval.io.resultsfile.ResultsFile.example_lines`): a pool's
            worker joins a chunk's entries into one body, so this process makes one call a chunk, not one an entry.
        keep_cases: Keep every entry in ``results["per_example"]`` (default). False: that key holds
            ``{"$streamed": true, "n": int, "ids_sha256": str}`` instead (the number of entries and the sha256 of the
            JSON array of the scored ids, in order, which the run store checks its cases against).
        extra: Entries put into the results before ``aggregate``; a file's ``input`` (``path``, ``sha256``,
            ``workers``) is added when *extra* has none.
        unique_ids: The rows' ids are known to be unique (the judge's join checked them): no id is kept.
        finish: Call ``recorder.finish(results)`` (default); False leaves it to the caller (which adds to the
            results first).
        record_blocks: A new run's scored cases may reach a recorder that has ``record_lines`` in bulk, as
            compressed blocks (``goldeval score``); only for a caller that records no case of the run again after
            this (a block is never replaced, as a ``cases`` row is: the judge's LLM stage records cases again, so
            ``goldeval judge`` leaves it False). Where blocks cannot be used (a resumed run, repeated ids) the cases
            are recorded one row each, as with False.

    Returns:
        The scorer's results, ``aggregate["elapsed_sec"]`` (when the scorer has one) the seconds of the scoring
        pass; also handed to ``recorder.finish``.

    Raises:
        InputError: a missing, empty or (as a whole) non-UTF-8 file, a file without rows, a bad ``workers``, and
            whatever :meth:`Scorer.finish` raises.
    """
    src = config.get("source") or "rows"
    id_field = config.get("id_field") or "id"
    automatic = workers is None
    info: dict[str, Any] | None = None
    path: Path | None = None
    identity: tuple[str, int, int, int, int] | None = None
    if isinstance(source, (str, os.PathLike)):
        path = check_input_file(source)
        identity = file_memo_key(path)  # (checked again once scored: the bytes scored must be the bytes hashed)
        jsonl = not (is_delimited(path) or is_parquet(path))
        # where the run keeps its inputs, the first pass's read also makes the kept copy (Recorder.input_copy), and
        # hashes the file as it feeds the copy
        copy = recorder.input_copy(path) if jsonl and hasattr(recorder, "input_copy") else None
        # More than one worker may score this file: its sha256 in a thread beside the first pass and the scoring
        # (reading and hashlib release the GIL), taken at the end, instead of in the first pass's loop.
        hashing = (_FileHash(path) if copy is None and jsonl and workers != 1 and (os.cpu_count() or 1) > 1
                   and spooled(path) is None else None)
        if hashing is not None:
            hashing.start()
        try:
            total, sha256, repeated, spans = _first_pass(path, scorer, id_field, src, jsonl, copy,
                                                         hash_here=hashing is None)
        except BaseException:  # (e.g. a file that is not UTF-8: the hash is not needed)
            if hashing is not None:
                hashing.stop()
            raise
        if on_total is not None:
            on_total(total)
        workers = _workers(workers, total) if jsonl else 1
        info = {"path": display_name(path), "sha256": None if hashing is not None else input_sha256(path, sha256)}
        chunks: Iterable[Any] = _line_chunks(path) if jsonl else _item_chunks(_read(path, scorer))
        raw_lines = jsonl
    else:
        repeated, workers, raw_lines, spans, hashing = None, 1, False, None, None
        chunks = _item_chunks(numbered(source, src))
    previous = recorder.previous() if recorder is not None else {}
    if info is not None:
        # the run's worker count, as an uninterrupted run of the same command records it (set below); a resumed run
        # scores its remaining cases in this process (its reused cases are marked here, row by row), which changes
        # no number of the results: its results equal the uninterrupted run's (documented under *workers*)
        info["workers"] = workers
    resolved = workers
    if previous:
        workers = 1
    ids = None if unique_ids else IdIndex(repeated)
    if sum(f is not None for f in (on_example, on_example_json, on_example_lines)) > 1:
        raise InputError("local.run: give one of on_example, on_example_json and on_example_lines.")
    if on_example_lines is not None:  # (one entry at a time where the entries are made here)
        lines = on_example_lines

        def on_example_json(data: bytes) -> None:
            lines(data + b"\n", 1)

    job = _Job(scorer, config, src, id_field, recorder, previous, ids, keep_cases, on_example or on_example_json,
               as_json=on_example_json is not None, on_lines=on_example_lines, blocks=record_blocks)
    # With no repeated id anywhere (the usual case, known from the first pass) and nothing to reuse, each chunk is
    # folded into a partial where it is scored (a worker) and the partials are merged here in order: this process
    # then only merges, streams the entries and records. Otherwise the records are folded here, one by one.
    fold = not previous and (unique_ids or (repeated is not None and not repeated))
    plan = _Plan(fold=fold, keep=keep_cases,
                 entries=job.on_example is not None, serialize=job.serialize, record=recorder is not None,
                 entries_json=job.as_json, all_cases=job.all_cases, lines=on_example_lines is not None, bulk=fold and job.bulk)
    kernel_here = _line_kernel(scorer, config, plan) if raw_lines else None
    if previous and info is not None and automatic and resolved > 1 and raw_lines:
        # what the uninterrupted run would have chosen (below), with the plan it would have had (nothing reused)
        fresh = unique_ids or (repeated is not None and not repeated)
        if (_line_kernel(scorer, config, plan._replace(fold=fresh, serialize=job.fresh_serialize,
                                                       bulk=fresh and job.fresh_bulk)) is not None
                and not _long_rows(total, path)):
            info["workers"] = 1
    if automatic and workers > 1 and kernel_here is not None and not _long_rows(total, path):
        # Chosen, not asked for: where the scorer's compiled line kernel reads and scores the file (token F1's
        # openscribe rule on plain rows), short rows are scored faster by one thread: a second one waits on the GIL
        # for the part of each row written with it (benchmarks/README.md, "Issue 31 item 2, two workers").
        workers = 1
        if info is not None:
            info["workers"] = workers
    t0 = time.perf_counter()
    if raw_lines and workers > 1 and kernel_here is not None:
        # the line kernel in threads of this process: its reading, decoding, tokenizing and counting run without
        # the GIL, so no process is started and no entry crosses a pipe (spans: the first pass's chunks)
        assert path is not None and spans is not None
        _score_in_threads(job, plan, _span_blocks(path, spans), workers, progress, kernel_here)
    elif raw_lines and workers > 1:
        assert path is not None
        _score_in_pool(job, plan, _range_chunks(path), workers, progress)
    else:
        # In this process each case is recorded as soon as score_batch yields it (folded: in _score_chunk; else in
        # _Job.take_records, after the repeated-id check), so an interrupt loses only the case in flight; folded
        # for a recorder that takes blocks, a chunk's cases are recorded in bulk once it is scored (an interrupt
        # loses the chunk and the block not written yet: the resumed run redoes them).
        plan_here = plan._replace(serialize=plan.bulk, lines=False)
        record_now = recorder.record if recorder is not None and not plan.bulk else None
        lenient = scorer.lenient_json
        # the scorer's compiled line kernel, where it applies: then a chunk's entries come back as one body too
        plan_kernel = plan._replace(serialize=plan.bulk)
        kernel = _line_kernel(scorer, config, plan_kernel) if raw_lines and record_now is None else None
        if kernel is not None:  # the file's lines by byte ranges (the first pass's chunks), as threads read them
            assert path is not None and spans is not None
            chunks = ()
            for block in _span_blocks(path, spans):
                done = _score_chunk(scorer, config, plan_kernel, (), sink=None if plan.lines else job.on_example,
                                    block=block, kernel=kernel)
                job.take(done)
                if progress is not None:
                    progress(done.n_rows)
        for chunk in chunks:
            items: Iterable[Any] = (decode_line(raw, line, src, lenient=lenient) for line, raw in chunk) if raw_lines else chunk
            if previous:
                items = _reusing(items, previous, id_field)
            if plan.fold:
                job.take(_score_chunk(scorer, config, plan_here, items, sink=job.on_example, record_now=record_now))
            else:
                job.take_records(scorer.score_batch(items, config), None)
            if progress is not None:
                progress(len(chunk))
    elapsed = time.perf_counter() - t0
    if info is not None and hashing is not None:
        info["sha256"] = hashing.result()
    if info is not None and path is not None and identity is not None:
        # (the hash thread read the file beside the first pass and the scoring: its digest is of the bytes the first
        # pass read only if the file was the same when it was done)
        _check_unchanged(path, identity, info, hashed=None if hashing is None else hashing.identity)
    if info is not None and job.partial_rows == 0:
        raise InputError(f"{info['path']}: holds no rows (only blank lines), expected one JSON object per line.")
    results = scorer.finish(job.partial, config)
    if not keep_cases:
        results["per_example"] = job.streamed_marker()
    if "elapsed_sec" in results.get("aggregate", {}):
        results["aggregate"]["elapsed_sec"] = elapsed
    if info is not None and not (extra and "input" in extra):
        extra = {"input": info, **(extra or {})}
    results = with_extra(scorer, results, extra)
    if recorder is not None and finish:
        recorder.finish(results)
    return results


# ---------------------------------------------------------------------------------------------------------------
# reading


def _check_unchanged(path: Path, identity: tuple[str, int, int, int, int], info: dict[str, Any], *,
                     hashed: tuple[str, int, int, int, int] | None = None) -> None:
    """Raise when *path* is not the file whose sha256 *info* records: the scoring reads the file again after the
    first pass (and the sha256 may be taken by a thread of its own), so a file rewritten meanwhile, even with the
    same size, would give cases of other bytes than those hashed (and kept with the run). *identity*: its
    :func:`file_memo_key` before the first pass; a file whose identity is unchanged is trusted (the sha256 memo's
    rule), one that changed must still be that many bytes with the recorded sha256 (e.g. only touched). *hashed*:
    the identity the file had when :class:`_FileHash` finished reading it, where it took the sha256: it must be
    *identity* (else that digest may be of bytes the first pass did not read).

    Raises:
        InputError: the file changed while it was scored.
    """
    if spooled(path) is not None:
        return
    if hashed not in (None, identity):  # (the thread's digest may be of bytes the first pass did not read)
        raise InputError(f"{info['path']}: the file changed while it was scored (its size or bytes are not those read "
                         "first). Score a file that is not being written.")
    sha = info.get("sha256")
    check_unchanged(path, identity, sha if isinstance(sha, str) else None, info["path"])


def _workers(workers: int | None, total: int) -> int:
    cores = os.cpu_count() or 1
    if workers is None:
        workers = cores if total >= PARALLEL_MIN_ROWS else 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers: expected a whole number >= 1 (or None for automatic), got {workers!r}.")
    return min(workers, cores)


def _read(path: Path, scorer: Scorer) -> Iterator[Any]:
    return read_rows(path, lenient=scorer.lenient_json)


def _first_pass(path: Path, scorer: Scorer, id_field: str, src: str, jsonl: bool, copy: Any = None, *,
                hash_here: bool = True) -> tuple[int, str | None, set[int], list[Span] | None]:
    """One read of *path*: its line (row) count, its sha256 (``None`` without *hash_here*: taken elsewhere), the
    hashes of the ids on more than one row, and for JSONL the chunks a line kernel scores (:class:`_Spans`).

    *copy*: a JSONL file's :class:`goldeval.runs.texts.InputCopy` (the run store's kept copy of the input), fed the
    bytes read and closed when the file did not change while read; discarded otherwise (then the run keeps the file
    as read again when it finishes).

    Raises:
        InputError: no line of a JSONL file is UTF-8 (the file is in another encoding; one bad line fails alone).
    """
    if not jsonl:

        n = 0

        def ids() -> Iterator[str | None]:
            nonlocal n
            for item in _read(path, scorer):
                n += 1
                yield scorer.id_of(item.data.get(id_field)) if type(item) is Row else None

        repeated = repeated_hashes(ids(), max(1, path.stat().st_size // 48))
        return n, file_sha256(path) if hash_here else None, repeated, None
    hasher = hashlib.sha256() if hash_here else None
    spans = _Spans(path)
    state: dict[str, Any] = {"not_utf8": 0, "first_bad": None}

    def slow(line: int, raw: bytes) -> dict[str, Any] | None:
        item = decode_line(raw, line, src, lenient=scorer.lenient_json)  # NaN, lone surrogates, non-UTF-8, too deep
        if isinstance(item, RowError):
            if "is not UTF-8" in item.error:
                state["not_utf8"] += 1
                if state["first_bad"] is None:
                    state["first_bad"] = InputError(item.error.replace("the line is not UTF-8", "the file is not UTF-8", 1)
                                                    + " No line of the file is UTF-8.")
            return None
        return item.data

    if copy is not None:
        before, hasher = file_memo_key(path), copy  # (an InputCopy is a sha256 object too)
    try:
        n_lines, n_rows, repeated = scan_jsonl_ids(path, id_field, scorer.id_of, hasher=hasher, slow_decode=slow,
                                                   ids_as_text=scorer.ids_as_text, on_block=spans.add)
    except BaseException:
        if copy is not None:
            copy.discard()
        raise
    if copy is not None:
        if file_memo_key(path) == before:  # unchanged while read
            copy.close()
        else:
            copy.discard()
    if n_rows and state["not_utf8"] == n_rows and state["first_bad"] is not None:
        raise state["first_bad"]
    return n_lines, hasher.hexdigest() if hasher is not None else None, repeated, spans.close()


class _Spans:
    """The chunks a line kernel scores, cut from the first pass's blocks (``scan_jsonl_ids``'s ``on_block``: whole
    lines, in order) so that no other read of the file in this process looks for line ends: consecutive blocks,
    a chunk closed once it holds :data:`_KERNEL_ROWS` lines or :data:`_CHUNK_BYTES` bytes (about 2,000 short rows,
    or 2 MiB of long ones). The same chunks at every worker count."""

    def __init__(self, path: Path) -> None:
        self.name = os.fspath(path)
        self.spans: list[Span] = []
        self.offset, self.line = 0, 1  # where the blocks read so far end
        self.start, self.first = 0, 1  # where the open chunk starts

    def add(self, size: int, lines: int) -> None:
        """A block of *size* bytes and *lines* lines was read."""
        self.offset += size
        self.line += lines
        if self.line - self.first >= _KERNEL_ROWS or self.offset - self.start >= _CHUNK_BYTES:
            self._cut()

    def _cut(self) -> None:
        if self.offset > self.start:
            self.spans.append(Span(self.name, self.start, self.offset - self.start, self.first, self.line - self.first))
            self.start, self.first = self.offset, self.line

    def close(self) -> list[Span]:
        """The chunks, the last one closed."""
        self._cut()
        return self.spans


class _FileHash(threading.Thread):
    """A file's sha256 (hex) taken in a thread of its own: :meth:`result` waits for it (and raises what reading
    raised); :meth:`stop` ends it early when the hash is no longer wanted."""

    def __init__(self, path: Path) -> None:
        super().__init__(name="goldeval-sha256", daemon=True)
        self.path = path
        self.digest: str | None = None
        self.error: BaseException | None = None
        self.stopped = threading.Event()
        self.identity: tuple[str, int, int, int, int] | None = None  # the file's identity once read (file_memo_key)

    def run(self) -> None:
        try:
            h = hashlib.sha256()
            with open(self.path, "rb") as fh:
                while (block := fh.read(1 << 20)) and not self.stopped.is_set():
                    h.update(block)
            self.identity = file_memo_key(self.path)
            self.digest = h.hexdigest()
        except BaseException as exc:  # (handed to the caller by result())
            self.error = exc

    def stop(self) -> None:
        """End the reading at the next MiB (the digest is then not the file's: :meth:`result` must not be used)."""
        self.stopped.set()

    def result(self) -> str:
        """The hex digest, once the whole file is read."""
        self.join()
        if self.error is not None:
            raise self.error
        if self.stopped.is_set():
            raise RuntimeError("_FileHash.result: the hash was stopped before the end of the file")
        assert self.digest is not None
        return self.digest


#: Mean bytes a line from which automatic workers score a file with the line kernel on every core: below, one thread
#: is faster (benchmarks/README.md, "Issue 31 item 2, two workers"; long notes are ~4,200 bytes, short rows ~210).
LONG_ROW_BYTES = 1024


def _long_rows(total: int, path: Path | None) -> bool:
    """Whether *path*'s *total* lines are long enough on average (:data:`LONG_ROW_BYTES`) for two threads to pay."""
    return path is not None and total > 0 and path.stat().st_size >= LONG_ROW_BYTES * total


def _line_chunks(path: Path) -> Iterator[list[tuple[int, bytes]]]:
    """Non-blank lines of *path* as chunks of ``(line number, bytes)``."""
    chunk: list[tuple[int, bytes]] = []
    size = 0
    with open(path, "rb") as fh:  # (goldeval.io.reading.jsonl_lines, inline: every line passes here)
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            chunk.append((lineno, raw))
            size += len(raw)
            if len(chunk) >= _CHUNK_ROWS or size >= _CHUNK_BYTES:
                yield chunk
                chunk, size = [], 0
    if chunk:
        yield chunk


class Span(NamedTuple):
    """A pool's chunk: a byte range of a JSONL file, whole lines, that a worker reads and decodes itself."""

    path: str  #: the file
    offset: int  #: first byte of the range
    length: int  #: bytes in the range (it ends after a newline, or at the end of the file)
    first_line: int  #: 1-based number of the range's first line
    n_lines: int  #: lines in the range, blank ones included (the last one may lack its newline)


def _range_chunks(path: Path) -> Iterator[Span]:
    """The lines of *path* as :class:`Span` chunks of at most :data:`_CHUNK_ROWS` lines, each ending at the first
    line boundary past :data:`_CHUNK_BYTES` bytes (so about the chunks of :func:`_line_chunks`, blank lines counted).

    Only newlines are looked at here (``bytes.count`` / ``bytes.find``, in C): reading, splitting and decoding the
    rows is the worker's (:func:`_range_lines`), so a row's bytes never cross a process boundary.
    """
    name = os.fspath(path)
    offset, line = 0, 1
    rows, find = _CHUNK_ROWS, bytes.find
    with open(path, "rb") as fh:
        for block in line_blocks(fh, _CHUNK_BYTES):
            n, start = len(block), 0
            k = block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
            while k > rows:  # cut at every _CHUNK_ROWS-th newline
                end = start
                for _ in range(rows):
                    end = find(block, b"\n", end) + 1
                yield Span(name, offset + start, end - start, line, rows)
                line += rows
                k -= rows
                start = end
            yield Span(name, offset + start, n - start, line, k)
            line += k
            offset += n


def _span_blocks(path: Path, spans: Iterable[Span]) -> Iterator[tuple[bytes, int]]:
    """The bytes of each of *spans* (chunks of *path* that follow each other from its start, :class:`_Spans`), a
    byte-order mark at the start of line 1 dropped, with the number of their first line (what a line kernel reads:
    :func:`kernel_records`), read in order through one open file: its read offset is where the scoring has come to (as
    ``/proc/PID/fdinfo`` shows it; tests/e2e/test_kill_resume.py holds a run half-way by it).

    Raises:
        InputError: the file is shorter than a span says (it changed since the first pass).
    """
    with open(path, "rb") as fh:
        for span in spans:
            if fh.tell() != span.offset:
                fh.seek(span.offset)
            data = fh.read(span.length)
            if len(data) != span.length:
                raise InputError(f"{span.path}: the file changed while it was scored (expected {span.length} bytes at "
                                 f"byte {span.offset}, read {len(data)}). Score a file that is not being written.")
            if span.first_line == 1 and data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
            yield data, span.first_line


def _range_bytes(span: Span) -> bytes:
    with open(span.path, "rb") as fh:
        data = os.pread(fh.fileno(), span.length, span.offset)
    if len(data) != span.length:
        raise InputError(f"{span.path}: the file changed while it was scored (expected {span.length} bytes at byte "
                         f"{span.offset}, read {len(data)}). Score a file that is not being written.")
    return data


def _range_lines(span: Span) -> list[tuple[int, bytes]]:
    """The non-blank lines of *span* as ``(line number, bytes)``, each with its newline, read from the file: the
    lines :func:`_line_chunks` gives for the same range (a byte-order mark at the start of line 1 dropped)."""
    data = _range_bytes(span)
    lines = data.splitlines(keepends=True) if b"\r" not in data else _newline_split(data)
    if span.first_line == 1 and lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    # (a blank line is all ASCII white space, as bytes.strip() reads it; isspace() stops at the first other byte)
    return [(line, raw) for line, raw in enumerate(lines, start=span.first_line) if not raw.isspace()]


def _newline_split(data: bytes) -> list[bytes]:
    """*data* split after each ``\\n`` only (as a binary file's lines are: ``\\r`` is not a line end here)."""
    parts = data.split(b"\n")
    last = parts.pop()
    out = [p + b"\n" for p in parts]
    if last:
        out.append(last)
    return out


def _item_chunks(items: Iterable[Any]) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= _CHUNK_ROWS:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _reusing(items: Iterable[Any], previous: Mapping[str, Mapping[str, Any]], id_field: str) -> Iterator[Any]:
    """*items* with each row whose case the resumed run already holds (scored, same line) as :class:`Reused`."""

    for item in items:
        if type(item) is Row:
            rid = item.data.get(id_field)
            prev = previous.get(str(rid)) if rid is not None else None
            if prev is not None and prev.get("status") == "scored" and prev.get("line") == item.line:
                yield Reused(item.line, {**prev, "reused": True}, item.data)
                continue
        yield item


# ---------------------------------------------------------------------------------------------------------------
# scoring a chunk (here or in a worker process)

_DUMPS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


class _Plan(NamedTuple):
    """What a chunk's scorer does besides scoring: ``fold`` it into a partial (``keep``: with its entries), make
    the ``entries`` for the per-example sink, ``serialize`` it for the store."""

    fold: bool
    keep: bool
    entries: bool
    serialize: bool
    record: bool = False  # there is a recorder
    entries_json: bool = False  # the sink takes each entry's JSON (bytes), not a dict
    all_cases: bool = False  # every case with an id is a per_example entry (Scorer.per_example_from_cases "all")
    lines: bool = False  # the entries' JSON goes back joined, one body a chunk (run's on_example_lines)
    bulk: bool = False  # serialized, the scored cases go to Recorder.record_lines (blocks), the others as keys


class _Chunk(NamedTuple):
    """A scored chunk. Folded: ``partial``, ``n_rows``, ``n_scored`` and ``scored_ids`` (the JSON of the scored ids,
    comma-joined), ``entries`` (when asked), ``to_record`` (the records to record one by one, when ``stored`` is
    None). Not folded: ``records`` (all of them, in order). ``stored``: ``(keys, newline-joined JSON)`` for
    ``Recorder.record_serialized`` when every row was a new case and serializing was asked; with the plan's
    ``bulk``, a list of segments in order instead, each ``(True, the ids' JSON comma-joined, the records' JSON
    newline-joined, n)`` for ``Recorder.record_lines`` (scored cases with a string id) or ``(False, keys, the JSON
    newline-joined, n)`` for ``Recorder.record_serialized`` (the others). ``lines``: the
    entries' JSON as one body, each followed by a newline, and their number (instead of ``entries``, when the plan
    says ``lines``)."""

    records: list[dict[str, Any]] | None
    partial: Any
    n_rows: int
    n_scored: int
    scored_ids: bytes
    entries: list[dict[str, Any]] | None
    to_record: list[Mapping[str, Any]] | None
    stored: Any
    lines: tuple[bytes, int] | None = None


#: The start of a scored record's JSON when ``status`` is its first member (token F1's records, the default).
_SCORED = b'{"status":"scored",'


def _score_chunk(scorer: Scorer, config: Mapping[str, Any], plan: _Plan, items: Iterable[Any], sink: Any = None,
                 record_now: Any = None, block: tuple[bytes, int] | None = None, kernel: Any = None) -> _Chunk:
    """Score one chunk of items (here or in a worker process) as *plan* says. Folded, the records are taken one
    at a time as ``score_batch`` yields them and dropped (nothing per row outlives the chunk but bytes), so the
    garbage collector has no young containers to promote. In this process the entries go to *sink* and the cases
    to *record_now* (``Recorder.record``) at once: a case is recorded as soon as it is scored, so an interrupt
    loses only the one in flight.

    With a *kernel* (:func:`_line_kernel`) and the chunk's *block* (its bytes and the number of its first line, what
    *items* decodes: :func:`_span_blocks`), the plain lines are scored by the kernel in stretches (:class:`Stretch`: no record is
    made for them) and every other line by ``score_batch`` as before, in order; what the chunk gives back is the
    same to the byte."""
    if not plan.fold:
        records = list(scorer.score_batch(items, config))
        stored = _serialized(scorer, records) if plan.serialize else None
        return _Chunk(records, None, 0, 0, b"", None, None, None if stored is None else (stored[0], stored[1]))

    part = scorer.new_partial(config, keep_cases=plan.keep)
    add = part.add
    example = scorer.example_entry
    stored_form = scorer.case_record
    entries: list[Any] | None = [] if plan.entries else None
    put = sink if sink is not None else (entries.append if entries is not None else None)
    # entries as JSON, cut from the record's own JSON when an entry is the record without its leading status
    as_json = plan.entries_json and _entries_are_records(scorer)
    keys: list[tuple[Any, ...]] | None = [] if plan.serialize else None
    parts: list[bytes] = []
    # plan.bulk: the serialized cases as segments of one kind each, in order (see _Chunk.stored)
    bulk = plan.bulk and keys is not None
    segments: list[tuple[bool, list[Any], list[bytes], list[int]]] = []
    in_block: bool | None = None  # the kind of the last segment (None: no segment yet)
    seg_keys: list[Any] = []
    seg_parts: list[bytes] = []
    seg_more = [0]  # cases of the segment beyond len(seg_parts) (a kernel's stretch is one part of many cases)
    scored_json: list[bytes] = []  # the scored ids' JSON before those in `scored` (a kernel's stretches)
    n_scored = 0
    more_entries = 0  # entries beyond len(entries) (a stretch's body is one item)
    to_record: list[Mapping[str, Any]] = []  # after the serialized prefix: recorded one by one (Recorder.record says why)
    scored: list[Any] = []  # the scored ids (their JSON, comma-joined, is one orjson call at the end)
    dumps = orjson.dumps
    all_cases, record = plan.all_cases, plan.record
    same_form = type(scorer).case_record is Scorer.case_record  # the stored form of a record is the record
    n = 0
    if kernel is not None and block is not None:
        stream: Iterable[Any] = kernel_records(scorer, config, block, kernel,
                                                (1 if put is not None else 0) | (2 if bulk else 0))
    else:
        stream = scorer.score_batch(items, config)
    for rec in stream:
        if rec.__class__ is Stretch:  # plain lines the kernel scored: no record, their JSON and sums as they are
            k = rec.n
            n += k
            cast(Any, part).add_lines(k, rec.sums)  # (a scorer with line_kernel has a partial with add_lines)
            if scored:
                scored_json.append(dumps(scored)[1:-1])
                n_scored += len(scored)
                scored.clear()
            scored_json.append(rec.ids)
            n_scored += k
            if bulk:
                if in_block is not True:
                    in_block = True
                    seg_keys, seg_parts, seg_more = [], [], [0]
                    segments.append((True, seg_keys, seg_parts, seg_more))
                seg_keys.append(rec.ids)
                seg_parts.append(rec.records)
                seg_more[0] += k - 1
            if put is not None:
                if plan.lines and sink is None:
                    put(memoryview(rec.body)[:-1])  # (joined below: no copy of the body here)
                    more_entries += k - 1
                else:
                    for one in rec.body.split(b"\n")[:-1]:
                        put(one)
            continue
        n += 1
        add(rec)
        status = rec.get("status")
        rid = rec.get("id")
        data = None
        if rid is not None and (status == "scored" or (all_cases and status == "unscored")):
            scored.append(rid)
        if record and rid is not None:
            case = rec if same_form else stored_form(rec)
            if record_now is not None:
                record_now(case)
            elif keys is not None and not to_record:
                as_row = True  # (not taken into a block below)
                if bulk and rid.__class__ is str and (status == "scored" if same_form else
                                                      (case.get("id") is rid and case.get("status") == "scored")):
                    # A block holds scored cases whose columns are read back from their JSON: the id (a string, the
                    # key's), the status, and a score that is finite (orjson writes ±inf and NaN as null: JSON
                    # without null has none). An id with a comma is not one (its JSON has the comma too):
                    # record_lines counts a block's cases by the commas between their ids. Any other case goes by
                    # the general path below.
                    try:
                        data = dumps(case, option=_DUMPS)
                    except TypeError:
                        data = None
                    if data is not None and b"null" not in data and b"\n" not in data and "," not in rid:
                        if in_block is not True:
                            in_block = True
                            seg_keys, seg_parts, seg_more = [], [], [0]
                            segments.append((True, seg_keys, seg_parts, seg_more))
                        seg_keys.append(rid)
                        seg_parts.append(data)
                        as_row = False
                if as_row:
                    columns = case_columns(case)
                    try:
                        data = dumps(case, option=_DUMPS)
                    except TypeError:
                        data = None
                    if data is None or b"\n" in data or (columns[2] is not None and not (-1e308 < columns[2] < 1e308)):
                        to_record.append(case)  # (not JSON, a newline, ±inf: Recorder.record's own rules)
                        data = None
                    elif bulk:  # recorded as a row, in its place among the blocks (record_serialized)
                        if in_block is not False:
                            in_block = False
                            seg_keys, seg_parts, seg_more = [], [], [0]
                            segments.append((False, seg_keys, seg_parts, seg_more))
                        seg_keys.append((rid if rid.__class__ is str else str(rid), *columns))
                        seg_parts.append(data)
                    else:
                        keys.append((rid if rid.__class__ is str else str(rid), *columns))
                        parts.append(data)
            else:
                to_record.append(case)
        if put is not None:
            if as_json:
                if status == "scored":
                    if data is None:
                        data = dumps(rec, option=_DUMPS)
                    put(b"{" + data[19:] if data.startswith(_SCORED) else dumps(example(rec), option=_DUMPS))
            else:
                entry = example(rec)
                if entry is not None:
                    put(dumps(entry, option=_DUMPS) if plan.entries_json else entry)
    # a block's ids as their JSON, comma-joined (one orjson call: an array's items are comma-separated, no spaces)
    # each segment: (True, its ids' JSON, its records' JSON, n) for record_lines, (False, keys, JSON, n) else
    stored = ([(True, _ids_json(k), p[0] if len(p) == 1 else b"\n".join(p), len(p) + m[0]) if b else (b, k, b"\n".join(p), len(p))
               for b, k, p, m in segments] or None) if bulk else ((keys, parts) if keys else None)
    if scored or not scored_json:
        scored_json.append(dumps(scored)[1:-1])
        n_scored += len(scored)
    scored_ids = scored_json[0] if len(scored_json) == 1 else b",".join(scored_json)
    if plan.lines and entries:  # one body for the chunk: this process writes it in one call
        return _Chunk(None, part, n, n_scored, scored_ids, None, to_record or None, stored,
                      (b"\n".join([*entries, b""]), len(entries) + more_entries))
    return _Chunk(None, part, n, n_scored, scored_ids, entries, to_record or None, stored)


class Stretch(NamedTuple):
    """Plain lines a scorer's line kernel scored in one call (:meth:`goldeval.freetext.scorer.TokenF1.line_kernel`),
    as :func:`kernel_records` yields them: ``n`` how many; ``body`` their entries' JSON, each followed by a newline
    (emit bit 1); ``records`` their store records' JSON, newline-separated (bit 2); ``ids`` their ids' JSON,
    comma-separated; ``sums`` the exact sums for the partial's ``add_lines``."""

    n: int
    body: bytes
    records: bytes
    ids: bytes
    sums: Any


def kernel_records(scorer: Scorer, config: Mapping[str, Any], block: tuple[bytes, int], kernel: Any,
                    emit: int) -> Iterator[Any]:
    """The records of the lines of *block* in order: a :class:`Stretch` for each run of lines the kernel scores
    (blank lines skipped), and the records ``score_batch`` makes of each line it leaves (that line's bytes, decoded
    as every line is: :func:`goldeval.io.reading.decode_line`, so a failing line fails with its own line number).
    What a local worker and a Spark fold task (:func:`goldeval.engines.spark.fold_path`) both read a range with.

    Args:
        scorer: A scorer with a line kernel (e.g. :class:`goldeval.freetext.scorer.TokenF1`).
        config: What ``scorer.configure`` returned.
        block: ``(bytes of whole lines, number of the first line)``, a byte-order mark already removed.
        kernel: ``scorer.line_kernel(config)`` (not ``None``).
        emit: The kernel's bit mask: 1 the entries' JSON (``Stretch.body``), 2 the store records
            (``Stretch.records``); 0 for neither (the ids and sums always come).

    Only for a file with no repeated id (a folded chunk): ``score_batch`` sees these lines one at a time.

    Example (with the C build): line 1 is plain, line 2 blank, line 3 not JSON (left to ``score_batch``)::

        >>> from goldeval.freetext.scorer import TokenF1
        >>> sc = TokenF1(); cfg = sc.configure(source="x")
        >>> rows = b'{"id":"a","prediction":"x y","reference":"x"}\\n\\n{bad\\n'
        >>> out = list(kernel_records(sc, cfg, (rows, 1), sc.line_kernel(cfg), 0))  # doctest: +SKIP
        >>> out[0].n, out[0].ids, out[1]["line"], out[1]["status"]  # doctest: +SKIP
        (1, b'"a"', 3, 'unscored')
    """
    src = config.get("source") or "rows"
    lenient = scorer.lenient_json
    data, line = block
    pos, total = 0, len(data)
    while pos < total:
        pos, line, k, body, records, ids, sums = kernel(data, pos, line, emit)
        if k:
            yield Stretch(k, body, records, ids, sums)
        if pos < total:  # a line left to Python (not blank: the kernel skips those)
            end = data.find(b"\n", pos) + 1 or total
            yield from scorer.score_batch((decode_line(data[pos:end], line, src, lenient=lenient),), config)
            pos, line = end, line + 1


def _ids_json(keys: list[Any]) -> bytes:
    """The JSON of a block's ids, comma-separated: *keys* holds ids (``str``) and a stretch's ids already as JSON
    (``bytes``), in order."""
    if not any(k.__class__ is bytes for k in keys):
        return orjson.dumps(keys)[1:-1]
    out: list[bytes] = []
    run: list[Any] = []
    for k in keys:
        if k.__class__ is bytes:
            if run:
                out.append(orjson.dumps(run)[1:-1])
                run = []
            out.append(k)
        else:
            run.append(k)
    if run:
        out.append(orjson.dumps(run)[1:-1])
    return b",".join(out)


def _line_kernel(scorer: Scorer, config: Mapping[str, Any], plan: _Plan) -> Any:
    """The scorer's compiled line kernel (``line_kernel(config)``, e.g. token F1's) when this plan can use it: a
    folded chunk whose entries are not kept, go to a sink as JSON (or nowhere) and are the records without
    ``status``, and whose cases (if recorded) go to the store in blocks as the records themselves; else ``None``."""
    make = getattr(scorer, "line_kernel", None)
    if make is None or not plan.fold or plan.keep or plan.all_cases:
        return None
    if plan.entries and not (plan.entries_json and _entries_are_records(scorer)):
        return None
    if plan.record and not (plan.bulk and plan.serialize):
        return None
    if type(scorer).case_record is not Scorer.case_record:
        return None
    return make(config)


def _entries_are_records(scorer: Scorer) -> bool:
    """Whether the scorer's entries are its scored records without ``status`` (the default :meth:`Scorer.example_entry`)."""
    return type(scorer).example_entry is Scorer.example_entry and scorer.per_example_from_cases == "scored"


def _is_entry_case(rec: Mapping[str, Any], all_cases: bool) -> bool:
    """Whether *rec* is recorded as a case that is also a ``per_example`` entry (the ids the store checks)."""
    if all_cases:
        return rec.get("id") is not None and "duplicate_of" not in rec and rec.get("status") in ("scored", "unscored")
    return rec.get("status") == "scored"


def _serialized(scorer: Scorer, records: list[dict[str, Any]]) -> Any:
    """The run-store form of a chunk's records when every one is a new case with an id: ``(keys, [JSON, ...])``
    for ``Recorder.record_serialized`` (what ``Recorder.record`` would store for each), else ``None``."""

    if not records:
        return None
    keys, parts = [], []
    dumps = orjson.dumps
    stored_form = scorer.case_record
    for rec in records:
        rid = rec.get("id")
        if rid is None or "duplicate_of" in rec or "reused" in rec or rec.get("status") not in ("scored", "unscored"):
            return None
        case = stored_form(rec)
        columns = case_columns(case)
        if columns[2] is not None and not (-1e308 < columns[2] < 1e308):  # ±inf / NaN: Recorder.record's own rule
            return None
        try:
            data = dumps(case, option=_DUMPS)
        except TypeError:  # not writable as JSON: recorded row by row, where Recorder.record says why
            return None
        if b"\n" in data:
            return None
        keys.append((rid if rid.__class__ is str else str(rid), *columns))
        parts.append(data)
    return keys, parts


_W: dict[str, Any] = {}


def _pool_init(scorer: Scorer, config: Mapping[str, Any], plan: _Plan, owner: Any = None) -> None:
    """Initializer of a worker *process* (never called in the main process: it would lose Ctrl-C there)."""

    _watch(owner)
    # Ctrl-C and SIGTERM are the main process's to handle (it stops the pool and exits 130 / 143); a worker ends
    # with the pool. (A SIGTERM sent to the whole process group killed the workers and broke the pool.)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _W.update(scorer=scorer, config=config, plan=plan, src=config.get("source") or "rows")


def _pool_chunk(span: Span) -> _Chunk:
    """In a worker: read, decode and score the lines of one byte range of the file."""
    # (never with a line kernel: where one applies, run scores in threads of its own process, not in this pool)
    scorer, src = _W["scorer"], _W["src"]
    lenient = scorer.lenient_json
    return _score_chunk(scorer, _W["config"], _W["plan"],
                        (decode_line(raw, line, src, lenient=lenient) for line, raw in _range_lines(span)))


def _score_in_threads(job: _Job, plan: _Plan, blocks: Iterable[tuple[bytes, int]], workers: int, progress: Any,
                      kernel: Any) -> None:
    """Score *blocks* (:func:`_span_blocks`, read here) with the scorer's line *kernel* in *workers* threads of this
    process, taking the chunks here in order (a window of ``2 × workers`` in flight). The kernel reads, decodes,
    tokenizes and counts a chunk's lines without the GIL (``_fast.f1_lines``' first phase), so the threads score at
    once; each chunk is the one the in-process path makes (:func:`_score_chunk`), its entries kept for
    :meth:`_Job.take` (no sink from a thread). An interrupt cancels the chunks not started and waits for those
    running (milliseconds each)."""
    scorer, config = job.scorer, job.config

    def one(block: tuple[bytes, int]) -> _Chunk:
        return _score_chunk(scorer, config, plan, (), block=block, kernel=kernel)

    window: deque[Future[_Chunk]] = deque()
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="goldeval-score")
    try:
        it = iter(blocks)
        exhausted = False
        while True:
            while not exhausted and len(window) < 2 * workers:
                block = next(it, None)
                if block is None:
                    exhausted = True
                else:
                    window.append(pool.submit(one, block))
            if not window:
                break
            done = window.popleft().result()
            job.take(done)
            if progress is not None:
                progress(done.n_rows)
    finally:
        for fut in window:
            fut.cancel()
        pool.shutdown(wait=True)


def _score_in_pool(job: _Job, plan: _Plan, chunks: Iterable[Span], workers: int, progress: Any) -> None:
    ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
    owner = _arm(ctx)
    window: list[Future[_Chunk]] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_pool_init,
                             initargs=(job.scorer, dict(job.config), plan, owner)) as pool:
        it = iter(chunks)
        exhausted = False
        while True:
            while not exhausted and len(window) < 2 * workers:
                try:
                    window.append(pool.submit(_pool_chunk, next(it)))
                except StopIteration:
                    exhausted = True
            if not window:
                break
            done = window.pop(0).result()
            job.take(done)
            if progress is not None:
                progress(done.n_rows if done.records is None else len(done.records))


def _arm(ctx: Any) -> Any:
    """No worker, forkserver or resource tracker outlives a kill -9 of this process (:mod:`goldeval.lifeline`);
    returns what a worker watches (:func:`goldeval.lifeline.owner`)."""

    lifeline.arm_forkserver(ctx)
    return lifeline.owner()


def _watch(owner: Any) -> None:
    """In a worker: end as soon as the scoring process *owner* has ended, e.g. killed with ``kill -9`` (the
    worker's parent is the forkserver, which does not tell it)."""
    if owner is not None:

        watch(owner)


# ---------------------------------------------------------------------------------------------------------------
# taking the chunks, in order


class _Job:
    """The main process's side: repeated ids, the partial, the per-example sink, the recorder."""

    def __init__(self, scorer: Scorer, config: Mapping[str, Any], src: str, id_field: str, recorder: Any,
                 previous: Mapping[str, Any], ids: IdIndex | None, keep: bool, on_example: Any, *, as_json: bool = False,
                 on_lines: Callable[[bytes, int], None] | None = None, blocks: bool = False) -> None:
        self.scorer, self.config, self.src, self.id_field = scorer, config, src, id_field
        self.recorder, self.previous, self.ids = recorder, previous, ids
        self.partial = scorer.new_partial(config, keep_cases=keep)
        self.partial_rows = 0
        self.on_example = on_example
        self.as_json = as_json
        self.on_lines = on_lines
        self.n_scored = 0
        #: sha256 of the JSON array of the scored ids, in order (what the store checks its cases against)
        self.ids_hasher = hashlib.sha256(b"[")
        #: serialize and bulk (below) as they are for the same command with nothing to reuse: a resumed run's
        #: are False, and the worker count it records is the one the uninterrupted run chose with these (run)
        self.fresh_serialize = hasattr(recorder, "record_serialized")
        self.fresh_bulk = blocks and self.fresh_serialize and hasattr(recorder, "record_lines")
        self.serialize = not previous and self.fresh_serialize
        #: A new run whose recorder takes records in bulk (Recorder.record_lines): a folded chunk's scored cases
        #: reach the store as compressed blocks, read back as the cases rows record_serialized would have stored.
        #: (Folded only with no repeated id and nothing to reuse: each id is then recorded once, as blocks need.)
        self.bulk = not previous and self.fresh_bulk
        self.all_cases = scorer.per_example_from_cases == "all"
        mode = scorer.per_example_from_cases
        # (a kept per_example list is checked by the store against its scored cases only: "all" needs the marker)
        self.entry_keys = scorer.per_example_keys if mode is None else None
        if recorder is not None and hasattr(recorder, "per_example_in_cases") and (
                mode == "scored" or (mode == "all" and not keep) or (self.entry_keys is not None and not keep)):
            # Every per_example entry is recorded as a case, in order (the scored ones with their status, or every
            # one as it is: Scorer.per_example_from_cases, or the scored ones' values of Scorer.per_example_keys when
            # streamed), so the store can rebuild per_example from its cases instead of storing it twice.
            recorder.per_example_in_cases = True

    def take(self, chunk: _Chunk) -> None:
        """Take a chunk scored in a worker (or folded here): merge its partial, stream its entries, record it."""
        if chunk.records is not None:
            self.take_records(chunk.records, chunk.stored)
            return
        self.partial.merge(chunk.partial)
        self.partial_rows += chunk.n_rows
        if chunk.n_scored:
            self.ids_hasher.update((b"," if self.n_scored else b"") + chunk.scored_ids)
            self.n_scored += chunk.n_scored
        if chunk.lines is not None and self.on_lines is not None:
            self.on_lines(*chunk.lines)
        if chunk.entries:
            on_example = self.on_example
            for entry in chunk.entries:
                on_example(entry)
        recorder = self.recorder
        if recorder is not None:
            if chunk.stored is None:
                pass
            elif chunk.stored.__class__ is list:  # segments (_Plan.bulk): blocks of scored cases, and the others
                for block, keys, body, count in chunk.stored:
                    if block:
                        recorder.record_lines(body, count, keys)
                    else:
                        recorder.record_serialized(keys, body)
            else:
                keys, parts = chunk.stored
                recorder.record_serialized(keys, b"\n".join(parts))
            for case in chunk.to_record or ():  # (already in their stored form)
                recorder.record(case)

    def take_records(self, records: Iterable[dict[str, Any]], stored: Any) -> None:
        """Take records one by one, in order: the repeated-id check, the partial, the entry, the store.

        *stored* (a worker's serialized chunk, ``None`` else): the cases are recorded after the last record, in one
        call when every record is the one the worker serialized. Without it each case is recorded as soon as it is
        taken; *records* may then be ``score_batch`` itself, so a case is in the store as soon as it is scored.
        """
        ids, src, add, recorder = self.ids, self.src, self.partial.add, self.recorder
        update, dumps = self.ids_hasher.update, orjson.dumps
        example, on_example, all_cases = self.scorer.example_entry, self.on_example, self.all_cases
        stored_form = self.scorer.case_record
        clean = True  # every record of the chunk is the one the worker serialized
        later = stored is not None
        to_record: list[dict[str, Any]] = []
        for rec in records:
            rid = rec.get("id")
            reused = "reused" in rec
            if reused:  # taken from the store (a resumed run): folded in, not recorded again
                rec = {k: v for k, v in rec.items() if k != "reused"}
                clean = False
            if ids is not None and rid is not None and "duplicate_of" not in rec:
                first = ids.first_line(rid, rec["line"])
                if first is not None:
                    rec = duplicate_record(src, rec["line"], rid, first, like=rec)
                    clean = False
            self.partial_rows += 1
            add(rec)
            if _is_entry_case(rec, all_cases):
                update((b"," if self.n_scored else b"") + dumps(rid))
                self.n_scored += 1
            if on_example is not None:
                entry = example(rec)
                if entry is not None:
                    on_example(dumps(entry, option=_DUMPS) if self.as_json else entry)
            if recorder is not None and rid is not None and not reused and "duplicate_of" not in rec:
                if later:
                    to_record.append(rec)
                else:
                    recorder.record(stored_form(rec))
        if not to_record:
            return
        if clean:
            recorder.record_serialized(stored[0], b"\n".join(stored[1]))
            return
        for rec in to_record:
            recorder.record(stored_form(rec))

    def streamed_marker(self) -> dict[str, Any]:
        """What stands for ``per_example`` when the entries were streamed, not kept: their count and the sha256
        of the JSON array of the scored ids (the run store checks its cases against it)."""
        h = self.ids_hasher.copy()
        h.update(b"]")
        marker: dict[str, Any] = {"$streamed": True, "n": self.n_scored, "ids_sha256": h.hexdigest()}
        if self.all_cases:  # every recorded case is an entry, as recorded
            marker.update(status=None, drop_keys=[])
        elif self.entry_keys is not None:  # an entry is these keys of a scored case
            marker["keep_keys"] = list(self.entry_keys)
        return marker
