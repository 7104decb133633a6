"""Peak resident memory of one `goldeval` invocation, for the tests that check memory does not grow with rows
(tests/e2e/test_score_streaming.py, test_labels_memory.py, test_judge_memory.py): they compare the peaks at two
sizes, a ratio of memory, never a timing.

Two readings, the larger one counts:

- the goldeval process's own high-water mark, ``VmHWM`` of ``/proc/self/status``, read as it exits (it runs as
  ``python -c``: no main file, so a forkserver it starts has no ``__main__`` to run again);
- ``ru_maxrss`` of the children of a small wrapper process around it: the largest process of the invocation that
  was waited for, e.g. the run store's writer process or a scoring worker, which can grow on its own (a writer
  that held every batch while SQLite fell behind did). Linux carries ``ru_maxrss`` across ``exec``, so this reading
  also includes the small wrapper's own size (benchmarks/bench_spark.py says more): never more than goldeval's.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence

__all__ = ["assert_flat", "peak_kib"]

_CHILD = (
    "import runpy, sys\n"
    "sys.argv = ['goldeval'] + sys.argv[1:]\n"
    "try:\n"
    "    runpy.run_module('goldeval', run_name='__main__')\n"
    "finally:\n"
    "    own = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
    "    print('PEAK_RSS_KIB', own, file=sys.stderr)\n"
)
_WRAPPER = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
    "sys.stderr.write(p.stderr)\n"
    "print('TREE_RSS_KIB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(p.returncode)\n"
)


def peak_kib(args: Sequence[str], env: Mapping[str, str], *, address_space: int | None = None) -> int:
    """Peak RSS in KiB of ``goldeval ARGS``: the larger of the goldeval process's own peak and the largest process
    of the invocation (see the module docstring). The command must exit 0.

    Args:
        address_space: When given, every process of the invocation runs under this ``RLIMIT_AS``, bytes (what
            ``ulimit -v`` sets): an allocation past it fails instead of growing.

    Raises:
        AssertionError: the command failed (its exit code and the end of its stderr are in the message).
    """
    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    out = subprocess.run([sys.executable, "-c", _WRAPPER, sys.executable, "-c", _CHILD, *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env=dict(env), preexec_fn=limit if address_space else None)
    assert out.returncode == 0, f"goldeval {' '.join(args)}: exit {out.returncode}\n{out.stderr[-3000:]}"
    lines = out.stderr.splitlines()
    own = next(int(x.split()[1]) for x in reversed(lines) if x.startswith("PEAK_RSS_KIB "))
    tree = next(int(x.split()[1]) for x in reversed(lines) if x.startswith("TREE_RSS_KIB "))
    return max(own, tree)


def assert_flat(peaks: Sequence[int], *, ratio: float = 1.2, kib: int = 12 * 1024) -> None:
    """The memory tests' criterion: the peak at the larger size (``peaks[1]``, KiB) is less than *ratio* times and
    less than *kib* KiB above the peak at the smaller size (``peaks[0]``).

    Raises:
        AssertionError: memory grew (the message holds both peaks).
    """
    small, large = peaks
    assert large / small < ratio, peaks
    assert large - small < kib, peaks
