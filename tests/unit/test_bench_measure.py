"""benchmarks/measure.py counts the whole process tree (issue 31 item 7).

``/usr/bin/time -v`` and a plain ``wait4`` miss the CPU of descendants their parents never wait for (goldeval's
scoring workers and store writer are a forkserver's children). The command below leaves such an orphan behind: a
grandchild that outlives its parent, holds its own memory and burns CPU after the parent has exited. The figures
asserted are counters and memory, worked out from what the command does; no timing is asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("psutil", reason="benchmarks/measure.py samples memory with psutil (the test extra installs it)")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from measure import load_average, measure, paired_ratios  # noqa: E402

MIB = 2**20

#: The parent forks first, then each side allocates and touches 96 MiB of its own (no page shared). The grandchild
#: holds its memory for 1.5 s, longer than the parent lives (0.8 s after touching), then spends 0.4 s of its own CPU
#: (process_time, not wall) after its parent is gone, and exits with 0.
_ORPHANING = r"""
import os, time
n = 96 * 2**20
if os.fork() == 0:
    y = bytearray(n)
    for i in range(0, n, 4096):
        y[i] = 1
    time.sleep(1.5)
    t = time.process_time()
    while time.process_time() - t < 0.4:
        pass
    os._exit(0)
x = bytearray(n)
for i in range(0, n, 4096):
    x[i] = 1
time.sleep(0.8)
"""


def test_an_orphaned_grandchild_is_counted_in_cpu_and_memory() -> None:
    m = measure([sys.executable, "-c", _ORPHANING])
    assert m.exit_code == 0
    # CPU: at least the grandchild's 0.4 s spent after its parent exited (a wait4 on the parent alone misses it).
    assert m.cpu_s >= 0.4, m
    # Memory: both 96 MiB blocks were resident at once, in two processes; the largest process holds one of them.
    assert m.tree_pss_mib >= 2 * 96, m
    assert 96 <= m.largest_rss_mib < 2 * 96, m


def test_a_lone_quiet_process_is_not_inflated() -> None:
    """Healthy case: one process, no child, nothing allocated: the tree's memory is one interpreter's, not more."""
    m = measure([sys.executable, "-c", "pass"])
    assert m.exit_code == 0
    assert m.tree_pss_mib < 64, m
    assert m.largest_rss_mib < 64, m


def test_a_failing_command_is_returned_with_its_exit_code_and_stderr() -> None:
    m = measure([sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"])
    assert m.exit_code == 3
    assert "boom" in m.stderr


def test_paired_ratios_never_zip_short() -> None:
    assert paired_ratios([2.0, 3.0, 4.0], [1.0, 1.0, 2.0]) == (2.0, 2.0, 3.0)  # ratios 2, 3, 2 by hand
    with pytest.raises(ValueError):
        paired_ratios([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        paired_ratios([], [])
    assert load_average().startswith("load ")
