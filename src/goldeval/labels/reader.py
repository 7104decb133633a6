"""Label files and row streams scored in one pass into pair counts: memory does not grow with the rows.

:func:`score_label_stream` reads each row once and folds it into the ``(gold, pred)`` pair counts (and the second
annotator's pair counts), from which every number of the results is read (:mod:`goldeval.labels`); nothing is
listed per row except what the results list per row by design: ``per_example`` (kept, or streamed to a writer and
to the run store as it is read), ``failures``, ``warnings`` and the annotators' ``disagreements``. Repeated ids are
found by a first pass over the file that keeps only the hashes of ids seen twice (:mod:`goldeval.io.ids`).

The aggregation is the labels Scorer's (:func:`goldeval.labels.aggregate.label_results`), so ``goldeval labels`` and
``goldeval score --scorer labels`` give the same results by construction. Kappa is computed from the pair counts
exactly (:func:`goldeval.labels.agreement.kappa_from_pairs`); scikit-learn is never imported.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import orjson

from goldeval.errors import InputError, given, shorten
from goldeval.io.ids import HashBuckets, IdIndex, scan_jsonl_ids
from goldeval.io.reading import (
    FLOAT_INT_LIMIT,
    JSONLineError,
    Row,
    RowError,
    check_input_file,
    check_unchanged,
    file_memo_key,
    decode_json,
    is_delimited,
    line_blocks,
    read_rows,
    remember_sha256,
)
from goldeval.io.streams import display_name, input_sha256
from goldeval.labels.metrics import read_label_row
from goldeval.labels.aggregate import LabelsPartial, label_results

try:  # the optional C fast path (see _fast.c); the loop of score_label_stream stays the definition and the fallback
    from goldeval._fast import label_flush as _fast_label_flush
    from goldeval._fast import label_lines as _fast_label_lines
    from goldeval._fast import label_table as _fast_label_table
except ImportError:  # pragma: no cover - the extension is optional
    _fast_label_lines = _fast_label_flush = _fast_label_table = None

__all__ = ["JsonlLabelRows", "counted", "score_label_stream", "score_label_path", "label_id"]

#: Per-example records are held back (not streamed, not recorded) until the positive label has been seen, up to
#: this many: a typo in --positive is then refused before anything is recorded, in all but very large files.
HOLD_BACK = 50_000

#: Entries handed to ``on_examples`` at a time.
BATCH = 512

#: Bytes of per_example JSON handed to ``on_example_lines`` at a time (about).
LINES_BYTES = 1 << 17


def label_id(raw: Any) -> str | None:
    """The id of a label row (a non-empty string, or an integer read as its decimal string), else ``None``: the
    rule of :func:`goldeval.io.reading.check_ids`."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)) or raw == "":
        return None
    return str(raw)


def score_label_stream(
    items: Iterable[Any],
    *,
    positive: str | None,
    id_field: str = "id",
    gold_field: str = "gold",
    pred_field: str = "pred",
    second_gold_field: str | None = None,
    require_positive: bool = True,
    file_name: str = "",
    recorder: Any = None,
    refuse_empty: bool = False,
    keep_per_example: bool = True,
    on_example: Callable[[dict[str, Any]], None] | None = None,
    repeated: set[int] | None = None,
    on_examples: Callable[[list[dict[str, Any]]], None] | None = None,
    on_example_lines: Callable[[bytes, int], None] | None = None,
    dataset: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Score label rows in one pass. Arguments and results as :func:`goldeval.labels.reader.score_label_rows`, plus:

    Args:
        items: :class:`~goldeval.io.reading.Row` / :class:`~goldeval.io.reading.RowError` items, or ``(line, dict)`` pairs.
        keep_per_example: Keep ``per_example`` in the results (default). False: it holds ``{"$streamed": true, "n",
            "ids_sha256", "drop_keys"}`` (the run store rebuilds the list from its cases).
        on_example: Called with each ``per_example`` entry, in order (a streaming writer).
        on_examples: Instead of, or with, *on_example*: called with lists of ``per_example`` entries, in order, a
            few thousand at a time (:data:`BATCH`), and with the last ones before the results are returned: the
            cheaper way to stream a million entries (:meth:`goldeval.io.resultsfile.ResultsFile.examples`).
        on_example_lines: Instead of, or with, the others: called with ``(body, n)``, *body* the JSON of *n*
            ``per_example`` entries (``orjson.dumps`` of each, compact), each followed by a newline, in order, about
            about LINES_BYTES at a time, and with the last ones before the results are returned
            (:meth:`goldeval.io.resultsfile.ResultsFile.example_lines`): no dict is made for a row the C reader of a
            JSONL file scores itself (:class:`JsonlLabelRows`).
        repeated: Hashes of the ids that occur more than once (a first pass, :func:`goldeval.io.ids.repeated_hashes`);
            ``None`` keeps every id (rows already in memory).
        dataset: The results' ``dataset`` (``{"path", "sha256"}`` of the file read), set before *recorder* finishes
            the run, so that the stored results hold it as the returned ones do.

    Raises:
        InputError: as :func:`goldeval.labels.reader.score_label_rows`.
    """


    prefix = f"{file_name}:" if file_name else "line "
    previous: dict[str, dict] = dict(recorder.previous()) if recorder is not None else {}
    part = LabelsPartial(keep_per_example)
    counts = part.counts
    annotator = part.annotator
    failures, warnings, disagreements = part.failures, part.warnings, part.disagreements
    gold_first, pred_first = part.gold_first, part.pred_first
    ids = IdIndex(repeated)
    first_line = ids.first_line
    per_example = part.per_example if keep_per_example else None
    streaming = positive is not None  # without a positive label the run is refused at the end: nothing to emit
    held: list[tuple[dict[str, Any], dict[str, Any] | None]] | None = [] if streaming else None
    positive_seen = not require_positive
    ids_hasher = hashlib.sha256(b"[")
    n_emitted = 0
    n_rows = n_null = 0
    saw_gold = saw_pred = saw_second = saw_id_field = fresh_any = False
    first_fields: list[str] | None = None
    record = recorder.record if recorder is not None else None
    if recorder is not None and not keep_per_example and hasattr(recorder, "per_example_in_cases"):
        recorder.per_example_in_cases = True  # every per_example entry is recorded as a case (+ status), in order

    digest = recorder is not None  # the ids' digest is what the store checks its cases against
    need_rec = (per_example is not None or on_example is not None or recorder is not None or on_examples is not None
                or on_example_lines is not None)
    batch: list[dict[str, Any]] = []
    # the common case (--out, no store, no second annotator): entries go to a list, handed over a batch at a time
    plain = on_examples is not None and per_example is None and on_example is None and recorder is None
    lines = bytearray()  # with on_example_lines: the entries' JSON not yet handed over, and how many
    n_lines = 0
    dumps = orjson.dumps
    # A new run whose recorder takes records in bulk: the rows the C reader scores reach it as their per_example
    # JSON (plus "status"), a block at a time (Recorder.record_lines); the other rows are recorded one by one.
    bulk = (recorder is not None and not previous and second_gold_field is None and not keep_per_example
            and hasattr(recorder, "record_lines"))
    # ... and its bytes form: no dict at all for the rows the C reader scores (JsonlLabelRows), the JSON of the others
    only_lines = ((on_example_lines is not None or bulk) and per_example is None and on_example is None
                  and (recorder is None or bulk) and on_examples is None)
    record_lines = recorder.record_lines if bulk else None
    # ... as coded blocks where the recorder takes them (Recorder.record_coded): each case's id, line and the code of
    # its record's tail (',"gold":…,"pred":…,"outcome":…}') in *tails*, which the C reader shares
    record_coded = getattr(recorder, "record_coded", None) if bulk else None
    tails: dict[bytes, int] = {}
    n_fast = 0
    fast = getattr(items, "bind", None)
    if fast is not None:  # the C reader may score a row itself once nothing about the row can need more than counting
        can = (recorder is None or bulk) and second_gold_field is None and (not need_rec or only_lines)
        emit_mask = ((1 if on_example_lines is not None else 0) | ((4 if record_coded is not None else 2) if bulk else 0)
                     if only_lines else 0)
        fast = fast(lambda: can and first_fields is not None and (held is None or not need_rec), positive, emit_mask,
                    tails) if (can and (not need_rec or streaming)) else None

    def emit(rec: dict[str, Any], case: dict[str, Any] | None) -> None:
        nonlocal n_emitted, batch
        if per_example is not None:
            per_example.append(rec)
        if on_example is not None:
            on_example(rec)
        if on_examples is not None:
            batch.append(rec)
            if len(batch) >= BATCH:
                on_examples(batch)
                batch = []
        if on_example_lines is not None:
            lines_add(rec)
        if digest or record_lines is not None:
            id_json = orjson.dumps(rec["id"])
            ids_hasher.update((b"," if n_emitted else b"") + id_json)
        n_emitted += 1
        if case is not None and record_coded is not None:  # in the same block as the C reader's cases around it
            tail = b''.join((b',"gold":', dumps(case["gold"]), b',"pred":', dumps(case["pred"]), b',"outcome":"',
                             case["outcome"].encode(), b'"}'))
            code = tails.get(tail)
            if code is None:
                code = tails[tail] = len(tails)
            record_coded(id_json, 1, case["line"], code.to_bytes(4, sys.byteorder), (code,), tails)
        elif case is not None and record_lines is not None:  # in the same block as the C reader's records around it
            record_lines(dumps(case), 1, id_json)
        elif case is not None and record is not None:
            record(case)

    def lines_add(rec: dict[str, Any]) -> None:
        nonlocal n_lines, lines
        if on_example_lines is None:  # (bulk recording without --out: the entries go to the store only)
            return
        lines += dumps(rec)
        lines += b"\n"
        n_lines += 1
        if len(lines) >= LINES_BYTES:
            on_example_lines(bytes(lines), n_lines)
            lines = bytearray()
            n_lines = 0

    def flush() -> None:
        nonlocal held
        if held is not None:
            for rec, case in held:
                emit(rec, case)
            held = None

    for item in items:
        n_rows += 1
        t = type(item)
        if t is tuple:
            line, data = item
        elif t is Row:
            line, data = item.line, item.data
        elif t is _Stretch:  # rows the C reader scores itself (JsonlLabelRows): their counts, and their entries' JSON
            first = item.lineno + 1
            k, nulls, body, records, ids = item.run(counts)
            n_rows += k - 1  # (this item is not a row)
            n_null += nulls
            if k and record_coded is not None:  # the cases the Python path below would record, as columns
                id_view = memoryview(ids)[:-1]  # (each id is followed by a comma: not the last)
                if n_emitted:
                    ids_hasher.update(b",")
                ids_hasher.update(id_view)
                record_coded(id_view, k, first, records, item.used, tails)
            elif records and record_lines is not None:  # the records the Python path below would record, in bulk
                ids_hasher.update((b"," if n_emitted else b"") + ids[:-1])
                record_lines(records[:-1], k, ids[:-1])
            n_emitted += k
            n_fast += k
            if body and on_example_lines is not None:  # handed over as it is, after the entries of the rows before it
                if n_lines:
                    on_example_lines(bytes(lines), n_lines)
                    lines = bytearray()
                    n_lines = 0
                on_example_lines(body, k)
            continue
        elif t is RowError or isinstance(item, RowError):
            failures.append({"line": item.line, "id": item.id, "error": item.error})
            if record is not None and item.id is not None and (previous.get(item.id) or {}).get("status") != "unscored":
                record({"id": item.id, "status": "unscored", "line": item.line, "reason": item.error})
            continue
        else:
            line, data = item.line, item.data
        if first_fields is None:
            first_fields = [str(k) for k in data]
        if not saw_id_field and id_field in data:
            saw_id_field = True
        raw = data.get(id_field)
        rid = raw if type(raw) is str and raw else label_id(raw)
        if rid is None:
            what = given(data, id_field)
            failures.append({"line": line, "id": None, "error": f"{prefix}{line}: field '{id_field}' must be a non-empty string, {what}. Give every row a stable id."})
            continue
        first = None if (repeated is not None and hash(rid) not in repeated) else first_line(rid, line)
        if first is not None:  # never recorded: the case of this id is its first row's
            failures.append({"line": line, "id": rid, "error": f"{prefix}{line}: id {rid!r} repeats line {first}. Ids must be unique; remove or rename the duplicate."})
            continue
        prev = previous.get(rid) if previous else None
        new = True
        if prev is not None and prev.get("status") == "scored":
            # the row's fields count as an uninterrupted run counts them (a second annotator's column only in the
            # rows scored before the interruption is a column the file has), and they were seen (fresh: the check
            # of the second annotator's column applies, as it does when every case is reused)
            saw_gold = fresh_any = True
            if not saw_pred and pred_field in data:
                saw_pred = True
            if second_gold_field is not None:
                saw_second = saw_second or second_gold_field in data
            g, p, s2 = prev["gold"], prev.get("pred"), prev.get("second_gold")
            new = False
            if p is None or (s2 is None and second_gold_field is not None):  # the only cases that can warn
                _resumed_warnings(warnings, prev, data, prefix, line, rid, (g, p, s2), gold_field, pred_field,
                                  second_gold_field, positive)
        else:
            g, p, s2, err, row_warnings = read_label_row(data, prefix, line, gold_field=gold_field, pred_field=pred_field,
                                                         second_gold_field=second_gold_field, positive=positive)
            if err is not None:
                saw_gold = saw_gold or gold_field in data
                failures.append({"line": line, "id": rid, "error": err})
                if record is not None:
                    record({"id": rid, "status": "unscored", "line": line, "reason": err})
                continue
            saw_gold = True
            if not saw_pred and pred_field in data:
                saw_pred = True
            if second_gold_field is not None:
                saw_second = saw_second or second_gold_field in data
            if row_warnings is not None:
                warnings.extend({"line": line, "id": rid, "warning": w} for w in row_warnings)
            fresh_any = True
        key = (g, p)
        c = counts.get(key)
        if c is None:
            counts[key] = 1
            if g not in gold_first:
                gold_first[g] = (line, rid)
            if p is not None and p not in pred_first:
                pred_first[p] = (line, rid)
            if not positive_seen and (g == positive or p == positive):
                positive_seen = True
        else:
            counts[key] = c + 1
        if p is None:
            n_null += 1
        if s2 is not None:
            annotator[(g, s2)] += 1
            if g != s2:
                disagreements.append({"id": rid, "a": g, "b": s2, "line": line})
        if not need_rec:
            n_emitted += 1
        elif streaming:
            outcome = ("tp" if p == positive else "fn") if g == positive else ("fp" if p == positive else "tn")
            rec = {"id": rid, "line": line, "gold": g, "pred": p, "outcome": outcome}
            case = None
            if new and record is not None:
                case = {"id": rid, "status": "scored", "line": line, "gold": g, "pred": p, "outcome": outcome}
                if second_gold_field is not None:
                    case["second_gold"] = s2
            if held is None:
                if plain:
                    batch.append(rec)
                    n_emitted += 1
                    if len(batch) >= BATCH:
                        on_examples(batch)  # type: ignore[misc]
                        batch = []
                elif only_lines and record is None:
                    lines_add(rec)
                    n_emitted += 1
                else:
                    emit(rec, case)
            else:
                held.append((rec, case))
                if positive_seen or len(held) >= HOLD_BACK:
                    flush()

    if n_fast:  # every row the C reader scored had an id, a gold label and a prediction field, and was new
        saw_id_field = saw_gold = saw_pred = fresh_any = True
        fast.flush(counts)  # type: ignore[union-attr]
    part.n_rows = n_rows
    part.null_predictions = n_null
    part.fields = first_fields
    part.id_present = saw_id_field
    part.gold_present, part.pred_present, part.second_present = saw_gold, saw_pred, saw_second
    part.fresh = fresh_any
    where = file_name or "labels"
    n_scored = sum(counts.values())
    if refuse_empty and not n_scored:  # nothing to score is bad input, never a table of undefined values with exit 0
        if n_rows == 0:
            raise InputError(f"{where}: no rows (a header without data?). Give one row per case: id, gold, pred.")
        if first_fields is None or saw_id_field:
            raise InputError(
                f"{where}: none of the {n_rows} rows could be scored; the first failure: {failures[0]['error']} "
                "Fix the file (JSONL: one object per line; CSV: a header row, then one row per case)."
            )
    config = {"positive": positive, "id_field": id_field, "gold_field": gold_field, "pred_field": pred_field,
              "second_gold_field": second_gold_field, "require_positive": require_positive, "source": where}
    results = label_results(part, config)  # raises on a missing column, no positive, a positive not seen
    flush()
    if batch and on_examples is not None:
        on_examples(batch)
        batch = []
    if n_lines:
        on_example_lines(bytes(lines), n_lines)  # type: ignore[misc]
        lines = bytearray()
    if not keep_per_example:
        ids_hasher.update(b"]")
        results["per_example"] = {"$streamed": True, "n": n_emitted, "ids_sha256": ids_hasher.hexdigest() if digest else None,
                                  "drop_keys": ["status", "second_gold"]}
    if dataset is not None:
        results["dataset"] = dict(dataset)
    if recorder is not None:
        recorder.finish(results)
    return results


def _resumed_warnings(warnings: list[dict[str, Any]], prev: dict[str, Any], data: dict[str, Any], prefix: str, line: int,
                      rid: str, labels: tuple[Any, Any, Any], gold_field: str, pred_field: str,
                      second_gold_field: str | None, positive: str | None) -> None:
    """Append to *warnings* the warnings of a case a resumed run reuses from the store (*prev*, scored before the
    interruption), so that its results list them as an uninterrupted run's do: those recorded with the case (the
    engine path's records hold them), else those of its row read again — the row the case was scored from (the run
    resumes only on the same input), and only if reading it gives the recorded labels *labels*
    ``(gold, pred, second)`` (the bulk records of ``goldeval labels`` hold the labels and the outcome, not the
    warnings; recording them there would split its coded blocks at every row without a prediction)."""

    recorded = prev.get("warnings")
    if recorded is None:
        g, p, s2, err, recorded = read_label_row(data, prefix, line, gold_field=gold_field, pred_field=pred_field,
                                                 second_gold_field=second_gold_field, positive=positive)
        if err is not None or (g, p, s2) != labels:
            return
    warnings.extend({"line": line, "id": rid, "warning": w} for w in recorded or ())


def _jsonl_items(path: str | os.PathLike[str], fields: tuple[str, ...] | None = None) -> Iterator[Any]:
    """``(line, dict)`` for each JSON object line of *path*, :class:`~goldeval.io.reading.RowError` for the others (not
    UTF-8, not JSON, NaN, not an object: each fails alone), decoded by :func:`goldeval.io.reading.decode_json` (exact
    integers past 64 bits). With *fields* (the fields the scorer reads), a line orjson reads is read again exactly
    only when one of those holds an integer past 64 bits (``decode_json(..., fields=)``, inlined here: the hot
    path); the other fields are never read, so their rounding cannot matter."""

    p = check_input_file(path)
    seen_any = False
    loads, refused = orjson.loads, orjson.JSONDecodeError
    with p.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if fields is not None:
                try:
                    data = loads(raw)
                except refused:
                    pass
                else:
                    seen_any = True
                    if type(data) is dict:
                        for name in fields:
                            v = data.get(name)
                            if type(v) is float and not -FLOAT_INT_LIMIT < v < FLOAT_INT_LIMIT:
                                break
                        else:
                            yield (lineno, data)
                            continue
            if not raw.strip():
                continue
            seen_any = True
            yield _strict_item(p.name, lineno, raw)
    if not seen_any:
        raise InputError(f"{p}: holds no rows (only blank lines), expected one JSON object per line.")


def _strict_item(name: str, lineno: int, raw: bytes) -> Any:
    """A non-blank line read strictly (:func:`goldeval.io.reading.decode_json`): ``(line, dict)`` or a RowError."""

    try:
        data = decode_json(raw)
    except JSONLineError as exc:
        return RowError(lineno, None, f"{name}:{lineno}: {exc.reason}")
    if type(data) is not dict:
        return RowError(lineno, None, f"{name}:{lineno}: expected a JSON object, got {shorten(data)}.")
    return (lineno, data)


#: Bytes read at a time by :class:`JsonlLabelRows` (then completed to the end of a line).
READ_BLOCK = 1 << 16


class _Stretch:
    """Handed to the scoring loop by :class:`JsonlLabelRows`: :meth:`run` scores the plain rows from here on."""

    __slots__ = ("rows", "block", "pos", "lineno", "used")

    def __init__(self, rows: JsonlLabelRows) -> None:
        self.rows = rows
        self.block, self.pos, self.lineno = b"", 0, 0
        self.used: list[int] = []

    def run(self, counts: dict) -> tuple[int, int, bytes, bytes | None, bytes | None]:
        """Score the plain rows from :attr:`pos` into *counts* (C: :func:`goldeval._fast.label_lines`):
        ``(rows scored, null predictions, their per_example JSON or b"", their case records or None, their ids'
        JSON or None)`` (records and ids with ``emit & 2``: each record followed by a newline, each id by a comma;
        with ``emit & 4`` the records' tail codes instead of the records, one uint32 a row, and :attr:`used` the
        codes met); :attr:`pos` and :attr:`lineno` move past them."""
        r = self.rows
        if r.emit & 4:
            out = _fast_label_lines(
                self.block, self.pos, self.lineno, orjson.loads, orjson.JSONDecodeError, r.id_field, r.gold_field,
                r.pred_field, counts, r.repeated, r.positive, orjson.dumps, r.emit, r.table, r.tails)
            self.used = out[7]
        else:
            out = _fast_label_lines(
                self.block, self.pos, self.lineno, orjson.loads, orjson.JSONDecodeError, r.id_field, r.gold_field,
                r.pred_field, counts, r.repeated, r.positive, orjson.dumps, r.emit, r.table)
        self.pos, self.lineno, k, nulls, body = out[:5]
        return k, nulls, body, out[5] if len(out) > 5 else None, out[6] if len(out) > 6 else None


class JsonlLabelRows:
    """The rows of a JSONL label file for :func:`score_label_stream`: iterated, the items of :func:`_jsonl_items`
    (the definition). Bound by :func:`score_label_stream` (when it records nothing per row but counts and the
    per_example JSON), the plain rows are scored by C (:func:`goldeval._fast.label_lines`) in stretches handed to
    the loop as :class:`_Stretch` items, and only the others come as items, read and yielded exactly as
    :func:`_jsonl_items` does: a row is plain when orjson reads it as an object with a non-empty string id whose
    hash is not among the repeated ones, a gold label and a prediction that need no rule (a string not starting
    or ending with white space; the prediction may be null), and a (gold, prediction) pair already counted."""

    def __init__(self, path: str | os.PathLike[str], fields: tuple[str, ...], repeated: set[int],
                 progress: Callable[[int], None] | None = None,
                 read_as: tuple[tuple[str, int, int, int, int], str] | None = None) -> None:
        self.path = path
        self.progress = progress
        # (the file's identity and sha256 as the first pass read them: once every row is read, a file that changed
        # since must still have that sha256, else its rows are not those hashed and kept: refused)
        self.read_as = read_as
        self.fields = fields
        self.id_field, self.gold_field, self.pred_field = fields[:3]
        self.repeated = repeated
        self.positive = ""
        self.emit = 0
        self._ready: Callable[[], bool] | None = None
        self.table: Any = None  # label_lines' state: the pairs met and the rows not yet added to the counts
        self.tails: dict[bytes, int] = {}

    def bind(self, ready: Callable[[], bool], positive: str | None, emit: int,
             tails: dict[bytes, int] | None = None) -> JsonlLabelRows | None:
        """Let C score the plain rows whenever ``ready()``; *emit* a bit mask: 1 with their per_example JSON, 2
        with their run store records and ids, 4 with their ids and tail codes in *tails* instead (see
        :meth:`_Stretch.run`). ``None`` (and nothing bound) where the C module is missing or the rows read more
        fields than id, gold and pred."""
        if _fast_label_lines is None or len(self.fields) != 3:
            return None
        self._ready, self.positive, self.emit = ready, positive if positive is not None else "", emit
        self.tails = tails if tails is not None else {}
        self.table = _fast_label_table()
        return self

    def flush(self, counts: dict) -> None:
        """Add to *counts* the rows C counted and has not added yet (before any count is read)."""
        if self.table is not None:
            _fast_label_flush(self.table, counts)

    def __iter__(self) -> Iterator[Any]:
        yield from self._rows()
        if self.read_as is not None:
            check_unchanged(self.path, self.read_as[0], self.read_as[1], display_name(self.path))

    def _rows(self) -> Iterator[Any]:
        if self._ready is None:
            yield from counted(_jsonl_items(self.path, self.fields), self.progress)
            return

        p = check_input_file(self.path)
        ready, fields = self._ready, self.fields
        loads, refused = orjson.loads, orjson.JSONDecodeError
        stretch = _Stretch(self)
        seen_any = False
        lineno = skip = misses = 0
        with p.open("rb") as fh:
            for block in line_blocks(fh, READ_BLOCK):
                pos, end = 0, len(block)
                while pos < end:
                    if skip:
                        skip -= 1
                    elif lineno and ready():  # (line 1 may start with a byte order mark: always read here)
                        stretch.block, stretch.pos, stretch.lineno = block, pos, lineno
                        yield stretch
                        if stretch.pos > pos:
                            seen_any = True
                            misses = 0
                        else:  # a run of rows that are not plain (e.g. integer ids): C tries again later, less often
                            misses = min(misses + 1, 10)
                            skip = (1 << misses) - 1
                        pos, lineno = stretch.pos, stretch.lineno
                        if pos >= end:
                            break
                    nl = block.find(b"\n", pos)
                    nxt = end if nl < 0 else nl + 1
                    raw = block[pos:nxt]
                    pos = nxt
                    lineno += 1
                    if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                        raw = raw[3:]
                    # (what _jsonl_items does with one line)
                    try:
                        data = loads(raw)
                    except refused:
                        pass
                    else:
                        seen_any = True
                        if type(data) is dict:
                            for name in fields:
                                v = data.get(name)
                                if type(v) is float and not -FLOAT_INT_LIMIT < v < FLOAT_INT_LIMIT:
                                    break
                            else:
                                yield (lineno, data)
                                continue
                    if not raw.strip():
                        continue
                    seen_any = True
                    yield _strict_item(p.name, lineno, raw)
                if self.progress is not None:  # the lines of this block (a last one without a line feed too)
                    self.progress(block.count(b"\n") + (0 if block.endswith(b"\n") else 1))
        if not seen_any:
            raise InputError(f"{p}: holds no rows (only blank lines), expected one JSON object per line.")


def _strict_or_none(line: int, raw: bytes) -> Any:
    """A line orjson refused, read as the scoring pass reads it (:func:`_jsonl_items`), or ``None`` when that fails."""

    try:
        return decode_json(raw)
    except JSONLineError:
        return None


def _items(path: str | os.PathLike[str], fields: tuple[str, ...] | None = None) -> Iterator[Any]:
    low = str(path).lower()
    if is_delimited(low) or low.endswith((".parquet", ".pq")):
        return iter(read_rows(path))
    return _jsonl_items(path, fields)


def counted(items: Iterable[Any], progress: Callable[[int], None] | None, every: int = 1000) -> Iterator[Any]:
    """*items* as they come, with ``progress(k)`` called after each *every* of them and once for the rest."""
    if progress is None:
        yield from items
        return
    k = 0
    for item in items:
        yield item
        k += 1
        if k == every:
            progress(k)
            k = 0
    if k:
        progress(k)


def score_label_path(path: str | os.PathLike[str], *, positive: str | None, id_field: str = "id",
                     on_total: Callable[[int], None] | None = None, progress: Callable[[int], None] | None = None,
                     **options: Any) -> dict[str, Any]:
    """Read a JSONL, CSV or Parquet label file twice — ids first (for repeats), then the rows — and score it with
    :func:`score_label_stream` (same options). The results also get ``dataset`` ``{"path", "sha256"}``.

    *on_total* is called once after the first pass with the rows of a CSV / Parquet file or the lines of a JSONL
    file; *progress* with the rows (lines) read since its last call, as the second pass goes (for a progress
    display)."""

    low = str(path).lower()
    tabular = is_delimited(low) or low.endswith((".parquet", ".pq"))
    if tabular:
        buckets = HashBuckets(max(1, os.path.getsize(path) // 32) if os.path.exists(path) else 1)
        n_rows = 0
        for item in _items(path):
            n_rows += 1
            if isinstance(item, RowError):
                continue
            rid = label_id(item.data.get(id_field))
            if rid is not None:
                buckets.add(hash(rid))
        repeated = buckets.repeated()
        if on_total is not None:
            on_total(n_rows)
    else:


        check_input_file(path)
        # the dataset's sha256 from the same read; where the run keeps its inputs, their compressed copy too
        # (goldeval.runs.texts.InputCopy: the run then keeps it without reading the file again)
        recorder = options.get("recorder")
        copy = recorder.input_copy(path) if recorder is not None and hasattr(recorder, "input_copy") else None
        before, hasher = file_memo_key(path), copy if copy is not None else hashlib.sha256()
        try:
            n_lines, _, repeated = scan_jsonl_ids(path, id_field, label_id, slow_decode=_strict_or_none, ids_as_text=True,
                                                  hasher=hasher)
        except BaseException:
            if copy is not None:
                copy.discard()
            raise
        if on_total is not None:
            on_total(n_lines)
        if file_memo_key(path) == before:  # (unchanged while read: file_sha256 need not read it again)
            remember_sha256(path, hasher.hexdigest())
            if copy is not None:
                copy.close()
        elif copy is not None:
            copy.discard()
    name = os.path.basename(str(path))
    read: tuple[str, ...] = (id_field, options.get("gold_field", "gold"), options.get("pred_field", "pred"))
    if options.get("second_gold_field"):
        read += (options["second_gold_field"],)
    items = (counted(_items(path, read), progress) if tabular
             else JsonlLabelRows(path, read, repeated, progress, read_as=(before, hasher.hexdigest())))
    # (the run is finished by score_label_stream: the stored results hold the dataset too)
    dataset = {"path": display_name(path), "sha256": input_sha256(path)}
    return score_label_stream(items, positive=positive, id_field=id_field, file_name=name, repeated=repeated,
                              dataset=dataset, **options)


def score_label_rows(
    rows: Iterable[Any],
    *,
    positive: str | None,
    id_field: str = "id",
    gold_field: str = "gold",
    pred_field: str = "pred",
    second_gold_field: str | None = None,
    require_positive: bool = True,
    file_name: str = "",
    recorder: Any = None,
    refuse_empty: bool = False,
    keep_per_example: bool = True,
    on_example: Any = None,
) -> dict[str, Any]:
    """Score a stream of label rows (:class:`~goldeval.io.reading.Row` / :class:`~goldeval.io.reading.RowError`) into a results dict.

    Each row holds an id, a gold label and a prediction (``None``, an empty CSV cell, an absent field or a value
    that is not a label = no label: a miss when the gold label is positive; the last two are listed in
    ``warnings`` by line).
    Rows with no usable id, a repeated id, or a missing / null / non-string gold label are failures (by line),
    left out of the counts and listed in ``failures``.

    Args:
        rows: Rows as yielded by :func:`goldeval.io.reading.read_rows` (ids are checked here).
        positive: The positive label; ``None`` is refused with the labels seen.
        id_field, gold_field, pred_field: Field (column) names.
        second_gold_field: A second annotator's label for the same case; adds annotator agreement, Cohen's kappa
            and the disagreements to adjudicate (rows where it is empty are left out of those).
        require_positive: See :func:`score_labels`.
        file_name: Shown in per-line messages.
        refuse_empty: Raise :class:`InputError` when no row could be scored (no rows, or every row failed), before
            anything is recorded as finished; default ``False`` returns results with ``n_scored`` 0 (the CLI refuses).
        recorder: Run-store hook (``previous()``, ``record(case)``, ``finish(results)``) or ``None``. Cases already
            recorded as scored are reused, not scored again (a reused case without a prediction has its row read
            again for its warnings, which the records do not hold: a resumed run lists them as an uninterrupted
            run does); one record per case, as it is read:
            ``{"id", "status", "line", "gold", "pred", "outcome"}`` (+ ``second_gold``).
        keep_per_example: Keep ``per_example`` in the results (default); False streams it (``on_example`` and the
            store) and leaves ``{"$streamed": true, ...}`` in its place — memory then does not grow with the rows.
        on_example: Called with each ``per_example`` entry, in order.

    One pass: each row is folded into the ``(gold, pred)`` pair counts as it is read (no list per row is built);
    see :mod:`goldeval.labels.reader`. Ids are all kept here to find repeats (the rows come from the caller);
    :func:`score_label_file` reads the file's ids first instead, in bounded memory.

    Returns:
        Results dict: ``scorer``, ``positive``, ``config``, ``aggregate`` (``n``, ``n_scored``, ``n_failed``, the
        :class:`LabelScore` fields, ``agreement`` — the share of cases whose predicted label equals gold over all
        labels, the model's raw agreement with gold (``accuracy`` is one-vs-rest for ``positive``: it counts a
        confusion between two negative labels as right) —, ``kappa``, annotator metrics when asked, ``undefined``), ``per_label``,
        ``confusion_matrix``, ``per_example`` ``[{"id", "line", "gold", "pred", "outcome"}]``, ``disagreements``,
        ``warnings``, ``failures``.

    Raises:
        InputError: no row carries the gold (or pred) field at all — the column name is probably wrong —, no
            positive label, or a positive label not seen (with ``require_positive``).
    """
    return score_label_stream(
        rows, positive=positive, id_field=id_field, gold_field=gold_field, pred_field=pred_field,
        second_gold_field=second_gold_field, require_positive=require_positive, file_name=file_name, recorder=recorder,
        refuse_empty=refuse_empty, keep_per_example=keep_per_example, on_example=on_example,
    )


def score_label_file(path: str | os.PathLike[str], *, positive: str | None, **options: Any) -> dict[str, Any]:
    """Read a JSONL, CSV or Parquet label file (see :func:`goldeval.io.reading.read_rows`) and score it with
    :func:`score_label_rows` (same options). Memory does not grow with the rows when ``keep_per_example=False``: the
    ids are read first and only the hashes of repeated ones are kept (:mod:`goldeval.io.ids`).

    The results dict also gets ``dataset`` ``{"path", "sha256"}``.
    """
    return score_label_path(path, positive=positive, **options)
