"""Peak resident memory of one `goldeval` invocation, for the tests that check memory does not grow with rows
(tests/e2e/test_score_streaming.py, test_labels_memory.py, test_judge_memory.py): they compare the peaks at two
sizes, a ratio of memory, never a timing.

The command runs in a fresh process, ``python -c`` (no main file, so a forkserver started by the run has no
``__main__`` to re-run), that reads its own high-water mark, ``VmHWM`` of ``/proc/self/status``, as it exits. Not
``ru_maxrss`` of a wrapper's children: Linux carries a process's ``ru_maxrss`` across ``exec``, so a child started
from a big parent would report the parent's size (benchmarks/bench_spark.py says more). The processes the run
starts itself (the run store's writer, scoring workers) are its children: their largest ``ru_maxrss`` is read too,
and the peak is the larger of the two.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence

__all__ = ["peak_kib"]

_CHILD = (
    "import resource, runpy, sys\n"
    "sys.argv = ['goldeval'] + sys.argv[1:]\n"
    "try:\n"
    "    runpy.run_module('goldeval', run_name='__main__')\n"
    "finally:\n"
    "    own = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
    "    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "    print('PEAK_RSS_KIB', max(own, children), file=sys.stderr)\n"
)


def peak_kib(args: Sequence[str], env: Mapping[str, str]) -> int:
    """Peak RSS in KiB of ``goldeval ARGS`` (the goldeval process, or a process it started when that one is
    larger), which must exit 0.

    Raises:
        AssertionError: the command failed (its exit code and the end of its stderr are in the message).
    """
    out = subprocess.run([sys.executable, "-c", _CHILD, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=dict(env))
    assert out.returncode == 0, f"goldeval {' '.join(args)}: exit {out.returncode}\n{out.stderr[-3000:]}"
    line = next(x for x in reversed(out.stderr.splitlines()) if x.startswith("PEAK_RSS_KIB "))
    return int(line.split()[1])
