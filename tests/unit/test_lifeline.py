"""goldeval.lifeline: a child ends when the process it watches ends (issue 10 item 9). Each test kills a real
process with SIGKILL and waits, bounded, for the other one to end; nothing is timed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from goldeval import lifeline

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux") or not Path("/proc/self/stat").exists(),
                                reason="PR_SET_PDEATHSIG and /proc are Linux's")


def _gone(pid: int, *, within: float = 30.0) -> bool:
    """Whether *pid* has ended (or is a zombie) within a bounded wait."""
    until = time.monotonic() + within
    while time.monotonic() < until:
        if not lifeline.is_alive((pid, None)):
            return True
        time.sleep(0.05)
    return False


def _python(code: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True, **kw)


def test_owner_names_this_process_and_a_reused_pid_is_not_it() -> None:
    me = lifeline.owner()
    assert me[0] == os.getpid() and lifeline.is_alive(me)
    if me[1] is not None:  # with /proc: the same pid with another start time is another process
        assert not lifeline.is_alive((me[0], me[1] + 1))


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polling"])
def test_watch_ends_the_watcher_when_the_watched_process_is_killed(pidfd: bool) -> None:
    # The watched process is not the watcher's parent (as the scorer is not its pool workers' parent).
    watched = _python("import time; time.sleep(600)")
    try:
        line = (watched.pid, lifeline._start_time(watched.pid)[1])
        watcher = _python(f"""
            import os, sys, time
            from goldeval import lifeline
            if not {pidfd}:
                del os.pidfd_open  # the fallback: look at the pid every POLL_S seconds
            lifeline.watch({line!r})
            print("watching", flush=True)
            time.sleep(600)
        """)
        assert watcher.stdout.readline() == "watching\n"
        assert watcher.poll() is None
        watched.send_signal(signal.SIGKILL)
        watched.wait()
        watcher.wait(timeout=60)
        assert watcher.returncode == lifeline.EXIT_ORPHANED
    finally:
        for p in (watched, locals().get("watcher")):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


@linux_only
@pytest.mark.parametrize("how", ["ended", "pid reused"])
def test_watch_of_a_process_already_gone_ends_at_once(how: str) -> None:
    if how == "ended":
        ended = subprocess.Popen([sys.executable, "-c", "pass"])
        ended.wait()
        line = (ended.pid, None)
    else:  # this test's own pid with a start time no process of that pid has: the pid names another process now
        line = (os.getpid(), lifeline.owner()[1] - 1)
    watcher = subprocess.run([sys.executable, "-c", f"from goldeval import lifeline; lifeline.watch({line!r}); print('lived')"],
                             capture_output=True, text=True, timeout=60)
    assert watcher.returncode == lifeline.EXIT_ORPHANED and "lived" not in watcher.stdout


@linux_only
def test_parent_death_signal_kills_the_child_with_its_parent() -> None:
    parent = _python("""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "from goldeval import lifeline; import time; "
                                  "assert lifeline.set_parent_death_signal(); print('armed', flush=True); time.sleep(600)"],
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline() == "armed\\n"
        print(child.pid, flush=True)
        time.sleep(600)
    """)
    child = int(parent.stdout.readline())
    try:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _gone(child), "the armed child outlived its parent by 30 s"
    finally:
        if lifeline.is_alive((child, None)):
            os.kill(child, signal.SIGKILL)


@linux_only
def test_an_armed_forkserver_ends_with_the_process_that_started_it_even_with_a_child_left() -> None:
    # The child started through the forkserver is not watched: unarmed, it would keep the forkserver alive.
    scorer = _python("""
        import multiprocessing as mp, time
        from multiprocessing import forkserver
        from goldeval import lifeline
        if __name__ == "__main__":
            ctx = mp.get_context("forkserver")
            lifeline.arm_forkserver(ctx)
            child = ctx.Process(target=time.sleep, args=(600,), daemon=True)
            child.start()
            print(forkserver._forkserver._forkserver_pid, child.pid, flush=True)
            time.sleep(600)
    """)
    server, child = map(int, scorer.stdout.readline().split())
    try:
        scorer.send_signal(signal.SIGKILL)
        scorer.wait()
        assert _gone(server), "the armed forkserver outlived the process that started it by 30 s"
    finally:
        for pid in (server, child):
            if lifeline.is_alive((pid, None)):
                os.kill(pid, signal.SIGKILL)


def test_arm_forkserver_keeps_the_modules_already_asked_for_and_leaves_other_methods_alone() -> None:
    import multiprocessing as mp
    from multiprocessing import forkserver

    if "forkserver" not in mp.get_all_start_methods():
        pytest.skip("no forkserver start method here")
    before = list(forkserver._forkserver._preload_modules)
    try:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["__main__", "json"])
        lifeline.arm_forkserver(ctx)
        lifeline.arm_forkserver(ctx)  # twice: listed once
        assert forkserver._forkserver._preload_modules == ["__main__", "json", lifeline.FORKSERVER_PRELOAD]
        lifeline.arm_forkserver(mp.get_context("spawn"))
        assert forkserver._forkserver._preload_modules == ["__main__", "json", lifeline.FORKSERVER_PRELOAD]
    finally:
        forkserver._forkserver._preload_modules = before


def test_the_preload_module_does_nothing_outside_the_forkserver() -> None:
    out = subprocess.run([sys.executable, "-c", "import goldeval._forkserver_preload, os, ctypes; "
                          "libc = ctypes.CDLL(None); sig = ctypes.c_int(-1); libc.prctl(2, ctypes.byref(sig), 0, 0, 0); "
                          "print(sig.value)"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() in ("0", "-1"), out  # PR_GET_PDEATHSIG: none set (-1: no prctl)
