"""A Ctrl-C that Python wraps in another error is still a Ctrl-C: exit 130 with one line, never an internal error.

Python 3.11 reports an interrupt that lands while a class is built (an import builds many) as ``RuntimeError: Error
calling __set_name__ on …`` whose ``__cause__`` is the KeyboardInterrupt: seen in the first moments of `goldeval
score` (tests/e2e/test_interrupts.py), where it came out as exit 3 "internal error".
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from goldeval._startup import Terminated
from goldeval.cli._signals import interrupt_in_chain


def _wrapped(inner: BaseException) -> RuntimeError:
    try:
        try:
            raise inner
        except BaseException as exc:
            raise RuntimeError("Error calling __set_name__ on 'cached_property' instance") from exc
    except RuntimeError as outer:
        return outer


def test_the_interrupt_a_runtime_error_wraps_is_found():
    ki = KeyboardInterrupt()
    assert interrupt_in_chain(_wrapped(ki)) is ki
    term = Terminated()
    assert interrupt_in_chain(_wrapped(term)) is term


def test_an_error_that_wraps_no_interrupt_is_not_one():
    assert interrupt_in_chain(_wrapped(ValueError("x"))) is None
    assert interrupt_in_chain(RuntimeError("plain")) is None


@pytest.mark.parametrize("inner, code, words", [("KeyboardInterrupt()", 130, "interrupted"),
                                                ("Terminated()", 143, "stopped by SIGTERM")])
def test_a_command_stopped_by_a_wrapped_interrupt_exits_as_interrupted(tmp_path, inner, code, words):
    # A guarded command whose body raises the wrapped interrupt: one line and 130 / 143, not exit 3.
    program = f"""
import sys
import click
from goldeval._startup import Terminated
from goldeval.cli._common import guarded

@click.command()
@guarded
def cmd():
    try:
        raise {inner}
    except BaseException as exc:
        raise RuntimeError("Error calling __set_name__") from exc

cmd()
"""
    p = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == code, p.stderr
    assert len(lines) == 1 and lines[0].startswith(f"goldeval: {words}"), lines
