"""The local engine: any :class:`~goldeval.scorers.Scorer` over a file or rows, in one process or on every core,
streamed, recorded into the run store as it goes. ``goldeval score`` (every scorer, every input format),
:func:`goldeval.freetext.score_file` and ``goldeval judge`` run through :func:`run`; Spark runs the same
``score_batch`` / partials in :mod:`goldeval.spark`.

What it does, in order:

1. **First pass** over a file (bounded memory): its line count, its sha256, and the hashes of the ids that occur
   on more than one row (:mod:`goldeval.ids`; the scorer's :meth:`~goldeval.scorers.Scorer.id_of` is the id rule).
   Rows given in memory skip it (their ids are kept instead).
2. **Scoring** in chunks of 500 rows (or 2 MiB): each chunk is decoded (:func:`goldeval.io.decode_line`, the
   scorer's ``lenient_json``) and scored by ``score_batch``, in this process or, for JSONL with ``workers`` > 1, in a
   pool of processes (a window of ``2 × workers`` chunks in flight, results taken in order). A worker also
   serializes a chunk's records for the store when every row of it is a new scored case, so that work stays off
   this process, which every record passes through.
3. **Per record**, in input order: a row whose id repeats an earlier row's becomes unscored
   (:func:`~goldeval.scorers.duplicate_record`); the record is folded into the scorer's partial
   (:meth:`~goldeval.scorers.Scorer.new_partial`, ``keep_cases`` or not), its ``per_example`` entry goes to
   ``on_example`` (e.g. the ``--out`` writer), and it is recorded (rows without an id, and repeated ids, are listed
   under failures only).
4. **Resume**: a case the recorder's run already holds, scored at the same line, is taken from the store, not
   scored again (then the chunks are scored in this process: the stored cases stay in one place).
5. :meth:`~goldeval.scorers.Scorer.finish`, ``input`` added, ``recorder.finish``.

Memory does not grow with the rows unless ``keep_cases`` is set: partials hold counts and exact sums, ids are
checked against the first pass's few repeated hashes, each record is dropped once it is written.
Ctrl-C: the pool's workers ignore SIGINT; the main process stops the pool and the ``KeyboardInterrupt`` goes up to the
CLI (exit 130), leaving the recorded cases committed and the run resumable.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from goldeval.errors import InputError
from goldeval.ids import IdIndex, repeated_hashes, scan_jsonl_ids
from goldeval.io import RowError, check_input_file, decode_line, is_parquet, jsonl_lines
from goldeval.scorers import Reused, Scorer, duplicate_record, numbered, with_extra
from goldeval.streams import display_name

__all__ = ["PARALLEL_MIN_ROWS", "run"]

#: Files with at least this many rows are scored on every core when ``workers`` is ``None``.
PARALLEL_MIN_ROWS = 10_000
_CHUNK_ROWS = 500
_CHUNK_BYTES = 2 << 20  # a chunk also ends at 2 MiB, so memory stays flat when rows are large


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
    keep_cases: bool = True,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Score *source* with *scorer*, record each case, aggregate: the results dict of :meth:`Scorer.finish`.

    Args:
        scorer: Any :class:`~goldeval.scorers.Scorer`.
        source: A file's path (JSONL, CSV or Parquet by extension, read with :func:`goldeval.io.read_rows`'s rules),
            or rows in memory (:class:`~goldeval.io.Row` / :class:`~goldeval.io.RowError` items or dicts, numbered
            from 1).
        config: What ``scorer.configure`` returned (its ``source`` names the input in messages).
        workers: Processes to score a JSONL file with (default 1). ``None``: one below :data:`PARALLEL_MIN_ROWS`
            rows, else every core. Capped at the number of cores. CSV, Parquet, rows in memory and a resumed run
            are scored in this process. More than one worker starts processes, so a script that asks for them
            needs the usual ``if __name__ == "__main__":`` guard (Python's multiprocessing rule); the scorer must
            pickle.
        recorder: Run-store recorder (``previous()``, ``record(case)``, ``finish(results)``; ``record_serialized``
            when it has one) or ``None``.
        progress: Called with the number of rows just finished (for a progress bar).
        on_total: Called once with the number of lines of a file before scoring starts.
        on_example: Called with each ``per_example`` entry (:meth:`Scorer.example_entry`), in order, as soon as
            its row is scored; the entry must not be changed.
        keep_cases: Keep every entry in ``results["per_example"]`` (default). False: that key holds
            ``{"$streamed": true, "n": int, "ids_sha256": str}`` instead (the number of entries and the sha256 of the
            JSON array of the scored ids, in order, which the run store checks its cases against).
        extra: Entries put into the results before ``aggregate``; a file's ``input`` (``path``, ``sha256``,
            ``workers``) is added when *extra* has none.

    Returns:
        The scorer's results, ``aggregate["elapsed_sec"]`` (when the scorer has one) the seconds of the scoring
        pass; also handed to ``recorder.finish``.

    Raises:
        InputError: a missing, empty or (as a whole) non-UTF-8 file, a file without rows, a bad ``workers``, and
            whatever :meth:`Scorer.finish` raises.
    """
    src = config.get("source") or "rows"
    id_field = config.get("id_field") or "id"
    info: dict[str, Any] | None = None
    if isinstance(source, (str, os.PathLike)):
        path = check_input_file(source)
        jsonl = not (str(path).lower().endswith(".csv") or is_parquet(path))
        total, sha256, repeated = _first_pass(path, scorer, id_field, src, jsonl)
        if on_total is not None:
            on_total(total)
        workers = _workers(workers, total) if jsonl else 1
        info = {"path": display_name(path), "sha256": sha256}
        chunks: Iterable[list[Any]] = _line_chunks(path) if jsonl else _item_chunks(_read(path, scorer))
        raw_lines = jsonl
    else:
        repeated, workers, raw_lines = None, 1, False
        chunks = _item_chunks(numbered(source, src))
    previous = recorder.previous() if recorder is not None else {}
    if previous:
        workers = 1
    if info is not None:
        info["workers"] = workers
    job = _Job(scorer, config, src, id_field, recorder, previous, IdIndex(repeated), keep_cases, on_example)
    t0 = time.perf_counter()
    if raw_lines and workers > 1:
        _score_in_pool(job, chunks, workers, progress)
    else:
        for chunk in chunks:
            items = [decode_line(raw, line, src, lenient=scorer.lenient_json) for line, raw in chunk] if raw_lines else chunk
            if previous:
                job.take(list(scorer.score_batch(_reusing(items, previous, id_field), config)), None)
            else:
                job.take(*_score_items(scorer, config, items, job.serialize))
            if progress is not None:
                progress(len(chunk))
    elapsed = time.perf_counter() - t0
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
    if recorder is not None:
        recorder.finish(results)
    return results


# ---------------------------------------------------------------------------------------------------------------
# reading


def _workers(workers: int | None, total: int) -> int:
    cores = os.cpu_count() or 1
    if workers is None:
        workers = cores if total >= PARALLEL_MIN_ROWS else 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers: expected a whole number >= 1 (or None for automatic), got {workers!r}.")
    return min(workers, cores)


def _read(path: Path, scorer: Scorer) -> Iterator[Any]:
    from goldeval.io import read_rows

    return read_rows(path, lenient=scorer.lenient_json)


def _first_pass(path: Path, scorer: Scorer, id_field: str, src: str, jsonl: bool) -> tuple[int, str, set[int]]:
    """One read of *path*: its line (row) count, its sha256, and the hashes of the ids on more than one row.

    Raises:
        InputError: no line of a JSONL file is UTF-8 (the file is in another encoding; one bad line fails alone).
    """
    if not jsonl:
        from goldeval.io import Row, file_sha256

        n = 0

        def ids() -> Iterator[str | None]:
            nonlocal n
            for item in _read(path, scorer):
                n += 1
                yield scorer.id_of(item.data.get(id_field)) if type(item) is Row else None

        repeated = repeated_hashes(ids(), max(1, path.stat().st_size // 48))
        return n, file_sha256(path), repeated
    hasher = hashlib.sha256()
    state: dict[str, Any] = {"not_utf8": 0, "first_bad": None}

    def slow(line: int, raw: bytes) -> dict[str, Any] | None:
        item = decode_line(raw, line, src, lenient=scorer.lenient_json)  # NaN, lone surrogates, non-UTF-8, too deep
        if type(item) is RowError:
            if "is not UTF-8" in item.error:
                state["not_utf8"] += 1
                if state["first_bad"] is None:
                    state["first_bad"] = InputError(item.error.replace("the line is not UTF-8", "the file is not UTF-8", 1)
                                                    + " No line of the file is UTF-8.")
            return None
        return item.data

    n_lines, n_rows, repeated = scan_jsonl_ids(path, id_field, scorer.id_of, hasher=hasher, slow_decode=slow)
    if n_rows and state["not_utf8"] == n_rows and state["first_bad"] is not None:
        raise state["first_bad"]
    return n_lines, hasher.hexdigest(), repeated


def _line_chunks(path: Path) -> Iterator[list[tuple[int, bytes]]]:
    """Non-blank lines of *path* as chunks of ``(line number, bytes)``."""
    chunk: list[tuple[int, bytes]] = []
    size = 0
    for item in jsonl_lines(path):
        chunk.append(item)
        size += len(item[1])
        if len(chunk) >= _CHUNK_ROWS or size >= _CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


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
    from goldeval.io import Row

    for item in items:
        if type(item) is Row:
            rid = item.data.get(id_field)
            prev = previous.get(str(rid)) if rid is not None else None
            if prev is not None and prev.get("status") == "scored" and prev.get("line") == item.line:
                yield Reused(item.line, {**prev, "reused": True})
                continue
        yield item


# ---------------------------------------------------------------------------------------------------------------
# scoring a chunk (here or in a worker process)

_DUMPS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _score_items(scorer: Scorer, config: Mapping[str, Any], items: list[Any], serialize: bool) -> tuple[list[dict[str, Any]], Any]:
    """The records of one chunk, and (``serialize``) the run-store form of all of them when every one is a new
    scored case with an id: ``(keys, newline-joined JSON)`` for ``Recorder.record_serialized``, else ``None``."""
    from goldeval.runs.store import case_columns

    records = list(scorer.score_batch(items, config))
    if not serialize or not records:
        return records, None
    keys, parts = [], []
    dumps = orjson.dumps
    for rec in records:
        rid = rec.get("id")
        if rec.get("status") != "scored" or rid is None or "duplicate_of" in rec or "reused" in rec:
            return records, None
        columns = case_columns(rec)
        if columns[2] is not None and not (-1e308 < columns[2] < 1e308):  # ±inf / NaN: Recorder.record's own rule
            return records, None
        try:
            data = dumps(rec, option=_DUMPS)
        except TypeError:  # not writable as JSON: recorded row by row, where Recorder.record says why
            return records, None
        if b"\n" in data:
            return records, None
        keys.append((rid if rid.__class__ is str else str(rid), *columns))
        parts.append(data)
    return records, (keys, b"\n".join(parts))


_W: dict[str, Any] = {}


def _pool_init(scorer: Scorer, config: Mapping[str, Any], serialize: bool) -> None:
    """Initializer of a worker *process* (never called in the main process: it would lose Ctrl-C there)."""
    import signal

    # Ctrl-C is the main process's to handle (it stops the pool and exits 130); a worker ends with the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _W.update(scorer=scorer, config=config, serialize=serialize, src=config.get("source") or "rows")


def _pool_chunk(chunk: list[tuple[int, bytes]]) -> tuple[list[dict[str, Any]], Any]:
    scorer, src = _W["scorer"], _W["src"]
    items = [decode_line(raw, line, src, lenient=scorer.lenient_json) for line, raw in chunk]
    return _score_items(scorer, _W["config"], items, _W["serialize"])


def _score_in_pool(job: _Job, chunks: Iterable[list[tuple[int, bytes]]], workers: int, progress: Any) -> None:
    import multiprocessing as mp

    ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
    window: list[Future[tuple[list[dict[str, Any]], Any]]] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_pool_init,
                             initargs=(job.scorer, dict(job.config), job.serialize)) as pool:
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
            records, stored = window.pop(0).result()
            job.take(records, stored)
            if progress is not None:
                progress(len(records))


# ---------------------------------------------------------------------------------------------------------------
# taking the records, in order


class _Job:
    """The main process's side: repeated ids, the partial, the per-example sink, the recorder."""

    def __init__(self, scorer: Scorer, config: Mapping[str, Any], src: str, id_field: str, recorder: Any,
                 previous: Mapping[str, Any], ids: IdIndex, keep: bool, on_example: Any) -> None:
        self.scorer, self.config, self.src, self.id_field = scorer, config, src, id_field
        self.recorder, self.previous, self.ids = recorder, previous, ids
        self.partial = scorer.new_partial(config, keep_cases=keep)
        self.partial_rows = 0
        self.on_example = on_example
        self.entries = on_example is not None
        self.n_scored = 0
        #: sha256 of the JSON array of the scored ids, in order (what the store checks its cases against)
        self.ids_hasher = hashlib.sha256(b"[")
        self.serialize = not previous and hasattr(recorder, "record_serialized")
        if recorder is not None and hasattr(recorder, "per_example_in_cases") and _entries_are_cases(scorer):
            # Every per_example entry is recorded as {"status": "scored", **entry}, in order, so the store can
            # rebuild per_example from its cases instead of storing it twice.
            recorder.per_example_in_cases = True

    def take(self, records: list[dict[str, Any]], stored: Any) -> None:
        ids, src, add, recorder = self.ids, self.src, self.partial.add, self.recorder
        update, dumps = self.ids_hasher.update, orjson.dumps
        clean = True  # every record of the chunk is the one the worker serialized
        to_record: list[dict[str, Any]] = []
        for i, rec in enumerate(records):
            rid = rec.get("id")
            reused = "reused" in rec
            if reused:  # taken from the store (a resumed run): folded in, not recorded again
                rec = records[i] = {k: v for k, v in rec.items() if k != "reused"}
                clean = False
            if rid is not None and "duplicate_of" not in rec:
                first = ids.first_line(rid, rec["line"])
                if first is not None:
                    rec = records[i] = duplicate_record(src, rec["line"], rid, first)
                    clean = False
            self.partial_rows += 1
            add(rec)
            if rec.get("status") == "scored":
                update((b"," if self.n_scored else b"") + dumps(rid))
                self.n_scored += 1
            if self.entries:
                entry = self.scorer.example_entry(rec)
                if entry is not None:
                    self.on_example(entry)
            if recorder is not None and rid is not None and not reused and "duplicate_of" not in rec:
                to_record.append(rec)
        if recorder is None or not to_record:
            return
        if stored is not None and clean:
            recorder.record_serialized(*stored)
            return
        for rec in to_record:
            recorder.record(rec)

    def streamed_marker(self) -> dict[str, Any]:
        """What stands for ``per_example`` when the entries were streamed, not kept: their count and the sha256
        of the JSON array of the scored ids (the run store checks its cases against it)."""
        h = self.ids_hasher.copy()
        h.update(b"]")
        return {"$streamed": True, "n": self.n_scored, "ids_sha256": h.hexdigest()}


def _entries_are_cases(scorer: Scorer) -> bool:
    """Whether the scorer's ``per_example`` entries are its scored records without ``status`` (the default
    :meth:`Scorer.example_entry`, or token F1's, which is that)."""
    from goldeval.freetext_score import TokenF1

    return isinstance(scorer, TokenF1) or type(scorer).example_entry is Scorer.example_entry
