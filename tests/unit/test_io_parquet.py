"""Parquet input beside JSONL and CSV: the same rows give the same results, and a failing row is reported by its
1-based row index as a JSONL row is by its line."""

from __future__ import annotations

import json

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from click.testing import CliRunner  # noqa: E402

from conftest import EXAMPLES, REPO  # noqa: E402
from goldeval.cli import main  # noqa: E402
from goldeval.errors import InputError  # noqa: E402
from goldeval.io import Row, read_rows  # noqa: E402

PRIMOCK = EXAMPLES / "openscribe_primock57_predictions.jsonl"
PILOT = REPO / "examples" / "labels" / "pilot_claims.jsonl"


def _to_parquet(jsonl, out, *, drop=(), row_group_size=None):
    rows = [json.loads(x) for x in jsonl.read_text().splitlines() if x.strip()]
    rows = [{k: v for k, v in r.items() if k not in drop} for r in rows]
    pq.write_table(pa.Table.from_pylist(rows), out, row_group_size=row_group_size)
    return rows


def test_parquet_rows_are_numbered_from_one_across_batches(tmp_path, monkeypatch):
    import goldeval.io.reading as io

    monkeypatch.setattr(io, "_PARQUET_BATCH", 7)  # several batches and row groups: the index runs on across them
    rows = [{"id": str(i), "m": {"a": i}} for i in range(20)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "r.parquet", row_group_size=6)
    got = list(read_rows(tmp_path / "r.parquet"))
    assert [r.line for r in got] == list(range(1, 21)) and all(type(r) is Row for r in got)
    assert got[13].data == {"id": "13", "m": {"a": 13}}


def test_parquet_map_column_reads_as_a_dict(tmp_path):
    t = pa.table({"id": ["a"], "sections": pa.array([[("S", "x y")]], type=pa.map_(pa.string(), pa.string()))})
    pq.write_table(t, tmp_path / "m.parquet")
    assert next(read_rows(tmp_path / "m.parquet")).data == {"id": "a", "sections": {"S": "x y"}}


def test_not_parquet_and_empty_parquet_are_refused(tmp_path):
    (tmp_path / "x.parquet").write_text("id,prediction\n")
    with pytest.raises(InputError, match="not a Parquet file"):
        list(read_rows(tmp_path / "x.parquet"))
    pq.write_table(pa.table({"id": pa.array([], pa.string())}), tmp_path / "e.parquet")
    with pytest.raises(InputError, match="holds no rows"):
        list(read_rows(tmp_path / "e.parquet"))


def test_score_primock_parquet_gives_the_published_figure(tmp_path):
    _to_parquet(PRIMOCK, tmp_path / "p.parquet")
    res = CliRunner().invoke(main, ["score", str(tmp_path / "p.parquet"), "--no-store", "-q", "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    agg = json.loads((tmp_path / "r.json").read_text())["aggregate"]
    assert agg["whole_note_f1_mean"] == 0.27861937781204515  # Open-Scribe's published PriMock57 figure
    assert (agg["n"], agg["n_failed"]) == (57, 0)


def test_a_failing_parquet_row_is_reported_by_its_row_index_as_jsonl_by_its_line(tmp_path):
    rows = [json.loads(x) for x in PRIMOCK.read_text().splitlines()][:5]
    rows[3]["prediction"] = None  # row 4
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "p.parquet")
    out = {}
    for ext in ("jsonl", "parquet"):
        res = CliRunner().invoke(main, ["score", str(tmp_path / f"p.{ext}"), "--no-store", "-q", "--out", str(tmp_path / f"{ext}.json")])
        assert res.exit_code == 0, res.output
        out[ext] = json.loads((tmp_path / f"{ext}.json").read_text())
    assert out["parquet"]["failures"] == [{"line": 4, "id": rows[3]["id"], "error": out["parquet"]["failures"][0]["error"]}]
    assert out["parquet"]["failures"][0]["error"].startswith("p.parquet:4: field 'prediction' is null")
    assert out["jsonl"]["failures"][0]["error"] == out["parquet"]["failures"][0]["error"].replace("p.parquet", "p.jsonl")
    strip = lambda a: {k: v for k, v in a.items() if k != "elapsed_sec"}  # noqa: E731
    assert strip(out["jsonl"]["aggregate"]) == strip(out["parquet"]["aggregate"])


def test_labels_pilot_as_parquet_gives_the_same_decision(tmp_path):
    _to_parquet(PILOT, tmp_path / "pilot.parquet")
    dod = REPO / "examples" / "labels" / "dod.toml"
    results = {}
    for f in (PILOT, tmp_path / "pilot.parquet"):
        res = CliRunner().invoke(main, ["labels", str(f), "--gates", str(dod), "--no-store", "--out", str(tmp_path / "r.json")])
        results[f.suffix] = (res.exit_code, json.loads((tmp_path / "r.json").read_text()))
    (code_j, rj), (code_p, rp) = results[".jsonl"], results[".parquet"]
    assert code_j == code_p and rj["aggregate"] == rp["aggregate"] and rj["gates"]["passed"] == rp["gates"]["passed"]


def test_a_parquet_schema_that_names_a_column_twice_is_refused(tmp_path):
    # pyarrow writes a schema with 'prediction' twice; to_pylist kept the last, so the row scored f1 1.0 on "x"
    # against "x" and the first prediction "x y" (f1 2/3 by hand) was dropped unseen. Refused before any row.
    p = tmp_path / "dup.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(["a"]), pa.array(["x y"]), pa.array(["x"]), pa.array(["x"])],
                                        names=["id", "prediction", "reference", "prediction"]), p)
    with pytest.raises(InputError, match=r"'prediction' twice \(columns 2 and 4\)"):
        list(read_rows(p))
    r = CliRunner().invoke(main, ["score", str(p), "--no-store", "-q"])
    assert r.exit_code == 2 and "twice" in r.output
