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

from collections.abc import Mapping

__all__ = ["GoldevalError", "InputError", "JudgeError", "StoreError", "UnreadableTextError", "shorten", "given", "row_fields"]


class GoldevalError(Exception):
    """Base class of every error goldeval raises on purpose."""


class InputError(GoldevalError, ValueError):
    """Bad input: an argument, a file, a row or a definition of done that cannot be used as given."""


class JudgeError(GoldevalError):
    """The LLM judge could not be configured or reached (not a verdict: verdicts never raise)."""


class StoreError(GoldevalError):
    """The run store failed: unreadable database, unknown run id, a migration that cannot apply."""


def shorten(value: object, width: int = 60) -> str:
    """``repr`` of *value* cut to *width* characters with an ellipsis, for error messages.

    An int past Python's int-string limit (4,300 digits by default), which ``repr`` refuses, is shown by its
    leading digits; another value whose ``repr`` fails (a list holding such an int) by its type and the reason."""
    try:
        text = repr(value)
    except ValueError as exc:
        if isinstance(value, int):
            from decimal import Decimal  # start-up: `import goldeval` imports this module; decimal costs 2 ms

            text = str(Decimal(value))  # Decimal converts an int without the limit
        else:
            text = f"<{type(value).__name__} that cannot be shown: {exc}>"
    return text if len(text) <= width else text[: width - 1] + "…"


def row_fields(data: object, limit: int = 12) -> str:
    """The fields a row has, for a message about one it lacks: ``"the row has 'id', 'pred'"`` (the first *limit*;
    ``"the row has no fields"`` for ``{}``). A row of one field whose name holds ``;``, a tab or ``|`` is a CSV
    written with another separator (a spreadsheet's export in many locales), and the text says so: ``"the row has
    one field 'id;prediction;reference': the file looks separated by ';', and CSV is read with commas; save it
    comma-separated"``."""

    if not isinstance(data, Mapping):
        return f"the row is {shorten(data)}"
    keys = [str(k) for k in data]
    if not keys:
        return "the row has no fields"
    if len(keys) == 1:
        for sep, name in ((";", "';'"), ("\t", "tabs"), ("|", "'|'")):
            if sep in keys[0]:
                return (f"the row has one field {shorten(keys[0])}: the file looks separated by {name}, and CSV is "
                        "read with commas; save it comma-separated")
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return "the row has " + ", ".join(shorten(k) for k in keys[:limit]) + more


def given(data: object, field: str) -> str:
    """What a row gave for *field*, for a message: ``"it is missing (the row has 'a', 'b')"`` (no such key; see
    :func:`row_fields`), ``"it is null"`` (the key holds JSON null: the field is there, so "missing" would send the
    user looking for it) or ``"got <value>"`` shortened."""

    if not isinstance(data, Mapping) or field not in data:
        return f"it is missing ({row_fields(data)})"
    value = data[field]
    return "it is null" if value is None else f"got {shorten(value)}"


class UnreadableTextError(InputError):
    """A text holds letters or digits the chosen token rule cannot read, and scoring it would give a silent 1.0."""
