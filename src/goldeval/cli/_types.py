"""Click parameter types for numeric options: finite and in range, or a usage error (exit 2) naming the option.

click's ``FloatRange`` lets ``nan`` through (every comparison with it is false) and ``inf`` through an open upper
bound, so ``--timeout nan`` made a judge that never ends. Every numeric option of goldeval uses these types:

* :class:`Finite` — a float range that refuses ``nan``, ``inf`` and ``-inf``;
* :func:`cores` — an integer from 1 to the number of cores of this machine (``os.cpu_count()``).
"""

from __future__ import annotations

import math
import os
from typing import Any

import click

__all__ = ["Finite", "cores", "SEED", "COUNT"]


class Finite(click.FloatRange):
    """``click.FloatRange`` that also refuses ``nan`` and ±``inf`` (same arguments: min, max, min_open, max_open)."""

    name = "finite float range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = click.FloatRange.convert(self, value, param, ctx)
        if rv is not None and not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number (nan and inf are refused).", param, ctx)
        return rv


def cores() -> click.IntRange:
    """An integer from 1 to ``os.cpu_count()`` (the help of ``--workers`` promises at most the number of cores)."""
    return click.IntRange(min=1, max=os.cpu_count() or 1)


#: A seed for numpy's generators (``numpy.random.default_rng`` takes 0 … 2**32 - 1 here, for every platform).
SEED = click.IntRange(min=0, max=2**32 - 1)
#: A count that is at least 1 and not absurd (threads, repeats): at most 1,024.
COUNT = click.IntRange(min=1, max=1024)
