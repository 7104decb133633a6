"""DuckDB queries in a child process that can be bounded and killed.

DuckDB looks at an interrupt only between vectors of 2,048 rows, and its ``memory_limit`` covers its buffer manager,
not a vector's string heap: one call that builds a huge value (``repeat('y', 2000000000)``) runs to its end past any
time limit and allocates gigabytes. So a DuckDB file is opened, read-only, in a worker process of its own:

- the worker runs under an address-space limit (``RLIMIT_AS``, :data:`WORKER_ADDRESS_SPACE` by default): an
  allocation past it fails (DuckDB's "out of memory", Python's ``MemoryError``) or ends the worker, never the
  machine;
- the parent waits for each answer within the time limit; past it, it asks the worker to interrupt the query
  (``SIGUSR1``, which a thread of the worker turns into ``interrupt()``), and when no answer has come
  :data:`GRACE_S` later it kills the worker; a fresh one serves the next query;
- a worker that ends mid-query (its address space exhausted, killed, crashed) makes that query fail with the reason;
- the worker ignores SIGINT and SIGTERM (a Ctrl-C reaches the whole process group): the parent stops it and
  re-raises; the worker ends by itself when the parent has ended (:func:`goldeval.lifeline.watch`).

Rows come back pickled: every value DuckDB's Python API returns (``Decimal``, dates, ``bytes``, lists, dicts) as it
is. Overhead: about 0.2 ms a small query, and 0.34 s to start a worker (the interpreter and ``import duckdb``;
benchmarks/README.md "Memory of a judged query"). At most :data:`MAX_LIVE_WORKERS` workers are alive at once.

Source: DuckDB ``ClientContext::Interrupt`` (checked between vectors), ``setrlimit(2)`` (RLIMIT_AS), goldeval.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from goldeval import lifeline
from goldeval.answers.query_bounds import (
    DEFAULT_MAX_RESULT_BYTES,
    QueryError,
    fetch_bounded,
)
from goldeval.errors import InputError

__all__ = ["DuckDBError", "DuckDBWorker", "GRACE_S", "MAX_LIVE_WORKERS", "WORKER_ADDRESS_SPACE", "serve", "worker_address_space"]

#: The worker's address-space limit with the default size limit: 2 GiB. The worker maps 0.27 GB of address space at
#: rest (the interpreter, DuckDB and its two threads; 71 MB of it resident); the rest holds DuckDB's working memory
#: (its ``memory_limit``, 1 GB) and one result (at most the size limit, 256 MB of Python objects, and its pickled
#: copy). With the parent (the result once more and judging it, about 0.6 GB) a judged DuckDB query stays under
#: 3 GB: a 4 GB CI machine survives it.
WORKER_ADDRESS_SPACE = 2 * 1024**3
#: Seconds the worker has to answer after it was asked to interrupt a query past its time limit; then it is killed.
GRACE_S = 1.0
#: Most worker processes alive at once (about 100 MB resident each at rest): a run over a folder of DuckDB files keeps
#: every file open, and beyond this the worker that served a query least recently is ended (started again, 0.3 s,
#: when its file has a query again).
MAX_LIVE_WORKERS = 4
#: Live workers, least recently used first.
_LIVE: OrderedDict[int, DuckDBWorker] = OrderedDict()
_LIVE_LOCK = threading.Lock()
#: Seconds a worker may take to start (an interpreter, ``import duckdb``, opening the file) on a busy machine.
_START_S = 60.0
#: Seconds between two looks at the answer (signals are handled between them).
_POLL_S = 0.05
#: The worker's program. ``goldeval.answers`` is entered as a bare package: its ``__init__`` imports the judge (NumPy,
#: SciPy: 1.3 s and 0.7 GB of address space with OpenBLAS's threads), which the worker never uses; it needs
#: ``sql.py`` (the size limit) and this module only.
_PROGRAM = ("import sys, types, goldeval\n"
            "answers = types.ModuleType('goldeval.answers')\n"
            "answers.__path__ = [goldeval.__path__[0] + '/answers']\n"
            "sys.modules['goldeval.answers'] = answers\n"
            "from goldeval.answers.duckdb_worker import serve\n"
            "serve()\n")


def worker_address_space(max_result_bytes: int) -> int:
    """The worker's ``RLIMIT_AS``, bytes: :data:`WORKER_ADDRESS_SPACE`, plus twice what the size limit is raised
    above its 256 MB default (a larger result and its pickled copy).

    Args:
        max_result_bytes: The size limit of a query's result (``--max-result-mb``), bytes.
    """
    return WORKER_ADDRESS_SPACE + 2 * max(0, max_result_bytes - DEFAULT_MAX_RESULT_BYTES)


class DuckDBError(QueryError):
    """A query's own failure, as DuckDB in the worker reported it; :attr:`kind` is DuckDB's exception class name
    (``IOException`` …), so that the parent can tell an unreadable file from a wrong query."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class DuckDBWorker:
    """One DuckDB file opened read-only in a worker process (see the module docstring), and its queries.

    Args:
        path: The DuckDB file.
        config: ``duckdb.connect`` settings; the worker also sets ``lock_configuration``.
        address_space: The worker's ``RLIMIT_AS``, bytes.

    Raises:
        InputError: the file cannot be opened as DuckDB read-only, or the worker did not start.
    """

    def __init__(self, path: Path, config: dict[str, Any], *, address_space: int) -> None:
        self.path, self.config, self.address_space = path, dict(config), int(address_space)
        self._proc: subprocess.Popen[bytes] | None = None
        self._inbox: Connection | None = None  # answers from the worker
        self._outbox: Connection | None = None  # queries to the worker
        self._lock = threading.Lock()
        self._closed = False
        self._start()

    @property
    def pid(self) -> int | None:
        """The running worker's process id (``None`` between a killed worker and the next query)."""
        return self._proc.pid if self._proc is not None else None

    def _start(self) -> None:
        to_child, from_parent = os.pipe()[::-1]  # (write end, read end)
        from_child, to_parent = os.pipe()
        # The parent's import path; at most two malloc arenas (glibc's default is eight a core, each reserving 64 MB of
        # address space).
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "MALLOC_ARENA_MAX": "2"}
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _PROGRAM, str(from_parent), str(to_parent)],
                pass_fds=(from_parent, to_parent), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=env, close_fds=True)
        except OSError as exc:
            for fd in (to_child, from_parent, from_child, to_parent):
                os.close(fd)
            raise InputError(f"--db {self.path}: cannot start the DuckDB worker process ({exc}).") from None
        os.close(from_parent)
        os.close(to_parent)
        self._outbox = Connection(to_child, readable=False)
        self._inbox = Connection(from_child, writable=False)
        try:
            self._outbox.send((str(self.path), self.config, self.address_space, lifeline.owner()))
            answer = self._wait(time.monotonic() + _START_S, None)
        except BaseException:  # Ctrl-C / SIGTERM while it starts
            self._kill()
            raise
        if answer is None or answer[0] != "ready":
            self._kill()
            why = answer[2] if answer is not None else "the worker process did not start"
            raise InputError(f"--db {self.path}: cannot open as DuckDB read-only ({why}).")
        self._touch()

    def _touch(self) -> None:
        """Mark this worker the most recently used; end the least recently used ones past :data:`MAX_LIVE_WORKERS`
        (one busy in another thread is left alone)."""
        with _LIVE_LOCK:
            _LIVE[id(self)] = self
            _LIVE.move_to_end(id(self))
            idle = [w for w in _LIVE.values() if w is not self][:max(0, len(_LIVE) - MAX_LIVE_WORKERS)]
        for worker in idle:
            if worker._lock.acquire(blocking=False):
                try:
                    worker._stop()
                finally:
                    worker._lock.release()

    def query(self, sql: str, *, timeout_s: float, max_rows: int, max_result_bytes: int) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one query in the worker within the time, row, size and memory limits.

        Args:
            sql: The query (checked by the caller: one read-only statement).
            timeout_s: Seconds the query may run.
            max_rows: Most rows.
            max_result_bytes: Most bytes of Python objects (:func:`goldeval.answers.sql.fetch_bounded`).

        Returns:
            ``(columns, rows)``.

        Raises:
            QueryError: DuckDB failed the query, the query passed a limit, or it ended the worker (which is then
                started afresh for the next query).
        """
        with self._lock:
            if self._closed:
                raise QueryError(f"the DuckDB database {self.path} was closed; open it again to run a query.")
            if self._proc is None:
                try:
                    self._start()
                except InputError as exc:
                    raise QueryError(f"the DuckDB worker process could not be started again ({exc}).") from None
            else:
                self._touch()
            assert self._outbox is not None
            start = time.monotonic()
            try:
                self._outbox.send(("query", sql, max_rows, max_result_bytes))
                answer = self._wait(start + timeout_s, timeout_s)
            except BaseException:  # Ctrl-C / SIGTERM while waiting: stop the query, then stop the run
                self._kill()
                raise
            return self._answer(answer, timeout_s)

    def _wait(self, deadline: float, timeout_s: float | None) -> Any:
        """The worker's answer; past *deadline* it is asked to interrupt, and :data:`GRACE_S` later killed. ``None``
        when the worker ended (or was killed) without answering; ``("timeout",)`` when it was killed for time."""
        assert self._inbox is not None and self._proc is not None
        interrupted = False
        while True:
            try:
                if self._inbox.poll(_POLL_S):
                    answer = self._inbox.recv()
                    return ("timeout",) if interrupted and answer[0] == "error" else answer
            except (EOFError, OSError):
                return None
            now = time.monotonic()
            if now > deadline and timeout_s is not None:
                if not interrupted:
                    interrupted = True
                    self._signal(signal.SIGUSR1)
                    deadline = now + GRACE_S
                else:
                    self._kill()
                    return ("timeout",)
            elif now > deadline:
                return None

    def _answer(self, answer: Any, timeout_s: float) -> tuple[list[str], list[tuple[Any, ...]]]:
        mb = f"{self.address_space / 2**20:,.0f}"
        if answer is None:
            status = self._kill()
            how = f"killed by signal {-status}" if status is not None and status < 0 else f"exit status {status}"
            raise QueryError(f"the query ran out of memory (DuckDB worker limit {mb} MB) and was stopped: the worker "
                             f"process ended ({how}). Narrow the query.")
        if answer[0] == "timeout":
            raise QueryError(f"the query ran past the {timeout_s:g} s time limit and was stopped. Raise --timeout or simplify the query.")
        if answer[0] == "rows":
            return answer[1], answer[2]
        kind, message = answer[1], answer[2]
        if kind == "QueryError":
            raise QueryError(message)
        if kind in ("OutOfMemoryException", "MemoryError"):
            first = message.splitlines()[0] if message else kind
            raise QueryError(f"the query needed more memory than DuckDB may use ({self.config.get('memory_limit')} "
                             f"memory_limit; DuckDB worker limit {mb} MB) and was stopped ({first}). Narrow the query.")
        raise DuckDBError(f"DuckDB error: {message}", kind)

    def _signal(self, sig: int) -> None:
        try:
            if self._proc is not None:
                self._proc.send_signal(sig)
        except OSError:
            pass

    def _kill(self) -> int | None:
        """End the worker (if running) and forget it; its exit status (negative: the signal that ended it)."""
        proc, self._proc = self._proc, None
        with _LIVE_LOCK:
            _LIVE.pop(id(self), None)
        for conn in (self._inbox, self._outbox):
            if conn is not None:
                conn.close()
        self._inbox = self._outbox = None
        if proc is None:
            return None
        if proc.poll() is None:
            try:
                proc.wait(0.2)  # a worker that just ended on its own is reaped with its own status
            except subprocess.TimeoutExpired:
                proc.kill()
        return proc.wait()

    def close(self) -> None:
        """End the worker: the end of its queries' pipe ends it; killed when it does not end within a moment."""
        with self._lock:
            self._closed = True
            self._stop()

    def _stop(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if self._outbox is not None:
            self._outbox.close()
            self._outbox = None
        try:
            proc.wait(2.0)
        except subprocess.TimeoutExpired:
            pass
        self._kill()


def serve() -> None:
    """The worker's main: read the opening message, open the file, then answer queries until the pipe ends.

    Called as ``python -c`` with the pipe descriptors in ``sys.argv[1:3]`` (see :class:`DuckDBWorker`); never raises
    (an error is an answer).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the worker (see the module docstring)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # SIGUSR1 is taken by one thread (sigwait) that interrupts the query: blocked in every other thread, so before
    # any is started (they inherit the mask).
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    inbox, outbox = Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False)
    try:
        path, config, address_space, owner = inbox.recv()
    except EOFError:
        return

    lifeline.watch(owner)
    try:
        import duckdb  # optional heavy dependency: duckdb (extra duckdb)

        hard = resource.getrlimit(resource.RLIMIT_AS)[1]  # a lower limit set on the run (ulimit -v) is kept
        if hard != resource.RLIM_INFINITY:
            address_space = min(address_space, hard)
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        conn = duckdb.connect(path, read_only=True, config=config)
        conn.execute("SET lock_configuration = true")
    except BaseException as exc:  # noqa: BLE001 - every failure is the answer
        outbox.send(("error", type(exc).__name__, str(exc)))
        return

    def interrupt() -> None:
        while True:
            signal.sigwait({signal.SIGUSR1})
            conn.interrupt()

    threading.Thread(target=interrupt, name="goldeval-duckdb-interrupt", daemon=True).start()
    outbox.send(("ready", os.getpid()))
    while True:
        try:
            _, sql, max_rows, max_result_bytes = inbox.recv()
        except (EOFError, OSError):
            return
        answer = _run(conn, sql, max_rows, max_result_bytes)
        try:
            outbox.send(answer)  # pickled whole before anything is written: a failure here sends nothing
        except BaseException as exc:  # noqa: BLE001 - a value that does not pickle, or no memory to pickle it
            del answer
            outbox.send(("error", type(exc).__name__, str(exc)))


def _run(conn: Any, sql: str, max_rows: int, max_result_bytes: int) -> tuple[Any, ...]:
    """``("rows", columns, rows)`` of one query, or ``("error", type name, message)``."""
    try:
        cur = conn.execute(sql)
        columns = [d[0] for d in cur.description] if cur.description else []
        rows = fetch_bounded(cur, len(columns), max_rows=max_rows, max_result_bytes=max_result_bytes)
        return ("rows", columns, rows)
    except BaseException as exc:  # noqa: BLE001 - every failure is the answer
        try:
            return ("error", type(exc).__name__, str(exc))
        except MemoryError:
            return ("error", "MemoryError", "")
