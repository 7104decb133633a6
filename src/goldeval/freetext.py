"""Batch free-text scoring: token F1 of every row of a JSONL file, per example and macro-averaged.

Rows are ``{"id", "prediction", "reference"}`` with strings (whole note) or objects of section name → text
(sections; the whole note is then the pooled text). The output follows upstream Open-Scribe ``run_eval.py``:
``aggregate`` {``n``, ``n_failed``, ``elapsed_sec``, ``whole_note_f1_mean``, ``whole_note_precision_mean``,
``whole_note_recall_mean``} and ``per_example`` [{``id``, ``whole_note``: {``precision``, ``recall``, ``f1``}}],
plus what a user needs: the tokenizer, ``n_scored``, ``n_rows``, ``failures`` with line numbers, section scores.

As upstream, ``n`` counts the scored rows and failed rows are left out of the means (that is how the published
PriMock57 and ACI-Bench figures were computed); unlike upstream, every failure is listed with its line and reason.

Large files (≥ ``PARALLEL_MIN_ROWS`` rows) are scored on every core by default; the file is streamed in chunks. With
``keep_per_example=False`` (what ``goldeval score`` does: the examples stream to ``--out`` and to the store) memory does
not grow with the file: means are exact running sums, repeated ids are found by a first pass (see ``goldeval.ids``).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from goldeval.accumulate import ExactSum
from goldeval.errors import InputError, given, shorten
from goldeval.ids import IdIndex, scan_jsonl_ids
from goldeval.io import BigInt, JSONLineError, check_input_file, decode_json, has_big_float
from goldeval.overlap import overlap_of_texts, refuse_unreadable, section_f1, section_texts
from goldeval.streams import display_name
from goldeval.tokens import Tokenizer, get_tokenizer, split_word

__all__ = ["FreeTextConfig", "results_head", "score_file", "score_rows", "SCORER_NAME", "SCORER_VERSION", "PARALLEL_MIN_ROWS"]

SCORER_NAME = "token_f1"
SCORER_VERSION = "1"
#: Files with at least this many rows are scored in parallel unless ``workers`` says otherwise.
PARALLEL_MIN_ROWS = 10_000
_CHUNK_ROWS = 500
_CHUNK_BYTES = 2 << 20  # a chunk also ends at 2 MiB, so memory stays flat when rows are large


@dataclass(frozen=True, slots=True)
class FreeTextConfig:
    """What to read and how to tokenize.

    Attributes:
        prediction_field: Field holding the prediction (a string, or an object of sections). Default ``prediction``.
        reference_field: Field holding the reference, same shapes. Default ``reference``.
        id_field: Field holding the stable row id. Default ``id``.
        tokenizer: Token rule name (``openscribe`` default, or ``unicode``).
    """

    prediction_field: str = "prediction"
    reference_field: str = "reference"
    id_field: str = "id"
    tokenizer: str = "openscribe"

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------------------------
# One row


def _scores(ov) -> dict[str, float]:
    return {"precision": ov.precision, "recall": ov.recall, "f1": ov.f1}


def _score_record(data: dict[str, Any], line: int, cfg: FreeTextConfig, tok: Tokenizer, src: str) -> dict[str, Any]:
    """Score one decoded row. Returns a per-example record, or a failure record ``{"failed": True, ...}``."""
    where = f"{src}:{line}"
    raw_id = data.get(cfg.id_field)
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or (isinstance(raw_id, str) and not raw_id.strip()):
        got = given(data, cfg.id_field)
        return _failure(
            line, None,
            f"{where}: field '{cfg.id_field}' must be a non-empty string (or an integer), {got}. Give every row a stable id, "
            "or name the id field with --id-field.",
        )
    rid = str(raw_id)
    bad = _lone_surrogate(rid)
    if bad is not None:  # read by the standard library's parser (see _decode): no JSON output could hold this id
        return _failure(
            line, None,
            f"{where}: field '{cfg.id_field}' must be Unicode text, got {shorten(raw_id)} (the lone surrogate escape {bad} "
            "has no UTF-8 form, so no result could name the row). Fix the id.",
        )
    values = []
    for field, side in ((cfg.prediction_field, "prediction"), (cfg.reference_field, "reference")):
        if field not in data:
            have = ", ".join(repr(k) for k in list(data)[:12])
            return _failure(
                line, rid,
                f"{where}: field '{field}' is missing (the row has {have}). Add it, or name the {side} field with --{side}-field.",
            )
        value = data[field]
        if value is None:
            upstream = data.get("error")
            note = ""
            if isinstance(upstream, str):
                note = f" (the row's error says: \"{upstream[:117] + '...' if len(upstream) > 120 else upstream}\")"
            return _failure(line, rid, f"{where}: field '{field}' is null{note}; a row without a {side} cannot be scored and is counted in n_failed.")
        if not isinstance(value, (str, dict)) or type(value) is BigInt:  # an integer past 64 bits is not a text
            return _failure(
                line, rid,
                f"{where}: field '{field}' must be a string or an object of sections, got {shorten(value)}. "
                f"Fix the row or pass --{side}-field.",
            )
        values.append(value)
    pred, ref = values
    try:
        if isinstance(pred, str) and isinstance(ref, str):
            ov = overlap_of_texts(pred, ref, tok)
            if ov.both_empty:
                refuse_unreadable(tok, {"prediction": pred, "reference": ref})
            rec = {"id": rid, "line": line, "whole_note": _scores(ov), "tokens": _counts(ov)}
            for side, text in (("prediction", pred), ("reference", ref)):
                ch = tok.unreadable(text)
                if ch is not None:  # scored on the tokens the rule can read; say that some text was not read
                    rec["unreadable"] = {"side": side, "char": ch}
                    break
            if "unreadable" in rec and tok.name == "openscribe":  # only then can a word be split at a non-ASCII letter
                for side, text in (("prediction", pred), ("reference", ref)):
                    word = split_word(text)
                    if word is not None:
                        rec["split_word"] = {"side": side, "word": word}
                        break
            return rec
        if isinstance(pred, dict) and isinstance(ref, dict):
            for field, sections in ((cfg.prediction_field, pred), (cfg.reference_field, ref)):
                for name in sections:
                    bad = _lone_surrogate(name) if isinstance(name, str) else None
                    if bad is not None:  # section names are keys of the results: they must be writable as JSON
                        return _failure(
                            line, rid,
                            f"{where}: field '{field}' has a section name that is not Unicode text, {shorten(name)} (the "
                            f"lone surrogate escape {bad} has no UTF-8 form, so no result could name the section). Fix the name.",
                        )
            so = section_f1(pred, ref, tokenizer=tok)
            return {
                "id": rid,
                "line": line,
                "whole_note": _scores(so.whole_text),
                "tokens": _counts(so.whole_text),
                "sections": {name: _scores(ov) for name, ov in so.per_section.items()},
                "sections_empty_both": [n for n, ov in so.per_section.items() if ov.both_empty],
                "section_macro": None
                if so.macro_f1 is None
                else {"precision": so.macro_precision, "recall": so.macro_recall, "f1": so.macro_f1},
            }
        # one side sectioned, the other flat: score the whole note on the pooled text (sections checked as usual)
        pred_text = pred if isinstance(pred, str) else "\n".join(section_texts(pred, "prediction").values())
        ref_text = ref if isinstance(ref, str) else "\n".join(section_texts(ref, "reference").values())
        ov = overlap_of_texts(pred_text, ref_text, tok)
        if ov.both_empty:
            refuse_unreadable(tok, {"prediction": pred_text, "reference": ref_text})
        return {"id": rid, "line": line, "whole_note": _scores(ov), "tokens": _counts(ov),
                "note": "one side has sections and the other is flat text: whole note only, sections not scored"}
    except InputError as exc:  # includes UnreadableTextError
        return _failure(line, rid, f"{where}: {exc}")


def _lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in *text* as an escape (``\\ud800``), or ``None`` when the text is Unicode that
    UTF-8 can encode. The standard library's JSON parser reads ``"\\ud800"`` escapes that orjson refuses."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"\\u{ord(text[exc.start]):04x}"
    return None


def _counts(ov) -> dict[str, int]:
    return {"prediction": ov.n_prediction, "reference": ov.n_reference, "overlap": ov.n_overlap}


def _failure(line: int, rid: str | None, error: str) -> dict[str, Any]:
    return {"failed": True, "line": line, "id": rid, "error": error}


def _decode(line: int, raw: bytes, src: str, id_field: str = "id", *, exact: bool = False) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Decode one JSONL line: ``(row, None)`` or ``(None, failure record)``, by :func:`goldeval.io.decode_json`.

    A line that is not UTF-8, or nested too deep to read (about 1,000 levels), fails alone, as a line that is not
    JSON does: the rows around it are still scored. NaN / Infinity literals (Python's json.dump writes them) and
    lone surrogate escapes are read, not failed: a text that is NaN is not a string, and a surrogate in the id or a
    section name is refused by :func:`_score_record`, each with its field. An integer id past 64 bits keeps its
    digits; elsewhere (``exact``) every such integer does, for the message of a row that fails.
    """
    try:
        data = decode_json(raw, nonfinite=True, surrogates=True, fields=None if exact else (id_field,))
    except JSONLineError as exc:
        return None, _failure(line, None, f"{src}:{line}: {exc.reason}")
    if not isinstance(data, dict):
        return None, _failure(line, None, f"{src}:{line}: expected a JSON object, got {shorten(data)}.")
    return data, None


def _score_line(line: int, raw: bytes, cfg: FreeTextConfig, tok: Tokenizer, src: str) -> dict[str, Any]:
    """Decode and score one line; a row that fails is read again exactly (an integer past 64 bits in a field it
    names is quoted with its digits, not as orjson's float)."""
    data, failure = _decode(line, raw, src, cfg.id_field)
    if data is None:
        return failure  # type: ignore[return-value]
    rec = _score_record(data, line, cfg, tok, src)
    if rec.get("failed") and has_big_float(data):
        exact, _ = _decode(line, raw, src, cfg.id_field, exact=True)
        if exact is not None:
            rec = _score_record(exact, line, cfg, tok, src)
    return rec


# ---------------------------------------------------------------------------------------------------------------
# Workers (module-level so they pickle)

_W: dict[str, Any] = {}


def _worker_init(cfg: FreeTextConfig, src: str) -> None:
    _W["cfg"] = cfg
    _W["tok"] = get_tokenizer(cfg.tokenizer)
    _W["src"] = src


def _pool_worker_init(cfg: FreeTextConfig, src: str, scorer: Any = None) -> None:
    """Initializer of a worker *process* (never called in the main process: it would lose Ctrl-C there). *scorer*
    (:func:`goldeval.lifeline.owner` of the scoring process): the worker ends as soon as that process has ended,
    e.g. killed with ``kill -9`` (its parent is the forkserver, which does not tell it)."""
    import signal

    if scorer is not None:
        from goldeval.lifeline import watch

        watch(scorer)
    # Ctrl-C is the main process's to handle (it stops the pool and exits 130); a worker ends with the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_init(cfg, src)


def _score_chunk(chunk: list[tuple[int, bytes]]) -> list[dict[str, Any] | tuple]:
    """Score a chunk of raw lines. Plain whole-note records come back as compact tuples (cheap to send between
    processes); :func:`_expand` turns them back into dicts."""
    return _score_chunk_stored(chunk, stored=False)[0]


#: What a scored case is stored as in the run store: ``{"status": "scored", **record}`` (Recorder.record).
_STORED_PREFIX = b'{"status":"scored",'


def _score_chunk_stored(chunk: list[tuple[int, bytes]], stored: bool = True) -> tuple[list[dict[str, Any] | tuple], bytes | None]:
    """:func:`_score_chunk`, and (``stored``) the run-store JSON of every row, newline-joined, when every row of
    the chunk was scored (else ``None``: the main process then records its rows one by one). Serializing here, in
    the worker, keeps that work off the main process, which every row passes through."""
    cfg, tok, src = _W["cfg"], _W["tok"], _W["src"]
    out: list[dict[str, Any] | tuple] = []
    stored_json: list[bytes] | None = [] if stored else None
    dumps = orjson.dumps
    for line, raw in chunk:
        rec = _score_line(line, raw, cfg, tok, src)
        if stored_json is not None:
            if rec.get("failed"):
                stored_json = None
            else:
                try:
                    stored_json.append(dumps(rec)[1:])  # its members: {"id": …, "line": …, "whole_note": …, …}
                except TypeError:  # not writable as JSON: recorded row by row, where Recorder.record says why
                    stored_json = None
        if len(rec) == 4 and "tokens" in rec:
            wn, tk = rec["whole_note"], rec["tokens"]
            rec = (rec["id"], line, wn["precision"], wn["recall"], wn["f1"], tk["prediction"], tk["reference"], tk["overlap"])
        out.append(rec)
    if not stored_json:
        return out, None
    return out, _STORED_PREFIX + (b"\n" + _STORED_PREFIX).join(stored_json)


def _expand(rec: dict[str, Any] | tuple) -> dict[str, Any]:
    if type(rec) is not tuple:
        return rec  # type: ignore[return-value]
    rid, line, p, r, f, n_pred, n_ref, n_ov = rec
    return {"id": rid, "line": line, "whole_note": {"precision": p, "recall": r, "f1": f},
            "tokens": {"prediction": n_pred, "reference": n_ref, "overlap": n_ov}}


# ---------------------------------------------------------------------------------------------------------------
# Batch


def _iter_chunks(path: Path) -> Iterator[list[tuple[int, bytes]]]:
    """Non-blank lines of *path* as chunks of ``(line number, bytes)``."""
    chunk: list[tuple[int, bytes]] = []
    size = 0
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            chunk.append((lineno, raw))
            size += len(raw)
            if len(chunk) >= _CHUNK_ROWS or size >= _CHUNK_BYTES:
                yield chunk
                chunk = []
                size = 0
    if chunk:
        yield chunk


def _id_text(raw_id: Any) -> str | None:
    """The id :func:`_score_record` gives a row whose id field holds *raw_id*: its text when usable, else ``None``."""
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or (isinstance(raw_id, str) and not raw_id.strip()):
        return None
    rid = str(raw_id)
    return None if _lone_surrogate(rid) is not None else rid


def _prepass(path: Path, id_field: str, src: str) -> tuple[int, str, set[int]]:
    """One read of *path*: its line count, its sha256, and the hashes of the ids that occur on more than one row
    (see :mod:`goldeval.ids`). Bounded memory: the hashes go to buckets on disk. A line that cannot be decoded
    is passed over here (the scoring pass reports it as a failed row).

    Raises:
        InputError: no line of the file is UTF-8 (the file is in another encoding; one bad line fails alone).
    """
    hasher = hashlib.sha256()
    state: dict[str, Any] = {"not_utf8": 0, "first_bad": None}

    def slow(line: int, raw: bytes) -> dict[str, Any] | None:
        data, failure = _decode(line, raw, src, id_field)  # the slow path (NaN, lone surrogates, non-UTF-8, too deep, an id past 64 bits)
        if data is None and failure is not None and "is not UTF-8" in failure["error"]:
            state["not_utf8"] += 1
            if state["first_bad"] is None:
                state["first_bad"] = InputError(failure["error"].replace("the line is not UTF-8", "the file is not UTF-8", 1)
                                                + " No line of the file is UTF-8.")
        return data

    n_lines, n_rows, repeated = scan_jsonl_ids(path, id_field, _id_text, hasher=hasher, slow_decode=slow)
    if n_rows and state["not_utf8"] == n_rows and state["first_bad"] is not None:
        # not one line is UTF-8: the file as a whole is in another encoding (one bad line fails alone)
        raise state["first_bad"]
    return n_lines, hasher.hexdigest(), repeated


_M = ("f1", "precision", "recall")


class _Collector:
    """Turns per-row records into running sums and failures, enforcing unique ids, and hands each scored record
    to the recorder and to the per-example sink (or keeps it, for the library's ``per_example`` list).

    Memory: the sums are :class:`~goldeval.accumulate.ExactSum` (bounded); ``per_example`` is a list only when
    ``keep`` is set; ``failures`` (one entry per row that could not be scored) are kept.
    """

    def __init__(self, previous: dict[str, dict[str, Any]], recorder: Any, *, keep: bool = True,
                 on_example: Callable[[dict[str, Any]], None] | None = None, repeated: set[int] | None = None) -> None:
        self.per_example: list[dict[str, Any]] | None = [] if keep else None
        self.on_example = on_example
        self.failures: list[dict[str, Any]] = []
        self.ids = IdIndex(repeated)
        self.previous = previous
        self.recorder = recorder
        self.n_rows = 0
        self.n_scored = 0
        self.sums = {m: ExactSum() for m in _M}
        self.n_unreadable = 0
        self.first_unreadable: dict[str, Any] | None = None
        self.n_split = 0
        self.first_split: dict[str, Any] | None = None
        self.n_sectioned = 0
        self.macro = {m: ExactSum() for m in _M}
        self.sections: dict[str, dict[str, ExactSum]] = {}  # section name (first-seen order) -> sums over rows with text
        #: sha256 of the JSON array of the scored ids, in order (what the store checks its cases against)
        self.ids_hasher = hashlib.sha256(b"[")
        #: The recorder takes record(case, status=...) (goldeval's Recorder: no copy of the dict), else it is given
        #: {"status": "scored", **case} (a recorder written to the protocol's record(case)).
        self.status_kw = recorder is not None and _takes_status(recorder)

    def add(self, rec: dict[str, Any], src: str) -> dict[str, Any] | None:
        """Take one record; returns it when it became a scored example, else ``None``. Not recorded here."""
        self.n_rows += 1
        rid = rec.get("id")
        if rid is not None:
            first = self.ids.first_line(rid, rec["line"])
            if first is not None:
                rec = _failure(rec["line"], rid, f"{src}:{rec['line']}: id {rid!r} repeats line {first}. Ids must be unique; remove or rename the duplicate.")
                # Not recorded as a case: the store keys cases by id, and any made-up id could collide with a real
                # one. The row is listed under failures (stored with the run) and found again on every re-run.
                self.failures.append({k: rec[k] for k in ("line", "id", "error")})
                return None
        if rec.get("failed"):
            self.failures.append({k: rec[k] for k in ("line", "id", "error")})
            if self.recorder is not None and rid is not None and (self.previous.get(rid) or {}).get("status") != "unscored":
                self.recorder.record({"id": rid, "status": "unscored", "line": rec["line"], "error": rec["error"]})
            return None
        self._fold(rec)
        return rec

    def add_recorded(self, rec: dict[str, Any], src: str) -> None:
        """:meth:`add`, and record the example when it is new to the store."""
        got = self.add(rec, src)
        if got is not None and self.recorder is not None and (self.previous.get(got["id"]) or {}).get("status") != "scored":
            self._record_scored(self.recorder, got)

    def _fold(self, rec: dict[str, Any]) -> None:
        self.n_scored += 1
        wn = rec["whole_note"]
        sums = self.sums
        sums["f1"].add_float(wn["f1"])
        sums["precision"].add_float(wn["precision"])
        sums["recall"].add_float(wn["recall"])
        self.ids_hasher.update((b"," if self.n_scored > 1 else b"") + orjson.dumps(rec["id"]))
        if "unreadable" in rec:
            self.n_unreadable += 1
            if self.first_unreadable is None:
                self.first_unreadable = {"id": rec["id"], **rec["unreadable"]}
            if "split_word" in rec:
                self.n_split += 1
                if self.first_split is None:
                    self.first_split = {"id": rec["id"], **rec["split_word"]}
        sections = rec.get("sections")
        if sections is not None:
            self.n_sectioned += 1
            macro = rec.get("section_macro")
            if macro is not None:
                for m in _M:
                    self.macro[m].add_float(macro[m])
            empty = rec.get("sections_empty_both") or ()
            for name, scores in sections.items():
                acc = self.sections.get(name)
                if acc is None:
                    acc = self.sections[name] = {m: ExactSum() for m in _M}
                if name not in empty:
                    for m in _M:
                        acc[m].add_float(scores[m])
        if self.per_example is not None:
            self.per_example.append(rec)
        if self.on_example is not None:
            self.on_example(rec)

    def _record_scored(self, recorder: Any, rec: dict[str, Any]) -> None:
        if self.status_kw:
            recorder.record(rec, status="scored")
        else:
            recorder.record({"status": "scored", **rec})

    def add_chunk(self, recs: list[dict[str, Any] | tuple], src: str, stored_json: bytes | None) -> None:
        """:meth:`add` each worker result of a chunk and record the new examples. When the worker serialized the
        chunk for the store (``stored_json``, see :func:`_score_chunk_stored`) and every row became a new scored
        case, the chunk is recorded in one call with those bytes (``Recorder.record_serialized``); otherwise row by
        row."""
        record_serialized = getattr(self.recorder, "record_serialized", None) if stored_json is not None else None
        if record_serialized is None:
            for rec in recs:
                self.add_recorded(_expand(rec), src)
            return
        recorder, self.recorder = self.recorder, None
        new = []
        try:
            for rec in recs:
                got = self.add(_expand(rec), src)
                if got is not None:
                    new.append(got)
        finally:
            self.recorder = recorder
        if len(new) == len(recs) and not self.previous:
            # (case id, status, verdict, score, reason, raw): what case_columns gives a scored free-text record
            record_serialized([(r["id"], "scored", None, r["whole_note"]["f1"], None, None) for r in new], stored_json)
        else:  # a row repeated an id (it is a failure, not a case): record the others one by one
            for r in new:
                self._record_scored(recorder, r)

    def streamed_marker(self) -> dict[str, Any]:
        """What stands for ``per_example`` in the results when the entries were streamed, not kept: their count and
        the sha256 of the JSON array of their ids (the run store checks its cases against it)."""
        h = self.ids_hasher.copy()
        h.update(b"]")
        return {"$streamed": True, "n": self.n_scored, "ids_sha256": h.hexdigest()}


def _takes_status(recorder: Any) -> bool:
    """Whether ``recorder.record`` accepts ``status=`` (a keyword named so, or ``**kwargs``)."""
    import inspect

    try:
        params = inspect.signature(recorder.record).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): call it the protocol's way
        return False
    return any((p.name == "status" and p.kind is not p.POSITIONAL_ONLY) or p.kind is p.VAR_KEYWORD for p in params)


def _aggregate(col: _Collector, cfg: FreeTextConfig, tok: Tokenizer, elapsed: float) -> dict[str, Any]:
    n = col.n_scored
    # Means of exact sums rounded once: equal to statistics.mean (correctly rounded), with which upstream
    # run_eval.py computed the published figures, to the last digit.
    agg: dict[str, Any] = {
        "n": n,
        "n_scored": n,
        "n_failed": len(col.failures),
        "n_rows": col.n_rows,
        "elapsed_sec": elapsed,
        # upstream run_eval.py writes null for a mean over no row; goldeval also says why under "undefined"
        "whole_note_f1_mean": col.sums["f1"].mean(),
        "whole_note_precision_mean": col.sums["precision"].mean(),
        "whole_note_recall_mean": col.sums["recall"].mean(),
        "tokenizer": tok.name,
        "tokenizer_version": tok.version,
        "n_with_unreadable_text": col.n_unreadable,
        "undefined": {},
    }
    if col.first_unreadable is not None:
        agg["first_unreadable"] = col.first_unreadable
    if tok.name == "openscribe":
        # rows where the rule split a word at a non-ASCII letter ("Café" -> caf): the upstream rule, scores unchanged
        agg["n_with_split_words"] = col.n_split
        if col.first_split is not None:
            agg["first_split_word"] = col.first_split
    if not n:
        reason = "no row could be scored" if col.n_rows else "the file has no rows"
        for k in ("whole_note_f1_mean", "whole_note_precision_mean", "whole_note_recall_mean"):
            agg["undefined"][k] = reason
    if col.n_sectioned:
        n_macro = col.macro["f1"].count
        agg["n_sectioned"] = col.n_sectioned
        agg["n_section_scored"] = n_macro
        for m in _M:
            agg[f"section_{m}_mean"] = col.macro[m].mean()
            if not n_macro:
                agg["undefined"][f"section_{m}_mean"] = "no example has text in any section"
        agg["sections"] = {
            s: {"n": sums["f1"].count, "n_empty_both": col.n_sectioned - sums["f1"].count,
                **{f"{m}_mean": sums[m].mean() for m in _M}}
            for s, sums in col.sections.items()
        }
    return agg


def _reuse_or_score(
    data: dict[str, Any], line: int, previous: dict[str, dict[str, Any]], cfg: FreeTextConfig, tok: Tokenizer, src: str
) -> dict[str, Any]:
    """The stored record of a row a resumed run already scored, else the row scored now."""
    rid = data.get(cfg.id_field)
    rec = previous.get(str(rid)) if rid is not None and previous else None
    if rec is not None and rec.get("status") == "scored" and rec.get("line") == line:
        return {k: v for k, v in rec.items() if k != "status"}
    return _score_record(data, line, cfg, tok, src)


def _run(
    chunks: Iterable[list[tuple[int, bytes]]] | None,
    records: Iterable[tuple[int, dict[str, Any] | None, dict[str, Any] | None]] | None,
    *,
    cfg: FreeTextConfig,
    src: str,
    workers: int,
    col: _Collector,
    progress: Callable[[int], None] | None,
) -> float:
    """Score into *col*; returns the seconds it took."""
    tok = get_tokenizer(cfg.tokenizer)
    recorder, previous = col.recorder, col.previous
    if recorder is not None and hasattr(recorder, "per_example_in_cases"):
        # Every per_example entry is recorded as {"status": "scored", **entry}, in order (see _Collector.add), so
        # the store can rebuild per_example from its cases instead of storing it twice.
        recorder.per_example_in_cases = True
    t0 = time.perf_counter()
    if records is not None:
        for line, data, failure in records:
            col.add_recorded(failure if data is None else _reuse_or_score(data, line, previous, cfg, tok, src), src)
            if progress:
                progress(1)
        return time.perf_counter() - t0
    assert chunks is not None
    if previous:
        # Resume: decode in this process so that finished rows are taken from the store, not scored again.
        for chunk in chunks:
            for line, raw in chunk:
                data, failure = _decode(line, raw, src, cfg.id_field)
                col.add_recorded(failure if data is None else _reuse_or_score(data, line, previous, cfg, tok, src), src)
            if progress:
                progress(len(chunk))
        return time.perf_counter() - t0
    stored = hasattr(recorder, "record_serialized")
    if workers <= 1:
        _worker_init(cfg, src)
        for chunk in chunks:
            recs, stored_json = _score_chunk_stored(chunk, stored)
            col.add_chunk(recs, src, stored_json)
            if progress:
                progress(len(chunk))
        return time.perf_counter() - t0
    import multiprocessing as mp

    from goldeval import lifeline

    ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
    lifeline.arm_forkserver(ctx)  # no worker, forkserver or resource tracker outlives a kill -9 of this process
    window: list[Future[tuple[list[dict[str, Any] | tuple], bytes | None]]] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_pool_worker_init,
                             initargs=(cfg, src, lifeline.owner())) as pool:
        it = iter(chunks)
        exhausted = False
        while True:
            while not exhausted and len(window) < 2 * workers:
                try:
                    window.append(pool.submit(_score_chunk_stored, next(it), stored))
                except StopIteration:
                    exhausted = True
            if not window:
                break
            fut = window.pop(0)
            recs, stored_json = fut.result()
            col.add_chunk(recs, src, stored_json)
            if progress:
                progress(len(recs))
    return time.perf_counter() - t0


def _results(col: _Collector, cfg: FreeTextConfig, elapsed: float, extra: dict[str, Any]) -> dict[str, Any]:
    tok = get_tokenizer(cfg.tokenizer)
    return {
        **results_head(tok, prediction_field=cfg.prediction_field, reference_field=cfg.reference_field, id_field=cfg.id_field),
        **extra,
        "aggregate": _aggregate(col, cfg, tok, elapsed),
        "per_example": col.per_example if col.per_example is not None else col.streamed_marker(),
        "failures": col.failures,
    }


def results_head(tokenizer: str | Tokenizer = "openscribe", **fields: str) -> dict[str, Any]:
    """The first keys of a free-text results dict, known before any row is scored: ``{"scorer", "tokenizer",
    "config"}`` (what a streaming writer puts before ``per_example``). *fields*: ``prediction_field``,
    ``reference_field``, ``id_field`` as for :func:`score_file`.

    Raises:
        InputError: unknown tokenizer, or a keyword :func:`score_file` does not take.
    """
    tok = get_tokenizer(tokenizer)
    try:
        cfg = FreeTextConfig(**fields, tokenizer=tok.name)
    except TypeError as exc:
        raise InputError(f"results_head: {exc}; it takes prediction_field, reference_field and id_field.") from None
    return {
        "scorer": {"name": SCORER_NAME, "version": SCORER_VERSION},
        "tokenizer": {"name": tok.name, "version": tok.version, "description": tok.description},
        "config": cfg.to_dict(),
    }


def score_file(
    path: str | os.PathLike[str],
    *,
    prediction_field: str = "prediction",
    reference_field: str = "reference",
    id_field: str = "id",
    tokenizer: str | Tokenizer = "openscribe",
    workers: int | None = 1,
    recorder: Any = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    keep_per_example: bool = True,
    on_example: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Token F1 of every row of a JSONL file: the results dict the ``goldeval score`` command writes.

    Memory does not grow with the rows when ``keep_per_example`` is false: the means are exact running sums
    (:class:`goldeval.accumulate.ExactSum`, equal to :func:`statistics.mean` to the last digit), ids are checked for
    repeats by a first pass that keeps only the hashes seen twice, and each example goes to ``on_example`` (a
    streaming writer) and to the recorder as it is scored. Only ``failures`` (one entry per row that could not be
    scored) is kept.

    Args:
        path: JSONL file, one ``{"id", <prediction_field>, <reference_field>}`` object per line, UTF-8.
            Each text field is a string (whole note) or an object of section name → text (sections).
        prediction_field, reference_field, id_field: Field names to read.
        tokenizer: Token rule name or object (default ``openscribe``, the published figures' rule).
        workers: Processes to score with (default 1). ``None``: automatic — one below ``PARALLEL_MIN_ROWS`` rows,
            else every core (what the CLI does). More than one worker starts processes, so a script that asks for
            them needs the usual ``if __name__ == "__main__":`` guard (Python's multiprocessing rule). Capped at the
            number of cores.
        recorder: Run-store recorder (``previous()``, ``record(case)``, ``finish(results)``) or ``None``.
            Rows already recorded as scored are taken from it, not scored again. A ``record`` that also takes
            ``status=`` (as :class:`goldeval.Recorder`'s does) is given each scored row with ``status="scored"``;
            otherwise it is given ``{"status": "scored", **row}``.
        progress: Called with the number of rows just finished (for a progress bar).
        on_total: Called once with the number of lines in the file before scoring starts.
        keep_per_example: Keep every example in ``results["per_example"]`` (default). False: that key holds
            ``{"$streamed": true, "n": int, "ids_sha256": str}`` instead (the count of examples and the sha256 of the
            JSON array of their ids, in order, which the run store checks its cases against).
        on_example: Called with each ``per_example`` entry, in order, as soon as it is scored (e.g. the
            ``goldeval score --out`` writer); the entry must not be changed.

    Returns:
        ``{"scorer", "tokenizer", "config", "input", "aggregate", "per_example", "failures"}``. ``aggregate`` has
        ``n`` (= ``n_scored``, rows scored), ``n_failed``, ``n_rows``, ``elapsed_sec``, ``whole_note_f1_mean``,
        ``whole_note_precision_mean``, ``whole_note_recall_mean`` (macro-averages over scored rows, unrounded;
        ``null`` when no row could be scored, as upstream), ``tokenizer``, ``n_with_unreadable_text`` (scored rows
        holding some letters the rule could not read: they are scored on the rest and flagged ``unreadable``;
        under openscribe ``n_with_split_words`` counts those where a word was split at a non-ASCII letter, "Café" →
        caf, with ``first_split_word``),
        ``undefined`` (metric → reason, when no row could be scored), and for sectioned rows
        ``section_f1_mean`` (and precision/recall) with per-section means in ``sections``. ``per_example`` items:
        ``{"id", "line", "whole_note": {"precision", "recall", "f1"}, "tokens": {...}}`` (+ ``sections``,
        ``section_macro``). ``failures``: ``[{"line", "id", "error"}]`` — rows left out of the means.

    Raises:
        InputError: missing, empty or non-UTF-8 file; unknown tokenizer.

    Source:
        Output keys of Open-Scribe ``eval/run_eval.py``; scores as :func:`goldeval.token_f1`.
    """
    p = check_input_file(path)
    tok = get_tokenizer(tokenizer)
    cfg = FreeTextConfig(prediction_field, reference_field, id_field, tok.name)
    total, sha256, repeated = _prepass(p, cfg.id_field, p.name)
    if on_total:
        on_total(total)
    cores = os.cpu_count() or 1
    if workers is None:
        workers = cores if total >= PARALLEL_MIN_ROWS else 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers: expected a whole number >= 1 (or None for automatic), got {workers!r}.")
    workers = min(workers, cores)
    previous = recorder.previous() if recorder is not None else {}
    col = _Collector(previous, recorder, keep=keep_per_example, on_example=on_example, repeated=repeated)
    elapsed = _run(_iter_chunks(p), None, cfg=cfg, src=p.name, workers=max(1, workers), col=col, progress=progress)
    if col.n_rows == 0:
        raise InputError(f"{p}: holds no rows (only blank lines), expected one JSON object per line.")
    results = _results(col, cfg, elapsed, {"input": {"path": display_name(p), "sha256": sha256, "workers": max(1, workers)}})
    if recorder is not None:
        recorder.finish(results)
    return results


def score_rows(
    rows: Iterable[dict[str, Any]],
    *,
    prediction_field: str = "prediction",
    reference_field: str = "reference",
    id_field: str = "id",
    tokenizer: str | Tokenizer = "openscribe",
    recorder: Any = None,
    keep_per_example: bool = True,
    on_example: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """:func:`score_file` over in-memory rows (dicts); row numbers in messages count from 1. Same output. (Ids are
    kept to find repeats: the rows are in memory already.)"""
    tok = get_tokenizer(tokenizer)
    cfg = FreeTextConfig(prediction_field, reference_field, id_field, tok.name)

    def numbered() -> Iterator[tuple[int, dict[str, Any] | None, dict[str, Any] | None]]:
        for i, r in enumerate(rows, start=1):
            if isinstance(r, dict):
                yield i, r, None
            else:
                yield i, None, _failure(i, None, f"row {i}: expected an object, got {shorten(r)}.")

    previous = recorder.previous() if recorder is not None else {}
    col = _Collector(previous, recorder, keep=keep_per_example, on_example=on_example)
    elapsed = _run(None, numbered(), cfg=cfg, src="rows", workers=1, col=col, progress=None)
    results = _results(col, cfg, elapsed, {"input": {"path": None, "sha256": None, "workers": 1}})
    if recorder is not None:
        recorder.finish(results)
    return results
