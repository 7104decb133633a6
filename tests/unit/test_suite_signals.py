"""The suite's Ctrl-C tests hold even when the test run itself was started with SIGINT ignored.

A non-interactive shell starts a background job (`bash -c 'python -m pytest &'`, some CI runners) with SIGINT
ignored; an ignored disposition survives exec, so every goldeval the tests start inherited it and the six
signal tests (tests/e2e/test_interrupts.py, test_stream_inputs.py, tests/postgres/test_pg_cli.py) failed with
the child exiting 0 after its Ctrl-C. conftest.py handles SIGINT in that case; a handled signal is reset to the
default at exec (POSIX execve), which is what these tests check in a child pytest started with SIGINT ignored.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from conftest import REPO

#: bit 2 (SIGINT) of /proc/PID/status SigIgn, read by a grandchild started from the inner test
INNER = '''
import subprocess, sys

def test_child_does_not_ignore_sigint():
    out = subprocess.run([sys.executable, "-c", "print(open('/proc/self/status').read())"],
                         capture_output=True, text=True, check=True).stdout
    sigign = int(next(l for l in out.splitlines() if l.startswith("SigIgn:")).split()[1], 16)
    assert not sigign & (1 << (2 - 1)), f"SIGINT is ignored in the child (SigIgn {sigign:#x})"
'''


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_children_of_a_suite_started_with_sigint_ignored_can_be_interrupted(tmp_path: Path) -> None:
    if not Path("/proc/self/status").exists():
        import pytest

        pytest.skip("needs /proc/self/status (Linux) to read a process's ignored signals")
    (tmp_path / "test_inner.py").write_text(INNER)
    # the repository's conftest is loaded as it is in the real run (rootdir = the repo, the inner file beside it)
    (tmp_path / "conftest.py").write_text((REPO / "tests" / "conftest.py").read_text())
    for plugin in ("browser_session.py",):  # the plugins it registers (pytest_plugins), beside it as in tests/
        (tmp_path / plugin).write_text((REPO / "tests" / plugin).read_text())
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_inner.py")],
                          cwd=tmp_path, capture_output=True, text=True, preexec_fn=_ignore_sigint, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
