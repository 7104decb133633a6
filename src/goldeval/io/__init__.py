"""Input and output files: reading rows, streams, repeated ids, results files, outputs that never clobber inputs.

Owns:
    :mod:`~goldeval.io.reading`       JSONL / CSV / TSV / Parquet rows, streamed, with per-line errors (:func:`read_rows`)
    :mod:`~goldeval.io.streams`       inputs that are streams (``-``, FIFOs, devices), and decoded files
    :mod:`~goldeval.io.decoding`      compressed, UTF-16/32 and JSON-array inputs recognised and decoded to plain rows
    :mod:`~goldeval.io.ids`           repeated ids found in memory that does not grow with the rows
    :mod:`~goldeval.io.outputs`       where outputs go: never onto an input, never half-written
    :mod:`~goldeval.io.resultsfile`   a results file written as the rows are scored, and read back

May import: the foundation modules (errors, the ``_fast`` C extension) only.

This package re-exports the public names of :mod:`goldeval.io.reading` (``from goldeval.io import read_rows``
keeps working), imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goldeval.io.reading import (
        BigInt,
        JSONLineError,
        Row,
        RowError,
        check_ids,
        check_input_file,
        decode_json,
        decode_line,
        file_sha256,
        is_parquet,
        jsonl_lines,
        read_csv,
        read_jsonl,
        read_parquet,
        read_rows,
        remember_sha256,
        usable_id,
    )

__all__ = [
    "BigInt",
    "JSONLineError",
    "Row",
    "RowError",
    "check_ids",
    "check_input_file",
    "decode_json",
    "decode_line",
    "file_sha256",
    "is_parquet",
    "jsonl_lines",
    "read_csv",
    "read_jsonl",
    "read_parquet",
    "read_rows",
    "remember_sha256",
    "usable_id",
]


def __getattr__(name: str) -> Any:
    # the public names of goldeval.io.reading, imported on first use (importing a submodule of this package stays light)
    if name in __all__:
        value = getattr(importlib.import_module("goldeval.io.reading"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
