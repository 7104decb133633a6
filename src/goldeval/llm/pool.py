"""A bounded pool of daemon threads for the judge's HTTP calls, so that Ctrl-C stops a run at once.

``concurrent.futures.ThreadPoolExecutor`` joins its worker threads when the interpreter exits, so a Ctrl-C while
calls are in flight kept the process alive until every call returned (up to ``--llm-timeout`` each, 60 s by
default): the HTTP read inside a call cannot be interrupted, and closing the client does not wake it. These
workers are daemon threads: :meth:`DaemonPool.shutdown` with ``wait=False`` abandons the calls in flight (their
answers are never recorded; a completed call may still land in the judge cache, which is keyed by what was sent),
and the process exits when the main thread does.

The futures are ordinary :class:`concurrent.futures.Future` objects, so ``concurrent.futures.wait`` works on them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

__all__ = ["DaemonPool"]


class DaemonPool:
    """At most *max_workers* calls at a time, on daemon threads named ``{thread_name_prefix}_{k}``.

    Args:
        max_workers: Threads (≥ 1); started lazily, one per submitted task up to this bound.
        thread_name_prefix: Prefix of the threads' names.
    """

    def __init__(self, max_workers: int, *, thread_name_prefix: str = "goldeval-pool") -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, got {max_workers}")
        self._max = max_workers
        self._prefix = thread_name_prefix
        self._queue: queue.SimpleQueue[tuple[Future, Callable[..., Any], tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Run ``fn(*args)`` on a worker; returns its Future. Raises RuntimeError after :meth:`shutdown`."""
        if self._closed:
            raise RuntimeError("submit after shutdown")
        fut: Future = Future()
        self._queue.put((fut, fn, args))
        if len(self._threads) < self._max:
            t = threading.Thread(target=self._work, name=f"{self._prefix}_{len(self._threads)}", daemon=True)
            t.start()
            self._threads.append(t)
        return fut

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fut, fn, args = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except BaseException as exc:  # handed to the waiter, as ThreadPoolExecutor does
                fut.set_exception(exc)
            else:
                fut.set_result(result)

    def shutdown(self, *, wait: bool = True, cancel_futures: bool = False) -> None:
        """Stop accepting work; with *cancel_futures* cancel what has not started; with *wait* join the workers
        (the calls in flight finish), else leave them to end on their own (daemon threads never hold the process)."""
        self._closed = True
        if cancel_futures:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        for _ in self._threads:
            self._queue.put(None)
        if wait:
            for t in self._threads:
                t.join()
