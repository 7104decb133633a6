"""Holding SIGINT and SIGTERM across a block that a signal must not cut half-way.

Shared by the run store's writer (a message to the writer process cut half-way would desynchronise the pipe) and the
CLI (an extension module whose initialisation is interrupted can crash the process: orjson's did, with a
segmentation fault). Imports only the standard library, so the CLI can use it before anything heavy is loaded.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["signals_held"]


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Block SIGINT and SIGTERM for the block; a signal that arrives meanwhile is delivered (and its handler raises,
    e.g. KeyboardInterrupt) as the block ends.

    Only in the main thread, where Python runs signal handlers; elsewhere, or where ``pthread_sigmask`` does not
    exist, the block runs unchanged.

    Example:
        >>> with signals_held():
        ...     pass

    Source: POSIX ``pthread_sigmask`` (Python :func:`signal.pthread_sigmask`).
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
