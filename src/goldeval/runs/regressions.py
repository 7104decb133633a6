"""Judge regressions: verdicts a person settled, replayed whenever the judge or the rubric changes.

The regression file (``judge-regressions.jsonl``) holds one human-settled verdict per line::

    {"id": "q17",                         # the case id (its question and golden live in the case file)
     "answer": {...},                     # the answer as judged: the attempt row (final_query, columns, rows, text)
     "verdict": "no_match",               # the verdict the person settled on: match | near_match | no_match
     "judge_verdict": "match",            # what the judge had said
     "reviewer": "ana", "reviewed_at": "2026-11-29T15:02:00+00:00",
     "judge_version": "answers-1", "rubric_hash": "…", "run_id": "20261129-…", "note": "…"}

``replay`` re-judges every entry with the current judge and lists each whose verdict now differs from the settled
one. ``review export`` writes a run's ``needs_human`` cases for a person to fill in (``verdict``, ``reviewer``,
``note``); ``review import`` records the filled verdicts in the store and appends them to the regression file.

Source: ``DESIGN.md`` "Runs, versions, comparisons" (human-overruled verdicts form a regression file); issue #5.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from goldeval.errors import InputError, shorten
from goldeval.io.outputs import write_output
from goldeval.io.reading import Row, RowError, check_ids, file_sha256, read_jsonl
from goldeval.runs.compare import bucket
from goldeval.runs.identity import recorded_path
from goldeval.runs.reviews import settle_reviews
from goldeval.runs.store import RunStore, now_iso
from goldeval.runs.texts import restore_input

__all__ = [
    "settled_verdicts",
    "SETTLED_VERDICTS",
    "check_regression_file",
    "read_regressions",
    "replay",
    "replay_regressions",
    "export_review",
    "import_review",
    "append_regressions",
]

#: The verdicts a person may settle on (``needs_human`` is not a settlement).
SETTLED_VERDICTS: tuple[str, ...] = ("match", "near_match", "no_match")

Judge = Callable[[Mapping[str, Any], Mapping[str, Any]], Any]


def _verdict_name(v: Any) -> str | None:
    """The verdict name of a judge's answer: a Verdict, a CaseOutcome, or a dict with ``verdict``."""
    if v is None:
        return None
    if hasattr(v, "to_dict"):
        v = v.to_dict()
    if isinstance(v, Mapping):
        inner = v.get("verdict")
        if isinstance(inner, Mapping):
            return inner.get("verdict")
        if inner is None and v.get("status") == "unscored":
            return "unscored"
        return inner
    return str(v)


def _why(v: Any) -> str | None:
    if hasattr(v, "to_dict"):
        v = v.to_dict()
    if isinstance(v, Mapping):
        return v.get("why") or v.get("reason")
    return None


def read_regressions(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Read a regression file: ``(entries, failures)``.

    Each entry is the line's object plus ``line``; a line that is not a usable entry (no string ``id``, a verdict
    outside ``SETTLED_VERDICTS``, ``answer`` not an object) is a failure ``{"line", "id", "error"}``.

    Raises:
        InputError: the file is missing, empty or not UTF-8.
    """
    p = Path(path)
    entries: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    for item in read_jsonl(p):
        if isinstance(item, RowError):
            failures.append({"line": item.line, "id": item.id, "error": item.error})
            continue
        d = item.data
        where = f"{p.name}:{item.line}"
        cid = d.get("id")
        if isinstance(cid, int) and not isinstance(cid, bool):
            cid = str(cid)
        if not isinstance(cid, str) or not cid:
            failures.append({"line": item.line, "id": None, "error": f"{where}: field 'id' must be a non-empty string, got {shorten(cid)}. Give the case id the verdict belongs to."})
            continue
        if d.get("verdict") not in SETTLED_VERDICTS:
            failures.append({"line": item.line, "id": cid, "error": f"{where}: field 'verdict' must be one of {', '.join(SETTLED_VERDICTS)}, got {shorten(d.get('verdict'))}. Write the verdict the person settled on."})
            continue
        if not isinstance(d.get("answer"), Mapping):
            failures.append({"line": item.line, "id": cid, "error": f"{where}: field 'answer' must be an object (the answer as judged), got {shorten(d.get('answer'))}."})
            continue
        entries.append({**d, "id": cid, "line": item.line})
    return entries, failures


def _read_cases(path: str | os.PathLike[str], *, id_field: str = "id") -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in check_ids(read_jsonl(path), id_field=id_field, file_name=Path(path).name):
        if isinstance(item, Row):
            out[str(item.data[id_field])] = item.data
    return out


def _each_then(items: Sequence[Any], progress: Callable[[int], None] | None) -> Iterator[Any]:
    """*items*, calling ``progress(1)`` once the loop body is done with each (a ``continue`` included)."""
    for item in items:
        yield item
        if progress is not None:
            progress(1)


def replay(
    regressions_path: str | os.PathLike[str],
    cases_path: str | os.PathLike[str],
    judge: Judge,
    *,
    judge_version: str | None = None,
    on_total: Callable[[int], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Re-judge every human-settled verdict of a regression file with the current judge.

    Args:
        regressions_path: The ``judge-regressions.jsonl`` file (see the module docstring).
        cases_path: The case file (``{"id", "question", "golden", "rubric"?, "must_not_use"?}`` per line) the
            entries' ids refer to.
        judge: ``judge(case, answer) -> Verdict | CaseOutcome | dict`` — the current judge. A ``ValueError``
            (``InputError``) it raises for one entry makes that entry a failure, not a crash; a ``JudgeError`` (the
            endpoint cannot be reached) stops the replay.
        judge_version: The current judge's version, copied into the result.
        on_total: Called once, before the first is judged, with the number of usable entries (a progress display).
        progress: Called with 1 after each entry is replayed (or fails).

    Returns:
        ``{"judge_version", "n", "n_same", "n_changed", "n_failed", "changed": [{"id", "line", "settled", "now",
        "why_now", "reviewer", "reviewed_at", "settled_under"}], "same": [ids], "failures": [{"line", "id",
        "error"}]}``. An entry whose case is not in the case file, or that the judge now leaves ``unscored`` (an
        unusable golden or answer, a query that fails), is a failure: it was not replayed.

    Raises:
        InputError: either file is missing, empty or not UTF-8.
    """
    entries, failures = read_regressions(regressions_path)
    n_lines = len(entries) + len(failures)
    cases = _read_cases(cases_path)
    changed: list[dict[str, Any]] = []
    same: list[str] = []
    name = Path(regressions_path).name
    if on_total is not None:
        on_total(len(entries))
    for e in _each_then(entries, progress):
        case = cases.get(e["id"])
        if case is None:
            failures.append({"line": e["line"], "id": e["id"], "error": f"{name}:{e['line']}: case {e['id']!r} is not in {Path(cases_path).name}. Pass the case file the verdict was settled on (--cases)."})
            continue
        try:
            now = judge(case, e["answer"])
        except ValueError as exc:  # InputError, or a judge answer that could not be read
            failures.append({"line": e["line"], "id": e["id"], "error": f"{name}:{e['line']}: the judge refused the case: {exc}"})
            continue
        verdict_now = _verdict_name(now)
        if verdict_now == "unscored":
            # the case could not be judged now (its golden or answer unusable, the query failed): that verdict was
            # not replayed — not a change of the judge's mind (a wrong --cases file made every case "changed")
            failures.append({"line": e["line"], "id": e["id"], "error": f"{name}:{e['line']}: case {e['id']!r} could not "
                             f"be judged now ({_why(now) or 'unscored'}); not replayed. Check --cases and --db."})
            continue
        if verdict_now == e["verdict"]:
            same.append(e["id"])
        else:
            changed.append({
                "id": e["id"],
                "line": e["line"],
                "settled": e["verdict"],
                "now": verdict_now,
                "why_now": _why(now),
                "reviewer": e.get("reviewer"),
                "reviewed_at": e.get("reviewed_at"),
                "settled_under": e.get("judge_version"),
            })
    return {
        "judge_version": judge_version,
        "n": n_lines,
        "n_replayed": len(same) + len(changed),
        "n_same": len(same),
        "n_changed": len(changed),
        "n_failed": len(failures),
        "changed": changed,
        "same": same,
        "failures": failures,
    }


#: The name ``goldeval`` exports :func:`replay` under.
replay_regressions = replay


# ---------------------------------------------------------------------------------------------------------------
# review export / import


def _input_rows(store: RunStore, run: Mapping[str, Any], roles: tuple[str, ...]) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Rows (id → row) of the run's first input file in *roles* whose bytes still match the recorded hash, else of the
    copy kept with the run in the store (:mod:`goldeval.runs.texts`); and a note when the file was not used."""
    for role in roles:
        f = (run.get("inputs") or {}).get(role)
        if not f:
            continue
        path = recorded_path(f)
        if not path or not os.path.isfile(path):
            why = f"the {role} file {path} is gone"
        elif file_sha256(path) != f.get("sha256"):
            why = f"the {role} file {path} changed since the run"
        else:
            return _read_cases(path), None
        with tempfile.TemporaryDirectory(prefix="goldeval-kept-") as folder:
            copy = restore_input(store, run["id"], role, f.get("sha256"), folder)
            if copy is not None:
                return _read_cases(copy), f"{why}: read from the copy kept in the run store"
        return {}, why
    return {}, None


def _is_needs_human(record: Mapping[str, Any]) -> bool:
    return bucket(record) == "needs_human"


def _require_verdicts(store: RunStore, run: Mapping[str, Any]) -> None:
    """Refuse (InputError) a run whose scored cases hold F1 scores or label outcomes, not data-answer verdicts: a
    person's match / no_match on a free-text note has nothing to settle (``review export RUN --all`` of a score run
    wrote its 57 notes as "answers" with no question or golden, their import went to the judge-regression file, and
    ``review stats`` counted them as "left to a person by the judge")."""
    for rec in store.iter_cases(run["id"]):
        if rec.get("status") != "scored":
            continue
        if isinstance(rec.get("verdict"), str):
            return
        what = ("per-case F1 scores" if "whole_note" in rec else
                "label outcomes (tp, fp, fn, tn)" if rec.get("outcome") in ("tp", "fp", "fn", "tn") else None)
        if what is not None:
            raise InputError(
                f"review: run {run['id']} ({run.get('scorer_name')}) holds {what}, not data-answer verdicts: review "
                "export / import settle the verdicts of a judge run (match, near_match, no_match). Give a "
                "`goldeval judge` run."
            )
        return


def export_review(store: RunStore, ref: str, *, only_needs_human: bool = True) -> list[dict[str, Any]]:
    """The ``needs_human`` cases of a run (or every scored case), one object each, for a person to settle.

    Args:
        store: The open store.
        ref: The run (id, unique prefix or ``latest``).
        only_needs_human: ``False`` exports every scored case, decided ones included, so that a person's verdicts
            on them calibrate the judge (``review stats``); unscored cases are never exported.

    Returns:
        ``[{"run_id", "id", "question", "golden", "answer", "judge_verdict", "confidence", "why", "raw",
        "judge_version", "verdict": None, "reviewer": None, "note": None}]`` in recording order. ``question`` /
        ``golden`` / ``answer`` come from the run's input files when they are unchanged (``answer`` prefers the
        answer stored with the case), else from the copies kept with the run in the store (``source_note`` then says
        so); otherwise they are ``None`` and ``source_note`` says why. The person fills
        ``verdict`` (match | near_match | no_match), ``reviewer`` and, optionally, ``note``.

    Raises:
        InputError: the run holds F1 scores or label outcomes, not verdicts (a ``score`` or ``labels`` run).
    """
    run = store.get_run(ref, with_results=False)
    _require_verdicts(store, run)
    cases, case_note = _input_rows(store, run, ("cases",))
    answers, answer_note = _input_rows(store, run, ("attempts", "answers", "predictions"))
    out = []
    for rec in store.iter_cases(run["id"]):
        if only_needs_human and not _is_needs_human(rec):
            continue
        if not only_needs_human and rec.get("status") == "unscored":
            continue
        cid = rec.get("id")
        case = cases.get(cid) or {}
        recorded = rec.get("answer") or rec.get("prediction")
        answer = recorded or answers.get(cid)
        row: dict[str, Any] = {
            "run_id": run["id"],
            "id": cid,
            "question": case.get("question"),
            "golden": case.get("golden"),
            "rubric": case.get("rubric"),
            "answer": answer,
            "judge_verdict": rec.get("verdict") if isinstance(rec.get("verdict"), str) else None,
            "confidence": rec.get("confidence"),
            "why": rec.get("why") or rec.get("reason"),
            "raw": rec.get("raw"),
            "judge_version": run.get("judge_version"),
            "verdict": None,
            "reviewer": None,
            "note": None,
        }
        # a note says why a text is missing, or that it was read from the copy kept in the store
        notes = [n for n in (case_note if not case or cases else None,
                             answer_note if answer is None or (answers and not recorded) else None) if n]
        if notes:
            row["source_note"] = "; ".join(notes)
        out.append(row)
    return out


def check_regression_file(path: str | os.PathLike[str]) -> None:
    """Refuse to append to a file that holds lines and none of them a regression entry (see :func:`read_regressions`).

    ``review import --regressions examples/sql/cases.jsonl`` (the cases file typed for the regression file) appended
    a verdict row to the 22 cases, exit 0: the next ``judge`` read it as a case repeating q13's id. A missing or empty
    file is fine (it is created / started); a regression file with some bad lines is appended to as before.

    Raises:
        InputError: the file has lines and not one is a usable entry; names the file, its first line's problem and
            what to do.
    """
    p = Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        return
    try:
        entries, failures = read_regressions(p)
    except InputError as exc:  # not UTF-8, or only blank lines
        if not p.read_bytes().strip():
            return
        raise InputError(f"--regressions {path}: is not a judge-regression file ({exc}). Name the regression file "
                         "(judge-regressions.jsonl), or a new path to start one.") from None
    if entries or not failures:
        return
    raise InputError(
        f"--regressions {path}: none of its {len(failures)} line(s) is a judge-regression entry (the first: "
        f"{failures[0]['error']}); appending verdicts would change another file (the cases? a review export?). Name "
        "the regression file (judge-regressions.jsonl), or a new path to start one."
    )


def append_regressions(path: str | os.PathLike[str], entries: list[dict[str, Any]]) -> int:
    """Append *entries* to the regression file (created when missing), skipping any already there with the same
    id, answer and verdict. Returns how many were appended."""
    p = Path(path)
    seen: set[bytes] = set()
    if p.exists() and p.stat().st_size > 0:
        for item in read_jsonl(p):
            if isinstance(item, Row):
                seen.add(_entry_key(item.data))
    new = []
    for e in entries:  # skip entries already in the file, and repeats among the entries themselves
        key = _entry_key(e)
        if key not in seen:
            seen.add(key)
            new.append(e)
    if new:
        p.parent.mkdir(parents=True, exist_ok=True)
        needs_newline = p.exists() and p.stat().st_size > 0 and not p.read_bytes().endswith(b"\n")
        with p.open("ab") as fh:
            if needs_newline:
                fh.write(b"\n")
            for e in new:
                fh.write(orjson.dumps(e, option=orjson.OPT_APPEND_NEWLINE))
    return len(new)


def _entry_key(e: Mapping[str, Any]) -> bytes:
    return orjson.dumps([e.get("id"), e.get("answer"), e.get("verdict")], option=orjson.OPT_SORT_KEYS)


def import_review(
    store: RunStore,
    path: str | os.PathLike[str],
    *,
    regressions_path: str | os.PathLike[str] | None,
    reviewer: str | None = None,
    on_conflict: str = "fail",
) -> dict[str, Any]:
    """Record a filled review file's verdicts in the store and append them to the regression file.

    A verdict that differs from one already recorded for the same run and case (in the store, or in the
    regression file) is a **conflict**. ``on_conflict="fail"`` (default): nothing is imported and every conflict
    is listed (InputError). ``on_conflict="latest"``: the imported verdict settles the case (recorded with
    ``settles``; the earlier reviews stay in the store for the audit) and the regression file keeps only the
    settled entry for that case (rewritten atomically).

    Every row is checked first; when any row is unusable nothing is imported (the file is fixed and imported
    again). A row whose ``verdict`` is still empty is left for later (counted in ``n_pending``). Importing the
    same file twice records nothing new.

    Args:
        store: The open store (each row's ``run_id`` must name one of its runs).
        path: The file ``review export`` wrote, with ``verdict`` (and ``reviewer``) filled in.
        regressions_path: The regression file to append to; ``None`` records in the store only.
        reviewer: Used for rows that leave ``reviewer`` empty.
        on_conflict: ``"fail"`` or ``"latest"`` (see above).

    Returns:
        ``{"n_imported", "n_pending", "n_already", "n_appended", "regressions_path", "imported": [ids],
        "n_settled": conflicts settled by this import, "conflicts": [{"run_id", "case_id", "verdicts": [...]}]}``.

    Raises:
        InputError: a row without ``run_id`` / ``id``, a verdict outside match | near_match | no_match, no reviewer
            (neither in the row nor ``reviewer``), or a case id the run does not hold — all listed by line.
        InputError: a ``run_id`` names no run of the store.
        InputError: with ``on_conflict="fail"``, a verdict conflicts with one recorded before (all listed).
    """
    if on_conflict not in ("fail", "latest"):
        raise InputError(f"on_conflict must be 'fail' or 'latest', got {on_conflict!r}.")
    if regressions_path is not None:
        check_regression_file(regressions_path)
    p = Path(path)
    problems: list[str] = []
    todo: list[tuple[dict[str, Any], dict[str, Any]]] = []
    pending = 0
    runs: dict[str, dict[str, Any]] = {}
    case_maps: dict[str, dict[str, dict[str, Any]]] = {}
    first_line: dict[tuple[str, str], int] = {}
    not_judged: set[str] = set()  # runs of F1 scores or label outcomes: nothing there for a person to settle
    for item in read_jsonl(p):
        if isinstance(item, RowError):
            problems.append(item.error)
            continue
        d = item.data
        where = f"{p.name}:{item.line}"
        if d.get("verdict") in (None, ""):
            pending += 1
            continue
        if d["verdict"] not in SETTLED_VERDICTS:
            problems.append(f"{where}: verdict must be one of {', '.join(SETTLED_VERDICTS)}, got {shorten(d['verdict'])}.")
            continue
        who = d.get("reviewer") or reviewer
        if not who:
            problems.append(f"{where}: no reviewer; fill 'reviewer' or pass --reviewer NAME.")
            continue
        if not isinstance(d.get("run_id"), str) or not isinstance(d.get("id"), str):
            problems.append(f"{where}: 'run_id' and 'id' must be strings (as review export wrote them), got {shorten(d.get('run_id'))}, {shorten(d.get('id'))}.")
            continue
        if (d["run_id"], d["id"]) in first_line:
            problems.append(
                f"{where}: case {d['id']!r} of run {d['run_id']} is already given on line {first_line[d['run_id'], d['id']]}; "
                "a case takes one settled verdict per file. Keep one of the two rows."
            )
            continue
        first_line[d["run_id"], d["id"]] = item.line
        if d["run_id"] not in runs:
            runs[d["run_id"]] = store.get_run(d["run_id"], with_results=False)
            case_maps[d["run_id"]] = store.case_map(runs[d["run_id"]]["id"])
            try:
                _require_verdicts(store, runs[d["run_id"]])
            except InputError as exc:
                not_judged.add(d["run_id"])
                problems.append(f"{where}: {exc}")
                continue
        if d["run_id"] in not_judged:
            continue
        if d["id"] not in case_maps[d["run_id"]]:
            problems.append(f"{where}: run {d['run_id']} has no case {d['id']!r}. Keep the ids review export wrote.")
            continue
        todo.append((d, {"reviewer": who, "line": item.line}))
    if problems:
        shown = "\n  ".join(problems[:20]) + (f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else "")
        raise InputError(f"{p}: {len(problems)} row(s) cannot be imported, nothing was imported:\n  {shown}\nFix them and import the file again.")

    # conflicts: a verdict other than one recorded before for the same run and case (store or regression file)
    earlier_entries = _regression_entries(regressions_path)
    regressions_name = Path(regressions_path).name if regressions_path is not None else ""  # (no entries without it)
    conflicts: list[dict[str, Any]] = []
    for d, extra in todo:
        run_id = runs[d["run_id"]]["id"]
        before = [{"verdict": r["verdict"], "reviewer": r["reviewer"], "reviewed_at": r["reviewed_at"], "where": "store",
                   "settles": r.get("settles")}
                  for r in store.reviews(run_id) if r["case_id"] == d["id"]]
        before += [{"verdict": e.get("verdict"), "reviewer": e.get("reviewer"), "reviewed_at": e.get("reviewed_at"),
                    "where": f"{regressions_name}:{e['_line']}", "settles": e.get("settles")}
                   for e in earlier_entries if e.get("run_id") == run_id and e.get("id") == d["id"]]
        if before and settled_of(before) != d["verdict"]:
            extra["conflict"] = True
            conflicts.append({"run_id": run_id, "case_id": d["id"], "line": extra["line"], "verdicts": [
                *before, {"verdict": d["verdict"], "reviewer": extra["reviewer"], "reviewed_at": d.get("reviewed_at"),
                          "where": f"{p.name}:{extra['line']}"}]})
    if conflicts and on_conflict == "fail":
        shown = "\n  ".join(
            f"{p.name}:{c['line']}: run {c['run_id']} case {c['case_id']!r}: "
            + ", then ".join(f"{v['verdict']} by {v['reviewer'] or '?'} ({v['where']})" for v in c["verdicts"])
            for c in conflicts[:20]) + (f"\n  … and {len(conflicts) - 20} more" if len(conflicts) > 20 else "")
        raise InputError(
            f"{p}: {len(conflicts)} verdict(s) conflict with verdicts recorded before for the same case; nothing was "
            f"imported:\n  {shown}\nAgree on one verdict and fix the file, or pass --on-conflict latest to let the "
            "imported (latest) verdict settle each case.")

    imported: list[str] = []
    already = 0
    entries: list[dict[str, Any]] = []
    settled_now: set[tuple[str, str]] = set()
    for d, extra in todo:
        run = runs[d["run_id"]]
        reviewed_at = d.get("reviewed_at") or now_iso()
        existing = store.reviews(run["id"])
        if not extra.get("conflict") and any(
                r["case_id"] == d["id"] and r["verdict"] == d["verdict"] and r["reviewer"] == extra["reviewer"] for r in existing):
            already += 1  # (a verdict that settles a conflict is recorded even when its reviewer gave it before)
        else:
            rec = case_maps[d["run_id"]][d["id"]]
            judge_verdict = d.get("judge_verdict") or (rec.get("verdict") if isinstance(rec.get("verdict"), str) else None)
            store.add_review(run["id"], d["id"], verdict=d["verdict"], reviewer=extra["reviewer"], reviewed_at=reviewed_at,
                             judge_verdict=judge_verdict, note=d.get("note"), settles=bool(extra.get("conflict")))
            imported.append(d["id"])
        if extra.get("conflict"):
            settled_now.add((run["id"], d["id"]))
        if d.get("answer") is not None:
            entries.append({
                "id": d["id"],
                "answer": d["answer"],
                "verdict": d["verdict"],
                "judge_verdict": d.get("judge_verdict"),
                "reviewer": extra["reviewer"],
                "reviewed_at": reviewed_at,
                "judge_version": run.get("judge_version"),
                "rubric_hash": run.get("rubric_hash"),
                "run_id": run["id"],
                "note": d.get("note"),
                **({"settles": True} if extra.get("conflict") else {}),
            })
    try:
        if settled_now and regressions_path is not None:
            _drop_regressions(regressions_path, settled_now)  # the file keeps only the settled verdict of each
        appended = append_regressions(regressions_path, entries) if regressions_path is not None else 0
    except OSError as exc:
        raise InputError(
            f"{regressions_path}: cannot append to the regression file ({exc.strerror}); the {len(imported)} verdict(s) "
            "were recorded in the store. Make the file writable (or pass another --regressions) and import the same "
            "file again: recorded verdicts are not recorded twice, and the regression file gets them."
        ) from None
    return {
        "n_imported": len(imported),
        "n_pending": pending,
        "n_already": already,
        "n_appended": appended,
        "n_without_answer": sum(1 for d, _ in todo if d.get("answer") is None),
        "regressions_path": None if regressions_path is None else str(regressions_path),
        "imported": imported,
        "n_settled": len(settled_now),
        "conflicts": conflicts,
    }


def settled_of(reviews: Sequence[Mapping[str, Any]]) -> str | None:
    """The verdict that settles a case given its earlier reviews (oldest first, each with ``verdict`` and
    optionally ``settles``): the common verdict when all agree, the latest settling review's verdict when one
    settled a conflict, else ``None`` (an unsettled conflict). Same rule as
    :func:`goldeval.runs.reviews.settle_reviews`."""
    settled, _ = settle_reviews([{"case_id": "c", **{k: r.get(k) for k in ("verdict", "reviewer", "settles")}} for r in reviews])
    s = settled.get((None, "c"))
    return None if s is None else s["verdict"]


def settled_verdicts(store: RunStore, *, run: str | None = None,
                     regressions_path: str | os.PathLike[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """The settled human verdicts and the unsettled conflicts of the store (one run, or every run with reviews),
    optionally with a regression file's entries.

    Returns:
        ``{"settled": [{"run_id", "case_id", "verdict", "reviewers", "note", "reviewed_at", "n_reviews",
        "settled_by": "agreement" | "latest"}], "conflicts": [{"run_id", "case_id", "verdicts": [{"verdict",
        "reviewer", "reviewed_at", "note"}]}]}``, in the order the cases were first reviewed. The rule is
        :func:`goldeval.runs.reviews.settle_reviews`: all reviewers agree, or the latest review settled a
        conflict (``review import --on-conflict latest``).
    """
    run_ids = [store.resolve(run)] if run is not None else [r["id"] for r in store.list_runs() if store.reviews(r["id"])]
    reviews = [{**r, "run_id": rid} for rid in run_ids for r in store.reviews(rid)]
    for e in _regression_entries(regressions_path):
        if run is None or e.get("run_id") in run_ids:
            reviews.append({"run_id": e.get("run_id"), "case_id": e.get("id"), **{k: e.get(k) for k in ("verdict", "reviewer", "reviewed_at", "note", "settles")}})
    settled, conflicts = settle_reviews(reviews)
    return {"settled": list(settled.values()), "conflicts": conflicts}


def _regression_entries(path: str | os.PathLike[str] | None) -> list[dict[str, Any]]:
    """The readable entries of a regression file (``[]`` when there is none), each with its ``_line``."""
    if path is None or not Path(path).exists() or Path(path).stat().st_size == 0:
        return []
    return [{**item.data, "_line": item.line} for item in read_jsonl(path) if isinstance(item, Row)]


def _drop_regressions(path: str | os.PathLike[str], cases: set[tuple[str, str]]) -> None:
    """Rewrite the regression file (atomically) without the entries of *cases* ((run_id, id) pairs): a conflict
    settled by the latest verdict leaves only that verdict in the file."""

    p = Path(path)
    if not p.exists():
        return
    kept: list[bytes] = []
    for raw in p.read_bytes().splitlines(keepends=True):
        try:
            e = orjson.loads(raw)
        except orjson.JSONDecodeError:
            kept.append(raw)  # a line we cannot read is not ours to drop
            continue
        if isinstance(e, dict) and (e.get("run_id"), e.get("id")) in cases:
            continue
        kept.append(raw if raw.endswith(b"\n") else raw + b"\n")
    write_output(p, b"".join(kept), role="--regressions")
