"""The data-answer judge on Spark (local[2]): the clinic example's verdicts and accounting identical to the local
judge, malformed rows reported the same way, and the LLM stage on the driver sending only the undecided cases."""

from __future__ import annotations

import json

import orjson
import pytest
from click.testing import CliRunner

from conftest import REPO
from goldeval.answers.judge import AnswerConfig
from goldeval.pipeline.files import judge_file
from goldeval.cli import main

SQL = REPO / "examples" / "sql"


def _records(per_case):
    return {r["id"]: {k: v for k, v in orjson.loads(r["record"]).items() if k != "line"} for r in per_case.select("id", "record").collect()}


@pytest.mark.parametrize("arm", ["arm_a.jsonl", "arm_b.jsonl"])
def test_clinic_verdicts_are_identical_on_spark(spark, arm):
    from goldeval.engines import spark as gs
    from goldeval.engines import spark_judge

    cases, attempts, db = str(SQL / "cases.jsonl"), str(SQL / arm), str(SQL / "clinic.sqlite")
    per_case, failures = spark_judge.judge(spark, cases, attempts, db=db)
    local = judge_file(cases, attempts, config=AnswerConfig(db=db))
    assert _records(per_case) == {r["id"]: r for r in local["per_example"]}  # every verdict, why and pairing
    results = gs.aggregate(per_case)
    results["aggregate"]["n_row_failures"] = len(failures)
    assert results["aggregate"] == local["aggregate"] and failures == local["failures"] == []


def test_malformed_rows_are_reported_as_locally(spark, tmp_path):
    from goldeval.engines import spark_judge

    case_rows = (SQL / "cases.jsonl").read_text().splitlines()[:6]
    att_rows = (SQL / "arm_a.jsonl").read_text().splitlines()[:6]
    case_rows[2] = "{broken"                                   # cases line 3: not JSON
    case_rows.append(case_rows[0])                             # cases line 7: repeats line 1's id
    att_rows[4] = json.dumps({"final_query": "SELECT 1"})      # attempts line 5: no id
    att_rows.append(json.dumps({"id": "nobody", "text": "x"})) # attempts line 7: no such case
    (tmp_path / "cases.jsonl").write_text("\n".join(case_rows) + "\n")
    (tmp_path / "attempts.jsonl").write_text("\n".join(att_rows) + "\n")
    cases, attempts, db = str(tmp_path / "cases.jsonl"), str(tmp_path / "attempts.jsonl"), str(SQL / "clinic.sqlite")
    per_case, failures = spark_judge.judge(spark, cases, attempts, db=db)
    local = judge_file(cases, attempts, config=AnswerConfig(db=db))
    assert failures == local["failures"]
    # by hand: the case file's bad rows by line, the attempt file's, then the attempts left without a case (line 3's
    # case is the broken row, line 7 names no case)
    assert [(f["file"], f["line"]) for f in failures] == [("cases.jsonl", 3), ("cases.jsonl", 7), ("attempts.jsonl", 5),
                                                          ("attempts.jsonl", 3), ("attempts.jsonl", 7)]
    assert _records(per_case) == {r["id"]: r for r in local["per_example"]}


def test_cli_judge_engine_spark_gates_like_local(spark, tmp_path):
    for arm, code in (("arm_a.jsonl", 0), ("arm_b.jsonl", 1)):  # examples/sql/README: arm A passes its gate, arm B fails
        args = ["judge", str(SQL / "cases.jsonl"), str(SQL / arm), "--db", str(SQL / "clinic.sqlite"),
                "--gates", str(SQL / "dod.toml"), "-q"]
        local = CliRunner().invoke(main, [*args, "--no-store", "--out", str(tmp_path / "l.json")])
        on_spark = CliRunner().invoke(main, [*args, "--engine", "spark", "--out", str(tmp_path / "s.json")])
        assert (local.exit_code, on_spark.exit_code) == (code, code), on_spark.output
        lagg = json.loads((tmp_path / "l.json").read_text())["aggregate"]
        sagg = json.loads((tmp_path / "s.json").read_text())["aggregate"]
        assert sagg == lagg
    listed = json.loads(CliRunner().invoke(main, ["runs", "list", "--json"]).stdout)
    assert [r["n_recorded"] for r in listed] == [22, 22]  # both Spark runs recorded, every case


def test_llm_stage_on_the_driver_sends_only_the_undecided(spark, tmp_path, monkeypatch):
    pytest.importorskip("openai")
    from fake_openai_server import FakeOpenAI, Reply

    cases, attempts, db = str(SQL / "cases.jsonl"), str(SQL / "arm_a.jsonl"), str(SQL / "clinic.sqlite")
    local_rules = judge_file(cases, attempts, config=AnswerConfig(db=db))
    undecided = sum(1 for r in local_rules["per_example"] if r.get("needs_human"))
    assert undecided == 2  # the README's arm A: needs_human 2

    def reply(req):
        return Reply(content='{"verdict": "match", "confidence": 9, "why": "The answer gives the asked values."}')

    outs = {}
    with FakeOpenAI(default=reply) as srv:
        for engine in ("local", "spark"):
            monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / engine))  # a fresh judge cache: every call goes out
            calls = srv.calls
            res = CliRunner().invoke(main, ["judge", cases, attempts, "--db", db, "--llm", "judge-model", "--base-url", srv.base_url,
                                            "--engine", engine, "--no-store", "-q", "--out", str(tmp_path / f"{engine}.json")])
            assert res.exit_code == 0, res.output
            assert srv.calls - calls == undecided  # only the cases the rules left undecided reach the LLM
            outs[engine] = json.loads((tmp_path / f"{engine}.json").read_text())
    la, sa = outs["local"]["aggregate"], outs["spark"]["aggregate"]
    for key in ("pass_rate", "match", "no_match", "decided", "near_match", "needs_human", "unscored", "verified_wrong", "n"):
        assert sa[key] == la[key], key


@pytest.mark.parametrize(("extra", "named"), [
    (["--db-dir", "."], "--db-dir with --engine spark: not supported yet"),
    (["--sql-dialect", "sqlite"], "--sql-dialect with --engine spark: not supported yet"),
    (["--llm", "judge-model", "--llm-send", "all"], "--llm-send all with --engine spark: not supported"),
])
def test_what_the_spark_judge_does_not_take_is_refused_before_spark_starts(tmp_path, extra, named):
    # No Spark session is needed (and none is started): the refusal comes first, exit 2, with what to do.
    res = CliRunner().invoke(main, ["judge", str(SQL / "cases.jsonl"), str(SQL / "arm_a.jsonl"), "--engine", "spark",
                                    "--no-store", *extra])
    assert res.exit_code == 2, res.output
    assert named in res.output and ("Judge locally" in res.output or "judge locally" in res.output)


def test_alternative_goldens_decide_on_spark_as_locally(spark, tmp_path):
    # Singers Joe 52, Tim 32, Rose 40: "over 40" is {Joe} (the primary, strictly) or {Joe, Rose} (the alternative,
    # "40 and over"). q1 answers inclusively (the alternative decides), q2 strictly (the primary decides).
    import sqlite3

    from goldeval.engines import spark_judge

    db = tmp_path / "s.sqlite"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE singer (name TEXT, age INTEGER); INSERT INTO singer VALUES ('Joe', 52), ('Tim', 32), ('Rose', 40);")
    con.commit()
    con.close()
    golden = {"canonical_query": "SELECT name FROM singer WHERE age > 40",
              "alternatives": [{"canonical_query": "SELECT name FROM singer WHERE age >= 40"}]}
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps({"id": i, "question": "Which singers are over 40?", "golden": golden}) + "\n"
                                                  for i in ("q1", "q2")))
    (tmp_path / "attempts.jsonl").write_text(
        json.dumps({"id": "q1", "final_query": "SELECT name FROM singer WHERE age >= 40"}) + "\n"
        + json.dumps({"id": "q2", "final_query": "SELECT name FROM singer WHERE age > 40"}) + "\n")
    cases, attempts = str(tmp_path / "cases.jsonl"), str(tmp_path / "attempts.jsonl")
    per_case, failures = spark_judge.judge(spark, cases, attempts, db=str(db))
    local = judge_file(cases, attempts, config=AnswerConfig(db=str(db)))
    got = _records(per_case)
    assert got == {r["id"]: r for r in local["per_example"]} and failures == []
    assert (got["q1"]["golden_used"], got["q2"]["golden_used"]) == ("alternatives[0]", "primary")
