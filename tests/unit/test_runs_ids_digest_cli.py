"""The run store's check of a streamed per_example, answered from the ids the recorder hashed as it wrote its blocks
(Recorder.blocks_ids_digest, the fast path), against the same check read back from the store
(RunStore._cases_match_digest, the definition), through the real commands: `goldeval labels` and `goldeval score`
on ids of every length 1-40 holding a byte JSON escapes (quote, backslash, control bytes), DEL, non-ASCII or U+2028
at every position, with failed rows among the scored ones.

Expected values: the read-back check's answer on the same store (the definition), and the ids of the rows that
score, worked out from how each row is built (a row without gold or not JSON fails; every other row scores)."""

from __future__ import annotations

import hashlib
import json

import orjson
import pytest
from click.testing import CliRunner

from goldeval.cli import main
from goldeval.runs.recorder import Recorder
from goldeval.runs.store import RunStore

ODD = ['"', "\\", "\x00", "\x01", "\n", "\x1f", "\x7f", "é", "漢", "\u2028"]


def _ids() -> list[str]:
    """Every length 1-40, each ODD character at each position, the other characters 'a' (all distinct)."""
    return [("a" * p) + c + "a" * (n - p - 1) for n in range(1, 41) for p in range(n) for c in ODD]


@pytest.fixture()
def checks(monkeypatch):
    """Each finish_run's streamed-id check as (fast path taken, its answer, the read-back answer)."""
    seen: list[tuple[bool, bool, bool]] = []
    original = RunStore._streamed_ids_match

    def spy(self, run_id, streamed, blocks_ids):
        got = original(self, run_id, streamed, blocks_ids)
        seen.append((blocks_ids is not None, got, self._cases_match_digest(run_id, streamed)))
        return got

    monkeypatch.setattr(RunStore, "_streamed_ids_match", spy)
    return seen


def _stored_per_example(db) -> tuple[dict, list[str]]:
    with RunStore(db) as st:
        (run,) = st.list_runs()
        marker = orjson.loads(st.db.execute("SELECT results FROM runs WHERE id = ?", (run["id"],)).fetchone()[0])["per_example"]
        return marker, [e["id"] for e in st.get_run(run["id"])["results"]["per_example"]]


def test_labels_with_failed_rows_the_fast_check_answers_as_the_read_back(tmp_path, checks):
    ids = _ids()
    lines, scored = [], []
    for i, rid in enumerate(ids):
        row = {"id": rid, "gold": "yes" if i % 2 else "no", "pred": "yes" if i % 3 else None}
        if i % 97 == 5:
            del row["gold"]  # fails: no gold label (recorded one by one as an error)
            lines.append(orjson.dumps(row))
            continue
        if i % 89 == 3:
            lines.append(orjson.dumps(row)[:-2])  # fails: not JSON
            continue
        scored.append(rid)
        lines.append(orjson.dumps(row) if i % 2 else json.dumps(row).encode())  # (\uXXXX escapes in the input)
    path = tmp_path / "l.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    db = tmp_path / "g.db"
    r = CliRunner().invoke(main, ["labels", str(path), "--positive", "yes", "--store", str(db), "-q"])
    assert r.exit_code == 0, r.output
    assert checks == [(True, True, True)]
    marker, got = _stored_per_example(db)
    assert "note" not in marker and got == scored and len(ids) > len(scored) > 8000


def test_labels_whose_per_example_disagrees_with_its_cases_still_gets_the_note(tmp_path, checks, monkeypatch):
    """Fires: the streamed per_example of a real run, its last two ids swapped, is caught by the fast check as by
    the read-back one, and per_example is rebuilt from the cases in their recorded order."""
    ids = _ids()[:3000]
    path = tmp_path / "l.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"id": rid, "gold": "yes", "pred": "yes"}) + b"\n" for rid in ids))
    original = Recorder.finish
    swapped = ids[:-2] + [ids[-1], ids[-2]]

    def finish(self, results):
        results["per_example"]["ids_sha256"] = hashlib.sha256(orjson.dumps(swapped)).hexdigest()
        return original(self, results)

    monkeypatch.setattr(Recorder, "finish", finish)
    db = tmp_path / "g.db"
    r = CliRunner().invoke(main, ["labels", str(path), "--positive", "yes", "--store", str(db), "-q"])
    assert r.exit_code == 0, r.output
    assert checks == [(True, False, False)]
    marker, got = _stored_per_example(db)
    assert "differ from the run's per_example" in marker["note"] and got == ids


@pytest.mark.parametrize("workers", ["1", "2"])
def test_score_the_fast_check_answers_as_the_read_back(tmp_path, checks, workers):
    # ids of whitespace only are refused by score (not an id): left out; every other row scores
    ids = [rid for rid in _ids() if rid.strip()]
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"id": rid, "prediction": f"bp {i % 7} mg", "reference": f"bp {i % 5} mg"}) + b"\n"
                              for i, rid in enumerate(ids)))
    db = tmp_path / "g.db"
    for extra in ([], ["--no-texts"]):
        r = CliRunner().invoke(main, ["score", str(path), "--store", str(db), "-q", "--workers", workers, *extra])
        assert r.exit_code == 0, r.output
        assert checks == [(True, True, True)]
        marker, got = _stored_per_example(db)
        assert "note" not in marker and got == ids
        db.unlink()
        checks.clear()
