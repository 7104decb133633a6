"""Run store: migrations (from empty and from the previous schema), runs and cases, the Recorder's batching,
resume without duplicates, run keys."""

from __future__ import annotations

import json
import sqlite3

import orjson
import pytest

from goldeval.errors import InputError, StoreError
from goldeval.runs.migrations import MIGRATIONS, applied_migrations, migrate
from goldeval.runs.recorder import Recorder, dataset_hash, hashes_from_results, run_key, start_run
from goldeval.runs.store import RunMeta, RunStore, case_columns, gates_passed, headline


def meta(key: str = "k1", **kw) -> RunMeta:
    return RunMeta(run_key=key, scorer_name=kw.pop("scorer_name", "token_f1"), scorer_version="1", dataset_hash="d" * 64, **kw)


@pytest.fixture()
def store(tmp_path):
    with RunStore(tmp_path / "g.db") as st:
        yield st


# --- migrations ---------------------------------------------------------------------------------------------------


def test_shipped_migrations_are_pinned():
    # Append-only: a shipped migration is never renamed, removed or reordered. Add new ones at the end.
    assert [m.__name__ for m in MIGRATIONS][:2] == ["m001_runs_and_cases", "m002_reviews_and_key_index"]


def test_migrate_from_empty_creates_every_table_in_wal_mode(tmp_path):
    st = RunStore(tmp_path / "new" / "g.db")  # the folder is created too
    assert st.migrations_applied == [m.__name__ for m in MIGRATIONS]
    tables = {r[0] for r in st.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"runs", "cases", "reviews", "_migrations"} <= tables
    assert st.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    st.close()
    again = RunStore(tmp_path / "new" / "g.db")
    assert again.migrations_applied == []  # applied once, recorded
    assert applied_migrations(again.db) == [m.__name__ for m in MIGRATIONS]
    again.close()


def test_migrate_from_the_previous_schema_keeps_the_data(tmp_path):
    path = tmp_path / "old.db"
    old = RunStore(path, _migrate_upto=len(MIGRATIONS) - 1)  # the schema one migration ago
    assert applied_migrations(old.db) == [m.__name__ for m in MIGRATIONS[:-1]]
    run_id = old.create_run(meta())
    old.write_cases(run_id, [("c1", 0, "scored", "match", None, None, None, '{"id": "c1", "verdict": "match"}')])
    old.finish_run(run_id, {"aggregate": {"n": 1, "pass_rate": 1.0}})
    old.close()

    new = RunStore(path)
    assert new.migrations_applied == [MIGRATIONS[-1].__name__]
    run = new.get_run(run_id)
    assert run["status"] == "finished" and run["headline_value"] == 1.0
    assert new.cases(run_id) == [{"id": "c1", "verdict": "match"}]
    new.add_review(run_id, "c1", verdict="no_match", reviewer="ana", reviewed_at="2026-11-29T15:00:00+00:00")
    assert new.reviews(run_id)[0]["verdict"] == "no_match"
    new.close()


def test_a_new_store_has_16k_pages_and_an_older_store_keeps_its_own(tmp_path):
    with RunStore(tmp_path / "new.db") as st:
        assert st.db.execute("PRAGMA page_size").fetchone()[0] == 16384
    old = sqlite3.connect(tmp_path / "old.db")  # a store made before: 4 KiB pages
    old.execute("PRAGMA page_size=4096")
    old.execute("PRAGMA journal_mode=WAL")
    migrate(old)
    old.close()
    with RunStore(tmp_path / "old.db") as st:
        assert st.db.execute("PRAGMA page_size").fetchone()[0] == 4096
        run_id = st.create_run(meta())
        st.write_cases(run_id, [("a", 0, "scored", None, 0.5, None, None, '{"id":"a"}')])
        assert st.cases(run_id) == [{"id": "a"}]


def test_a_database_from_a_newer_goldeval_is_refused(tmp_path):
    path = tmp_path / "g.db"
    RunStore(path).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO _migrations VALUES ('m999_from_the_future', 'x')")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="m999_from_the_future.*newer goldeval"):
        RunStore(path)


def test_a_file_that_is_not_sqlite_is_a_store_error(tmp_path):
    # issue 29: --store naming a file that is not a store is a usage error (InputError, exit 2), still a StoreError
    bad = tmp_path / "g.db"
    bad.write_bytes(b"this is not a database, just text " * 100)
    with pytest.raises(StoreError, match=r"not a SQLite database \(it begins b'this is not a da'\), so it is no goldeval "
                                         r"run store.*move the file away") as info:
        RunStore(bad)
    assert isinstance(info.value, InputError)
    with pytest.raises(InputError, match="not a SQLite database"):
        RunStore(bad, readonly=True)


def test_a_damaged_store_is_a_store_error_not_an_internal_error(tmp_path):
    # break-fix: pages overwritten in the middle of the file surfaced from `runs list` / `compare` as "internal error:
    # DatabaseError ... please report it"; expected a StoreError naming the file and the way to salvage it.
    path = tmp_path / "g.db"
    with RunStore(path) as st:
        run_id = st.create_run(meta())
        st.write_cases(run_id, [(f"c{i}", i, "scored", None, 0.5, None, None, '{"pad": "%s"}' % ("x" * 2000)) for i in range(200)])
        st.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(path, "r+b") as fh:  # the cases' pages (the runs table sits in the first pages)
        fh.seek(4096 * 8)
        fh.write(b"\xff" * 4096 * 20)
    with RunStore(path) as st, pytest.raises(StoreError, match="reading it failed: not a SQLite database, or a damaged one.*\\.recover"):
        st.cases(run_id)


# --- read-only, locked and foreign stores (break-fix findings) ------------------------------------------------------


def _one_finished_run(path) -> str:
    with RunStore(path) as st:
        run_id = st.create_run(meta())
        st.write_cases(run_id, [("c1", 0, "scored", "match", None, None, None, '{"id":"c1","verdict":"match"}')])
        st.finish_run(run_id, {"aggregate": {"n": 1, "pass_rate": 1.0}})
    return run_id


def test_a_read_only_store_can_still_be_read_but_not_written(tmp_path):
    # A store this process may not write (archive, another user's file) was unreadable by `runs list/show` and
    # `compare` ("cannot open it as SQLite ... move the file away"): opening it read-write failed.
    run_id = _one_finished_run(tmp_path / "g.db")
    with RunStore(tmp_path / "g.db", readonly=True) as ro:
        assert ro.get_run("latest")["id"] == run_id and ro.cases(run_id) == [{"id": "c1", "verdict": "match"}]
        with pytest.raises(StoreError, match="delete of .* failed: the file \\(or its folder\\) is read-only.*writable path"):
            ro.delete_run(run_id)
    with RunStore(tmp_path / "g.db") as st:
        assert st.get_run(run_id)["status"] == "finished"  # nothing was deleted


def test_a_store_under_a_file_is_named_a_file_not_a_read_only_folder(tmp_path):
    # GOLDEVAL_HOME=notes.txt (a file): the store notes.txt/goldeval.db cannot be made, and the message said "the folder
    # notes.txt is read-only for this user" (os.access on a file without the x bit), sending the user to chmod it
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    with pytest.raises(StoreError, match=r"cannot record a run there: .*notes\.txt is a file, not a folder") as exc:
        RunStore(notes / "goldeval.db")
    assert "read-only" not in str(exc.value).split("A scoring command")[0]
    assert notes.read_text() == "mine\n"
    # healthy: a missing folder under a writable one is made
    with RunStore(tmp_path / "home" / "goldeval.db") as st:
        assert st.list_runs() == []


def test_open_existing_falls_back_to_read_only_when_the_file_is_not_writable(tmp_path, monkeypatch):
    run_id = _one_finished_run(tmp_path / "g.db")
    monkeypatch.setattr("goldeval.runs.store.os.access", lambda path, mode: mode != __import__("os").W_OK)
    with RunStore.open_existing(tmp_path / "g.db") as st:
        assert st.readonly and st.get_run("latest")["id"] == run_id


def test_a_read_only_store_of_the_previous_schema_is_refused_with_what_to_do(tmp_path):
    RunStore(tmp_path / "g.db", _migrate_upto=1).close()  # no reviews table yet (m001 only)
    with pytest.raises(StoreError, match="older schema \\(no reviews table\\) and is read-only.*Copy it to a writable place"):
        RunStore(tmp_path / "g.db", readonly=True)


def test_a_locked_store_says_it_is_locked(tmp_path):
    path = tmp_path / "g.db"
    RunStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process in the middle of a write
    try:
        with RunStore(path, timeout=0.05) as st, pytest.raises(StoreError, match="locked by another process.*Retry when it has finished"):
            st.create_run(meta())
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_another_programs_sqlite_database_is_refused_and_left_unchanged(tmp_path):
    path = tmp_path / "app.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE users (id INTEGER)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="a SQLite database of another program \\(tables users; no goldeval _migrations"):
        RunStore(path)
    db = sqlite3.connect(path)
    assert [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["users"]
    db.close()


def test_migrate_is_a_no_op_on_an_up_to_date_connection(tmp_path):
    st = RunStore(tmp_path / "g.db")
    assert migrate(st.db) == []
    st.close()


# --- runs ---------------------------------------------------------------------------------------------------------


def test_create_finish_and_read_a_run(store):
    run_id = store.create_run(meta(arm="gpt4", tokenizer="openscribe", inputs={"predictions": {"path": "p", "sha256": "x"}}, config={"a": 1}))
    results = {"aggregate": {"n": 2, "n_scored": 2, "n_failed": 0, "whole_note_f1_mean": 0.5}, "gates": {"passed": False}}
    store.finish_run(run_id, results)
    run = store.get_run(run_id)
    assert run["arm"] == "gpt4" and run["tokenizer"] == "openscribe"
    assert run["inputs"] == {"predictions": {"path": "p", "sha256": "x"}} and run["config"] == {"a": 1}
    assert run["results"] == results
    assert (run["n"], run["n_scored"], run["n_failed"]) == (2, 2, 0)
    assert (run["headline_name"], run["headline_value"], run["gates_passed"]) == ("whole_note_f1_mean", 0.5, False)


def test_resolve_by_prefix_latest_and_errors(store):
    a = store.create_run(meta("a"))
    b = store.create_run(meta("b"))
    assert store.resolve(a) == a
    assert store.resolve("latest") == b
    assert store.resolve(b[:-1]) == b  # a unique prefix (the two ids share at most the time part)
    with pytest.raises(InputError, match="no run 'nope'.*goldeval runs list"):
        store.resolve("nope")
    # a blank reference is a prefix of every id: it named "several runs" (or, with one run, silently that run)
    for blank in ("", "  "):
        with pytest.raises(InputError, match="a run reference must name a run"):
            store.resolve(blank)
    # LIKE wildcards in a reference are literal characters, not patterns
    with pytest.raises(InputError, match="no run '%'"):
        store.resolve("%")
    with pytest.raises(InputError, match="names several runs"):
        store.resolve(a[:8])  # the date prefix is shared by both


def test_latest_on_an_empty_store(store):
    with pytest.raises(InputError, match="holds 0 run"):
        store.resolve("latest")


def test_latest_tilde_n_counts_back_from_the_newest(store):
    ids = [store.create_run(meta(f"k{i}")) for i in range(3)]
    assert [store.resolve(r) for r in ("latest", "latest~1", "latest~2")] == ids[::-1]
    with pytest.raises(InputError, match="holds 3 run\\(s\\), so 'latest~3' names nothing"):
        store.resolve("latest~3")


def test_delete_removes_run_cases_and_reviews(store):
    run_id = store.create_run(meta())
    store.write_cases(run_id, [("c1", 0, "scored", None, 0.5, None, None, '{"id": "c1"}')])
    store.add_review(run_id, "c1", verdict="match", reviewer="ana", reviewed_at="t")
    assert store.delete_run(run_id) == run_id
    for table in ("runs", "cases", "reviews"):
        assert store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0


def test_a_run_being_scored_by_a_live_process_is_not_deleted(store):
    # break-fix: deleting a run another process was still scoring made that process fail on its next write
    # (the cases' foreign key) with exit 3; a killed run (its process gone) can be deleted.
    run_id = store.create_run(meta())
    store.db.execute("UPDATE runs SET pid = 1 WHERE id = ?", (run_id,))  # pid 1 is alive: running elsewhere
    with pytest.raises(InputError, match=f"run {run_id} is being scored right now \\(pid 1\\).*Stop it first"):
        store.delete_run(run_id)
    store.db.execute("UPDATE runs SET pid = 2147483646 WHERE id = ?", (run_id,))  # no such process: interrupted
    assert store.delete_run(run_id) == run_id


def test_list_runs_filters(store):
    store.create_run(meta("a", arm="x"))
    store.create_run(meta("b", arm="y", scorer_name="labels"))
    assert [r["arm"] for r in store.list_runs()] == ["y", "x"]
    assert [r["arm"] for r in store.list_runs(arm="x")] == ["x"]
    assert [r["scorer_name"] for r in store.list_runs(scorer="labels")] == ["labels"]
    assert len(store.list_runs(limit=1)) == 1


@pytest.mark.parametrize(
    "results, expected",
    [
        ({"aggregate": {"whole_note_f1_mean": 0.27, "pass_rate": 0.5}}, ("whole_note_f1_mean", 0.27)),
        ({"aggregate": {"pass_rate": 0.5, "recall": 0.9}}, ("pass_rate", 0.5)),
        ({"aggregate": {"headline": "recall", "pass_rate": 0.5, "recall": 0.9}}, ("recall", 0.9)),
        ({"aggregate": {"n": 3}}, (None, None)),
        ({}, (None, None)),
    ],
)
def test_headline(results, expected):
    assert headline(results) == expected


@pytest.mark.parametrize(
    "gates, expected",
    [
        (None, None),
        (True, True),
        ({"passed": False, "gates": [{"passed": True}]}, False),
        ([{"passed": True}, {"passed": False}], False),
        ({"gates": [{"passed": True}]}, True),
        ({"precision": {"pass": True}, "recall": {"pass": True}}, True),
    ],
)
def test_gates_passed_shapes(gates, expected):
    assert gates_passed({} if gates is None else {"gates": gates}) is expected


def test_case_columns():
    assert case_columns({"id": "a", "status": "scored", "whole_note": {"f1": 0.25}}) == ("scored", None, 0.25, None, None)
    assert case_columns({"id": "a", "verdict": "match", "why": "w", "raw": "{...}"}) == ("scored", "match", None, None, "{...}")
    assert case_columns({"id": "a", "status": "unscored", "error": "bad"}) == ("unscored", None, None, "bad", None)
    assert case_columns({"id": "a", "f1": 1}) == ("scored", None, 1.0, None, None)


# --- recorder -----------------------------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def committed(path, run_id) -> int:
    """Rows another connection sees (what survives a killed process)."""
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT count(*) FROM cases WHERE run_id = ?", (run_id,)).fetchone()[0]
    finally:
        db.close()


@pytest.mark.parametrize("background", [False, True, "process"])
def test_batches_commit_every_200_cases(store, background):
    clock = FakeClock()
    run_id = store.create_run(meta())
    rec = Recorder(store, run_id, batch_size=200, max_delay=0.5, clock=clock, background=background)
    for i in range(199):
        rec.record({"id": f"c{i}", "status": "scored", "f1": 0.5})
    assert committed(store.path, run_id) == 0  # nothing committed before the batch is full
    rec.record({"id": "c199", "status": "scored", "f1": 0.5})
    if background is True:
        rec._queue.join()  # the writer thread commits the handed-over batch
    if background == "process":
        rec._ask_writer(b"sync")  # the writer process commits the batch it was sent
    assert committed(store.path, run_id) == 200
    rec.record({"id": "c200", "status": "scored", "f1": 0.5})
    assert committed(store.path, run_id) == 200
    rec.close()
    assert committed(store.path, run_id) == 201  # close commits what is pending
    assert store.get_run(run_id)["status"] == "interrupted"  # closed without finish: resumable


def test_a_slow_scorer_commits_every_half_second(store):
    clock = FakeClock()
    run_id = store.create_run(meta())
    rec = Recorder(store, run_id, batch_size=200, max_delay=0.5, clock=clock, background=False)
    rec.record({"id": "a", "status": "scored"})
    clock.t = 0.4
    rec.record({"id": "b", "status": "scored"})
    assert committed(store.path, run_id) == 0
    clock.t = 0.5
    rec.record({"id": "c", "status": "scored"})
    assert committed(store.path, run_id) == 3
    rec.close()


def test_finish_stores_results_and_can_be_called_again(store):
    rec = start_run(store, meta())
    rec.record({"id": "a", "status": "scored", "f1": 1.0})
    rec.finish({"aggregate": {"n": 1}})
    rec.finish({"aggregate": {"n": 1}, "gates": {"passed": True}})  # e.g. after the gates: the last call wins
    rec.close()
    run = store.get_run(rec.run_id)
    assert run["status"] == "finished" and run["gates_passed"] is True and run["n_recorded"] == 1


def test_resume_reuses_finished_cases_and_never_duplicates(store):
    first = start_run(store, meta())
    for cid in ("a", "b", "c"):
        first.record({"id": cid, "status": "scored", "f1": 0.1})
    first.close(interrupted=True)

    second = start_run(store, meta())  # same key, unfinished: resumed by default
    assert second.run_id == first.run_id and second.resumed
    assert sorted(second.previous()) == ["a", "b", "c"]
    second.record({"id": "c", "status": "scored", "f1": 0.9})  # a case redone replaces its row
    second.record({"id": "d", "status": "scored", "f1": 0.2})
    second.finish({"aggregate": {"n": 4}})
    second.close()
    cases = store.cases(first.run_id)
    assert [c["id"] for c in cases] == ["a", "b", "c", "d"]
    assert [c["f1"] for c in cases] == [0.1, 0.1, 0.9, 0.2]

    third = start_run(store, meta())  # the same key again, but that run finished: a new run
    assert third.run_id != first.run_id and not third.resumed and third.previous() == {}
    third.close()


def test_resume_by_id_refuses_a_run_of_other_inputs(store):
    rec = start_run(store, meta("key-a", config={"tokenizer": "openscribe"}))
    rec.close()
    with pytest.raises(InputError, match=r"--resume .*different configuration \(tokenizer\).*Drop --resume"):
        start_run(store, meta("key-b", config={"tokenizer": "unicode"}), resume=rec.run_id)
    with pytest.raises(InputError, match="no run"):
        start_run(store, meta("key-a"), resume="nope")
    again = start_run(store, meta("key-a", config={"tokenizer": "openscribe"}), resume=rec.run_id[:-1])
    assert again.run_id == rec.run_id and again.resumed
    again.close()


def test_a_run_still_being_scored_by_another_live_process_is_not_resumed(store):
    rec = start_run(store, meta())
    store.db.execute("UPDATE runs SET pid = 1, status = 'running' WHERE id = ?", (rec.run_id,))  # pid 1 is alive
    other = start_run(store, meta())
    assert other.run_id != rec.run_id
    other.close()
    rec.close()


def test_resume_by_id_of_a_finished_or_live_run_is_refused(store):
    # break-fix: --resume of a finished run turned it back to 'running' (and to 'interrupted' if stopped again)
    rec = start_run(store, meta())
    rec.finish({"aggregate": {"n": 0}})
    rec.close()
    with pytest.raises(InputError, match="has finished; there is nothing to resume"):
        start_run(store, meta(), resume=rec.run_id)
    assert store.get_run(rec.run_id)["status"] == "finished"
    live = start_run(store, meta("k2"))
    store.db.execute("UPDATE runs SET pid = 1, status = 'running' WHERE id = ?", (live.run_id,))  # pid 1 is alive
    with pytest.raises(InputError, match="is being scored right now by another process \\(pid 1\\)"):
        start_run(store, meta("k2"), resume=live.run_id)
    live.close()


def _start_and_wait(path: str, barrier, results) -> None:
    """In a child process: start (or resume) the run of key 'k1', report whether it resumed, then wait for the
    others before ending (so the resuming process is alive while the others look)."""
    with RunStore(path) as st:
        rec = start_run(st, meta(), background=False)
        results.put((rec.run_id, rec.resumed))
        barrier.wait(timeout=60)
        rec.close()


def test_processes_started_together_never_resume_the_same_run(tmp_path):
    # break-fix: six `goldeval score` processes started together on an interrupted run all resumed it (the check
    # "is its process alive?" and the claim were separate statements). Expected: exactly one resumes it, the other
    # three start runs of their own (by hand: 4 processes, 1 interrupted run → 1 resumed + 3 new = 4 distinct ids).
    import multiprocessing as mp

    path = tmp_path / "g.db"
    with RunStore(path) as st:
        first = start_run(st, meta())
        first.close()  # not finished: interrupted
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_start_and_wait, args=(str(path), barrier, results)) for _ in range(4)]
    for p in procs:
        p.start()
    got = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert sorted(resumed for _, resumed in got) == [False, False, False, True]
    assert [rid for rid, resumed in got if resumed] == [first.run_id]
    assert len({rid for rid, _ in got}) == 4


def test_record_needs_an_id_or_a_line(store):
    rec = start_run(store, meta())
    with pytest.raises(InputError, match="needs an 'id'"):
        rec.record({"status": "error"})
    rec.record({"status": "error", "line": 7, "error": "not JSON"})
    rec.close()
    assert store.cases(rec.run_id) == [{"status": "error", "line": 7, "error": "not JSON"}]
    assert store.db.execute("SELECT case_id FROM cases").fetchone()[0] == "line:7"


def test_a_closed_recorder_refuses_records(store):
    rec = start_run(store, meta())
    rec.close()
    with pytest.raises(StoreError, match="already closed"):
        rec.record({"id": "a"})


def test_recorded_json_is_exactly_the_record(store):
    rec = start_run(store, meta())
    case = {"id": "é/1", "status": "scored", "whole_note": {"precision": 0.1, "recall": 0.2, "f1": 2 * 0.1 * 0.2 / 0.3}}
    rec.record(case)
    rec.close()
    raw = store.db.execute("SELECT data, score FROM cases").fetchone()
    assert orjson.loads(raw[0]) == case and raw[1] == case["whole_note"]["f1"]


def test_run_key_depends_on_inputs_config_scorer_and_arm():
    base = dict(scorer_name="token_f1", scorer_version="1", input_hashes={"predictions": "aa"}, config={"t": "openscribe"}, arm=None)
    k = run_key(**base)
    assert k == run_key(**{**base, "config": {"t": "openscribe"}})  # deterministic
    assert len(k) == 64
    for change in ({"scorer_version": "2"}, {"input_hashes": {"predictions": "ab"}}, {"config": {"t": "unicode"}}, {"arm": "x"}):
        assert run_key(**{**base, **change}) != k
    # key order of the configuration does not matter
    assert run_key(**{**base, "config": {"a": 1, "b": 2}}) == run_key(**{**base, "config": {"b": 2, "a": 1}})
    assert dataset_hash({"cases": "1", "attempts": "2"}) == dataset_hash({"attempts": "2", "cases": "1"})


@pytest.mark.parametrize("reported", [True, False])
def test_a_deferred_identity_is_set_when_the_run_finishes(store, tmp_path, reported):
    import hashlib

    data = tmp_path / "preds.jsonl"
    data.write_bytes(b'{"id": "a"}\n' * 1000)
    digest = hashlib.sha256(data.read_bytes()).hexdigest()
    deferred = {"inputs": {"predictions": str(data)}, "scorer_name": "token_f1", "scorer_version": "1",
                "config": {"t": "openscribe"}, "arm": "x"}
    rec = start_run(store, meta("pending:abc", arm="x", config={"t": "openscribe"}), auto_resume=False,
                    background="process", deferred=deferred)
    rec.record({"id": "a", "status": "scored", "f1": 1.0})
    assert store.get_run(rec.run_id)["run_key"] == "pending:abc"  # not hashed before the scoring
    # the scorer reports the sha256 of what it read (here a made-up value, to show it is taken, not recomputed)
    reported_hash = "f" * 64
    results = {"aggregate": {"n": 1}, "input": {"path": str(data), "sha256": reported_hash}} if reported else {"aggregate": {"n": 1}}
    rec.finish(results)
    rec.close()
    used = reported_hash if reported else digest
    run = store.get_run(rec.run_id)
    assert run["inputs"] == {"predictions": {"path": str(data), "sha256": used, "abspath": str(data)}}  # (absolute already)
    assert run["run_key"] == run_key(scorer_name="token_f1", scorer_version="1", input_hashes={"predictions": used},
                                     config={"t": "openscribe"}, arm="x")
    assert run["dataset_hash"] == dataset_hash({"predictions": used})
    assert run["status"] == "finished" and store.cases(rec.run_id) == [{"id": "a", "status": "scored", "f1": 1.0}]
    with pytest.raises(InputError, match="deferred hashing starts a new run"):
        start_run(store, meta(), deferred=deferred, background="process")


def test_hashes_from_results(tmp_path):
    a, b, c = (str(tmp_path / n) for n in ("a.jsonl", "b.jsonl", "c.jsonl"))
    h = {n: n[0] * 64 for n in "abc"}
    results = {
        "input": {"path": a, "sha256": h["a"]},                                     # score / labels layout
        "inputs": {"cases": b, "cases_sha256": h["b"], "db": None, "db_sha256": None},  # judge layout
        "other": {"path": c, "sha256": "short"},                                     # not a sha256: ignored
    }
    assert hashes_from_results(results, {"predictions": a, "cases": b, "attempts": c}) == {"predictions": h["a"], "cases": h["b"]}


def _rows(store, run_id):
    return store.db.execute(
        "SELECT case_id, seq, status, verdict, score, reason, raw, data FROM cases WHERE run_id = ? ORDER BY seq", (run_id,)
    ).fetchall()


@pytest.mark.parametrize("background", [False, True, "process"])
def test_record_with_status_stores_status_first_then_the_case(store, background):
    # record(case, status=s) must store exactly what record({"status": s, **case}) stores: same columns, same bytes.
    cases = [{"id": "é\"1", "line": 3, "whole_note": {"precision": 0.1, "recall": 0.2, "f1": 2 * 0.1 * 0.2 / 0.3}},
             {"id": 7, "line": 4, "f1": 1, "note": "x\ny"}]
    a = start_run(store, meta("a"), background=background)
    for case in cases:
        a.record(case, status="unscored" if case["id"] == 7 else "scored")
    a.close()  # (one recorder at a time: a writer thread shares the store's connection)
    b = start_run(store, meta("b"), background=background)
    for case in cases:
        b.record({"status": "unscored" if case["id"] == 7 else "scored", **case})
    b.close()
    assert _rows(store, a.run_id) == _rows(store, b.run_id)
    first = _rows(store, a.run_id)[0]
    assert first[:5] == ("é\"1", 0, "scored", None, cases[0]["whole_note"]["f1"])
    assert first[7].startswith('{"status":"scored","id":')
    assert _rows(store, a.run_id)[1][:5] == ("7", 1, "unscored", None, 1.0)  # an int id is stored as text


def test_record_with_status_refuses_a_case_that_has_one_and_a_status_that_is_not_text(store):
    rec = start_run(store, meta())
    with pytest.raises(InputError, match="has a 'status'"):
        rec.record({"id": "a", "status": "scored"}, status="scored")
    with pytest.raises(InputError, match="status must be a string"):
        rec.record({"id": "a"}, status=1)
    with pytest.raises(InputError, match="cannot be stored as JSON"):
        rec.record({"id": "a", "x": object()})
    rec.close()
    assert store.cases(rec.run_id) == []  # nothing half-recorded


@pytest.mark.parametrize("status", [["scored"], {"a": 1}, "bad\ud800"])
def test_record_with_a_status_that_is_unhashable_or_not_unicode_is_an_input_error(store, status):
    # break-fix: status=["scored"] raised TypeError (unhashable, from the prefix cache) and a status holding a lone
    # surrogate a TypeError from orjson: internal errors, where record() promises InputError. Expected: InputError,
    # nothing recorded.
    rec = start_run(store, meta())
    with pytest.raises(InputError, match="status must be"):
        rec.record({"id": "a"}, status=status)
    rec.close()
    assert store.cases(rec.run_id) == []


@pytest.mark.parametrize("background", [False, True, "process"])
def test_record_serialized_stores_what_record_would(store, background):
    cases = [{"id": f"c{i}", "line": i + 1, "whole_note": {"precision": 0.5, "recall": 0.25, "f1": 1 / 3}} for i in range(450)]
    a = start_run(store, meta("a"), background=background, batch_size=200)
    for lo in range(0, 450, 150):  # chunks of 150 against batches of 200: a chunk may straddle a batch
        chunk = cases[lo:lo + 150]
        a.record_serialized([(c["id"], "scored", None, c["whole_note"]["f1"], None, None) for c in chunk],
                            b"\n".join(orjson.dumps({"status": "scored", **c}) for c in chunk))
    a.close()  # (one recorder at a time: a writer thread shares the store's connection)
    b = start_run(store, meta("b"), background=background, batch_size=200)
    for c in cases:
        b.record(c, status="scored")
    b.close()
    assert a.n_recorded == b.n_recorded == 450
    assert _rows(store, a.run_id) == _rows(store, b.run_id)
    assert [r[1] for r in _rows(store, a.run_id)] == list(range(450))  # seq follows recording order, no gap


@pytest.mark.parametrize("background", [False, True, "process"])
def test_a_record_with_raw_json_holding_newlines_is_stored_with_its_batch(store, background):
    # break-fix: a batch separates its records by newlines, on the belief that orjson never writes one; it does
    # write an orjson.Fragment (raw JSON a scorer hands over, e.g. a judge's pretty-printed answer) as given. The
    # writer then counted one record too many and refused the whole batch: the other cases of the batch were lost
    # and finish() failed. Expected (by hand): all three cases stored, the fragment's newlines read as the JSON
    # whitespace they are, so its record loads as {"id": "f", "status": "scored", "v": {"a": 1, "b": ["x\ny"]}}.
    rec = start_run(store, meta(), background=background)
    rec.record({"id": "a", "status": "scored", "f1": 0.5})
    rec.record({"id": "f", "status": "scored", "v": orjson.Fragment(b'{\n  "a": 1,\n  "b": ["x\\ny"]\n}')})
    rec.record({"id": "c"}, status="scored")
    rec.finish({"aggregate": {"n": 3}})
    rec.close()
    assert store.cases(rec.run_id) == [
        {"id": "a", "status": "scored", "f1": 0.5},
        {"id": "f", "status": "scored", "v": {"a": 1, "b": ["x\ny"]}},
        {"status": "scored", "id": "c"},
    ]


@pytest.mark.parametrize("background", [False, True, "process"])
def test_an_infinite_score_keeps_its_value_in_the_score_column(store, background):
    # break-fix: the case columns travel to the writer as JSON, which has no infinity: orjson writes inf as null, so
    # a score of inf was stored as NULL (it was stored as inf before the batches carried their columns). Expected
    # (by hand): the score column holds inf, -inf, NULL for NaN (SQLite stores a NaN as NULL) and 0.25; the
    # records' JSON says null for the three non-finite numbers, as it always did.
    rec = start_run(store, meta(), background=background)
    rec.record({"id": "a", "status": "scored", "f1": float("inf")})
    rec.record({"id": "b", "score": float("-inf")}, status="scored")
    rec.record({"id": "c", "status": "scored", "whole_note": {"f1": float("nan")}})
    rec.record({"id": "d", "status": "scored", "f1": 0.25})
    rec.close()
    rows = _rows(store, rec.run_id)
    assert [r[4] for r in rows] == [float("inf"), float("-inf"), None, 0.25]
    assert [r[7] for r in rows[:3]] == ['{"id":"a","status":"scored","f1":null}', '{"status":"scored","id":"b","score":null}',
                                        '{"id":"c","status":"scored","whole_note":{"f1":null}}']


def test_record_serialized_refuses_records_that_do_not_line_up_with_their_keys(store):
    # The count of records (newline-joined) must equal the count of keys: checked when queued, so that a wrong call
    # is the caller's error and the cases recorded around it are still stored (the writer would refuse the whole
    # batch). Expected: 2 keys with 1 record -> InputError naming both counts; the case "a" before it is stored.
    rec = start_run(store, meta(), background=False)
    rec.record({"id": "a", "status": "scored"})
    with pytest.raises(InputError, match="2 case keys and 1 record"):
        rec.record_serialized([("b", "scored", None, None, None, None), ("c", "scored", None, None, None, None)],
                              b'{"status":"scored","id":"b"}')
    rec.close()
    assert store.cases(rec.run_id) == [{"id": "a", "status": "scored"}]


def test_a_batch_whose_keys_and_records_do_not_line_up_is_refused_whole(store):
    from goldeval.runs.recorder import batch_message, message_columns

    run_id = store.create_run(meta())
    message = batch_message(0, [("a", "scored", None, None, None, None), ("b", "scored", None, None, None, None)], b'{"id":"a"}')
    with pytest.raises(StoreError, match="2 case keys came with 1 records"):
        message_columns(message)
    with pytest.raises(StoreError, match="2 case keys but 1 records"):
        store.write_case_columns(run_id, (0, [["a", "scored", None, None, None, None], ["b", "scored", None, None, None, None]], ['{"id":"a"}']))
    assert store.cases(run_id) == []


@pytest.mark.parametrize("ids", [["a", "é", 'q"uote', "tab\there", "\x01", "😀", "line:5", "\u2028"], [str(i) for i in range(1000)]])
def test_per_example_is_rebuilt_from_the_cases_whatever_the_ids(store, ids):
    # The run row leaves out per_example when the scored cases hold exactly its ids in order (compared as one JSON
    # array built by SQLite); the rebuilt list must equal the original.
    rec = start_run(store, meta())
    rec.per_example_in_cases = True
    per_example = [{"id": i, "line": n + 1, "whole_note": {"f1": 0.5}} for n, i in enumerate(ids)]
    for e in per_example:
        rec.record(e, status="scored")
    rec.finish({"aggregate": {"n": len(ids)}, "per_example": per_example})
    rec.close()
    stored = orjson.loads(store.db.execute("SELECT results FROM runs").fetchone()[0])
    assert stored["per_example"] == {"$cases": True, "status": "scored", "drop_keys": ["status"]}
    assert store.get_run(rec.run_id)["results"]["per_example"] == per_example


class _SqliteWithoutJson:
    """The store's connection as on a SQLite built without its JSON functions (optional before 3.38)."""

    def __init__(self, db):
        self._db = db

    def execute(self, sql, *args):
        if "json_" in sql:
            raise sqlite3.OperationalError("no such function: json_group_array")
        return self._db.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._db, name)


@pytest.mark.parametrize("replaced", [False, True])
def test_per_example_is_checked_against_the_cases_without_sqlite_json_functions(store, replaced):
    # break-fix: the check of the ids became one json_group_array query; on a SQLite without the JSON functions every
    # free-text run failed when it finished (an internal error), where the earlier check needed none. Expected (by
    # hand): the same decision as with them: ids a, b, c in order -> per_example rebuilt from the cases; with "b"
    # replaced by an unscored record -> per_example kept in the run row; both read back as recorded.
    rec = start_run(store, meta(), background=False)
    rec.per_example_in_cases = True
    per_example = [{"id": i, "line": n + 1, "whole_note": {"f1": 0.5}} for n, i in enumerate("abc")]
    for e in per_example:
        rec.record(e, status="scored")
    if replaced:
        rec.record({"id": "b", "status": "unscored", "error": "x"})
    store.db = _SqliteWithoutJson(store.db)
    rec.finish({"aggregate": {"n": 3}, "per_example": per_example})
    rec.close()
    store.db = store.db._db
    stored = orjson.loads(store.db.execute("SELECT results FROM runs").fetchone()[0])
    assert stored["per_example"] == (per_example if replaced else {"$cases": True, "status": "scored", "drop_keys": ["status"]})
    assert store.get_run(rec.run_id)["results"]["per_example"] == per_example


def test_per_example_stays_in_the_run_row_when_a_case_row_replaced_a_scored_one(store):
    rec = start_run(store, meta())
    rec.per_example_in_cases = True
    per_example = [{"id": "line:2", "line": 1, "whole_note": {"f1": 0.5}}, {"id": "b", "line": 3, "whole_note": {"f1": 1.0}}]
    rec.record(per_example[0], status="scored")
    rec.record({"status": "unscored", "line": 2, "error": "not JSON"})  # recorded as "line:2": replaces the first row
    rec.record(per_example[1], status="scored")
    rec.finish({"aggregate": {"n": 2}, "per_example": per_example})
    rec.close()
    assert store.get_run(rec.run_id)["results"]["per_example"] == per_example


def test_a_writer_process_error_reaches_the_caller(store):
    rec = start_run(store, meta(), background="process")
    rec.record({"id": "a", "status": "scored"})
    rec.flush()
    store.db.execute("DROP TABLE cases")  # the writer process's next commit fails
    rec.record({"id": "b", "status": "scored"})
    with pytest.raises(StoreError, match="failed in the writer process"):
        rec.flush()
    with pytest.raises(StoreError, match="failed in the writer process"):
        rec.close()  # the writer process is stopped all the same
    assert rec._proc is None
    assert store.db.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"


def test_the_writer_process_ends_when_the_scorer_dies_behind_a_batch(store):
    # break-fix: the writer process took the end of its pipe (the scorer killed outright) for "no message held" when
    # it arrived right behind batches it joined into one transaction, and waited for a next message for ever: every
    # SIGKILLed large run left a writer process behind, holding the store open. Expected (by hand): 3 batches of 2
    # cases sent, then end of file: all 6 cases committed and the writer process ends on its own, exit code 0.
    rec = start_run(store, meta(), background="process", batch_size=2, max_delay=1e9)
    for i in range(6):  # three batches, sent before the writer process is up: they wait in its inbox with the EOF
        rec.record({"id": f"c{i}", "status": "scored", "f1": 0.5})
    proc = rec._proc
    rec._to_writer.close()  # what the writer sees when the scorer is killed: end of file on its pipe
    proc.join(timeout=20)
    try:
        assert proc.exitcode == 0, "the writer process did not end after the end of its pipe"
        assert committed(store.path, rec.run_id) == 6
    finally:
        if proc.exitcode is None:
            proc.kill()
            proc.join()
        rec._proc = None
        rec._from_writer.close()
        rec.closed = True


def test_ctrl_c_is_not_held_while_waiting_for_a_writer_that_does_not_answer(store):
    # break-fix: waiting for the writer process's reply held SIGINT/SIGTERM for up to WRITER_REPLY_TIMEOUT_S (600 s):
    # with a wedged writer, Ctrl-C and `kill` did nothing for ten minutes. Expected: the wait is interrupted at once,
    # and a reply left unread is dropped by the next call (so replies stay paired with their messages).
    import multiprocessing as mp
    import os
    import signal
    import threading
    import time

    rec = start_run(store, meta(), background=False)
    to_writer_r, rec._to_writer = mp.Pipe(duplex=False)
    rec._from_writer, from_writer_w = mp.Pipe(duplex=False)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        rec._ask_writer(b"sync")  # nobody answers
    assert time.monotonic() - t0 < 5
    assert to_writer_r.recv_bytes() == b"sync"
    from_writer_w.send_bytes(b'{"n": 1, "error": null}')  # the late answer to the interrupted sync
    from_writer_w.send_bytes(b'{"n": 2, "error": null}')  # the answer to the next one
    assert rec._ask_writer(b"sync") == {"n": 2, "error": None}
    rec._to_writer = rec._from_writer = None
    rec.close()


def test_headline_of_an_undefined_metric_is_none_not_its_seed():
    # A run where no row scored: its whole_note_f1_mean is undefined; runs list must not show "F1 0.000".
    from goldeval.runs.store import headline

    results = {"aggregate": {"whole_note_f1_mean": None, "undefined": {"whole_note_f1_mean": "no row could be scored"}}}
    assert headline(results) == ("whole_note_f1_mean", None)
    seeded = {"aggregate": {"precision": 0.0, "undefined": {"precision": "nothing was predicted positive"}}}
    assert headline(seeded) == ("precision", None)


# --- free text: workers serialize the stored rows -----------------------------------------------------------------


class _OneByOne:
    """A Recorder seen without record_serialized: the free-text scorer then records every row itself."""

    def __init__(self, rec):
        self._rec = rec
        self.per_example_in_cases = False

    def previous(self):
        return self._rec.previous()

    def record(self, case, *, status=None):
        self._rec.record(case, status=status)

    def finish(self, results):
        self._rec.per_example_in_cases = self.per_example_in_cases
        self._rec.finish(results)


def _freetext_file(path):
    """1,250 rows in three chunks of 500: the first all plain; the second with a row that is not JSON, a row without
    its reference and a row with letters the openscribe rule cannot read; the third with sections and a repeated id."""
    lines = []
    for i in range(1250):
        row = {"id": f"r{i}", "prediction": f"patient {i} has a cough and fever", "reference": f"the patient {i} reports a cough"}
        if i == 600:
            lines.append("{not json")
            continue
        if i == 650:
            del row["reference"]
        if i == 700:
            row["prediction"] = "naïve café patient"
        if i == 1100:
            row = {"id": f"r{i}", "prediction": {"plan": "rest", "history": "cough"}, "reference": {"plan": "rest and fluids", "history": "a cough"}}
        if i == 1200:
            row["id"] = "r1199"
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("workers", [1, 2])
def test_free_text_rows_serialized_by_the_workers_are_stored_as_the_scorer_would_record_them(tmp_path, workers, monkeypatch):
    from goldeval.pipeline.files import score_file

    path = _freetext_file(tmp_path / "rows.jsonl")
    chunks = []
    real = Recorder.record_serialized
    monkeypatch.setattr(Recorder, "record_serialized", lambda self, keys, data: (chunks.append(len(keys)), real(self, keys, data)))
    with RunStore(tmp_path / "a.db") as sa, RunStore(tmp_path / "b.db") as sb:
        fast = start_run(sa, meta(), background="process")
        res_fast = score_file(path, workers=workers, recorder=fast)
        fast.close()
        slow = start_run(sb, meta(), background=False)
        res_slow = score_file(path, workers=1, recorder=_OneByOne(slow))
        slow.close()
        # per_example and failures are the scorer's; the stored case rows are byte for byte the same
        assert res_fast["per_example"] == res_slow["per_example"]
        assert res_fast["failures"] == res_slow["failures"]
        rows_fast, rows_slow = _rows(sa, fast.run_id), _rows(sb, slow.run_id)
        assert [r[:2] for r in rows_fast] == [r[:2] for r in rows_slow]
        assert [r[2:] for r in rows_fast] == [r[2:] for r in rows_slow]
        # 1,250 rows: not JSON (no id: listed in failures, not a case), no reference (a case, unscored), a repeated
        # id (a failure, not a case): 1,248 case rows
        assert len(rows_fast) == 1248
        status = {r[0]: r[2] for r in rows_fast}
        assert status["r650"] == "unscored" and status["r700"] == "scored" and "line:601" not in status
        assert len(res_fast["failures"]) == 3
        if workers == 1:
            # scored in this process: each case recorded as soon as it is scored (an interrupt loses only the case
            # in flight), none as a serialized chunk
            assert chunks == []
        else:
            assert chunks == [500]  # the first chunk went as the worker serialized it; the other two row by row
        assert sa.get_run(fast.run_id)["results"]["per_example"] == res_fast["per_example"]


# --- large inputs: found again before they are hashed ------------------------------------------------------------


def test_an_unhashed_large_input_is_the_same_file_only_if_its_sampled_bytes_are(tmp_path):
    # An interrupted run of a large input is resumed by the next identical invocation before the input is hashed
    # whole: path, size, modification time and now the sha256 of a sample of the bytes must all match.
    import os

    from goldeval.pipeline.recording import _SAMPLE_BLOCKS, _stamp, _stamps_match

    path = tmp_path / "preds.jsonl"
    data = bytearray(b"x" * (3 << 20))
    path.write_bytes(data)
    stamp = {"predictions": _stamp(str(path))}
    assert _stamps_match(stamp, {"predictions": str(path)})
    st = os.stat(path)

    def rewrite(offset: int) -> None:
        changed = bytearray(data)
        changed[offset] = ord("y")
        path.write_bytes(changed)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same modification time

    middle = len(data) * (_SAMPLE_BLOCKS // 2) // (_SAMPLE_BLOCKS + 1)  # inside one of the sampled blocks
    rewrite(middle)
    assert not _stamps_match(stamp, {"predictions": str(path)})
    rewrite(len(data) - 1)  # in the last MiB
    assert not _stamps_match(stamp, {"predictions": str(path)})
    # known limit (documented): a byte outside the sample, same size and time, goes unseen until the full hash
    rewrite((1 << 20) + 4096 + 17)
    assert _stamps_match(stamp, {"predictions": str(path)})
    # a stamp recorded before samples were taken is compared on path, size and modification time
    legacy = {"predictions": {k: v for k, v in stamp["predictions"].items() if k != "sample_sha256"}}
    rewrite(middle)
    assert _stamps_match(legacy, {"predictions": str(path)})


@pytest.mark.parametrize("background", [False, "process"])
def test_a_record_call_cut_by_ctrl_c_leaves_nothing_half_queued(store, monkeypatch, background):
    # A KeyboardInterrupt inside record() (here: while its columns are computed) must queue nothing of that case,
    # and the cases before and after it keep their keys and JSON in step (each pending entry is appended in one
    # step). By hand: cases c0..c4 recorded, c2's call cut → rows c0, c1, c3, c4 with seq 0..3, each row's JSON
    # holding its own id.
    import goldeval.runs.recorder as recorder_module

    real = recorder_module.case_columns

    def columns(case, **kw):
        if case.get("id") == "c2":
            raise KeyboardInterrupt
        return real(case, **kw)

    monkeypatch.setattr(recorder_module, "case_columns", columns)
    rec = start_run(store, meta(), background=background, batch_size=3)
    for i in range(5):
        try:
            rec.record({"id": f"c{i}", "f1": i / 4}, status="scored")
        except KeyboardInterrupt:
            pass
    rec.close()
    rows = _rows(store, rec.run_id)
    assert [(r[0], r[1], r[4]) for r in rows] == [("c0", 0, 0.0), ("c1", 1, 0.25), ("c3", 2, 0.75), ("c4", 3, 1.0)]
    assert all(orjson.loads(r[7])["id"] == r[0] for r in rows)


def test_rows_written_many_per_statement_keep_the_last_of_a_repeated_case_id(store):
    # Case rows go 100 to an INSERT statement. By hand: 250 rows (statements of 100, 100, 50). Rows 0..199 are
    # c0..c199 with score 0.5, except row 7, which repeats c5 (score 0.25) inside the first statement; rows
    # 200..249 repeat c0..c49 with score 1.0. A repeated id keeps its row (and so its first seq: a redone case keeps
    # its place) and takes the last record: 200 rows, c0..c49 with score 1.0 and n = 200 + i (c5: seq 5; c7, first
    # seen at row 207: seq 207), c50..c199 with score 0.5.
    run_id = store.create_run(meta())
    rows = [(f"c{i}", i, "scored", None, 0.5, None, None, orjson.dumps({"id": f"c{i}", "n": i}).decode()) for i in range(200)]
    rows[7] = ("c5", 7, "scored", None, 0.25, None, None, '{"id":"c5","n":7}')
    rows += [(f"c{i}", 200 + i, "scored", None, 1.0, None, None, orjson.dumps({"id": f"c{i}", "n": 200 + i}).decode()) for i in range(50)]
    store.write_cases(run_id, rows)
    got = {r[0]: (r[1], r[4], orjson.loads(r[7])["n"]) for r in _rows(store, run_id)}
    assert len(got) == 200
    assert got["c5"] == (5, 1.0, 205) and got["c7"] == (207, 1.0, 207)
    assert got["c0"] == (0, 1.0, 200) and got["c49"] == (49, 1.0, 249)
    assert got["c50"] == (50, 0.5, 50) and got["c199"] == (199, 0.5, 199)


def test_the_writer_process_holds_a_bounded_inbox_when_sqlite_falls_behind(store):
    # Memory bound (issue 15: memory does not grow with rows): when SQLite cannot keep up (here: another connection
    # holds the write lock), the writer process once kept reading the pipe into an unbounded inbox, so a loaded
    # machine held every record of the run in memory (a peak-RSS test failed on the parquet path under load).
    # Now its inbox holds at most WRITER_INBOX batches, the pipe fills and the scorer waits. Expected: with the lock
    # held, at most WRITER_INBOX + 1 in the writer's hands (the batch it took and those waiting behind it, joined
    # into the transaction that waits for the lock) + WRITER_INBOX in its inbox + what the pipe holds (its buffer,
    # 1 MiB once widened, over these ~4 KiB batches) + 1 (the send in progress) of 400 one-record batches are
    # handed over (unbounded before: all 400); once the lock is released, all 400 are committed.
    import fcntl
    import threading
    import time

    from goldeval.runs.writer import WRITER_INBOX

    rec = start_run(store, meta(), background="process", batch_size=1, max_delay=1e9)
    rec.record({"id": "warm", "status": "scored"})
    rec.flush()  # the writer process is up and has committed once
    pipe = fcntl.fcntl(rec._to_writer.fileno(), getattr(fcntl, "F_GETPIPE_SZ", 1032))
    blocker = sqlite3.connect(store.path, timeout=30, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the writer's next commit waits for this lock
    sent = [0]

    def produce() -> None:
        for i in range(400):
            rec.record({"id": f"c{i}", "status": "scored", "note": "x" * 4000})
            sent[0] += 1

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    try:
        time.sleep(3.0)  # (not a timing assertion: how far the producer got while the writer could not commit)
        assert sent[0] <= 2 * WRITER_INBOX + 1 + pipe // 4000 + 1, (sent[0], pipe)
        assert sent[0] < 400
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    t.join(timeout=60)
    assert not t.is_alive() and sent[0] == 400
    rec.flush()
    assert committed(store.path, rec.run_id) == 401
    rec.close()


# -- tags ------------------------------------------------------------------------------------------------------


def two_runs(st: RunStore) -> tuple[str, str]:
    a = st.create_run(meta("ka"))
    b = st.create_run(meta("kb"))
    return a, b


def test_a_tag_names_its_run_wherever_an_id_is_accepted(tmp_path):
    with RunStore(tmp_path / "g.db") as st:
        a, b = two_runs(st)
        assert st.tag(a, "baseline/main") == {"name": "baseline/main", "run_id": a, "previous": None}
        assert st.resolve("baseline/main") == a
        assert st.get_run("baseline/main", with_results=False)["id"] == a
        assert st.resolve("latest") == b  # a tag changes nothing else
        assert st.tags() == [{"name": "baseline/main", "run_id": a, "tagged_at": st.tags()[0]["tagged_at"]}]
        assert st.tags(b) == []


def test_a_tag_moves_only_when_told(tmp_path):
    with RunStore(tmp_path / "g.db") as st:
        a, b = two_runs(st)
        st.tag(a, "baseline/main")
        with pytest.raises(InputError, match=rf"'baseline/main' already names run {a}.*Pass --move to make it name {b}"):
            st.tag(b, "baseline/main")
        assert st.resolve("baseline/main") == a  # refused: unchanged
        assert st.tag(a, "baseline/main")["previous"] == a  # the same run again: nothing to move, no error
        assert st.tag(b, "baseline/main", move=True)["previous"] == a
        assert st.resolve("baseline/main") == b


def test_deleting_a_run_removes_its_tags_and_untag_keeps_the_run(tmp_path):
    with RunStore(tmp_path / "g.db") as st:
        a, b = two_runs(st)
        st.tag(a, "old")
        st.tag(b, "new")
        st.set_status(a, "interrupted")
        st.delete_run(a)
        with pytest.raises(InputError, match="no run 'old'"):
            st.resolve("old")
        assert st.untag("new") == b
        assert st.resolve(b) == b
        with pytest.raises(InputError, match="no tag 'new'"):
            st.untag("new")


@pytest.mark.parametrize("name, why", [
    ("latest", "names the newest run"), ("latest~2", "names the newest run"), ("2026-main", "starts with a digit"),
    ("", "non-empty"), ("base line", "without spaces"), ("tab\there", "without spaces"), ("x" * 201, "at most 200"),
])
def test_names_that_could_not_always_name_the_same_run_are_refused(tmp_path, name, why):
    with RunStore(tmp_path / "g.db") as st:
        a, _ = two_runs(st)
        with pytest.raises(InputError, match=why):
            st.tag(a, name)
        assert st.tags() == []


def test_an_exact_id_wins_over_a_tag_and_a_unique_prefix_still_resolves(tmp_path):
    with RunStore(tmp_path / "g.db") as st:
        a, b = two_runs(st)
        st.tag(b, "v1")
        assert st.resolve(a) == a and st.resolve("v1") == b
        assert st.resolve(a[:-1]) == a  # the random suffix makes the two ids differ before their last character


def test_an_older_read_only_store_without_tags_still_resolves_ids(tmp_path):
    path = tmp_path / "old.db"
    old = RunStore(path, _migrate_upto=[m.__name__ for m in MIGRATIONS].index("m004_tags"))  # before m004_tags
    run_id = old.create_run(meta())
    old.close()
    path.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        ro = RunStore(path, readonly=True)
        assert ro.resolve(run_id) == run_id and ro.tags() == []
        with pytest.raises(InputError, match="no run 'baseline/main'"):
            ro.resolve("baseline/main")
        ro.close()
    finally:
        tmp_path.chmod(0o755)
        path.chmod(0o644)


def test_the_score_column_of_a_semantic_record_is_its_whole_note_similarity():
    """The semantic_similarity scorer's records hold ``whole_note.similarity`` and no F1: the store's score column
    (what compare pairs case by case) is that similarity, not empty; an F1 record keeps its F1."""
    from goldeval.runs.columns import case_columns

    assert case_columns({"id": "a", "whole_note": {"similarity": 0.75}})[2] == 0.75
    assert case_columns({"id": "b", "whole_note": {"precision": 0.5, "recall": 1.0, "f1": 2 / 3}})[2] == 2 / 3
    assert case_columns({"id": "c", "whole_note": {}})[2] is None


# --- case blocks (cases recorded in bulk) --------------------------------------------------------------------------


def _label_case(cid: str, line: int, status: str = "scored") -> dict:
    return {"id": cid, "status": status, "line": line, "gold": "a", "pred": "b", "outcome": "fp"}


def _block(cases: list[dict]) -> tuple[bytes, bytes]:
    return b"\n".join(orjson.dumps(c) for c in cases), b",".join(orjson.dumps(c["id"]) for c in cases)


@pytest.mark.parametrize("background", [False, "thread", "process"])
def test_a_block_reads_back_as_the_rows_record_stores_among_the_other_cases(tmp_path, background):
    """Cases recorded one by one (Recorder.record) and in blocks (Recorder.record_lines), interleaved, read back in
    recording order exactly as the same cases recorded one by one: the rows (case id, seq, status, verdict, score,
    reason, raw, JSON), the records, the counts and the next seq. Expected: a second store fed only by record()."""
    cases = [_label_case(f"c{i}", i + 1) for i in range(10)] + [_label_case('q"é\\', 11)]
    cases[4] = {"id": "c4", "status": "unscored", "line": 5, "reason": "gold is null"}
    with RunStore(tmp_path / "bulk.db") as bulk, RunStore(tmp_path / "rows.db") as rows:
        run_b, run_r = bulk.create_run(meta()), rows.create_run(meta())
        with Recorder(bulk, run_b, background=background) as rec:
            body, ids = _block(cases[:2])
            rec.record_lines(body, 2, ids)
            rec.record(cases[2])
            rec.record(cases[3])
            rec.record(cases[4])
            body, ids = _block(cases[5:])
            rec.record_lines(body, 6, ids)
            assert rec.n_recorded == 11
        with Recorder(rows, run_r, background=False) as rec:
            for c in cases:
                rec.record(c)
        assert bulk.db.execute("SELECT count(*), sum(n) FROM case_blocks").fetchone() == (2, 8)
        assert list(bulk.stored_cases(run_b)) == list(rows.stored_cases(run_r))
        assert list(bulk.iter_cases(run_b)) == cases
        assert bulk.case_map(run_b) == rows.case_map(run_r)
        assert bulk.next_seq(run_b) == rows.next_seq(run_r) == 11
        assert bulk.get_run(run_b)["n_recorded"] == bulk.list_runs()[0]["n_recorded"] == 11
        assert bulk.delete_run(run_b) == run_b
        assert bulk.db.execute("SELECT count(*) FROM case_blocks").fetchone()[0] == 0


def test_a_finished_run_with_blocks_rebuilds_its_per_example_and_checks_the_ids_digest(store):
    """finish_run checks the streamed per_example's ids digest against the stored scored cases (blocks included,
    read from their ids without decoding the records): the same ids in the same order → no note; another order →
    the note that says the per_example is rebuilt from the recorded cases."""
    import hashlib

    cases = [_label_case(f"c{i}", i + 1) for i in range(6)]
    digest = hashlib.sha256(b"[" + b",".join(orjson.dumps(c["id"]) for c in cases) + b"]").hexdigest()
    swapped = hashlib.sha256(b'["c1","c0","c2","c3","c4","c5"]').hexdigest()
    for sha, note in ((digest, False), (swapped, True)):
        run_id = store.create_run(meta(f"k-{note}"))
        store.write_case_block(run_id, 0, 3, *_block(cases[:3]))
        store.write_cases(run_id, [(cases[3]["id"], 3, "scored", None, None, None, None, orjson.dumps(cases[3]).decode())])
        store.write_case_block(run_id, 4, 2, *_block(cases[4:]))
        streamed = {"$streamed": True, "n": 6, "ids_sha256": sha, "drop_keys": ["status"]}
        store.finish_run(run_id, {"aggregate": {"n": 6}, "per_example": streamed}, per_example_in_cases=True)
        res = store.get_run(run_id)["results"]
        assert res["per_example"] == [{k: v for k, v in c.items() if k != "status"} for c in cases]
        stored = orjson.loads(store.db.execute("SELECT results FROM runs WHERE id = ?", (run_id,)).fetchone()[0])
        assert ("note" in stored["per_example"]) is note


def test_a_block_whose_records_are_not_as_many_as_announced_is_refused(store):
    run_id = store.create_run(meta())
    body, ids = _block([_label_case("a", 1), _label_case("b", 2)])
    with pytest.raises(StoreError, match="a block of 3 cases of run .* came with 2 records; nothing of it was stored"):
        store.write_case_block(run_id, 0, 3, body, ids)
    rec = Recorder(store, run_id, background="thread")
    rec.record_lines(body, 3, ids)
    with pytest.raises(StoreError, match="a block of 3 cases of run .* came with 2 ids; nothing of it was stored"):
        rec.close()
    assert store.db.execute("SELECT count(*) FROM case_blocks").fetchone()[0] == 0
    # already compressed (as the recorder hands blocks to its writer thread): a wrong count is found when read
    from goldeval.runs.store import compress_block

    store.write_case_block(run_id, 0, 3, *compress_block(body, ids + b',"c"'), compressed=True)
    with pytest.raises(StoreError, match="a block of 3 cases from seq 0 holds 2 records; the store is damaged"):
        list(store.iter_cases(run_id))


def test_a_block_holding_a_case_that_is_not_scored_is_reported_damaged(store):
    """A block holds scored cases only (its ids are the scored ids the digest reads): one that does not is a
    damaged store, said so, never a silently different list."""
    run_id = store.create_run(meta())
    store.write_case_block(run_id, 0, 2, *_block([_label_case("a", 1), _label_case("b", 2, status="unscored")]))
    with pytest.raises(StoreError, match="has status 'unscored', and a block holds scored cases only"):
        list(store.iter_cases(run_id))


_ODD_RECORDS = [
    {"id": "é\u2028\"q\\", "status": "scored", "whole_note": {"precision": 0.5, "recall": 1.0, "f1": 2 / 3}, "line": 1},
    {"id": "n1", "status": "scored", "f1": 1, "whole_note": {"f1": 0.25}},          # f1 first, an int made a float
    {"id": "n2", "status": "scored", "whole_note": {"similarity": 0.125}},          # the semantic scorer's
    {"id": "n3", "status": "scored", "whole_note": [0.5], "score": 0.75},           # a whole note that is no mapping
    {"id": "n4", "status": "scored", "score": True},                                # a bool is no score
    {"id": "n5", "status": "scored", "score": "0.5"},                               # nor is a string
    {"id": "n6", "status": "scored", "whole_note": {"f1": None}, "score": 0.5},     # f1 null: no fallback to score
    {"id": "n7", "status": "scored", "verdict": {"verdict": "match"}, "why": "同じ", "f1": -0.0},
    {"id": "n8", "status": "scored", "tokens": {"prediction": 2 ** 62}, "f1": 1e-310},  # a big int, a subnormal
]


def test_case_status_and_score_are_case_columns_own(store):
    """case_status and case_score (what compare and a block's reading use) are case_columns' first and third
    columns on every shape of record above, and on a status that is no string or is empty."""
    from goldeval.runs.columns import case_score, case_status

    odd = [*_ODD_RECORDS, {"id": "s1", "status": 3}, {"id": "s2", "status": ""}, {"id": "s3"}]
    for rec in odd:
        cols = case_columns(rec)
        assert (case_status(rec), case_score(rec)) == (cols[0], cols[2]), rec
    # worked out by hand from the rule: f1, else whole_note.f1, else whole_note.similarity, else score; floats only
    assert [case_score(r) for r in _ODD_RECORDS] == [2 / 3, 1.0, 0.125, 0.75, None, None, None, -0.0, 1e-310]
    assert [case_status(r) for r in odd[-3:]] == ["3", "scored", "scored"]


def test_records_of_blocks_and_rows_are_the_records_decoded_from_their_text(tmp_path):
    """The records read back from a run recorded in blocks and rows, interleaved (each block record decoded once),
    are the records decoded from the stored text of each case row (stored_cases), for every reader: case_records,
    iter_cases, per_example_records, case_map; non-ASCII ids, escapes, odd scores. Expected: orjson.loads of the
    stored text, and the records themselves."""
    with RunStore(tmp_path / "g.db") as st:
        run = st.create_run(meta())
        recs = [{**r, "status": "scored"} for r in _ODD_RECORDS]
        st.write_case_block(run, 0, 3, *_block(recs[:3]))
        st.write_cases(run, [(r["id"], i, "scored", None, None, None, None, orjson.dumps(r).decode())
                             for i, r in enumerate(recs[3:5], 3)])
        st.write_case_block(run, 5, 4, *_block(recs[5:]))
        from_text = [(row[0], orjson.loads(row[7])) for row in st.stored_cases(run)]
        assert [cid for cid, _ in from_text] == [r["id"] for r in recs]
        assert list(st.case_records(run)) == from_text == [(r["id"], r) for r in recs]
        assert list(st.iter_cases(run)) == recs
        assert st.case_map(run) == dict(from_text)
        ref = {"$cases": True, "status": "scored", "drop_keys": ["status", "line"]}
        assert list(st.per_example_records(run, ref)) == [{k: v for k, v in r.items() if k not in ("status", "line")}
                                                          for r in recs]


def _writer_killed(store):
    """A run recorded through a writer process, 2 cases committed, then the writer process killed (SIGKILL)."""
    import os
    import signal

    rec = start_run(store, meta(), background="process")
    rec.record({"id": "a", "status": "scored"})
    rec.record({"id": "b", "status": "scored"})
    rec.flush()
    os.kill(rec._proc.pid, signal.SIGKILL)
    rec._proc.join(timeout=20)
    return rec


def test_an_interrupted_run_whose_writer_process_went_with_the_interrupt_closes_as_interrupted(store):
    # break-fix (hF, 2026-12-04): Ctrl-C reaches the whole process group, and a writer process still starting (before
    # writer_main ignores SIGINT) died of it; close(interrupted=True) then raised "the writer process ended
    # unexpectedly" over the KeyboardInterrupt, and `goldeval score --workers 2 --no-texts` exited 3, not 130.
    # Expected: no error of its own (the caller re-raises what stopped the run), the run marked interrupted, the 2
    # cases committed before the kill kept (the resumed run redoes the rest).
    rec = _writer_killed(store)
    rec.record({"id": "c", "status": "scored"})
    rec.close(interrupted=True)
    assert rec.closed
    assert store.db.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"
    assert committed(store.path, rec.run_id) == 2


def test_a_writer_process_gone_in_a_run_not_interrupted_is_still_an_error(store):
    # The other way: the same lost writer when nothing stopped the run is the run's failure, reported (exit 3).
    rec = _writer_killed(store)
    rec.record({"id": "c", "status": "scored"})
    with pytest.raises(StoreError, match="writer process"):
        rec.close()
    assert store.db.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"


def test_a_second_ctrl_c_while_an_interrupted_run_closes_is_still_an_interrupt(store):
    # break-fix (hG, 2026-12-05): Ctrl-C pressed twice. The first stopped the run and took the writer process with it
    # (the case above); the second landed while close() stopped that writer. close() raised its first error, the
    # StoreError "the writer process ... ended unexpectedly", over the interrupt: `goldeval` exited 3 (internal error)
    # where Ctrl-C promises 130. Expected: the interrupt is raised, the run is marked interrupted (resumable).
    rec = _writer_killed(store)
    rec.record({"id": "c", "status": "scored"})
    stop_writer = rec._stop_writer

    def second_ctrl_c():  # lands in the middle of stopping the writer, as a signal would
        with pytest.raises(StoreError):
            stop_writer()
        raise KeyboardInterrupt

    rec._stop_writer = second_ctrl_c
    with pytest.raises(KeyboardInterrupt):
        rec.close(interrupted=True)
    assert rec.closed
    assert store.db.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"
    assert committed(store.path, rec.run_id) == 2
