"""`goldeval score` as a user runs it: exit codes, the JSON it writes, the table it prints."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES
from goldeval.cli import main


def test_score_primock_writes_the_upstream_keys(tmp_path):
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["score", str(EXAMPLES / "openscribe_primock57_predictions.jsonl"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    agg = data["aggregate"]
    for key in ("n", "n_failed", "elapsed_sec", "whole_note_f1_mean", "whole_note_precision_mean", "whole_note_recall_mean", "tokenizer"):
        assert key in agg
    assert agg["whole_note_f1_mean"] == pytest.approx(0.27861937781204515, abs=1e-12)
    assert set(data["per_example"][0]["whole_note"]) == {"precision", "recall", "f1"}
    assert data["failures"] == []
    assert "0.279" in res.output  # rounded only on screen


def test_score_json_to_stdout_keeps_stdout_clean():
    res = CliRunner().invoke(main, ["score", str(EXAMPLES / "openscribe_acibench_predictions.jsonl"), "--out", "-"])
    assert res.exit_code == 0
    data = json.loads(res.stdout)  # only JSON on stdout; the table went to stderr
    assert data["aggregate"]["n_failed"] == 5 and len(data["failures"]) == 5


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: None, "no such file"),
        (lambda p: p.write_bytes(b""), "the file is empty"),
        (lambda p: p.write_bytes(b'{"id": "a", "prediction": "\xff", "reference": "x"}\n'), "not UTF-8"),
    ],
)
def test_unusable_input_exits_2(tmp_path, setup, message):
    p = tmp_path / "in.jsonl"
    setup(p)
    res = CliRunner().invoke(main, ["score", str(p)])
    assert res.exit_code == 2
    assert message in res.stderr


def test_unicode_tokenizer_is_recorded(tmp_path):
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["score", str(EXAMPLES / "openscribe_primock57_predictions.jsonl"), "--tokenizer", "unicode", "--out", str(out), "-q"])
    assert res.exit_code == 0
    data = json.loads(out.read_text())
    assert data["aggregate"]["tokenizer"] == "unicode" and data["tokenizer"]["name"] == "unicode"


def test_help_imports_no_heavy_module():
    # `goldeval --help` must answer fast: no numpy/scipy/sqlglot/openai/rich imported to print it.
    code = (
        "import sys\nfrom goldeval.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('numpy', 'scipy', 'sqlglot', 'openai', 'rich', 'orjson') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out, out


def test_score_gates_on_macro_f1(tmp_path):
    # PriMock57 macro F1 is 0.2786 (published): a min of 0.25 passes (exit 0), a min of 0.30 fails (exit 1).
    primock = str(EXAMPLES / "openscribe_primock57_predictions.jsonl")
    for bound, code in ((0.25, 0), (0.30, 1)):
        dod = tmp_path / f"dod{bound}.toml"
        dod.write_text(f'agreed_by = "Clinical lead"\nagreed_on = 2026-11-02\n[gates]\nwhole_note_f1_mean = {{ min = {bound} }}\n')
        out = tmp_path / "r.json"
        res = CliRunner().invoke(main, ["score", primock, "--gates", str(dod), "--out", str(out), "--no-store", "-q"])
        assert res.exit_code == code, res.output
        data = json.loads(out.read_text())
        assert data["gates"]["passed"] is (code == 0)


def test_score_bad_gates_file_exits_2_before_scoring(tmp_path):
    dod = tmp_path / "dod.toml"
    dod.write_text("[gates]\nwhole_note_f1_maen = { min = 0.3 }\n")
    res = CliRunner().invoke(main, ["score", str(EXAMPLES / "openscribe_primock57_predictions.jsonl"), "--gates", str(dod), "--no-store"])
    assert res.exit_code == 2
    assert "whole_note_f1_mean" in res.stderr  # did-you-mean the known name


def test_no_row_scored_exits_2(tmp_path):
    # A misspelled field fails every row: that is bad input (exit 2), never a green run.
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["score", str(EXAMPLES / "openscribe_primock57_predictions.jsonl"), "--prediction-field", "predicton", "--out", str(out), "--no-store"])
    assert res.exit_code == 2
    assert "no row of" in res.stderr and "field 'predicton' is missing" in res.stderr
    assert json.loads(out.read_text())["aggregate"]["whole_note_f1_mean"] is None  # the JSON is still written


def test_unwritable_out_fails_before_scoring(tmp_path):
    res = CliRunner().invoke(main, ["score", str(EXAMPLES / "openscribe_primock57_predictions.jsonl"), "--out", str(tmp_path / "no" / "r.json")])
    assert res.exit_code == 2 and "does not exist" in res.stderr
    assert "run " not in res.stderr  # nothing was scored or recorded


def test_workers_zero_is_a_usage_error():
    res = CliRunner().invoke(main, ["score", str(EXAMPLES / "openscribe_primock57_predictions.jsonl"), "--workers", "0"])
    assert res.exit_code == 2


def test_ctrl_c_exits_130_not_1():
    # Exit 1 means "a gate failed" to CI scripts; an interrupt must not look like that.
    import click

    from goldeval.cli._common import guarded

    @click.command()
    @guarded
    def interrupted():
        raise KeyboardInterrupt

    res = CliRunner().invoke(interrupted, [])
    assert res.exit_code == 130 and "interrupted" in res.stderr


# -O KEY=VALUE is read as the type the scorer declares: `score --scorer labels -O positive=1` is `labels --positive 1`.
# The file holds the labels as a classifier writes them, JSON integers (read as their decimal text) and strings.
# Worked out by hand for positive "1": a (1,1) tp · b (1,0) fn · c (0,1) fp · d (0,0) tn · e ("1","1") tp ·
# f (1,null) fn → tp 2, fp 1, fn 2, tn 1; precision 2/3, recall 2/4, 2 misses in 4 gold positives = 50 per 100.
LABEL_ROWS = ('{"id": "a", "gold": 1, "pred": 1}\n{"id": "b", "gold": 1, "pred": 0}\n{"id": "c", "gold": 0, "pred": 1}\n'
              '{"id": "d", "gold": 0, "pred": 0}\n{"id": "e", "gold": "1", "pred": "1"}\n{"id": "f", "gold": 1, "pred": null}\n')


def test_score_labels_option_positive_1_is_the_label_1_as_labels_reads_it(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text(LABEL_ROWS)
    runs = {}
    for cmd in (["score", path, "--scorer", "labels", "-O", "positive=1"], ["labels", path, "--positive", "1"]):
        res = CliRunner().invoke(main, [*map(str, cmd), "--no-store", "-q", "--out", "-"])
        assert res.exit_code == 0, res.output
        runs[cmd[0]] = json.loads(res.stdout)
    agg = runs["score"]["aggregate"]
    assert runs["score"]["positive"] == "1"
    assert {k: agg[k] for k in ("tp", "fp", "fn", "tn", "n_scored")} == {"tp": 2, "fp": 1, "fn": 2, "tn": 1, "n_scored": 6}
    assert agg["precision"] == 2 / 3 and agg["recall"] == 2 / 4
    for key in ("tp", "fp", "fn", "tn", "precision", "recall", "f1", "kappa", "missed_per_100", "null_predictions"):
        assert runs["labels"]["aggregate"][key] == agg[key], key


def test_score_option_with_an_unknown_key_or_a_bad_value_exits_2_naming_the_scorer_key_and_type(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text(LABEL_ROWS)
    res = CliRunner().invoke(main, ["score", str(path), "--scorer", "labels", "-O", "positive=1", "-O", "postive=1", "--no-store"])
    assert res.exit_code == 2
    assert ("-O postive=1: scorer 'labels' has no option 'postive'; it takes: gold_field (text), id_field (text), "
            "positive (text), pred_field (text), require_positive (true or false), second_gold_field (text).") in res.stderr
    res = CliRunner().invoke(main, ["score", str(path), "--scorer", "labels", "-O", "positive=1", "-O", "require_positive=sure",
                                    "--no-store"])
    assert res.exit_code == 2
    assert ("-O require_positive=sure: scorer 'labels' option 'require_positive' expects true or false, got 'sure'. "
            in res.stderr)
    # the boolean is converted, not taken as a truthy string: require_positive=false lets an absent positive label through
    res = CliRunner().invoke(main, ["score", str(path), "--scorer", "labels", "-O", "positive=yes", "-O", "require_positive=false",
                                    "--no-store", "-q", "--out", "-"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["aggregate"]["tp"] == 0
    res = CliRunner().invoke(main, ["score", str(path), "--scorer", "labels", "-O", "positive=yes", "--no-store", "-q"])
    assert res.exit_code == 2 and "the positive label 'yes' occurs in neither gold nor pred" in res.stderr


def test_score_refuses_a_scorer_that_joins_two_files(tmp_path):
    """`score FILE --scorer answer_judge` used to exit 3 (an internal KeyError on the joined row's 'case_line'): the
    data-answer judge scores a case file joined with an answer file, which one file cannot give. Refused as a usage
    error (exit 2) that names the command to run, before any store is made; a one-file scorer is unaffected."""
    f = tmp_path / "plain.jsonl"
    f.write_text(json.dumps({"id": "a", "prediction": "x", "reference": "x"}) + "\n")
    store = tmp_path / "s.db"
    res = CliRunner().invoke(main, ["score", str(f), "--scorer", "answer_judge", "--store", str(store)])
    assert res.exit_code == 2, res.output
    assert "goldeval judge CASES ANSWERS" in res.output and "internal error" not in res.output
    assert not store.exists()
    ok = CliRunner().invoke(main, ["score", str(f), "--scorer", "token_f1", "--no-store"])
    assert ok.exit_code == 0, ok.output


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_two_workers_write_the_same_results_file_as_one(tmp_path, fmt):
    # With --workers 2 each worker sends back a chunk's per_example entries as one body, which this process writes
    # in one call (ResultsFile.example_lines); one worker writes them one by one. The files must be the same bytes
    # but for the seconds taken; the expected mean is Open-Scribe's published ACI-Bench figure (tests/unit/test_freetext.py).
    rows = (EXAMPLES / "openscribe_acibench_predictions.jsonl").read_bytes().splitlines(keepends=True)
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"".join(rows) + b"".join(  # 1,240 rows: three chunks, the failed rows spread over them
        json.dumps({**json.loads(r), "id": f"copy{k}-{i}"}).encode() + b"\n" for k in range(30) for i, r in enumerate(rows)))
    outs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}.{fmt}"
        res = CliRunner().invoke(main, ["score", str(src), "--workers", workers, "--out", str(out), "--out-format", fmt,
                                        "--no-store", "-q"])
        assert res.exit_code == 0, res.output
        outs.append(out.read_bytes())
    elapsed = re.compile(rb'"elapsed_sec": ?[0-9.e-]+|"workers": ?[12]')
    one, two = (elapsed.sub(b"", b) for b in outs)
    assert one == two and outs[0] != outs[1]
    last = json.loads(outs[1]) if fmt == "json" else json.loads(outs[1].splitlines()[-1])
    assert last["aggregate"]["n"] == 31 * 35 and last["aggregate"]["n_failed"] == 31 * 5
    assert last["aggregate"]["whole_note_f1_mean"] == pytest.approx(0.4465338141844892, abs=1e-12)


def _mixed_score_rows() -> bytes:
    """1,240 free-text rows (three chunks of 500): Open-Scribe's ACI-Bench predictions (35 scored, 5 failed: no
    prediction) repeated under new ids, among them numbers, ids with a comma (which a block cannot hold) and ids
    JSON escapes (a quote, a backslash, a non-ASCII letter)."""
    rows = (EXAMPLES / "openscribe_acibench_predictions.jsonl").read_bytes().splitlines()
    out = []
    for k in range(31):
        for i, r in enumerate(rows):
            row = json.loads(r)
            n = k * len(rows) + i
            row["id"] = f"copy{k}-{i}"
            if n % 97 == 5:
                row["id"] = f'q"{n}\\é'
            elif n % 89 == 3:
                row["id"] = 100_000 + n  # a number
            elif n % 83 == 2:
                row["id"] = f"a,{n}"  # a comma in the id's JSON: not in a block (record_lines counts commas)
            out.append(json.dumps(row, ensure_ascii=False).encode())
    return b"\n".join(out) + b"\n"


@pytest.mark.parametrize("workers", ["1", "2"])
def test_score_recorded_in_blocks_reads_back_as_the_one_row_a_case_path(tmp_path, monkeypatch, workers):
    """A new `goldeval score` run records its scored cases as compressed blocks (Recorder.record_lines): every stored
    row (case id, seq, status, verdict, score, reason, raw, record JSON) reads back as the one-row-a-case path
    stores it, and so do the results with their per_example rebuilt from the store, `runs export` (JSONL and JSON),
    an imported bundle and the report page. Expected values: the one-row-a-case path's own store (the definition:
    Recorder.record_lines removed), and Open-Scribe's published ACI-Bench mean (tests/unit/test_freetext.py)."""
    from goldeval.runs import recorder as rec_mod
    from goldeval.runs.store import RunStore

    src = tmp_path / "mixed.jsonl"
    src.write_bytes(_mixed_score_rows())
    dbs = {"bulk": tmp_path / "bulk.db", "rows": tmp_path / "rows.db"}
    for name, db in dbs.items():
        with monkeypatch.context() as m:
            if name == "rows":
                m.delattr(rec_mod.Recorder, "record_lines")
            res = CliRunner().invoke(main, ["score", str(src), "--workers", workers, "--store", str(db), "-q",
                                            "--out", str(tmp_path / f"{name}.json")])
            assert res.exit_code == 0, res.output
    out_b, out_r = (json.loads((tmp_path / f"{n}.json").read_text()) for n in dbs)
    assert out_b["aggregate"]["n"] == 31 * 35 and out_b["aggregate"]["n_failed"] == 31 * 5
    assert out_b["aggregate"]["whole_note_f1_mean"] == pytest.approx(0.4465338141844892, abs=1e-12)
    for doc in (out_b, out_r):
        doc["aggregate"].pop("elapsed_sec")
        doc.pop("run")
    assert out_b == out_r
    stores = {name: RunStore(str(db)) for name, db in dbs.items()}
    try:
        (run_b,), (run_r,) = stores["bulk"].list_runs(), stores["rows"].list_runs()
        blocks = stores["bulk"].db.execute("SELECT count(*), sum(n) FROM case_blocks").fetchone()
        assert blocks[0] >= 3 and blocks[1] > 1000  # most scored cases went into blocks
        # one row each: the failed rows (unscored), and the scored ones whose id a block cannot hold (a comma; a
        # number is recorded as its text by token F1, so it can)
        failed = {r["id"] for r in out_b["failures"]}
        comma = [r["id"] for r in map(json.loads, src.read_bytes().splitlines()) if "," in str(r["id"])]
        expect = 31 * 5 + sum(1 for i in comma if i not in failed)
        assert 0 < len(comma) - sum(1 for i in comma if i not in failed) < len(comma)  # (commas on both kinds)
        assert stores["bulk"].db.execute("SELECT count(*) FROM cases").fetchone()[0] == expect
        assert blocks[1] == 1240 - expect
        assert stores["rows"].db.execute("SELECT count(*) FROM case_blocks").fetchone()[0] == 0
        assert run_b["n_recorded"] == run_r["n_recorded"] == 1240
        assert list(stores["bulk"].stored_cases(run_b["id"])) == list(stores["rows"].stored_cases(run_r["id"]))
        assert stores["bulk"].case_map(run_b["id"]) == stores["rows"].case_map(run_r["id"])
        assert stores["bulk"].next_seq(run_b["id"]) == stores["rows"].next_seq(run_r["id"]) == 1240
        res_b = stores["bulk"].get_run(run_b["id"])["results"]
        res_r = stores["rows"].get_run(run_r["id"])["results"]
        assert res_b["per_example"] == res_r["per_example"] and len(res_b["per_example"]) == 31 * 35
        drop = ("run", "aggregate", "input")
        assert {k: v for k, v in res_b.items() if k not in drop} == {k: v for k, v in res_r.items() if k not in drop}
        ids = (run_b["id"], run_r["id"])
    finally:
        for st in stores.values():
            st.close()
    got = [CliRunner().invoke(main, ["runs", "export", rid, "--store", str(db)]).stdout for rid, db in zip(ids, dbs.values())]
    assert got[0] == got[1] and got[0].count("\n") == 1240
    whole = [json.loads(CliRunner().invoke(main, ["runs", "export", rid, "--store", str(db), "--format", "json"]).stdout)
             for rid, db in zip(ids, dbs.values())]
    for w in whole:  # (the run: its id, store, times and the seconds taken)
        del w["run"], w["results"]["run"]
        w["results"]["aggregate"].pop("elapsed_sec")
    assert whole[0] == whole[1] and len(whole[0]["cases"]) == 1240
    pages = []
    for rid, db, name in zip(ids, dbs.values(), dbs):
        page = tmp_path / f"{name}.html"
        res = CliRunner().invoke(main, ["report", rid, "--store", str(db), "--out", str(page)])
        assert res.exit_code == 0, res.output
        pages.append(page.read_text(encoding="utf-8"))
    when = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")  # the run's creation time (to the second)
    same = [when.sub("WHEN", page.replace(rid, "RUN")) for page, rid in zip(pages, ids)]
    assert same[0] == same[1] and same[0].count("copy30-") > 0
    bundle, other = tmp_path / "b.tar.gz", tmp_path / "other.db"
    assert CliRunner().invoke(main, ["runs", "export", ids[0], "--store", str(dbs["bulk"]), "--bundle", str(bundle)]).exit_code == 0
    assert CliRunner().invoke(main, ["runs", "import", str(bundle), "--store", str(other)]).exit_code == 0
    with RunStore(str(other)) as imported, RunStore(str(dbs["rows"])) as rows_store:
        assert list(imported.stored_cases(ids[0])) == list(rows_store.stored_cases(ids[1]))
