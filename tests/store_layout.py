"""How a run store lays out its cases, for the tests that must know which layout their runs got (the memory tests of
`compare` and `report` cover both: coded blocks, format 3, for short rows; JSON-line blocks, format 1, for long
notes; see goldeval.runs.blocks)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["block_formats"]


def block_formats(home: Path) -> tuple[set[int], int]:
    """The formats of the ``case_blocks`` of every run in the store under *home* (``home/goldeval.db``), and the
    number of its ``cases`` rows."""
    con = sqlite3.connect(Path(home) / "goldeval.db")
    try:
        formats = {f for (f,) in con.execute("SELECT DISTINCT format FROM case_blocks")}
        (rows,) = con.execute("SELECT count(*) FROM cases").fetchone()
    finally:
        con.close()
    return formats, rows
