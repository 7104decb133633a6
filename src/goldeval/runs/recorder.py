"""The Recorder a batch scorer writes its per-case results through, and how a run is started or resumed.

Protocol (what a batch scorer may rely on; ``recorder=None`` means nothing is recorded)::

    done = recorder.previous()      # {case id: record} already finished in this run: reuse them, do not redo
    recorder.record(case)           # once per finished case: {"id", "status": "scored"|"unscored"|"error", ...}
    recorder.finish(results)        # the whole results dict; may be called again (e.g. after gates): last wins

Writes are batched: the pending records are committed in one transaction every ``batch_size`` (200) cases or
every ``max_delay`` (0.5 s) since the last commit, whichever comes first, and on :meth:`Recorder.finish` /
:meth:`Recorder.close`. A process killed outright loses at most the records of the last, uncommitted batch; the
resumed run redoes exactly those cases, and the ``(run, case id)`` key makes a redone case replace its row.

Source: issue #5 ("Resume"); the protocol is the one in the project notes ("Run store hook").
"""

from __future__ import annotations

import hashlib
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import orjson

from goldeval.errors import InputError, StoreError, shorten
from goldeval.runs.store import RunMeta, RunStore, case_columns

__all__ = ["RecorderProtocol", "Recorder", "run_key", "dataset_hash", "start_run"]


class RecorderProtocol(Protocol):
    """What a batch scorer receives as ``recorder=``."""

    def previous(self) -> dict[str, dict[str, Any]]: ...

    def record(self, case: dict[str, Any]) -> None: ...

    def finish(self, results: dict[str, Any]) -> None: ...


def _canonical(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)


def dataset_hash(input_hashes: Mapping[str, str]) -> str:
    """sha256 over the input files' sha256 values, by role (``{"cases": ..., "predictions": ...}``)."""
    return hashlib.sha256(_canonical(dict(input_hashes))).hexdigest()


def run_key(*, scorer_name: str, scorer_version: str, input_hashes: Mapping[str, str], config: Mapping[str, Any], arm: str | None) -> str:
    """The key two invocations share when they are the same run: sha256 of the input files' hashes (by role),
    the resolved configuration (keys sorted), the scorer's name and version, and the arm name."""
    payload = {
        "scorer": scorer_name,
        "scorer_version": str(scorer_version),
        "inputs": dict(input_hashes),
        "config": dict(config),
        "arm": arm,
    }
    return hashlib.sha256(_canonical(payload)).hexdigest()


class Recorder:
    """Records one run's per-case results into a :class:`RunStore`, in batched transactions.

    Args:
        store: The open store.
        run_id: The run (already created or claimed, see :func:`start_run`).
        resumed: True when this run existed before (its finished cases are in :meth:`previous`).
        batch_size: Commit after this many pending records (default 200).
        max_delay: Commit when this many seconds passed since the last commit (default 0.5).
        clock: Monotonic clock in seconds (tests pass a fake one).
        background: Commit full batches on a writer thread (default True), so that SQLite's work (which releases
            the GIL) overlaps the scorer's; at most one batch waits for it. ``False`` commits in the caller.

    Notes:
        :meth:`record` keeps a shallow copy of the record until its batch is committed; do not change nested
        values of a recorded dict afterwards.
        What a killed process loses: the pending records, plus at most one full batch handed to the writer and
        not yet committed — all of them are redone by the resumed run, none is duplicated.
    """

    def __init__(
        self, store: RunStore, run_id: str, *, resumed: bool = False, batch_size: int = 200,
        max_delay: float = 0.5, clock: Callable[[], float] = time.monotonic, background: bool = True,
    ) -> None:
        if batch_size < 1:
            raise InputError(f"Recorder: batch_size must be ≥ 1, got {batch_size}.")
        self.store = store
        self.run_id = run_id
        self.resumed = resumed
        self.batch_size = batch_size
        self.max_delay = max_delay
        self._clock = clock
        self._pending: list[tuple[Any, ...]] = []
        self._last_commit = clock()
        self._seq = store.next_seq(run_id)
        self._previous: dict[str, dict[str, Any]] | None = None
        self.finished = False
        self.closed = False
        self.n_recorded = 0
        self.background = background
        self._queue: queue.Queue[list[tuple[Any, ...]] | None] = queue.Queue(maxsize=1)
        self._thread: threading.Thread | None = None
        self._writer_error: BaseException | None = None

    # -- the protocol ----------------------------------------------------------------------------------------
    def previous(self) -> dict[str, dict[str, Any]]:
        """case id → record already committed for this run before this process started (empty for a new run)."""
        if self._previous is None:
            self._previous = self.store.case_map(self.run_id) if self.resumed else {}
        return self._previous

    def record(self, case: dict[str, Any]) -> None:
        """Queue one finished case; commits the batch when it is full or ``max_delay`` has passed.

        Args:
            case: ``{"id": str, "status": "scored"|"unscored"|"error", ...the per-case result}``. A failed row
                without an id may give its ``line`` instead; it is recorded under ``"line:<n>"``.

        Raises:
            InputError: the record has neither an ``id`` nor a ``line``.
            StoreError: the commit failed.
        """
        if self.closed:
            self._check_open()
        cid = case.get("id")
        if cid is None:
            if case.get("line") is None:
                raise InputError(f"Recorder.record: a case record needs an 'id' (or a 'line' for a failed row), got {shorten(case)}.")
            cid = f"line:{case['line']}"
        pending = self._pending
        pending.append((cid, self._seq, dict(case)))
        self._seq += 1
        self.n_recorded += 1
        if len(pending) >= self.batch_size or self._clock() - self._last_commit >= self.max_delay:
            self._send()

    def finish(self, results: dict[str, Any]) -> None:
        """Commit what is pending, then store the whole results dict and mark the run ``finished``.

        May be called more than once (a command that evaluates gates after scoring stores the final dict); the
        last call wins.
        """
        self._check_open()
        self.flush()
        self.store.finish_run(self.run_id, results)
        self.finished = True

    # -- lifecycle -------------------------------------------------------------------------------------------
    def _send(self) -> None:
        """Hand the pending records to the writer (or commit them here when not ``background``)."""
        self._raise_writer_error()
        if self._pending:
            pending, self._pending = self._pending, []
            if not self.background:
                self.store.write_cases(self.run_id, _rows(pending))
            else:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._write_loop, name=f"goldeval-recorder-{self.run_id}", daemon=True)
                    self._thread.start()
                self._queue.put(pending)  # blocks while the writer is a batch behind
        self._last_commit = self._clock()

    def _write_loop(self) -> None:
        while True:
            batch = self._queue.get()
            try:
                if batch is None:
                    return
                if self._writer_error is None:
                    self.store.write_cases(self.run_id, _rows(batch))
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
        self._raise_writer_error()

    def _stop_writer(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def close(self, *, interrupted: bool = False) -> None:
        """Commit what is pending; a run that did not finish is marked ``interrupted`` (resumable)."""
        if self.closed:
            return
        try:
            self.flush()
        finally:
            self._stop_writer()
            self.closed = True
            if not self.finished:
                self.store.set_status(self.run_id, "interrupted")

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.close(interrupted=exc_type is not None)

    def _check_open(self) -> None:
        if self.closed:
            raise StoreError(f"Recorder for run {self.run_id}: already closed; start or resume the run again.")


_DUMPS_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def _rows(batch: list[tuple[Any, int, dict[str, Any]]]) -> list[tuple[Any, ...]]:
    """``(case id, seq, record)`` → the ``cases`` row tuples ``RunStore.write_cases`` takes."""
    dumps = orjson.dumps
    out = []
    for cid, seq, case in batch:
        out.append((str(cid), seq, *case_columns(case), dumps(case, option=_DUMPS_OPTIONS).decode()))
    return out


def start_run(
    store: RunStore,
    meta: RunMeta,
    *,
    resume: str | None = None,
    auto_resume: bool = True,
    batch_size: int = 200,
    max_delay: float = 0.5,
) -> Recorder:
    """Start a new run, or resume one, and return its :class:`Recorder`.

    Args:
        store: The open store.
        meta: The run's identity and versions (``meta.run_key`` decides what "the same run" is).
        resume: A run id (or unique prefix) to resume. Its key must equal ``meta.run_key``.
        auto_resume: With no ``resume``, resume the newest unfinished run with the same key (default True).
        batch_size, max_delay: See :class:`Recorder`.

    Raises:
        InputError: ``resume`` names a run made from other inputs, configuration, scorer version or arm (the
            message names which parts differ).
        StoreError: ``resume`` names no run of this store.
    """
    if resume is not None:
        run = store.get_run(resume, with_results=False)
        if run["run_key"] != meta.run_key:
            diffs = []
            if run["scorer_name"] != meta.scorer_name or run["scorer_version"] != meta.scorer_version:
                diffs.append(f"scorer {run['scorer_name']} {run['scorer_version']} vs {meta.scorer_name} {meta.scorer_version}")
            old_inputs = {k: v.get("sha256") for k, v in (run["inputs"] or {}).items()}
            new_inputs = {k: v.get("sha256") for k, v in meta.inputs.items()}
            if old_inputs != new_inputs:
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
        store.claim(run["id"])
        return Recorder(store, run["id"], resumed=True, batch_size=batch_size, max_delay=max_delay)
    if auto_resume:
        run = store.find_unfinished(meta.run_key)
        if run is not None:
            store.claim(run["id"])
            return Recorder(store, run["id"], resumed=True, batch_size=batch_size, max_delay=max_delay)
    run_id = store.create_run(meta)
    return Recorder(store, run_id, resumed=False, batch_size=batch_size, max_delay=max_delay)
