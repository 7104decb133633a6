"""Export a stored run: its per-case records as JSONL or CSV, or the whole run as one JSON document."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

import orjson

from goldeval.errors import InputError
from goldeval.runs.location import store_label
from goldeval.runs.store import RunStore

__all__ = ["export_run", "flatten", "with_run_block"]

FORMATS = ("jsonl", "csv", "json")


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested per-case record as one flat row: nested keys joined by dots (``whole_note.f1``); lists (and
    empty objects) kept as JSON text."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(flatten(value, name + "."))
        elif isinstance(value, (list, tuple, Mapping)):
            out[name] = orjson.dumps(value).decode()
        else:
            out[name] = value
    return out


def with_run_block(results: Any, run: Mapping[str, Any], store_path: Any) -> Any:
    """*results* (a stored results dict) with the top-level ``"run": {"id", "arm", "store"}`` that every results
    file of a recorded run carries (as the scoring command wrote it); anything that is not a dict is returned as is."""

    if isinstance(results, dict):
        results["run"] = {"id": run["id"], "arm": run.get("arm"), "store": store_label(store_path)}
    return results


def export_run(store: RunStore, ref: str, fmt: str) -> bytes:
    """The run *ref* names, rendered as bytes in *fmt*.

    Args:
        store: The open store.
        ref: A run id, unique prefix, or ``latest``.
        fmt: ``jsonl`` (one per-case record per line, as recorded), ``csv`` (the same records flattened, columns
            in first-seen order, header first; RFC 4180: CRLF line ends, a field holding a comma, quote, CR or LF
            quoted) or ``json`` (``{"run": metadata, "results": the stored results
            dict, "cases": [...], "reviews": [...]}``).

    Raises:
        InputError: unknown *fmt*.
        InputError: *ref* names no single run.
    """
    if fmt not in FORMATS:
        raise InputError(f"runs export --format: expected one of {', '.join(FORMATS)}, got {fmt!r}.")
    run = store.get_run(ref, with_results=fmt == "json")
    cases = list(store.iter_cases(run["id"]))
    if fmt == "jsonl":
        return b"".join(orjson.dumps(c, option=orjson.OPT_APPEND_NEWLINE) for c in cases)
    if fmt == "csv":
        rows = [flatten(c) for c in cases]
        columns: dict[str, None] = {}
        for r in rows:
            for k in r:
                columns.setdefault(k, None)
        buf = io.StringIO()
        # RFC 4180's CRLF line ends (the csv module's default): the writer quotes a field that holds any character
        # of the line terminator, so an id holding a lone "\r" stays one field (with "\n" ends it went unquoted
        # and csv.reader / pandas split the row there)
        writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\r\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: ("" if v is None else v) for k, v in r.items()})
        return buf.getvalue().encode("utf-8")
    results = with_run_block(run.pop("results", None), run, store.path)
    doc = {"run": run, "results": results, "cases": cases, "reviews": store.reviews(run["id"])}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS)
