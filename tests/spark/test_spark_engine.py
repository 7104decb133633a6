"""The Spark engine (local[2]) gives the local run's numbers to the last digit, reports a failing row the same
way, and its per-case output imports into the run store idempotently."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES, REPO
from goldeval.cli import main
from goldeval.pipeline.files import score_file
from goldeval.labels import score_label_file
from plugin_rows import EM_ROWS  # (tests/plugin_rows.py)

PRIMOCK = EXAMPLES / "openscribe_primock57_predictions.jsonl"
PILOT = REPO / "examples" / "labels" / "pilot_claims.jsonl"


def _agg(results):
    return {k: v for k, v in results["aggregate"].items() if k != "elapsed_sec"}


def test_primock57_figure_is_identical_on_spark(spark):
    from goldeval.engines import spark as gs

    cases = gs.score(gs.read(spark, str(PRIMOCK)), "token_f1", source=PRIMOCK.name)
    results = gs.aggregate(cases)
    local = score_file(PRIMOCK)
    assert results["aggregate"]["whole_note_f1_mean"] == 0.27861937781204515  # Open-Scribe's published figure
    assert _agg(results) == _agg(local)
    assert results["engine"]["partitions"] >= 2  # really split: the partial sums were merged on the driver


@pytest.mark.parametrize(("scorer", "options"), [("rougeL", {"use_stemmer": True}), ("rougeLsum", {})])
def test_rouge_on_spark_equals_the_local_run(spark, scorer, options):
    # ACI-Bench: 35 scored rows, 5 failed (null predictions); partial sums merged on the driver, exactly
    from goldeval.engines import spark as gs
    from goldeval.io import read_rows
    from goldeval.scoring.registry import get_scorer

    aci = EXAMPLES / "openscribe_acibench_predictions.jsonl"
    results = gs.aggregate(gs.score(gs.read(spark, str(aci)), scorer, source=aci.name, **options))
    sc = get_scorer(scorer)
    config = sc.configure(**options, source=aci.name)
    local = sc.aggregate(sc.score_batch(read_rows(aci), config), config)
    assert _agg(results) == _agg(local)
    assert (results["aggregate"]["n"], results["aggregate"]["n_failed"]) == (35, 5)
    assert results["engine"]["partitions"] >= 2


def test_labels_pilot_decision_is_identical_on_spark(spark, tmp_path):
    from goldeval.engines import spark as gs
    from goldeval.gates import evaluate_gates, load_gates

    cases = gs.score(gs.read(spark, str(PILOT)), "labels", source=PILOT.name, positive="escalate")
    results = gs.aggregate(cases)
    local = score_label_file(PILOT, positive="escalate")
    assert results["aggregate"] == local["aggregate"]  # precision, recall, missed, kappa... to the last digit
    assert results["per_label"] == local["per_label"] and results["warnings"] == local["warnings"]
    dod = load_gates(REPO / "examples" / "labels" / "dod.toml")
    assert evaluate_gates(results, dod).passed == evaluate_gates(local, dod).passed


def test_a_failing_row_is_reported_the_same_way(spark, tmp_path):
    from goldeval.engines import spark as gs

    rows = PRIMOCK.read_text().splitlines()[:12]
    bad = json.loads(rows[2])
    bad["prediction"] = None
    rows[2] = json.dumps(bad)                      # line 3: a null prediction
    rows[5] = "{not json"                          # line 6: not JSON
    rows[10] = rows[1]                             # line 11 repeats line 2's id (in another partition)
    f = tmp_path / "p.jsonl"
    f.write_text("\n".join(rows) + "\n")
    df = gs.read(spark, str(f)).repartition(3)     # rows scattered over partitions: lines still name them
    results = gs.aggregate(gs.score(df, "token_f1", source=f.name))
    local = score_file(f)
    assert [x["line"] for x in local["failures"]] == [3, 6, 11]
    assert results["failures"] == local["failures"]
    assert _agg(results) == _agg(local)


def test_cli_engine_spark_and_runs_import_idempotent(spark, tmp_path):
    out, per_case = tmp_path / "r.json", tmp_path / "cases.parquet"
    res = CliRunner().invoke(main, ["score", str(PRIMOCK), "--engine", "spark", "--spark-master", "local[2]",
                                    "--no-store", "-q", "--out", str(out), "--per-case", str(per_case)])
    assert res.exit_code == 0, res.output
    results = json.loads(out.read_text())
    assert results["aggregate"]["whole_note_f1_mean"] == 0.27861937781204515
    # --out-format jsonl: the results on one line, as the local engine writes its last one (it was pretty JSON)
    res = CliRunner().invoke(main, ["score", str(PRIMOCK), "--engine", "spark", "--no-store", "-q", "--out",
                                    str(tmp_path / "r.jsonl"), "--out-format", "jsonl"])
    assert res.exit_code == 0, res.output
    lines = (tmp_path / "r.jsonl").read_bytes().splitlines()
    assert len(lines) == 1 and _agg(json.loads(lines[0])) == _agg(results)
    for _ in range(2):  # twice: the same run, the same 57 cases
        res = CliRunner().invoke(main, ["runs", "import", str(per_case), "--out", str(tmp_path / "i.json")])
        assert res.exit_code == 0, res.output
    assert "already imported: updated run" in res.output
    imported = json.loads((tmp_path / "i.json").read_text())
    assert _agg(imported) == _agg(results)
    listed = CliRunner().invoke(main, ["runs", "list", "--json"])
    runs = json.loads(listed.stdout)
    assert len(runs) == 1 and runs[0]["n_recorded"] == 57
    # a local run of the same file compares case by case with the imported Spark run: nothing moved
    res = CliRunner().invoke(main, ["score", str(PRIMOCK), "-q"])
    assert res.exit_code == 0, res.output
    cmp = CliRunner().invoke(main, ["compare", "latest~1", "latest", "--out", str(tmp_path / "cmp.json")])
    assert cmp.exit_code == 0, cmp.output
    assert "0 up, 0 down, 57 unchanged" in cmp.output


def _odd_rows(tmp_path):
    """Lines Python's json reads and orjson refuses, and lines nothing reads (expected outcomes by hand, from
    goldeval.io.reading.decode_line's rules): 2 NaN and Infinity literals in another field (scored: lenient); 3 a lone
    surrogate escape in the prediction (scored: the rule reads 'a b'); 4 a lone surrogate in the id (unscored:
    no result could name the row); 5 a Latin-1 byte (unscored: not UTF-8, byte 0xe9 at column 35); 6 nested 1,200
    deep (unscored: too deep to read)."""
    lines = [
        b'{"id": "ok", "prediction": "a b c", "reference": "a b"}',
        b'{"id": "nan", "prediction": "a b", "reference": "a", "score": NaN, "t": Infinity}',
        b'{"id": "sur", "prediction": "a \\ud800 b", "reference": "a b"}',
        b'{"id": "\\udc00x", "prediction": "a", "reference": "a"}',
        b'{"id": "latin", "prediction": "caf\xe9", "reference": "a"}',
        b'{"id": "deep", "prediction": "a", "reference": "a", "x": ' + b"[" * 1200 + b"]" * 1200 + b"}",
    ]
    f = tmp_path / "odd.jsonl"
    f.write_bytes(b"\n".join(lines) + b"\n")
    return f


def test_rows_are_decoded_on_spark_as_locally(spark, tmp_path):
    # Before: the executors read each line with orjson alone, so lines 2 and 3 failed on Spark and were scored
    # locally, and line 5 was scored on Spark with U+FFFD for the byte (Spark's Hadoop reader replaces it).
    from goldeval.engines import spark as gs

    f = _odd_rows(tmp_path)
    local = score_file(f)
    assert [x["line"] for x in local["failures"]] == [4, 5, 6]
    assert "lone surrogate" in local["failures"][0]["error"]
    assert "the line is not UTF-8 (byte 0xe9 at column 35)" in local["failures"][1]["error"]
    assert "nested too deep" in local["failures"][2]["error"]
    results = gs.aggregate(gs.score_path(spark, str(f), "token_f1"))
    assert results["failures"] == local["failures"]
    assert _agg(results) == _agg(local) and results["aggregate"]["n"] == 3


def test_judge_rows_are_decoded_on_spark_as_locally(spark, tmp_path):
    # The judge reads strictly, locally and on Spark: a NaN literal is not JSON (a failed row), an integer past 64
    # bits keeps its digits (2**64 + 1 against 2**64 is no_match; a float would have made them equal).
    from goldeval.engines import spark_judge
    from goldeval.answers.judge import AnswerConfig
    from goldeval.pipeline.files import judge_file

    q = "What is the account number?"
    (tmp_path / "cases.jsonl").write_text(
        json.dumps({"id": "big", "question": q, "golden": {"kind": "value", "columns": ["account"], "rows": [[2**64 + 1]]}}) + "\n"
        + '{"id": "nan", "question": "x", "golden": {"kind": "value", "columns": ["v"], "rows": [[NaN]]}}\n')
    (tmp_path / "attempts.jsonl").write_text(json.dumps({"id": "big", "columns": ["account"], "rows": [[2**64]]}) + "\n")
    cases, attempts = str(tmp_path / "cases.jsonl"), str(tmp_path / "attempts.jsonl")
    per_case, failures = spark_judge.judge(spark, cases, attempts)
    local = judge_file(cases, attempts, config=AnswerConfig())
    assert failures == local["failures"] and [(f["line"], "NaN is not JSON" in f["error"]) for f in failures] == [(2, True)]
    records = {r["id"]: orjson_loads(r["record"]) for r in per_case.select("id", "record").collect()}
    assert records["big"]["verdict"] == local["per_example"][0]["verdict"] == "no_match"


def orjson_loads(text):
    import orjson

    return orjson.loads(text)


PLUGIN = REPO / "tests" / "plugins" / "exact_match"


def test_exact_match_plugin_runs_through_cli_store_gates_and_spark(spark, tmp_path):
    # The example third-party scorer, installed through its entry point (goldeval.scorers) by PYTHONPATH, in a
    # process of its own as a user runs it: its own local[2] JVM, whose Python workers import the plug-in too.
    import os
    import subprocess
    import sys

    (tmp_path / "em.jsonl").write_text("\n".join(EM_ROWS) + "\n")
    (tmp_path / "pass.toml").write_text("[gates]\nexact_match_rate = { min = 0.5 }\n")
    (tmp_path / "fail.toml").write_text("[gates]\nexact_match_rate = { min = 0.51 }\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLUGIN), str(REPO / "src")]), "GOLDEVAL_HOME": str(tmp_path / "home")}

    def goldeval(*args):
        return subprocess.run([sys.executable, "-m", "goldeval", *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600)

    res = goldeval("score", "em.jsonl", "--scorer", "exact_match", "--engine", "spark", "--spark-master", "local[2]",
                   "--gates", "pass.toml", "--out", "spark.json", "--per-case", "cases.parquet", "-q")
    assert res.returncode == 0, res.stderr[-3000:]
    local = goldeval("score", "em.jsonl", "--scorer", "exact_match", "--no-store", "--out", "local.json", "-q")
    assert local.returncode == 0, local.stderr
    on_spark, here = json.loads((tmp_path / "spark.json").read_text()), json.loads((tmp_path / "local.json").read_text())
    agg = on_spark["aggregate"]
    # by hand: rows 1-2 scored, 1 of them matches; lines 3, 4, 5 unscored with their reasons, as locally
    assert (agg["n"], agg["n_scored"], agg["n_exact"], agg["n_failed"], agg["exact_match_rate"]) == (5, 2, 1, 3, 0.5)
    assert agg == here["aggregate"] and on_spark["failures"] == here["failures"]
    assert "em.jsonl:4: id 'a' repeats line 1" in on_spark["failures"][1]["error"]
    assert on_spark["gates"]["passed"] is True and on_spark["engine"]["name"] == "spark"
    # the driver recorded the Spark run and its 3 cases (a, b, c: line 3 has no id); its headline is listed
    listed = goldeval("runs", "list", "--json")
    runs = json.loads(listed.stdout)
    assert [(r["scorer_name"], r["n_recorded"]) for r in runs] == [("exact_match", 3)], listed.stdout
    # a gate above 0.5 fails on the Spark results (exit 1)
    assert goldeval("gate", "spark.json", "--gates", "fail.toml").returncode == 1
    # the per-case Parquet names the run the driver recorded: importing it into the same store, twice, adds no
    # second run (it added one before the Parquet named its run: [3, 3]); its results are that run's
    for _ in range(2):
        imp = goldeval("runs", "import", "cases.parquet", "--out", "imported.json", "-q")
        assert imp.returncode == 0, imp.stderr
    assert json.loads((tmp_path / "imported.json").read_text())["aggregate"] == agg
    runs = json.loads(goldeval("runs", "list", "--json").stdout)
    assert [(r["id"], r["n_recorded"]) for r in runs] == [(on_spark["run"]["id"], 3)], runs


def test_an_attempt_refused_for_a_nan_reads_on_spark_as_locally(spark, tmp_path):
    # The X2 fix on Spark: the refused attempt keeps its id for its case's reason and its row failure, and is
    # neither a repeat of the good attempt with the same id nor repeated by it (as io.check_ids locally).
    from goldeval.engines import spark_judge
    from goldeval.answers.judge import AnswerConfig
    from goldeval.pipeline.files import judge_file

    gold = {"kind": "value", "columns": ["n"], "rows": [[5]]}
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps({"id": i, "question": "How many?", "golden": gold}) + "\n" for i in ("a", "b")))
    (tmp_path / "attempts.jsonl").write_text('{"id": "a", "columns": ["n"], "rows": [[NaN]]}\n'
                                             '{"id": "b", "columns": ["n"], "rows": [[NaN]]}\n'
                                             + json.dumps({"id": "b", "columns": ["n"], "rows": [[5]]}) + "\n")
    cases, attempts = str(tmp_path / "cases.jsonl"), str(tmp_path / "attempts.jsonl")
    per_case, failures = spark_judge.judge(spark, cases, attempts)
    local = judge_file(cases, attempts, config=AnswerConfig())
    assert failures == local["failures"] and [(f["line"], f["id"]) for f in failures] == [(1, "a"), (2, "b")]
    records = {r["id"]: orjson_loads(r["record"]) for r in per_case.select("id", "record").collect()}
    by_id = {c["id"]: c for c in local["per_example"]}
    assert records["a"]["reason"] == by_id["a"]["reason"] and records["a"]["reason"].startswith("attempts.jsonl:1: NaN is not JSON")
    assert records["b"]["verdict"] == by_id["b"]["verdict"] == "match"


_DYING = '''
import os

from goldeval_exact_match import ExactMatch


class Dying(ExactMatch):
    """exact_match, whose Python worker dies (os._exit) on the row with id 'die': an executor failure."""

    name = "dying"

    def score_batch(self, rows, config):
        for rec in super().score_batch(rows, config):
            if rec.get("id") == "die":
                os._exit(1)
            yield rec
'''


def test_a_python_worker_that_dies_is_an_executor_failure_not_a_path_to_check(spark, tmp_path):
    """Issue 25 item 7: a Spark executor that dies was an internal error (exit 3) with Spark's whole Java stack, or,
    when it died while the input was being counted, "Spark cannot read it ... Check the path" (exit 2)."""
    import os
    import subprocess
    import sys

    plugin = tmp_path / "plugin"
    (plugin / "goldeval_dying-0.1.0.dist-info").mkdir(parents=True)
    (plugin / "goldeval_dying.py").write_text(_DYING)
    (plugin / "goldeval_dying-0.1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: goldeval-dying\nVersion: 0.1.0\n")
    (plugin / "goldeval_dying-0.1.0.dist-info" / "entry_points.txt").write_text("[goldeval.scorers]\ndying = goldeval_dying:Dying\n")
    rows = ['{"id": "a", "prediction": "x", "reference": "x"}', '{"id": "die", "prediction": "x", "reference": "x"}',
            '{"id": "b", "prediction": "y", "reference": "x"}']
    (tmp_path / "rows.jsonl").write_text("\n".join(rows) + "\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), str(PLUGIN), *filter(None, [os.environ.get("PYTHONPATH")])]),
           "GOLDEVAL_HOME": str(tmp_path / "home")}
    res = subprocess.run([sys.executable, "-m", "goldeval", "score", "rows.jsonl", "--scorer", "dying", "--engine", "spark",
                          "--spark-master", "local[1]", "--no-store", "-q"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=900)
    line = next((x for x in res.stderr.splitlines() if x.startswith("goldeval:")), res.stderr[-2000:])
    assert res.returncode == 3, res.stderr[-3000:]
    assert line.startswith("goldeval: error: Spark executor failure while scoring rows.jsonl: Python worker exited "
                           "unexpectedly (crashed)."), line
    assert "internal error" not in line and "Check the path" not in line and "\tat org.apache" not in line


def test_a_recorded_spark_run_names_its_run_and_its_parquet_is_not_imported_twice(spark, tmp_path):
    store, other = str(tmp_path / "runs.db"), str(tmp_path / "laptop.db")
    out, per_case = tmp_path / "r.json", tmp_path / "cases.parquet"
    res = CliRunner().invoke(main, ["score", str(PRIMOCK), "--engine", "spark", "--spark-master", "local[2]",
                                    "--store", store, "-q", "--out", str(out), "--per-case", str(per_case)])
    assert res.exit_code == 0, res.output
    results = json.loads(out.read_text())
    runs = json.loads(CliRunner().invoke(main, ["runs", "list", "--store", store, "--json"]).stdout)
    assert len(runs) == 1 and results["run"] == {"id": runs[0]["id"], "arm": None, "store": store}
    # the README's next line: the Parquet is that run, so the store keeps one run of 57 cases
    res = CliRunner().invoke(main, ["runs", "import", str(per_case), "--store", store])
    assert res.exit_code == 0, res.output
    assert f"is run {runs[0]['id']}, recorded in this store when it was scored (57 case(s)); nothing imported" in res.output
    again = json.loads(CliRunner().invoke(main, ["runs", "list", "--store", store, "--json"]).stdout)
    assert [(r["id"], r["n_recorded"]) for r in again] == [(runs[0]["id"], 57)]
    # another store (a laptop) has no such run: the Parquet is imported there as a run of its own
    res = CliRunner().invoke(main, ["runs", "import", str(per_case), "--store", other, "--out", str(tmp_path / "i.json")])
    assert res.exit_code == 0 and "57 case(s) recorded as run" in res.output, res.output
    assert _agg(json.loads((tmp_path / "i.json").read_text())) == _agg(results)
