"""Rendering for people: terminal tables (rich), plain-language lines, the HTML report, JUnit XML and Markdown for
CI. All rounding happens here, nowhere else.

May import: :mod:`goldeval.runs` (a report of a recorded run), the domain packages (token spans, a judged query's
rows), :mod:`goldeval.io`, the foundation modules. Never: engines, pipeline, cli.
"""

from __future__ import annotations

__all__ = ["fmt"]


def fmt(value: float | int | None, digits: int = 3) -> str:
    """A number for the screen: ints as is, floats to *digits* decimals, ``None`` as ``—``."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"
