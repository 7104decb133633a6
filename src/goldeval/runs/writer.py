"""The run store's writer process and the batch messages it reads: how a large run's cases are committed beside
the scorer (see :class:`goldeval.runs.recorder.Recorder`, ``background="process"``).

A batch travels as one message (:func:`batch_message`): a JSON header ``[seq of the first record, [[case id,
status, verdict, score, reason, raw], ...]]``, a newline, then the records' JSON, one per line. The writer answers
``sync`` / ``stop`` with ``{"n": cases committed, "error": str | None}``.

Moved out of :mod:`goldeval.runs.recorder` (which re-exports what it uses); the definitions are unchanged.
"""

from __future__ import annotations

import gc
import queue
import signal
import threading
from typing import Any

import orjson

from goldeval.errors import StoreError
from goldeval.runs.backends import open_store

__all__ = ["WRITER_MAX_ROWS_PER_TX"]


#: Most case rows the writer process commits in one transaction (it joins the batches waiting for it up to this).
WRITER_MAX_ROWS_PER_TX = 5000

#: Batches (of the recorder's ``batch_size`` records, 200 by default) the writer process holds before the scorer
#: waits for it: about 64 x 200 records, a few MiB, however many rows the run has.
WRITER_INBOX = 64


def widen_pipe(conn: Any, size: int = 1 << 20) -> None:
    """Ask Linux for a 1 MiB pipe buffer (default 64 KiB), so the scorer can hand over batches without waiting for
    the writer process to be scheduled. Best effort: elsewhere, or above the system limit, nothing changes."""
    try:
        import fcntl  # optional: POSIX only

        fcntl.fcntl(conn.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), size)
    except (ImportError, OSError, ValueError):
        pass


def writer_main(conn_in: Any, conn_out: Any, db_path: str, run_id: str) -> None:
    """The writer process: commits the batches it receives, in order, and answers ``sync`` / ``stop`` with
    ``{"n": cases committed, "error": str | None}``. A reader thread drains the pipe into a buffer at once, so the
    scorer never waits for SQLite; the batches waiting there when the writer turns to them are committed together,
    in one transaction (at most ``WRITER_MAX_ROWS_PER_TX`` rows). (It is not niced: under outside load a niced
    writer starves and the scorer then waits for it at the end.) When the parent dies (end of file on the pipe),
    everything received is committed and the process ends."""
    # Ctrl-C and SIGTERM reach the parent, which stops this process cleanly (a SIGTERM to the whole process group
    # killed it, and the parent reported "the writer process ended unexpectedly (broken pipe)")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # It keeps nothing between batches, and makes no reference cycles: the cyclic garbage collector only costs time
    # here (it walked every short-lived batch, about a third of the writer's CPU on 100k free-text cases).
    gc.disable()
    # A reader thread drains the pipe at once, so the scorer does not wait for SQLite; batches wait here, in order,
    # up to WRITER_INBOX of them: when SQLite falls behind (a loaded machine) the reader stops reading, the pipe
    # fills and the scorer waits, instead of this process holding every record of the run (memory bounded).
    inbox: queue.Queue[bytes | None] = queue.Queue(maxsize=WRITER_INBOX)

    def pump() -> None:
        while True:
            try:
                message = conn_in.recv_bytes()
            except (EOFError, OSError):
                inbox.put(None)
                return
            inbox.put(message)
            if message == b"stop":
                return

    threading.Thread(target=pump, name="goldeval-recorder-inbox", daemon=True).start()
    errors: list[str] = []
    try:
        store = open_store(db_path)
    except BaseException as exc:  # reported on the first sync
        errors.append(str(exc))
        store = None
    n = 0
    # The message taken from the inbox and not handled yet: a batch, ``sync`` / ``stop``, or None (end of the pipe).
    # ``held`` says whether there is one: None is a message here (the parent is gone), never "nothing held".
    msg: bytes | None = None
    held = False
    while True:
        if not held:
            msg = inbox.get()
        held = False
        if msg is None:  # the parent is gone: everything it sent has been committed
            break
        if msg in (b"sync", b"stop"):
            conn_out.send_bytes(orjson.dumps({"n": n, "error": "; ".join(errors) or None}))
            if msg == b"stop":
                break
            continue
        batches: list[Any] = []
        n_rows = 0
        try:
            while True:  # this batch and the ones already waiting behind it, up to the cap: one transaction
                if not errors and store is not None:
                    batches.append(message_columns(msg))
                    n_rows += len(batches[-1][1])
                if n_rows >= WRITER_MAX_ROWS_PER_TX:
                    break
                try:
                    msg = inbox.get_nowait()
                except queue.Empty:
                    break
                if msg is None or msg in (b"sync", b"stop"):
                    held = True  # handled by the outer loop once these rows are committed
                    break
            if batches and store is not None:
                store.write_case_columns(run_id, *batches)
                n += n_rows
        except BaseException as exc:
            errors.append(str(exc))
    if store is not None:
        store.close()


def batch_message(seq0: int, keys: list[tuple[Any, ...]], body: bytes) -> bytes:
    """One batch as the writer process receives it: a JSON header ``[seq of the first record, [[case id, status,
    verdict, score, reason, raw], …]]``, a newline, then *body*: the records' JSON, newline-separated (each record
    is one line: orjson escapes every newline in the strings it writes, and :meth:`Recorder.record` flattens raw
    JSON given as a Fragment)."""
    return orjson.dumps([seq0, keys]) + b"\n" + body


def batch_rows(seq0: int, keys: list[Any], body: bytes) -> tuple[int, list[Any], list[str]]:
    """``(seq0, keys, [record JSON, …])``, what :meth:`RunStore.write_case_columns` takes, from the newline-joined
    records of a batch.

    Raises:
        StoreError: the records are not as many as the keys (nothing of the batch is stored).
    """
    records = body.decode().split("\n")
    if len(records) != len(keys):
        raise StoreError(f"run store: a batch of {len(keys)} case keys came with {len(records)} records; nothing of it was stored.")
    return seq0, keys, records


def message_columns(message: bytes) -> tuple[int, list[Any], list[str]]:
    """A batch message (see :func:`batch_message`) → ``(seq0, [[case id, status, verdict, score, reason, raw],
    …], [record JSON, …])``, what :meth:`RunStore.write_case_columns` takes. Nothing is parsed per record: the
    stored JSON is the bytes recorded.

    Raises:
        StoreError: the message is not a batch (its parts do not line up).
    """
    head, _, body = message.partition(b"\n")
    seq0, keys = orjson.loads(head)
    return batch_rows(seq0, keys, body)
