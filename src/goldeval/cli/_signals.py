"""How the ``goldeval`` command stops on Ctrl-C (SIGINT) and SIGTERM: at any moment, one line and an exit code.

* Ctrl-C raises ``KeyboardInterrupt`` (Python's own handler); SIGTERM raises :class:`Terminated`, a
  ``KeyboardInterrupt``, so every path that stops cleanly on Ctrl-C (a query cancelled, the run store's last batch
  committed, the run left interrupted and resumable) stops the same way on SIGTERM.
* Exit codes: 130 (128 + SIGINT) after Ctrl-C, 143 (128 + SIGTERM) after SIGTERM, the shell's own convention for a
  command that a signal stopped; never 1 (a gate failed) or 3 (an internal error).
* One line on stderr, never a traceback, whenever the signal lands: inside a command (``guarded`` says what became
  of the run), while click parses the command line or imports the command's module (:func:`stopped_exit`), or
  while goldeval itself is imported (:mod:`goldeval._startup`: an interrupt that no code catches).

Imports only the standard library and :mod:`goldeval._startup`.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

from goldeval._startup import Terminated, interrupt_in_chain

__all__ = ["Terminated", "EXIT_INTERRUPTED", "EXIT_TERMINATED", "exit_code", "stopped_by", "sigterm_raises",
           "stopped_exit", "hold_signals_to_the_end", "interrupt_in_chain"]

EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def _is_terminated(exc: BaseException | None) -> bool:
    """Whether *exc*, or the interrupt it was raised from, is a :class:`Terminated`."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, Terminated):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def exit_code(exc: BaseException | None) -> int:
    """143 when *exc* (a ``KeyboardInterrupt``) came from SIGTERM, else 130."""
    return EXIT_TERMINATED if _is_terminated(exc) else EXIT_INTERRUPTED


def stopped_by(exc: BaseException | None) -> str:
    """``"stopped by SIGTERM"`` or ``"interrupted"`` (Ctrl-C), the words the messages start with."""
    return "stopped by SIGTERM" if _is_terminated(exc) else "interrupted"


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """For the block, SIGTERM raises :class:`Terminated` in the main thread (elsewhere, or where SIGTERM is ignored,
    nothing changes); the handler in force before is put back on leaving."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_IGN:  # started with SIGTERM ignored (nohup-like): keep it so
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def stopped_exit(exc: BaseException, what: str = "; a recorded run resumes when the same command is run again") -> SystemExit:
    """Write ``goldeval: interrupted<what>.`` (or ``stopped by SIGTERM``) on stderr and return the ``SystemExit``
    (130 / 143) to raise: for an interrupt outside a command's body (click parsing, a command module's import, the
    moments after the body)."""
    _write_line(f"goldeval: {stopped_by(exc)}{what if what.startswith(';') else ' ' + what}.")
    return SystemExit(exit_code(exc))


def hold_signals_to_the_end() -> None:
    """Block SIGINT and SIGTERM in this thread for the rest of the process (a signal then waits, and is dropped when
    the process exits): for a command whose exit code is decided."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def _write_line(line: str) -> None:
    with contextlib.suppress(Exception):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


