"""Text from the user's data made safe to print on a terminal (issue 10 item 11).

An arm name, a case id, a label or a file name is the user's data, and may hold control characters: an ESC
(``\\x1b[2J`` clears the screen, ``\\x1b]8;;…`` writes a link), a carriage return or backspace that overprints what
came before, a C1 control (``\\x9b`` is a CSI on some terminals), or a bidirectional override (U+202E) that shows a
text reversed. Printed raw, such an id can hide or fake a line of the summary (a FAIL shown as a pass). Every such
character is shown escaped instead, as Python's ``repr`` writes it: ``\\x1b``, ``\\r``, ``\\u202e``.

The CLI does it in one place: every rich Console it prints with (``goldeval.cli._common.stdout_console`` /
``stderr_console``) is an :func:`escaping_console`, which escapes every string it is given (a printed line, a table
cell, a title) when it turns it into text, before its own styling is added and before the text is measured, so
tables stay aligned; its plain ``goldeval: …`` lines go through :func:`printable` (``goldeval.cli._common.fail``
and ``echo``). Line breaks and tabs inside a message are kept (they are layout).

Source: Unicode general categories Cc (controls: C0, DEL, C1) and the bidirectional formatting characters of
UAX #9 (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI, LRM, RLM, ALM); rich's ``Console.render_str`` (where every
string becomes a ``Text``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["cap_columns", "escaping_console", "fmt", "fmt_seconds", "printable"]

#: C0 controls but line feed and tab, DEL, the C1 controls, and the bidirectional formatting characters.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: The same with tab and line feed.
_ALL_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\r": "\\r", "\t": "\\t", "\n": "\\n"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    return _NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """*text* with every control character escaped (``\\x1b``, ``\\r``, ``\\u202e``); line feeds and tabs are
    kept unless ``keep_newlines`` is false. Any other character, a backslash too, is unchanged.

    Args:
        text: Any string (non-strings are first turned into one with ``str``).
        keep_newlines: Keep ``\\n`` and ``\\t`` (a multi-line message); false escapes them too (one id, one line).

    Returns:
        The escaped text; the same object when there was nothing to escape.
    """
    if not isinstance(text, str):
        text = str(text)
    pattern = _CONTROLS if keep_newlines else _ALL_CONTROLS
    return pattern.sub(_escape, text) if pattern.search(text) else text


_CONSOLE_CLASS: list[type] = []


def cap_columns(table: Any, cap: int) -> None:
    """Let no column of a rich ``Table`` grow past *cap* cells: a longer cell folds onto more lines of its own row
    (nothing is cut), instead of widening the column, and so every row, for all. Columns given a ``width`` or
    ``max_width`` by their table keep it."""
    for column in table.columns:
        if column.width is None and column.max_width is None:
            column.max_width = cap
            if column.overflow == "ellipsis":  # (rich's default; "fold" keeps every character)
                column.overflow = "fold"


def escaping_console(*, column_cap: int | None = None, **options: Any) -> Any:
    """A ``rich.console.Console(**options)`` that escapes control characters (:func:`printable`, line feeds and tabs
    kept: they are layout) in every string it turns into text — what it prints, table cells and titles — before it
    measures and lays them out, so the escaped text is measured as it is shown.

    With *column_cap*, every table it renders (nested ones too) has its columns capped at that many cells
    (:func:`cap_columns`): one long label folds in its own row rather than widening every row."""
    if not _CONSOLE_CLASS:
        from rich.console import Console  # start-up: rich loads only when a table is rendered
        from rich.table import Table  # start-up: rich loads only when a table is rendered

        class EscapingConsole(Console):
            column_cap: int | None = None

            def render_str(self, text: str, **kw: Any) -> Any:  # every str becomes Text here (print, Table cells)
                return super().render_str(printable(text), **kw)

            def render(self, renderable: Any, options: Any = None) -> Any:  # every renderable, nested ones too
                if self.column_cap is not None and isinstance(renderable, Table):
                    cap_columns(renderable, self.column_cap)
                return super().render(renderable, options)

        _CONSOLE_CLASS.append(EscapingConsole)
    console = _CONSOLE_CLASS[0](**options)
    console.column_cap = column_cap
    return console


def fmt(value: float | int | None, digits: int = 3) -> str:
    """A number for the screen: ints as is, floats to *digits* decimals, ``None`` as ``—``."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def fmt_seconds(seconds: float) -> str:
    """A duration for the screen, with the digits that show it: ``0.0038`` → ``3.8 ms``, ``2.456`` → ``2.46 s``.

    Under a second it is milliseconds to two significant figures' worth (one decimal under 10 ms, none above), so a
    run of a few milliseconds never reads as ``0.00 s``; from a second on, seconds to two decimals.

    Args:
        seconds: A non-negative duration in seconds (``float``).

    Returns:
        ``str``; ``"0 ms"`` for zero.

    Examples:
        >>> fmt_seconds(0.0038), fmt_seconds(0.25), fmt_seconds(2.456), fmt_seconds(0.0)
        ('3.8 ms', '250 ms', '2.46 s', '0 ms')
    """
    if seconds >= 0.9995:  # 999.5 ms and up would print as "1000 ms"
        return f"{seconds:.2f} s"
    ms = seconds * 1000
    if ms >= 9.95:
        return f"{ms:.0f} ms"
    return f"{ms:.1f} ms" if ms > 0 else "0 ms"
