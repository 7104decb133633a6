"""The input files kept with a run (goldeval.runs.texts, migration m005_run_inputs): kept in zstd parts and restored
byte for byte, not kept when the file changed after it was scored, never restored for another input's sha256, and
added to a store of the previous schema by its migration."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

import goldeval.runs.texts as texts
from goldeval.runs.migrations import MIGRATIONS
from goldeval.runs.store import RunMeta, RunStore
from goldeval.runs.texts import compressed_parts, keep_inputs, restore_input


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture()
def store(tmp_path):
    st = RunStore(tmp_path / "s.db")
    yield st
    st.close()


def new_run(st: RunStore) -> str:
    return st.create_run(RunMeta(run_key="k", scorer_name="token_f1", scorer_version="1", dataset_hash="d" * 64))


def test_a_file_of_several_parts_is_restored_byte_for_byte(store, tmp_path, monkeypatch):
    monkeypatch.setattr(texts, "PART_BYTES", 1000)
    data = b"".join(b'{"id": "%d", "prediction": "p\xc3\xa9 %d", "reference": "r"}\n' % (i, i) for i in range(200))
    src = tmp_path / "p.jsonl"
    src.write_bytes(data)
    run_id = new_run(store)
    assert keep_inputs(store, run_id, {"predictions": str(src)}, {"predictions": {"path": str(src), "sha256": sha(data)}}) == []
    kept = store.kept_inputs(run_id)["predictions"]
    # ceil(len / 1000) parts, sizes summing to the file's; compressed smaller than the text
    assert kept["parts"] == -(-len(data) // 1000) and kept["size"] == len(data) and kept["stored"] < len(data)
    src.unlink()
    out = restore_input(store, run_id, "predictions", sha(data), str(tmp_path))
    assert out is not None and out.endswith("p.jsonl") and open(out, "rb").read() == data


def test_a_file_changed_after_it_was_scored_is_not_kept(store, tmp_path):
    src = tmp_path / "p.jsonl"
    src.write_bytes(b'{"id": "a", "prediction": "x", "reference": "y"}\n')
    recorded = sha(b"what was scored\n")
    run_id = new_run(store)
    notes = keep_inputs(store, run_id, {"predictions": str(src)}, {"predictions": {"path": str(src), "sha256": recorded}})
    assert len(notes) == 1 and "changed while it was scored" in notes[0]
    assert store.kept_inputs(run_id) == {}  # the transaction was rolled back: no part of it is there
    with pytest.raises(Exception, match="p.jsonl"):
        list(compressed_parts(str(src), recorded))


def test_a_database_and_an_input_without_sha256_are_not_kept(store, tmp_path):
    db, src = tmp_path / "x.sqlite", tmp_path / "p.jsonl"
    db.write_bytes(b"SQLite format 3\x00")
    src.write_bytes(b"{}\n")
    run_id = new_run(store)
    notes = keep_inputs(store, run_id, {"db": str(db), "predictions": str(src)},
                        {"db": {"path": str(db), "sha256": sha(b"SQLite format 3\x00")}, "predictions": {"path": str(src)}})
    assert store.kept_inputs(run_id) == {} and notes == [f"the predictions input has no recorded sha256: its texts were not kept with run {run_id}"]


def test_a_kept_copy_of_another_input_is_not_restored(store, tmp_path):
    src = tmp_path / "p.jsonl"
    src.write_bytes(b'{"id": "a"}\n')
    run_id = new_run(store)
    keep_inputs(store, run_id, {"cases": str(src)}, {"cases": {"path": str(src), "sha256": sha(b'{"id": "a"}\n')}})
    assert restore_input(store, run_id, "cases", "0" * 64, str(tmp_path)) is None
    assert restore_input(store, run_id, "attempts", None, str(tmp_path)) is None
    assert restore_input(store, run_id, "cases", None, str(tmp_path)) is not None


def test_a_store_of_the_previous_schema_gains_run_inputs(tmp_path):
    # a store made by goldeval just before m005 (the migrations after it are applied on opening, in order)
    path = tmp_path / "old.db"
    m005 = [m.__name__ for m in MIGRATIONS].index("m005_run_inputs")
    RunStore(path, _migrate_upto=m005).close()
    assert "run_inputs" not in {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    with RunStore(path) as st:
        assert st.migrations_applied == [m.__name__ for m in MIGRATIONS[m005:]]
        assert st.migrations_applied[0] == "m005_run_inputs"
        assert st.kept_inputs("no-such-run") == {}


def test_evaluate_keeps_the_texts_unless_told_not_to(tmp_path):
    from goldeval import evaluate

    src = tmp_path / "p.jsonl"
    src.write_bytes(b'{"id": "a", "prediction": "bp 120/80", "reference": "bp 120/80"}\n')
    kept = evaluate("token_f1", src, store=str(tmp_path / "s.db"))
    bare = evaluate("token_f1", src, store=str(tmp_path / "s.db"), texts=False, arm="no-texts")
    with RunStore(tmp_path / "s.db") as st:
        assert list(st.kept_inputs(kept.run_id)) == ["predictions"]
        assert st.kept_inputs(bare.run_id) == {}
