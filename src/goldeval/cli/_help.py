"""The exit-code line every command's ``--help`` ends with. No import beyond the standard library: ``goldeval
--help`` uses it and must stay fast."""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

__all__ = ["EXIT_CODES_LINE", "exit_codes"]

F = TypeVar("F", bound=Any)

#: The one exit-code line every command's --help ends with (added by :func:`exit_codes`).
EXIT_CODES_LINE = ("Exit codes: 0 success, every gate passes (or none given) · 1 a gate fails (a regression, a changed "
                   "verdict) · 2 bad input or usage · 3 internal or store error · 130 interrupted · 143 stopped by SIGTERM.")


def exit_codes(f: F) -> F:
    """End the command's help (its docstring) with :data:`EXIT_CODES_LINE`, as its last paragraph.

    Place it directly under ``@click.command(...)`` (click reads the docstring when it builds the command)."""
    f.__doc__ = inspect.cleandoc(f.__doc__ or "") + "\n\n" + EXIT_CODES_LINE
    return f
