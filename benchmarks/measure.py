"""One command, measured over its whole process tree: wall, CPU, peak memory (issue 31 item 7).

    from measure import measure, load_average, paired_ratios   # a benchmark script in benchmarks/

    m = measure(["goldeval", "labels", "rows.jsonl", "--no-store"], env)
    m.wall_s, m.cpu_s, m.largest_rss_mib, m.tree_pss_mib, m.exit_code

Why a module of its own: ``/usr/bin/time -v`` and a plain ``wait4`` count only the processes that were waited for
by their parents. goldeval's scoring workers and its run store's writer are children of a forkserver that is never
waited for, so their CPU went uncounted (0.48 s reported against 1.36 s used on 100k rows). Here the command runs
under a small measuring process that is a child subreaper (``PR_SET_CHILD_SUBREAPER``, Linux): every orphaned
descendant is re-parented to it, it waits for every one, and ``RUSAGE_CHILDREN`` then holds the user + system CPU
of the whole tree. While the command runs, the measuring process samples the tree's memory with psutil:

- ``largest_rss_mib``: ``ru_maxrss`` of the children, the kernel's exact high-water mark of the largest single
  process (Linux carries it across ``exec``, so it is never below the measuring process's own ~15 MiB);
- ``tree_pss_mib``: the largest sum over the tree of proportional set size (PSS: a page shared by k processes counts
  1/k in each), sampled every ``interval`` seconds (default 20 ms), so a peak shorter than that can be missed. PSS,
  not RSS: forked workers share their parent's pages, and summing RSS would count those pages once per worker.
  Where PSS cannot be read (another user's process), RSS is summed for that process.

Read the figures as ratios against an anchor measured in the same run (:func:`paired_ratios`): these machines are
shared, and :func:`load_average` is printed beside every table.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

__all__ = ["Measurement", "load_average", "measure", "paired_ratios"]

#: The measuring process: argv[1] the sampling interval (s), argv[2] where its JSON result goes, argv[3:] the command
#: (which inherits its standard output and error).
_MEASURER = r"""
import ctypes, json, os, resource, sys, time
import psutil
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come back here
interval, result = float(sys.argv[1]), sys.argv[2]
me = psutil.Process()
t = time.perf_counter()
pid = os.posix_spawnp(sys.argv[3], sys.argv[3:], os.environ)
peak = 0
status = None
def tree_mem():
    total = 0
    for p in me.children(recursive=True):
        try:
            try:
                total += p.memory_full_info().pss
            except psutil.AccessDenied:
                total += p.memory_info().rss
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            pass
    return total
while status is None:
    peak = max(peak, tree_mem())
    got, st = os.waitpid(pid, os.WNOHANG)
    if got:
        status = st
        break
    time.sleep(interval)
wall = time.perf_counter() - t
while True:  # descendants left behind (a forkserver's children) are ours now: wait for each, so their usage counts
    try:
        peak = max(peak, tree_mem())
        os.wait()
    except ChildProcessError:
        break
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(result, "w") as fh:
    json.dump({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "maxrss_kib": ru.ru_maxrss, "tree_bytes": peak,
               "exit": os.waitstatus_to_exitcode(status)}, fh)
"""


@dataclass(frozen=True)
class Measurement:
    """One run of a command over its whole process tree.

    Attributes:
        wall_s: Seconds from spawning the command to its exit (descendants it left running are not waited for in
            this figure; their CPU is still counted in ``cpu_s``).
        cpu_s: User + system CPU seconds of every process of the tree, the orphans included.
        largest_rss_mib: Peak RSS of the largest single process, MiB (kernel high-water mark, exact).
        tree_pss_mib: Largest sampled sum of PSS over the tree, MiB.
        exit_code: The command's exit code.
        stderr: The command's standard error, whole.
        stdout: The command's standard output when ``measure(..., stdout=subprocess.PIPE)``, else ``""``.
    """

    wall_s: float
    cpu_s: float
    largest_rss_mib: float
    tree_pss_mib: float
    exit_code: int
    stderr: str = ""
    stdout: str = ""


def measure(cmd: Sequence[str], env: Mapping[str, str] | None = None, *, interval: float = 0.02,
            stdout: IO[Any] | int | None = subprocess.DEVNULL, cwd: str | None = None) -> Measurement:
    """Run *cmd* (argv; ``cmd[0]`` looked up on ``PATH``) under a subreaper and measure its whole process tree.

    Args:
        cmd: The command, e.g. ``[sys.executable, "-m", "goldeval", "score", "notes.jsonl", "--no-store"]``.
        env: Its environment (default: this process's).
        interval: Seconds between memory samples.
        stdout: Where the command's standard output goes (default: discarded; a file object or descriptor, or
            ``subprocess.PIPE`` to return it as ``Measurement.stdout``).
        cwd: Its working directory.

    Returns:
        A :class:`Measurement`; a failing command is returned, not raised (check ``exit_code``).

    Raises:
        ValueError: an empty command.
        RuntimeError: the measuring process itself failed (e.g. psutil missing: ``pip install -e '.[bench]'``).

    Example:
        >>> m = measure([sys.executable, "-c", "pass"])
        >>> m.exit_code, m.cpu_s > 0
        (0, True)
    """
    if not cmd:
        raise ValueError("measure: an empty command")
    with tempfile.TemporaryDirectory(prefix="goldeval-measure-") as tmp:
        result = os.path.join(tmp, "result.json")
        proc = subprocess.run([sys.executable, "-c", _MEASURER, str(interval), result, *cmd],
                              env=dict(env) if env is not None else None, cwd=cwd, stdout=stdout,
                              stderr=subprocess.PIPE, text=True)
        if not os.path.exists(result):
            raise RuntimeError(f"measure: the measuring process failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        with open(result) as fh:
            got = json.load(fh)
    return Measurement(wall_s=got["wall"], cpu_s=got["cpu"], largest_rss_mib=got["maxrss_kib"] / 1024,
                       tree_pss_mib=got["tree_bytes"] / 2**20, exit_code=got["exit"], stderr=proc.stderr,
                       stdout=proc.stdout or "")


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages and the CPU count, as one line for a benchmark's report.

    Example:
        >>> load_average().startswith("load ")
        True
    """
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def paired_ratios(after: Sequence[float], before: Sequence[float]) -> tuple[float, float, float]:
    """The median, min and max of the per-round ratios ``after[i] / before[i]`` (runs of one round are next to each
    other, so their ratio is the fair comparison on a shared machine).

    Raises:
        ValueError: the lists differ in length or are empty (never zipped short).

    Example:
        >>> paired_ratios([2.0, 3.0, 4.0], [1.0, 1.0, 2.0])
        (2.0, 2.0, 3.0)
    """
    if len(after) != len(before) or not after:
        raise ValueError(f"paired_ratios: {len(after)} against {len(before)} runs")
    ratios = [a / b for a, b in zip(after, before, strict=True)]
    return statistics.median(ratios), min(ratios), max(ratios)
