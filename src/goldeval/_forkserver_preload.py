"""Imported by multiprocessing's forkserver when it starts (see :func:`goldeval.lifeline.arm_forkserver`): it asks
the kernel to kill the forkserver when the process that started it ends, so that a ``kill -9`` of a scorer leaves
no forkserver behind. Imported anywhere else it does nothing (it looks for ``multiprocessing.forkserver.main``
among its callers). It never raises: the forkserver would die of an error here, and every pool with it."""

from __future__ import annotations

import sys
from types import FrameType


def _in_forkserver() -> bool:
    module = sys.modules.get("multiprocessing.forkserver")
    code = getattr(getattr(module, "main", None), "__code__", None)
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


try:
    if _in_forkserver():
        from goldeval.lifeline import set_parent_death_signal

        set_parent_death_signal()
except Exception:  # noqa: BLE001 - see the docstring: the forkserver must start whatever happens here
    pass
