"""Scoring while the first pass reads (engines/local.py ``_Ahead``, issue 31 item 2): token F1's line kernel scores
each chunk the first pass closes before it is known whether an id repeats; the chunks are held and taken only when
none does (and the run's plan is the one guessed), else thrown away. Every outcome must be exactly the one of the
path without it: the reference here is one worker (no scoring ahead) and the Python path (no C kernel), on the
tricky rows of tests/unit/test_freetext_lines.py (BOM, CRLF, blank lines, non-ASCII, escapes, lines that are not
JSON, integer ids). No timing is asserted (benchmarks/README.md, "Issue 31 item 2, scoring while the first pass
reads")."""

from __future__ import annotations

import json
import os
import re
import threading
from typing import Any

import pytest
from click.testing import CliRunner
from test_freetext_lines import _long_or_short_file, _mixed_file

from goldeval.cli import main
from goldeval.engines import local
from goldeval.errors import InputError
from goldeval.freetext.scorer import TokenF1

pytestmark = pytest.mark.skipif(local._line_kernel(TokenF1(), TokenF1().configure(source="x"),
                                                   local._Plan(True, False, False, False)) is None,
                                reason="no C build: no line kernel, nothing is scored ahead")

VARY = re.compile(rb'"elapsed_sec": ?[0-9.e-]+|"workers": ?[123]|"run": ?\{[^{}]*\}')


class _Seen:
    """Wraps ``_Ahead.fits`` to note, for each run, how many chunks were scored ahead and whether they were taken."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs: list[tuple[int, bool]] = []
        real = local._Ahead.fits

        def fits(ahead: Any, plan: Any, workers: int, kernel: bool) -> bool:
            ok = real(ahead, plan, workers, kernel)
            self.runs.append((ahead.submitted, ok))
            return ok

        monkeypatch.setattr(local._Ahead, "fits", fits)


def _small_chunks(monkeypatch: pytest.MonkeyPatch, cores: int = 4) -> None:
    import goldeval.io.ids as ids

    monkeypatch.setattr(ids, "SCAN_BLOCK", 4000)  # many blocks, so the first pass closes chunks as it goes
    monkeypatch.setattr(local, "_KERNEL_ROWS", 40)  # ~33 chunks of the 1,300-row file
    monkeypatch.setattr(local.os, "cpu_count", lambda: cores)  # (3 workers are 3 threads even on 2 cores)


def _no_scoring_threads() -> bool:
    for t in threading.enumerate():
        if t.name.startswith("goldeval-score"):
            t.join(10)
            if t.is_alive():
                return False
    return True


def _score(path: Any, workers: str, out: Any, *, store: Any = None, fmt: str = "json") -> bytes:
    args = ["score", str(path), "--workers", workers, "--out", str(out), "--out-format", fmt, "-q"]
    args += ["--store", str(store)] if store is not None else ["--no-store"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return out.read_bytes()


def _cases(db: Any) -> list:
    from goldeval.runs.store import RunStore

    with RunStore(str(db)) as st:
        (run,) = st.list_runs()
        cases = list(st.stored_cases(run["id"]))
        assert run["n_recorded"] == len(cases)
    return cases


@pytest.mark.parametrize("store", [False, True])
def test_results_file_and_store_are_the_same_to_the_byte_at_1_and_2_workers_with_chunks_scored_ahead(tmp_path, monkeypatch,
                                                                                              store):
    # The results file (JSON and JSONL) and the store's cases read back: at 2 and 3 workers (chunks scored ahead,
    # seen taken) exactly those of 1 worker and of the Python path (line_kernel off) at 1 worker.
    _small_chunks(monkeypatch)
    seen = _Seen(monkeypatch)
    rows = _mixed_file(tmp_path)
    f = tmp_path / "mixed.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + b"".join(rows))
    outs = {}
    for arm in ("python", "1", "2"):
        with monkeypatch.context() as m:
            if arm == "python":
                m.setattr(TokenF1, "line_kernel", lambda self, config: None)
            got = []
            for fmt in ("json", "jsonl"):
                db = tmp_path / f"{arm}-{fmt}.db" if store else None
                got.append(VARY.sub(b"", _score(f, "1" if arm == "python" else arm, tmp_path / f"{arm}.{fmt}",
                                                 store=db, fmt=fmt)))
            outs[arm] = (got, _cases(tmp_path / f"{arm}-jsonl.db") if store else None)
    assert outs["2"] == outs["1"] == outs["python"]
    # 2 workers, JSON and JSONL: two runs, each with chunks scored ahead (at least the first 2 x workers, handed
    # over as the first pass closed them) and taken
    assert len(seen.runs) == 2 and all(ok and n >= 4 for n, ok in seen.runs), seen.runs
    doc = json.loads(_score(f, "2", tmp_path / "again.json"))
    assert doc["aggregate"]["n_rows"] == len(rows) - 2 and doc["aggregate"]["n_failed"] > 13 * 5
    if store:
        assert len(outs["1"][1]) > 1250
    assert _no_scoring_threads()


@pytest.mark.parametrize("store", [False, True])
def test_a_repeat_found_late_throws_the_chunks_scored_ahead_away(tmp_path, monkeypatch, store):
    # The last row repeats the id of row 6: the first pass says so only at its end, after chunks were scored ahead
    # (folded as if no id repeated). They are thrown away and the run goes as without them (the pool of
    # processes, the repeat reported on its line): the same results and store as 1 worker.
    _small_chunks(monkeypatch, cores=2)
    seen = _Seen(monkeypatch)
    f = _long_or_short_file(tmp_path, 3000, long=False, repeat=5)
    one = VARY.sub(b"", _score(f, "1", tmp_path / "one.json", store=tmp_path / "one.db" if store else None))
    two = VARY.sub(b"", _score(f, "2", tmp_path / "two.json", store=tmp_path / "two.db" if store else None))
    assert one == two and b"repeats line 6" in two
    assert len(seen.runs) == 1 and seen.runs[0][0] >= 4 and not seen.runs[0][1]
    if store:
        assert _cases(tmp_path / "one.db") == _cases(tmp_path / "two.db")
    # silent on the healthy file: the same rows without the repeat are taken
    g = _long_or_short_file(tmp_path, 2999, long=False)
    _score(g, "2", tmp_path / "healthy.json")
    assert seen.runs[1][1] and seen.runs[1][0] >= 4
    assert _no_scoring_threads()


def test_the_cap_on_held_bytes_stops_scoring_ahead_and_the_rest_is_scored_after(tmp_path, monkeypatch):
    # AHEAD_BYTES at 1 byte: once a chunk is scored and held, no other is started ahead; at most the first
    # 2 x workers were (handed over before any was done). The results are the same as with no cap and at 1 worker.
    _small_chunks(monkeypatch, cores=2)
    seen = _Seen(monkeypatch)
    rows = _mixed_file(tmp_path)
    f = tmp_path / "mixed.jsonl"
    f.write_bytes(b"".join(rows))
    free = VARY.sub(b"", _score(f, "2", tmp_path / "free.json"))
    monkeypatch.setattr(local, "AHEAD_BYTES", 1)
    capped = VARY.sub(b"", _score(f, "2", tmp_path / "capped.json"))
    one = VARY.sub(b"", _score(f, "1", tmp_path / "one.json"))
    assert capped == free == one
    assert seen.runs[1][1] and 1 <= seen.runs[1][0] <= 4


def test_the_cap_is_checked_against_the_chunks_done_and_not_taken(tmp_path):
    # _Ahead itself, by hand: two chunks handed over and done hold their bytes (_held_bytes > 0); with the cap
    # below that, a chunk closed then is not scored ahead; once one is taken (its bytes no longer held) it is.
    f = _long_or_short_file(tmp_path, 300, long=False)
    sc = TokenF1()
    cfg = sc.configure(source="rows.jsonl")
    plan = local._Plan(fold=True, keep=False, entries=False, serialize=False)
    ahead = local._Ahead(sc, cfg, plan, local._line_kernel(sc, cfg, plan), 1, automatic=False)
    spans = local._Spans(f)
    lines = f.read_bytes().splitlines(keepends=True)
    try:
        ahead.on_block(spans, sum(map(len, lines[:100])), 100)  # (a chunk is 8,000 lines: none closed yet)
        assert ahead.submitted == 0
        spans.spans.append(local.Span(os.fspath(f), 0, sum(map(len, lines[:100])), 1, 100))
        spans.spans.append(local.Span(os.fspath(f), sum(map(len, lines[:100])), sum(map(len, lines[100:200])), 101, 100))
        ahead.on_block(spans, 0, 0)
        assert ahead.submitted == 2  # room for 2 x 1 worker
        first, second = (fut.result() for fut in ahead.futures)
        held = local._held_bytes(first) + local._held_bytes(second)
        assert first.n_rows == 100 and ahead.running == 0 and ahead.held == held > 0
        spans.spans.append(local.Span(os.fspath(f), 0, 1, 201, 1))  # (never scored: only counted)
        local.AHEAD_BYTES, saved = held, local.AHEAD_BYTES
        try:
            ahead.on_block(spans, 0, 0)
            assert ahead.submitted == 2  # held == cap: no room
            ahead.futures.popleft()
            ahead.taken(first)
            assert ahead.room() and ahead.held == local._held_bytes(second)
        finally:
            local.AHEAD_BYTES = saved
    finally:
        ahead.discard()
    assert not ahead.futures and _no_scoring_threads()


@pytest.mark.parametrize("record", [False, True])
def test_entries_records_and_results_are_the_same_at_1_2_3_workers(tmp_path, monkeypatch, record):
    # local.run itself (the CLI's --workers stops at the machine's cores): the entries streamed, every call the
    # store's recorder gets (blocks of records, rows, in order) and the results are those of 1 worker and of the
    # Python path at 2 and 3 workers (3 threads), chunks scored ahead and taken.
    _small_chunks(monkeypatch)
    seen = _Seen(monkeypatch)
    rows = _mixed_file(tmp_path)
    f = tmp_path / "mixed.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + b"".join(rows))
    outs = {}
    for arm in ("python", "1", "2", "3"):
        with monkeypatch.context() as m:
            if arm == "python":
                m.setattr(TokenF1, "line_kernel", lambda self, config: None)
            sc = TokenF1()
            rec, got = (_Recorder(keep=True) if record else None), []
            res = local.run(sc, f, sc.configure(source="mixed.jsonl"), workers=1 if arm == "python" else int(arm),
                            recorder=rec, keep_cases=False, record_blocks=True,
                            on_example_lines=lambda body, n, got=got: got.append((body, n)))
            res["aggregate"].pop("elapsed_sec", None)
            res["input"].pop("workers")
            entries = b"".join(body for body, _ in got)
            assert sum(n for _, n in got) == entries.count(b"\n") > 900
            outs[arm] = (entries, res, rec.kept if rec is not None else None)
    assert outs["3"] == outs["2"] == outs["1"]
    # the Python path records row by row where the kernel records blocks: the same cases, compared as cases
    assert outs["python"][:2] == outs["1"][:2]
    assert [ok and n >= 4 for n, ok in seen.runs] == [True, True]
    assert _no_scoring_threads()


class _Recorder:
    """A recorder that takes blocks (the kernel's plan with the store on) and notes every call."""

    def __init__(self, keep: bool = False) -> None:
        self.calls: list[str] = []
        self.kept: list[Any] | None = [] if keep else None

    def previous(self) -> dict:
        return {}

    def record(self, case: dict) -> None:
        self.calls.append("record")
        if self.kept is not None:
            self.kept.append(("record", json.dumps(case, sort_keys=True)))

    def record_serialized(self, keys: Any, body: bytes) -> None:
        self.calls.append("record_serialized")
        if self.kept is not None:
            self.kept.append(("record_serialized", keys, body))

    def record_lines(self, body: bytes, n: int, ids: bytes) -> None:
        self.calls.append("record_lines")
        if self.kept is not None:
            self.kept.append(("record_lines", body, n, ids))

    def finish(self, results: dict) -> None:
        self.calls.append("finish")


def test_an_interrupt_during_the_first_pass_records_and_streams_nothing_scored_ahead(tmp_path, monkeypatch):
    # Ctrl-C while the first pass reads (KeyboardInterrupt from its 40th block, after chunks were scored ahead):
    # it goes up, every scoring thread has ended, and nothing was streamed or recorded, nor the run finished: what
    # was held is lost, as the first pass's work is today (the run resumes from the store as it was).
    _small_chunks(monkeypatch, cores=2)
    f = _long_or_short_file(tmp_path, 3000, long=False)
    sc = TokenF1()
    cfg = sc.configure(source="rows.jsonl")
    real = local._Ahead.on_block
    blocks = [0]
    submitted: list[int] = []

    def on_block(ahead: Any, spans: Any, size: int, lines: int) -> None:
        real(ahead, spans, size, lines)
        blocks[0] += 1
        if blocks[0] == 40:
            submitted.append(ahead.submitted)
            raise KeyboardInterrupt

    monkeypatch.setattr(local._Ahead, "on_block", on_block)
    rec, got = _Recorder(), []
    with pytest.raises(KeyboardInterrupt):
        local.run(sc, f, cfg, workers=2, recorder=rec, keep_cases=False, record_blocks=True,
                  on_example_lines=lambda body, n: got.append(body))
    assert submitted and submitted[0] >= 2 and rec.calls == [] and got == []
    assert _no_scoring_threads()
    # silent where nothing interrupts: the same run records blocks and finishes
    monkeypatch.setattr(local._Ahead, "on_block", real)
    local.run(sc, f, cfg, workers=2, recorder=rec, keep_cases=False, record_blocks=True,
              on_example_lines=lambda body, n: got.append(body))
    assert "record_lines" in rec.calls and rec.calls[-1] == "finish" and len(b"".join(got).splitlines()) == 3000


def test_an_interrupt_while_taking_streams_and_records_exactly_the_chunks_taken(tmp_path, monkeypatch):
    # Ctrl-C after the first pass, while the held chunks are taken (the progress callback raises after the 3rd):
    # the entries streamed and the cases recorded are those of the first 3 chunks, in order, no more.
    _small_chunks(monkeypatch, cores=2)
    seen = _Seen(monkeypatch)
    f = _long_or_short_file(tmp_path, 2000, long=False)
    sc = TokenF1()
    cfg = sc.configure(source="rows.jsonl")
    rec, got, taken = _Recorder(), [], [0, 0]

    def progress(n: int) -> None:
        taken[0] += n
        taken[1] += 1
        if taken[1] == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        local.run(sc, f, cfg, workers=2, recorder=rec, keep_cases=False, record_blocks=True, progress=progress,
                  on_example_lines=lambda body, n: got.append(body))
    assert seen.runs[0][1] and seen.runs[0][0] >= 3
    entries = b"".join(got).splitlines()
    assert [json.loads(e)["line"] for e in entries] == list(range(1, taken[0] + 1))
    assert 3 * 40 <= taken[0] < 2000  # (three chunks of at least 40 lines, cut at the first pass's block ends)
    assert rec.calls == ["record_lines"] * 3 and _no_scoring_threads()


def test_a_file_that_is_not_utf8_or_holds_no_rows_fails_as_at_one_worker(tmp_path, monkeypatch):
    # The first pass's errors with chunks scored ahead meanwhile: the same message as 1 worker, no thread left.
    _small_chunks(monkeypatch, cores=2)
    _Seen(monkeypatch)
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(b'{"id": "a", "prediction": "caf\xe9", "reference": "x"}\n' * 3000)
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n  \n" * 2000)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for f in (latin, blank, empty):
        outs = []
        for workers in ("1", "2"):
            r = CliRunner().invoke(main, ["score", str(f), "--workers", workers, "--no-store", "-q"])
            assert r.exit_code != 0
            outs.append(r.output)
        assert outs[0] == outs[1] and outs[0]
    assert _no_scoring_threads()
    sc = TokenF1()
    with pytest.raises(InputError, match="holds no rows"):
        local.run(sc, blank, sc.configure(source="blank.jsonl"), workers=2, keep_cases=False)


def test_automatic_workers_score_ahead_for_long_rows_only(tmp_path, monkeypatch):
    # workers=None: a chunk is scored ahead once the lines read are at least PARALLEL_MIN_ROWS (300 here) and
    # average LONG_ROW_BYTES or more. Long rows (~2,400 bytes): scored ahead and taken, the same numbers as one
    # worker. Short rows (~60 bytes): never scored ahead (the run is one thread), and no thread is started.
    import goldeval.io.ids as ids

    monkeypatch.setattr(local, "PARALLEL_MIN_ROWS", 300)
    monkeypatch.setattr(local, "_KERNEL_ROWS", 40)
    monkeypatch.setattr(ids, "SCAN_BLOCK", 20000)
    monkeypatch.setattr(local.os, "cpu_count", lambda: 2)
    seen = _Seen(monkeypatch)
    long_file = _long_or_short_file(tmp_path, 800, long=True)
    r = CliRunner().invoke(main, ["score", str(long_file), "--no-store", "-q", "--out", str(tmp_path / "a.json")])
    assert r.exit_code == 0, r.output
    auto = VARY.sub(b"", (tmp_path / "a.json").read_bytes())
    one = VARY.sub(b"", _score(long_file, "1", tmp_path / "one.json"))
    assert auto == one and seen.runs[0][1] and seen.runs[0][0] >= 1
    short = _long_or_short_file(tmp_path, 3000, long=False)
    r = CliRunner().invoke(main, ["score", str(short), "--no-store", "-q", "--out", str(tmp_path / "s.json")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "s.json").read_bytes())["input"]["workers"] == 1
    assert seen.runs[1] == (0, False)
