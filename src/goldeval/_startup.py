"""An interrupt that lands while goldeval is being imported ends the process with one line, not a traceback.

Ctrl-C in the first moments of ``goldeval ...`` lands while the package and the command's modules are imported,
before any code of goldeval can catch it: it reaches the top of the process, where Python prints a traceback and
dies by the signal. :func:`install_quiet_interrupts` (the first thing ``import goldeval`` runs) puts a
``sys.excepthook`` in place that, for such an interrupt, prints ``goldeval: interrupted while starting; nothing was
done.`` and exits 130 (143 for :class:`Terminated`, SIGTERM as ``goldeval.cli`` raises it).

It acts only on an interrupt that nothing caught and that either stopped an import of goldeval (a goldeval module's
top level, or the import system importing a ``goldeval`` module, in its traceback) or ended a process running the
``goldeval`` command (``goldeval.cli`` imported). A program that uses goldeval as a library keeps its own tracebacks
(any other exception, or an interrupt in its own code, goes to the hook in force before).

What it cannot cover: Python's own start-up, before the first statement of ``goldeval/__init__.py`` runs.

Imports only ``os`` and ``sys`` (loaded with the interpreter).
"""

from __future__ import annotations

import os
import sys

__all__ = ["Terminated", "install_quiet_interrupts", "interrupt_in_chain"]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Python runs signal handlers (the main thread, while ``goldeval.cli`` runs a command):
    it stops what runs as Ctrl-C does. See :mod:`goldeval.cli._signals`."""


def _ours(tb: object) -> bool:
    """Whether an uncaught interrupt with traceback *tb* ends the ``goldeval`` command or an import of goldeval."""
    if "goldeval.cli" in sys.modules:
        return True
    while tb is not None:
        frame = tb.tb_frame  # type: ignore[attr-defined]
        module = str(frame.f_globals.get("__name__", ""))
        if frame.f_code.co_name == "<module>" and (module == "goldeval" or module.startswith("goldeval.")):
            return True
        if frame.f_code.co_filename.startswith("<frozen importlib"):  # the import system, importing `name`
            name = frame.f_locals.get("name")
            if isinstance(name, str) and (name == "goldeval" or name.startswith("goldeval.")):
                return True
        tb = tb.tb_next  # type: ignore[attr-defined]
    return False


def interrupt_in_chain(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or :class:`Terminated`) that *exc* is or wraps (as its cause or context), or ``None``: Python turns
    an interrupt raised while it runs certain hooks into another error whose cause or context is the interrupt
    (``RuntimeError: Error calling __set_name__ …`` when it lands while a class is built, as an import builds them)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def _quiet_hook(kind: type[BaseException], value: BaseException, tb: object) -> None:
    interrupt = interrupt_in_chain(value)  # a Ctrl-C Python wrapped (RuntimeError from __set_name__ …) counts too
    if interrupt is not None and interrupt is not value and _ours(tb):
        value, kind = interrupt, type(interrupt)
    if not issubclass(kind, KeyboardInterrupt) or not _ours(tb):
        _quiet_hook.previous(kind, value, tb)  # type: ignore[attr-defined]
        return
    terminated = isinstance(value, Terminated)
    try:
        sys.stderr.write(f"goldeval: {'stopped by SIGTERM' if terminated else 'interrupted'} while starting; "
                         "nothing was done.\n")
        sys.stderr.flush()
        sys.stdout.flush()
    except Exception:  # a closed stream: the exit code still says it
        pass
    # The interpreter would now kill itself with SIGINT after its finalization; nothing is open yet, so end at once
    # with the code a shell gives a command that a signal stopped.
    os._exit(143 if terminated else 130)


def _goldeval_importing() -> bool:
    """Whether a module of goldeval is being imported now (its spec is marked ``_initializing`` by the import system
    until its top level has run): an interrupt lost then would be lost from ``import goldeval`` itself, before
    ``goldeval.cli`` exists, and is sent again to stop that import (which :func:`_quiet_hook` ends quietly)."""
    for name, module in list(sys.modules.items()):
        if (name == "goldeval" or name.startswith("goldeval.")) and getattr(getattr(module, "__spec__", None),
                                                                          "_initializing", False):
            return True
    return False


def _redeliver_hook(unraisable: object) -> None:
    """An interrupt raised where Python cannot raise it (a weak reference's callback, e.g. the import system's lock
    clean-up, or a ``__del__``) is "ignored": the command printed "Exception ignored in ... KeyboardInterrupt" and
    went on to the end, Ctrl-C lost. In the ``goldeval`` command the signal is sent again, to be raised where the
    command handles it; while goldeval itself is being imported too."""
    exc = getattr(unraisable, "exc_value", None)
    if isinstance(exc, KeyboardInterrupt) and ("goldeval.cli" in sys.modules or _goldeval_importing()):
        # start-up: this module runs in the first moments of every command, before its hook is installed; an
        # import here at module level would be a window in which a Ctrl-C prints a traceback
        import signal
        import threading
        import time

        sig = signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT

        def again() -> None:
            # From another thread, a moment later: raised here, inside the hook, the handler's interrupt would be
            # "ignored" again; the main thread runs the handler at its next instruction outside the hook.
            time.sleep(0.005)
            os.kill(os.getpid(), sig)

        threading.Thread(target=again, name="goldeval-redeliver-signal", daemon=True).start()
        return
    _redeliver_hook.previous(unraisable)  # type: ignore[attr-defined]


def install_quiet_interrupts() -> None:
    """Install the hooks (see the module docstring and :func:`_redeliver_hook`) unless they are in place already;
    the hooks in force before keep every exception these do not take."""
    if sys.excepthook is not _quiet_hook:
        _quiet_hook.previous = sys.excepthook  # type: ignore[attr-defined]
        sys.excepthook = _quiet_hook
    if sys.unraisablehook is not _redeliver_hook:
        _redeliver_hook.previous = sys.unraisablehook  # type: ignore[attr-defined]
        sys.unraisablehook = _redeliver_hook
