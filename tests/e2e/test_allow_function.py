"""``--allow-function NAME`` on ``goldeval judge`` and ``goldeval replay``: a function outside goldeval's read-only
built-ins makes its case unscored with its name and the option that allows it; with the option the case is judged
and the name is recorded in the run's configuration; a hard-refused function stays refused; a name that is not a
function name is a usage error (exit 2).

Source: goldeval issue 25, item 1.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from goldeval.cli import main


@pytest.fixture
def files(tmp_path):
    db = tmp_path / "db.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (n INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(1,), (2,)])
    con.commit()
    con.close()
    cases = [{"id": "c1", "question": "Is there an option NO_SUCH_OPTION?", "golden": {"kind": "value", "columns": ["c"], "rows": [[0]]}},
             {"id": "c2", "question": "How many rows?", "golden": {"kind": "value", "columns": ["n"], "rows": [[2]]}},
             {"id": "c3", "question": "Load it", "golden": {"kind": "value", "columns": ["x"], "rows": [[1]]}}]
    attempts = [{"id": "c1", "final_query": "SELECT sqlite_compileoption_used('NO_SUCH_OPTION') AS c"},
                {"id": "c2", "final_query": "SELECT count(*) AS n FROM t"},
                {"id": "c3", "final_query": "SELECT load_extension('/nonexistent') AS x"}]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "attempts.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attempts))
    return tmp_path


def judge(files, *extra):
    out = files / "r.json"
    res = CliRunner().invoke(main, ["judge", str(files / "cases.jsonl"), str(files / "attempts.jsonl"), "--db",
                                    str(files / "db.sqlite"), "--no-store", "-q", "--out", str(out), *extra])
    return res, (json.loads(out.read_text()) if out.exists() else None)


def test_an_unknown_function_is_unscored_with_the_option_that_allows_it(files):
    res, results = judge(files)
    assert res.exit_code == 0, res.output
    got = {c["id"]: c for c in results["per_example"]}
    assert got["c1"]["status"] == "unscored"
    assert ("refused: the function sqlite_compileoption_used() is not on goldeval's list of read-only built-ins; if it "
            "only reads, allow it with --allow-function sqlite_compileoption_used") in got["c1"]["reason"]
    assert got["c2"]["verdict"] == "match"
    assert "allow_functions" not in results["config"]


def test_allowed_it_is_judged_and_recorded_but_a_hard_refused_one_is_not_allowed(files):
    res, results = judge(files, "--allow-function", "sqlite_compileoption_used", "--allow-function", "load_extension")
    assert res.exit_code == 0, res.output
    got = {c["id"]: c for c in results["per_example"]}
    assert got["c1"]["verdict"] == "match"
    assert got["c3"]["status"] == "unscored"
    assert "load_extension() loads code into the process; goldeval never runs it in a judged query, even with " \
           "--allow-function" in got["c3"]["reason"]
    assert results["config"]["allow_functions"] == ["load_extension", "sqlite_compileoption_used"]


@pytest.mark.parametrize("bad", ["a b", "f()", "x.y.z"])
def test_a_name_that_is_not_a_function_name_is_a_usage_error(files, bad):
    res, _ = judge(files, "--allow-function", bad)
    assert res.exit_code == 2
    assert "--allow-function" in res.output and "expected a function name" in res.output


def test_replay_takes_the_option_as_the_judging_ran(files):
    regressions = files / "regressions.jsonl"
    regressions.write_text(json.dumps({"id": "c1", "answer": {"id": "c1", "final_query": "SELECT sqlite_compileoption_used('NO_SUCH_OPTION') AS c"},
                                       "verdict": "match", "reviewer": "test", "note": "allowed function"}) + "\n")
    args = ["replay", str(regressions), "--cases", str(files / "cases.jsonl"), "--db", str(files / "db.sqlite"),
            "--out", str(files / "replay.json")]
    res = CliRunner().invoke(main, args)
    replay = json.loads((files / "replay.json").read_text())
    assert replay["n_replayed"] + replay["n_failed"] == 1 and replay["n_same"] == 0  # refused without the option
    res = CliRunner().invoke(main, [*args, "--allow-function", "sqlite_compileoption_used"])
    assert res.exit_code == 0, res.output
    replay = json.loads((files / "replay.json").read_text())
    assert (replay["n_replayed"], replay["n_same"], replay["n_changed"]) == (1, 1, 0)


def test_the_spark_engine_refuses_the_option_rather_than_ignoring_it(files):
    res, _ = judge(files, "--allow-function", "sqlite_compileoption_used", "--engine", "spark")
    assert res.exit_code == 2
    assert "--allow-function with --engine spark: not supported yet" in res.output
