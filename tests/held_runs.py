"""Looking at a goldeval process stopped half-way, for the tests that interrupt a run and resume it
(tests/e2e/test_kill_resume.py, test_resume_equals_uninterrupted.py): how many cases its store has committed, where
it reads its input, whether it is stopped, and which processes still hold the store open. Linux (/proc) only."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = ["committed", "held_open", "positions", "state"]


def committed(db: Path) -> int:
    """Cases committed so far, as rows and in blocks (0 while the store or its tables do not exist yet)."""
    if not db.exists():
        return 0
    con = sqlite3.connect(db, timeout=5)
    try:
        return (con.execute("SELECT count(*) FROM cases").fetchone()[0]
                + con.execute("SELECT coalesce(sum(n), 0) FROM case_blocks").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def positions(pid: int, path: Path) -> list[int]:
    """The offsets at which process *pid* has *path* open (``/proc/PID/fd`` and ``fdinfo``, Linux): where it reads."""
    real, out = os.path.realpath(path), []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return out
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == real:
                with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as fh:
                    out += [int(line.split()[1]) for line in fh if line.startswith("pos:")]
        except OSError:  # closed meanwhile
            continue
    return out


def state(pid: int) -> str:
    """The process state letter of /proc/PID/stat (``T``: stopped)."""
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0]


def held_open(path: Path) -> list[int]:
    """The processes (other than this one) that have the store *path* (or its journal / WAL) open."""
    names = {os.path.realpath(path) + suffix for suffix in ("", "-journal", "-wal", "-shm")}
    me, out = os.getpid(), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == me:
            continue
        try:
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") in names for fd in os.listdir(f"/proc/{pid}/fd")):
                out.append(int(pid))
        except OSError:  # ended meanwhile, or not ours to look at
            continue
    return out
