"""Child processes that end with the process that started them (issue 10 item 9: no stray processes).

goldeval starts its worker processes through multiprocessing's *forkserver*: a pool worker is a child of the
forkserver, not of the scorer, so neither its parent's death nor ``PR_SET_PDEATHSIG`` tells it that the scorer is
gone. Left alone after a ``kill -9`` of the scorer, each pool worker waits for work for ever (it holds the write end
of its own task queue, so it never reads an end of file there); every child of the forkserver holds the forkserver's
"alive" pipe, so the forkserver stays too; and the three of them keep the resource tracker's pipe open.

The cure has two parts:

- :func:`watch` (in a worker): a daemon thread waits on a pidfd of the *scorer* (``os.pidfd_open``, Linux 5.3+;
  elsewhere it polls the pid and its start time every ``POLL_S`` seconds) and ends the worker (``os._exit``) as
  soon as the scorer has ended. The scorer is named by :func:`owner` — its pid and its start time, so that a pid
  reused by another process is never mistaken for it.
- :func:`arm_forkserver` (in the scorer, before the first pool starts): the forkserver imports
  :mod:`goldeval._forkserver_preload`, which asks the kernel (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, Linux) to kill
  it when the scorer ends. Without it the forkserver still ends, once the last worker has (its "alive" pipe closes).

With the workers and the forkserver gone, the resource tracker reads the end of its pipe and ends by itself. The
store's writer process (:mod:`goldeval.runs.recorder`) needs none of this: it reads the end of its pipe when the
scorer dies, commits what it received and ends.

Source: ``prctl(2)`` (PR_SET_PDEATHSIG: "the signal that the calling process will get when its parent dies" — the
parent *thread*, see Notes of :func:`set_parent_death_signal`), ``pidfd_open(2)`` ("the file descriptor is readable
when the process terminates"), CPython ``Lib/multiprocessing/forkserver.py`` (3.11: ``main``, ``_serve_one``).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any

__all__ = ["EXIT_ORPHANED", "POLL_S", "Owner", "arm_forkserver", "is_alive", "owner", "set_parent_death_signal", "watch"]

#: Exit status of a worker that ended because the scorer was gone (nobody reads it: its parent is the forkserver).
EXIT_ORPHANED = 1

#: Seconds between two looks at the scorer where no pidfd can be had (not Linux, or pidfd_open refused).
POLL_S = 0.5

#: ``(pid, start time)`` of a process: the start time in clock ticks since boot (``/proc/PID/stat`` field 22), or
#: ``None`` where there is no /proc (then only the pid names the process).
Owner = tuple[int, int | None]

#: The module the forkserver imports to arm itself (see :func:`arm_forkserver`).
FORKSERVER_PRELOAD = "goldeval._forkserver_preload"

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _start_time(pid: int) -> tuple[bool, int | None]:
    """``(running, start time)`` of *pid* from /proc; ``(False, None)`` when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return False, None
    except OSError:  # no /proc here: ask the kernel whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False, None
        except PermissionError:
            return True, None
        return True, None
    fields = raw[raw.rindex(b")") + 2:].split()  # the command name, in parentheses, may hold spaces
    if fields[0] in (b"Z", b"X"):  # ended; only its parent's wait() is missing
        return False, None
    return True, int(fields[19])


def owner() -> Owner:
    """The calling process, as :func:`watch` in a child expects it: ``(pid, start time in clock ticks)``.

    Returns:
        ``(os.getpid(), start time)``; the start time is ``None`` where /proc cannot be read.
    """
    pid = os.getpid()
    return pid, _start_time(pid)[1]


def is_alive(proc: Owner) -> bool:
    """Whether the process named by *proc* (from :func:`owner`) is still running: same pid and the same start time
    (a pid the kernel gave to another process since is not it). A zombie has ended."""
    pid, started = proc
    running, now = _start_time(pid)
    return running and (started is None or now is None or now == started)


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return opener(pid)
    except OSError:  # old kernel, a seccomp filter, or the process is gone already
        return None


def _wait_then_exit(proc: Owner, fd: int | None) -> None:
    if fd is not None:
        import select  # start-up: only a watching child needs it

        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while not poller.poll():  # readable once the process has ended
            pass
    else:
        while is_alive(proc):
            time.sleep(POLL_S)
    os._exit(EXIT_ORPHANED)


def watch(proc: Owner) -> None:
    """In a child process: end this process (``os._exit(EXIT_ORPHANED)``) as soon as *proc* has ended.

    Starts one daemon thread (``goldeval-lifeline``). Call it where the child starts (a pool initializer) and only
    in a child that holds nothing it must save: nothing is flushed or cleaned up on the way out. When *proc* has
    ended already, this process ends at once.

    Args:
        proc: The process to outlive by no more than a moment, from :func:`owner` called in that process.
    """
    fd = _pidfd(proc[0])
    if not is_alive(proc):  # checked after the pidfd is open: a pid reused in between is caught here
        os._exit(EXIT_ORPHANED)
    threading.Thread(target=_wait_then_exit, args=(proc, fd), name="goldeval-lifeline", daemon=True).start()


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send *sig* to this process when its parent ends (``prctl(PR_SET_PDEATHSIG)``, Linux only).

    Returns:
        True when it is armed; False on another system or when prctl refused. Ends this process at once
        (``os._exit(EXIT_ORPHANED)``) when the parent has ended before the signal was armed.

    Notes:
        The kernel sends the signal when the *thread* that forked this process ends, which for a process started
        from a short-lived thread is before its parent process ends; multiprocessing starts a new forkserver when it
        finds its old one gone, so for the forkserver that costs a restart, never a run.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # start-up: only Linux child processes call prctl

    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent:  # the parent ended between the two looks: the signal will never come
        os._exit(EXIT_ORPHANED)
    return True


def arm_forkserver(ctx: Any) -> None:
    """Have the forkserver of the multiprocessing context *ctx* end when this process ends.

    Adds :data:`FORKSERVER_PRELOAD` to the modules the forkserver imports when it starts (keeping those already
    asked for, ``__main__`` by default). It acts only on a forkserver started after the call; one that runs already
    still ends once its last child has. A context of another start method is left alone.

    Args:
        ctx: A ``multiprocessing`` context (``multiprocessing.get_context(...)``).
    """
    if ctx.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver  # start-up: only when a forkserver is armed

    current = list(getattr(forkserver._forkserver, "_preload_modules", ["__main__"]))
    if FORKSERVER_PRELOAD not in current:
        ctx.set_forkserver_preload([*current, FORKSERVER_PRELOAD])
