"""The exceptions goldeval raises.

Hierarchy (catch ``GoldevalError`` for all of them)::

    GoldevalError
     ├── InputError(ValueError)   bad argument, unreadable file, malformed definition of done
     │    └── UnreadableTextError a text the token rule cannot read would score a silent 1.0
     ├── JudgeError               the LLM judge could not be reached or configured
     └── StoreError               the run store (SQLite) failed or holds no such run

Library code raises these and never prints or exits; the CLI maps them to exit codes:
``InputError`` → 2, ``JudgeError`` / ``StoreError`` / anything else → 3.

Messages follow one pattern: **where** (file:line, case id, parameter) — **what was expected** —
**what was given** (shortened) — **what to do**.
"""

from __future__ import annotations

__all__ = ["GoldevalError", "InputError", "JudgeError", "StoreError", "UnreadableTextError", "shorten", "given"]


class GoldevalError(Exception):
    """Base class of every error goldeval raises on purpose."""


class InputError(GoldevalError, ValueError):
    """Bad input: an argument, a file, a row or a definition of done that cannot be used as given."""


class JudgeError(GoldevalError):
    """The LLM judge could not be configured or reached (not a verdict: verdicts never raise)."""


class StoreError(GoldevalError):
    """The run store failed: unreadable database, unknown run id, a migration that cannot apply."""


def shorten(value: object, width: int = 60) -> str:
    """``repr`` of *value* cut to *width* characters with an ellipsis, for error messages."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def given(data: object, field: str) -> str:
    """What a row gave for *field*, for a message: ``"it is missing"`` (no such key), ``"it is null"`` (the key holds
    JSON null: the field is there, so "missing" would send the user looking for it) or ``"got <value>"`` shortened."""
    from collections.abc import Mapping

    if not isinstance(data, Mapping) or field not in data:
        return "it is missing"
    value = data[field]
    return "it is null" if value is None else f"got {shorten(value)}"


class UnreadableTextError(InputError):
    """A text holds letters or digits the chosen token rule cannot read, and scoring it would give a silent 1.0."""
