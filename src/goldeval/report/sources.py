"""The case texts a report shows, read back from the run's input files or from the copies kept in the store.

The cases table and the results file keep ids, numbers and verdicts, not the texts. A report reads the inputs
named in the run (or the results file) again, and uses a file only when its sha256 is still the one recorded: a
file that changed or moved is not shown as if it were what was scored. A run recorded without ``--no-texts`` keeps
its input files in the store (:mod:`goldeval.runs.texts`): then the kept copy is read in its place, and the page
says which texts come from the store. Without a kept copy the report says the texts are not shown.
"""

from __future__ import annotations

import atexit
import os
import shutil
import threading
from array import array
from collections.abc import Callable, Collection, Mapping
from typing import Any

from goldeval.io.decoding import decode_into, new_folder, sniff
from goldeval.io.reading import Row, decode_json, file_sha256, is_delimited, is_parquet, read_rows
from goldeval.runs.identity import recorded_path
from goldeval.runs.inputs import input_files, input_paths
from goldeval.runs.texts import restore_input
from goldeval.scoring.registry import scorer_of

__all__ = ["CaseSources", "KeptCopy", "LineFile", "TextLoader", "kept_copies", "load_sources", "input_files", "input_paths"]

#: Rows of a golden or predicted table kept per case in a report (the counts are kept whole).
MAX_TABLE_ROWS = 200


class CaseSources:
    """Per case id, the texts and tables read back from the inputs, and notes on what could not be read.

    Attributes:
        texts: case id → ``{"prediction", "reference"}`` (free text; str or name → str), or ``{"question",
            "golden", "golden_kind", "canonical_query", "rubric", "must_not_use", "coverage", "final_query", "text",
            "prediction": {"columns", "rows", "row_count", "source"}, "alternatives"?: [{"golden": "alternatives[i]", "table", "canonical_query"}]}`` (data answers).
        notes: one line per input that could not be used (missing, changed since the run), for the report.
    """

    def __init__(self) -> None:
        self.texts: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []


#: role, the sha256 the run records for it → the path of the copy kept in the run store, or ``None`` (see
#: :func:`kept_copies`).
KeptCopy = Callable[[str, "str | None"], "str | None"]


def kept_copies(store: Any, run: Mapping[str, Any]) -> KeptCopy:
    """A :data:`KeptCopy` for *run*: each input kept with it (:mod:`goldeval.runs.texts`) written, when first asked
    for, into a temporary folder removed when the process ends.

    Args:
        store: The open store the run is in. run: The stored run (its ``id``).

    Example:
        ``load_sources(results, run, kept=kept_copies(store, run))`` shows the texts of a run whose inputs are gone.
    """
    folder: list[str] = []
    done: dict[tuple[str, str | None], str | None] = {}

    def copy(role: str, sha256: str | None) -> str | None:
        if (role, sha256) not in done:
            if not folder:
                folder.append(new_folder())
                atexit.register(shutil.rmtree, folder[0], True)
            done[(role, sha256)] = restore_input(store, str(run["id"]), role, sha256, folder[0])
        return done[(role, sha256)]

    return copy


def _usable(role: str, spec: Mapping[str, Any] | None, notes: list[str], base: str | None,
            kept: KeptCopy | None = None) -> str | None:
    """The path of an input whose bytes still hash to the recorded sha256, else the copy kept in the run store
    (*kept*; a note says the texts come from it), else ``None`` (and a note saying why nothing is shown)."""

    if not spec or not spec.get("path"):
        return None

    def instead(why: str) -> str | None:
        copy = kept(role, spec.get("sha256")) if kept is not None else None
        if copy is not None:
            notes.append(f"the {role} input {why}: its texts are shown from the copy kept in the run store")
            return copy
        notes.append(f"the {role} input {why}: its texts are not shown")
        return None

    if spec["path"] == "-" or spec.get("stream"):  # read once from stdin or a FIFO: the copy kept, if any
        where = "stdin (-)" if spec["path"] == "-" else f"the stream {spec['path']}"
        return instead(f"was read from {where}, not a file")
    path = recorded_path(spec, base) or str(spec["path"])
    if not os.path.isfile(path):
        # a recorded path is as the user typed it: a relative one is read from the working folder, so a report made
        # from another folder did not find an input that was still there (and said it was gone)
        if os.path.isabs(str(spec["path"])):
            return instead(f"{spec['path']} is not there any more")
        copy = kept(role, spec.get("sha256")) if kept is not None else None
        if copy is not None:
            notes.append(f"the {role} input {spec['path']} is not found from {os.getcwd()}: its texts are shown from the "
                         "copy kept in the run store")
            return copy
        notes.append(f"the {role} input {spec['path']} is not found from {os.getcwd()}: its texts are not shown (the "
                     "path is relative to the folder the run was made in: run `goldeval report` from there)")
        return None
    want = spec.get("sha256")
    if want and file_sha256(path) != want:
        return instead(f"{spec['path']} changed since the run (sha256 differs)")
    how = sniff(path) if spec.get("decoded") else None
    if how is not None:  # compressed, UTF-16/32 or a JSON array: read its plain form, as the run did
        folder = new_folder()
        atexit.register(shutil.rmtree, folder, True)
        return decode_into(path, how, folder)
    return path


class LineFile:
    """Random access to the lines of a file by number, read forward once: the byte offset of each line passed is
    remembered (8 bytes a line), so lines asked for in order cost one sequential read of the file, and a line
    before the last one read costs a seek.

    The lines passed over are found a block at a time (:data:`SCAN_BYTES`, ``bytes.find`` of each ``\n``), never
    read as a bytes object each: a line asked for is read alone once its offsets are known. The same bytes as
    ``readline`` gives at that line.

    Args:
        path: The file (opened in binary; lines end at ``\n``, as iterating the file splits them).

    Example:
        ``LineFile(path).line(3)`` is the third line's bytes (with its ``\n``), ``None`` past the end.
    """

    #: Bytes read a step while lines are passed over.
    SCAN_BYTES = 1 << 20

    def __init__(self, path: str) -> None:
        self.path = path
        self._fh = open(path, "rb")  # noqa: SIM115 (kept open across calls; closed by close())
        self._starts = array("q")  # byte offset of line k + 1 at index k, for every line found so far
        self._end = 0  # the offset just after the last line found (where the next line starts)
        self._block, self._block_at, self._scan = b"", 0, 0  # the block read last, its offset, where its scan stands

    def line(self, number: int) -> bytes | None:
        """The bytes of line *number* (1-based), ``None`` when the file has fewer lines."""
        if number < 1:
            return None
        starts = self._starts
        if number > len(starts):
            self._find(number)
            if number > len(starts):
                return None
        begin = starts[number - 1]
        end = starts[number] if number < len(starts) else self._end  # just after its "\n" (or the end of the file)
        at = self._block_at
        if at <= begin and end <= at + len(self._block):  # in the block read last: no read
            return self._block[begin - at : end - at]
        self._fh.seek(begin)
        return self._fh.readline() or None

    def _find(self, number: int) -> None:
        """Record the starts of the lines up to *number* (fewer at the end of the file)."""
        starts, start = self._starts, self._end
        block, at, i = self._block, self._block_at, self._scan
        while len(starts) < number:
            j = block.find(b"\n", i)
            if j >= 0:
                starts.append(start)
                start = at + j + 1
                i = j + 1
                continue
            at += len(block)
            self._fh.seek(at)
            block, i = self._fh.read(self.SCAN_BYTES), 0
            if not block:  # the end: a last line without "\n" is a line (readline gives it)
                if at > start:
                    starts.append(start)
                    start = at
                break
        self._end = start
        self._block, self._block_at, self._scan = block, at, i

    def close(self) -> None:
        """Close the file."""
        self._fh.close()


def _rows_at_lines(lf: LineFile, id_field: str, lines: Mapping[str, int]) -> dict[str, dict[str, Any]] | None:
    """The rows of *lines* (case id → its 1-based line in the file, as the scorer recorded it), decoding only those
    lines; ``None`` when a line is not there or does not hold its case (then the caller reads every row)."""

    out: dict[str, dict[str, Any]] = {}
    for lineno, cid in sorted((ln, cid) for cid, ln in lines.items()):
        raw = lf.line(lineno)
        if raw is None:
            return None
        try:
            text = raw.decode("utf-8")
            if lineno == 1 and text.startswith("\ufeff"):
                text = text[1:]
            data = decode_json(text, nonfinite=True, surrogates=True)  # as the scorers read it, exactly
        except ValueError:
            return None
        rid = data.get(id_field) if isinstance(data, dict) else None
        if isinstance(rid, bool) or not isinstance(rid, (str, int)) or str(rid) != cid:
            return None
        out[cid] = data
    return out


def _keyed_rows(path: str, id_field: str, wanted: Collection[str] | None,
                lines: Mapping[str, int] | None = None, line_file: LineFile | None = None) -> dict[str, dict[str, Any]]:

    jsonl = not (is_delimited(path) or is_parquet(path))
    if lines and jsonl and (wanted is None or set(lines) >= set(wanted)):
        use = {cid: lines[cid] for cid in (wanted if wanted is not None else lines)}
        if len(set(use.values())) == len(use):
            lf = line_file if line_file is not None and line_file.path == path else LineFile(path)
            try:
                found = _rows_at_lines(lf, id_field, use)
            finally:
                if lf is not line_file:
                    lf.close()
            if found is not None:
                return found
    out: dict[str, dict[str, Any]] = {}
    for item in read_rows(path):
        if not isinstance(item, Row):
            continue
        raw = item.data.get(id_field)
        if isinstance(raw, bool) or not isinstance(raw, (str, int)):
            continue
        cid = str(raw)
        if (wanted is None or cid in wanted) and cid not in out:
            out[cid] = item.data
    return out


def _table(obj: Any) -> dict[str, Any] | None:
    if not isinstance(obj, Mapping):
        return None
    rows = obj.get("rows")
    out = {"columns": obj.get("columns")}
    if isinstance(rows, list):
        out["rows"] = rows[:MAX_TABLE_ROWS]
        out["row_count"] = len(rows)
    elif "value" in obj:
        out["value"] = obj.get("value")
    return out


def load_sources(
    results: Mapping[str, Any],
    run: Mapping[str, Any] | None,
    *,
    wanted: Collection[str] | None = None,
    base: str | None = None,
    execute: bool = True,
    lines: Mapping[str, int] | None = None,
    kept: KeptCopy | None = None,
) -> CaseSources:
    """Read the case texts of a run back from its inputs.

    Args:
        results: The results dict (``scorer.name`` says which inputs to read; ``config`` names the fields).
        run: The stored run (its ``inputs`` name the files and their sha256), or ``None`` for a results file.
        wanted: Only these case ids (the ones the report embeds); ``None`` for all.
        base: Folder to resolve relative input paths against when they do not resolve from the working folder
            (the folder of a results file).
        execute: For data answers whose attempt holds a ``final_query`` and no rows: re-run the query read-only
            on the run's database (when it is unchanged) to show the rows that were judged.
        lines: Free text: case id → the line of the predictions file it was scored from (``per_example[].line``).
            With it only the wanted lines are decoded (the file's sha256 is checked first, so the lines are the
            ones scored); a line that does not hold its case falls back to reading every row.
        kept: Where an input is gone, changed or was a stream, the copy kept with the run in the store
            (:func:`kept_copies`); the notes say which texts come from it. ``None``: the input files only.

    Returns:
        A :class:`CaseSources`. Nothing raises for a missing or changed input: that is a note.
    """
    src = CaseSources()
    scorer = ((results.get("scorer") or {}).get("name")) or (run or {}).get("scorer_name")
    found = scorer_of(scorer)
    kind = found.report_kind if found is not None else "generic"
    files = input_files(results, run)
    config = {**((run or {}).get("config") or {}), **(results.get("config") or {})}
    if kind == "freetext":
        loader = TextLoader(results, run, base=base, lines=lines, kept=kept)
        try:
            return loader(wanted)
        finally:
            loader.close()
    elif kind == "answers":
        # start-up: the data-answer judge's packages (sqlglot, scipy: ~1 s) load only for a data-answer page
        from goldeval.answers.sql import open_database
        if run is None and files and not any(f.get("path") for f in files.values()):
            src.notes.append("this llm-judge results file records its inputs' sha256, not their paths: the questions, "
                             "goldens and answers are not shown (make the report from the store: goldeval report RUN)")
            return src
        cases_path = _usable("cases", files.get("cases"), src.notes, base, kept)
        attempts_path = _usable("attempts", files.get("attempts"), src.notes, base, kept)
        cases = _keyed_rows(cases_path, "id", wanted) if cases_path else {}
        attempts = _keyed_rows(attempts_path, "id", wanted) if attempts_path else {}
        db = None
        if execute and attempts and (files.get("db") or {}).get("path"):
            db_path = _usable("db", files.get("db"), src.notes, base)
            if db_path is not None:

                limit: dict[str, Any] = {"max_result_bytes": int(config["max_result_bytes"])} if config.get("max_result_bytes") else {}
                try:
                    db = open_database(db_path, timeout_s=float(config.get("timeout_s") or 5.0), max_rows=int(config.get("max_rows") or 1_000_000),
                                       **limit)
                except Exception as exc:  # a database that cannot be opened: the rows are not shown, the rest is
                    src.notes.append(f"the database {db_path} could not be opened ({exc}): predicted rows of executed queries are not shown")
        try:
            for cid in dict.fromkeys([*cases, *attempts]):
                case, attempt = cases.get(cid) or {}, attempts.get(cid) or {}
                entry: dict[str, Any] = {
                    "question": case.get("question"),
                    "golden": _table(case.get("golden")),
                    "golden_kind": (case.get("golden") or {}).get("kind") if isinstance(case.get("golden"), Mapping) else None,
                    "canonical_query": (case.get("golden") or {}).get("canonical_query") if isinstance(case.get("golden"), Mapping) else None,
                    "rubric": case.get("rubric"),
                    "must_not_use": case.get("must_not_use"),
                    "coverage": case.get("coverage"),
                    "final_query": attempt.get("final_query"),
                    "text": attempt.get("text"),
                }
                alternatives = (case.get("golden") or {}).get("alternatives") if isinstance(case.get("golden"), Mapping) else None
                if isinstance(alternatives, list) and alternatives:
                    # Other right answers of the case: each shown with its label, the one that decided marked.
                    entry["alternatives"] = [
                        {"golden": f"alternatives[{i}]", "table": _table(alt),
                         "canonical_query": alt.get("canonical_query") if isinstance(alt, Mapping) else None}
                        for i, alt in enumerate(alternatives)]
                if isinstance(attempt.get("rows"), list):
                    entry["prediction"] = {**(_table(attempt) or {}), "source": "reported"}
                elif db is not None and isinstance(attempt.get("final_query"), str):
                    entry["prediction"] = _executed(db, attempt["final_query"])
                src.texts[cid] = entry
        finally:
            if db is not None:
                db.close()
    return src



class TextLoader:
    """The case texts of one run read a chunk of cases at a time: the input is found (and its sha256 checked, or
    its kept copy written) once, and each call decodes only the lines of the cases asked for.

    A free-text run's predictions file is read forward through a :class:`LineFile`, so the chunks of a page, asked
    for in the run's order, cost one read of the file together. Other runs (data answers: cases, attempts and a
    database to execute on) are read whole by each call, as :func:`load_sources` does: ``chunked`` is ``False``
    for them, and a caller should ask once for every case it shows.

    Args:
        results, run, base, execute, kept: As :func:`load_sources`.
        lines: case id → line of the predictions file (``per_example[].line``), the default of each call's.

    Example:
        ``loader = TextLoader(results, run); loader.notes(); loader({"c1", "c2"}, lines={"c1": 1, "c2": 2}).texts``
    """

    def __init__(self, results: Mapping[str, Any], run: Mapping[str, Any] | None, *, base: str | None = None,
                 execute: bool = True, lines: Mapping[str, int] | None = None, kept: KeptCopy | None = None) -> None:
        self.results, self.run, self.base, self.execute, self.lines, self.kept = results, run, base, execute, lines, kept
        scorer = ((results.get("scorer") or {}).get("name")) or (run or {}).get("scorer_name")
        found = scorer_of(scorer)
        self.kind = found.report_kind if found is not None else "generic"
        #: True when a call per chunk of cases reads no more than one call for them all (free text).
        self.chunked = self.kind == "freetext"
        self._notes: list[str] | None = None
        self._path: str | None = None
        self._line_file: LineFile | None = None
        self._hashing: threading.Thread | None = None

    def prefetch(self) -> None:
        """Start hashing the free-text input in a background thread, so that :meth:`notes` finds its sha256 known
        (:func:`goldeval.io.reading.file_sha256` remembers it for the unchanged file) while the caller reads the
        run's cases: the hash and the file's reads release the GIL, a 417 MB input's ~0.3 s then costs a busy
        caller no time. Nothing for other inputs, a stream, or a loader whose notes were read. A failure in the
        thread is left to :meth:`notes`, which hashes the file again and says what went wrong."""
        if not self.chunked or self._notes is not None or self._hashing is not None:
            return
        spec = input_files(self.results, self.run).get("predictions")
        if not spec or not spec.get("sha256") or not spec.get("path") or spec["path"] == "-" or spec.get("stream"):
            return
        path = recorded_path(spec, self.base) or str(spec["path"])
        if not os.path.isfile(path):
            return

        def work() -> None:
            try:
                file_sha256(path)
            except Exception:  # noqa: BLE001 (notes() hashes the file again and reports what went wrong)
                return

        self._hashing = threading.Thread(target=work, name="goldeval-input-sha256", daemon=True)
        self._hashing.start()

    def notes(self) -> list[str]:
        """What the page must say about the inputs (gone, changed, read from the kept copy); finds the input once."""
        if self._hashing is not None:  # the sha256 prefetch() started: done before the input is checked
            self._hashing.join()
            self._hashing = None
        if self._notes is None:
            self._notes = []
            if self.chunked:
                self._path = _usable("predictions", input_files(self.results, self.run).get("predictions"), self._notes,
                                     self.base, self.kept)
                if self._path is not None and not (is_delimited(self._path) or is_parquet(self._path)):
                    self._line_file = LineFile(self._path)
        return self._notes

    def __call__(self, wanted: Collection[str] | None, lines: Mapping[str, int] | None = None) -> CaseSources:
        """The texts of the cases *wanted* (``None``: all), with the notes; *lines* as :func:`load_sources`'s
        (default: the loader's)."""
        if not self.chunked:
            return load_sources(self.results, self.run, wanted=wanted, base=self.base, execute=self.execute,
                                lines=self.lines if lines is None else lines, kept=self.kept)
        src = CaseSources()
        src.notes = list(self.notes())
        if self._path is None:
            return src
        config = {**((self.run or {}).get("config") or {}), **(self.results.get("config") or {})}
        pf, rf = config.get("prediction_field", "prediction"), config.get("reference_field", "reference")
        for cid, row in _keyed_rows(self._path, config.get("id_field", "id"), wanted, self.lines if lines is None else lines,
                                    self._line_file).items():
            src.texts[cid] = {"prediction": row.get(pf), "reference": row.get(rf)}
        return src

    def close(self) -> None:
        """Close the input file held open between calls."""
        if self._line_file is not None:
            self._line_file.close()
            self._line_file = None

def _executed(db: Any, sql: str) -> dict[str, Any]:
    """The first rows of *sql* run read-only, or the database's message."""
    # start-up: loaded with open_database, for a data-answer page only
    from goldeval.answers.sql import rows_as_lists

    try:
        res = db.execute(sql)
    except Exception as exc:  # the judge recorded this case's failure; here it only explains the empty table
        return {"source": "executed", "error": str(exc)}
    rows = rows_as_lists(res)
    return {"source": "executed", "columns": list(res.columns), "rows": rows[:MAX_TABLE_ROWS], "row_count": len(rows)}
