"""Rendering for people: terminal tables (rich) and plain-language lines. All rounding happens here, nowhere else."""

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
