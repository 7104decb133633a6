"""`goldeval judge --db-dir DIR`: cases name their database, each database is opened once, a many-database set is
one invocation. Expected verdicts: by hand for the two-database fixture (count(*) of 2 and 1 rows), and for Spider
those of the library judged case by case on each row's own database (examples/spider/judge_spider.py's way)."""

from __future__ import annotations

import json
import sqlite3
import sys

import pytest
from click.testing import CliRunner

from conftest import REPO, SHARED
from goldeval.answers.batch import iter_judged
from goldeval.answers.config import AnswerConfig
from goldeval.answers.databases import DatabaseDir
from goldeval.answers.sql import open_database
from goldeval.cli import main

SPIDER = SHARED / "data" / "spider"


def _db(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (n INTEGER, s TEXT)")
    con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    con.commit()
    con.close()


@pytest.fixture
def two_dbs(tmp_path):
    dbs = tmp_path / "dbs"
    _db(dbs / "one.sqlite", [(1, "a"), (2, "b")])  # 2 rows
    _db(dbs / "two" / "two.sqlite", [(5, "x")])  # Spider's layout, 1 row
    q = {"kind": "value", "canonical_query": "SELECT count(*) FROM t"}
    cases = [{"id": "c1", "question": "How many rows?", "db": "one", "golden": q},
             {"id": "c2", "question": "How many rows?", "db": "two", "golden": q},
             {"id": "c3", "question": "How many rows?", "db": "one", "golden": q},
             {"id": "c4", "question": "How many rows?", "db": "three", "golden": q},
             {"id": "c5", "question": "How many rows?", "db": "../dbs/one", "golden": q}]
    attempts = [{"id": "c1", "final_query": "SELECT count(*) FROM t"},
                {"id": "c2", "final_query": "SELECT count(*) AS n FROM t"},
                {"id": "c3", "final_query": "SELECT 1"},  # wrong on 'one' (2 rows), right on 'two': the db matters
                {"id": "c4", "final_query": "SELECT 1"},
                {"id": "c5", "final_query": "SELECT 2"}]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "attempts.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attempts))
    return tmp_path


def test_each_case_is_judged_on_the_database_it_names(two_dbs):
    out = two_dbs / "r.json"
    res = CliRunner().invoke(main, ["judge", str(two_dbs / "cases.jsonl"), str(two_dbs / "attempts.jsonl"),
                                    "--db-dir", str(two_dbs / "dbs"), "--no-store", "-q", "--out", str(out)])
    assert res.exit_code == 0, res.output
    got = {c["id"]: c for c in json.loads(out.read_text())["per_example"]}
    assert [got[k].get("verdict") for k in ("c1", "c2", "c3")] == ["match", "match", "no_match"]
    assert got["c4"]["status"] == "unscored" and "database 'three' is not under --db-dir" in got["c4"]["reason"]
    assert "three/three.sqlite" in got["c4"]["reason"]
    assert got["c5"]["status"] == "unscored" and "no path), got '../dbs/one'" in got["c5"]["reason"]
    inputs = json.loads(out.read_text())["inputs"]
    assert sorted(inputs["databases"]) == ["one", "two"] and inputs["databases"]["two"]["path"].endswith("two/two.sqlite")


def test_each_database_is_opened_once(two_dbs):
    opened = []

    def open_one(path):
        opened.append(path)
        return open_database(path)

    with DatabaseDir(two_dbs / "dbs", open_one) as dbs:
        results = list(iter_judged(two_dbs / "cases.jsonl", two_dbs / "attempts.jsonl", config=AnswerConfig(), databases=dbs))
    assert len(results) == 5
    assert [p.rsplit("/", 1)[-1] for p in opened] == ["one.sqlite", "two.sqlite"]  # 'one' named twice, opened once


def test_a_named_database_without_db_dir_is_unscored_with_the_fix(two_dbs):
    results = list(iter_judged(two_dbs / "cases.jsonl", two_dbs / "attempts.jsonl", config=AnswerConfig()))
    assert all(r.outcome.status == "unscored" for r in results)
    assert "no --db-dir was given" in results[0].outcome.reason


def test_out_onto_a_named_database_is_refused(two_dbs):
    target = two_dbs / "dbs" / "one.sqlite"
    before = target.read_bytes()
    res = CliRunner().invoke(main, ["judge", str(two_dbs / "cases.jsonl"), str(two_dbs / "attempts.jsonl"),
                                    "--db-dir", str(two_dbs / "dbs"), "--no-store", "-q", "--out", str(target)])
    assert res.exit_code == 2 and "database 'one'" in res.output
    assert target.read_bytes() == before


@pytest.mark.skipif(not (SPIDER / "spider_dinsql-gpt4_cases.jsonl").is_file(), reason="../shared/data/spider is not beside the clone")
def test_spider_in_one_invocation_gives_the_per_database_verdicts(tmp_path):
    sys.path.insert(0, str(REPO / "examples" / "spider"))
    from judge_spider import golden_spec
    from to_cli import convert

    from goldeval.answers.case import judge_case
    from goldeval.answers.sql import ReadOnlyDatabase

    rows = [json.loads(x) for x in (SPIDER / "spider_dinsql-gpt4_cases.jsonl").read_text().splitlines() if x.strip()]
    rows = rows[::6]  # 58 questions, spread over all six databases
    assert len({r["db_id"] for r in rows}) == 6
    cases, attempts = convert(rows)
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "attempts.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attempts))
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["judge", str(tmp_path / "cases.jsonl"), str(tmp_path / "attempts.jsonl"),
                                    "--db-dir", str(SPIDER / "database"), "--timeout", "10", "--no-store", "-q", "--out", str(out)])
    assert res.exit_code == 0, res.output
    got = {c["id"]: c for c in json.loads(out.read_text())["per_example"]}
    cfg = AnswerConfig(timeout_s=10.0)
    for r in rows:
        with ReadOnlyDatabase(SPIDER / "database" / r["db_id"] / f"{r['db_id']}.sqlite", timeout_s=10.0) as db:
            want = judge_case({"id": r["id"], "question": r["question"], "golden": golden_spec(r)},
                              {"id": r["id"], "final_query": r["pred_sql"]}, db=db, config=cfg).outcome.to_dict()
        assert (got[r["id"]]["status"], got[r["id"]].get("verdict")) == (want["status"], want.get("verdict")), r["id"]
        if want["status"] == "scored":
            assert got[r["id"]]["why"] == want["why"], r["id"]


def _judge_db_dir(tmp, names):
    q = {"kind": "value", "canonical_query": "SELECT count(*) FROM t"}
    (tmp / "cases.jsonl").write_text("".join(json.dumps({"id": f"c{i}", "question": "How many rows?", "db": n, "golden": q}) + "\n"
                                             for i, n in enumerate(names)))
    (tmp / "attempts.jsonl").write_text("".join(json.dumps({"id": f"c{i}", "final_query": "SELECT count(*) FROM t"}) + "\n"
                                                for i, _ in enumerate(names)))
    out = tmp / "r.json"
    res = CliRunner().invoke(main, ["judge", str(tmp / "cases.jsonl"), str(tmp / "attempts.jsonl"), "--db-dir",
                                    str(tmp / "dbs"), "--no-store", "-q", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return [c for c in json.loads(out.read_text())["per_example"]], json.loads(out.read_text())["inputs"]


def test_a_name_that_resolves_outside_the_folder_is_refused(tmp_path):
    """Issue 25 item 6: a symbolic link inside --db-dir (to a file, or a folder on the way) that leads out of it
    was opened and judged on; now each such case is unscored with the reason, and a link inside the folder works."""
    _db(tmp_path / "dbs" / "one.sqlite", [(1, "a")])
    _db(tmp_path / "outside" / "secret.sqlite", [(1, "a"), (2, "b"), (3, "c")])
    _db(tmp_path / "outside" / "away" / "away.sqlite", [(1, "a")])
    (tmp_path / "dbs" / "link.sqlite").symlink_to(tmp_path / "outside" / "secret.sqlite")  # absolute target
    (tmp_path / "dbs" / "rel.db").symlink_to("../outside/secret.sqlite")  # relative target, through ..
    (tmp_path / "dbs" / "away").symlink_to(tmp_path / "outside" / "away")  # a folder: away/away.sqlite
    (tmp_path / "dbs" / "alias.sqlite").symlink_to("one.sqlite")  # stays inside: allowed
    cases, inputs = _judge_db_dir(tmp_path, ["link", "rel", "away", "alias", "one"])
    for c in cases[:3]:
        assert c["status"] == "unscored" and "outside --db-dir" in c["reason"] and "symbolic link" in c["reason"], c
    assert [c.get("verdict") for c in cases[3:]] == ["match", "match"]
    assert sorted(inputs["databases"]) == ["alias", "one"]  # nothing outside is read, not even for its sha256


def test_a_name_too_long_or_not_a_plain_name_is_unscored_and_the_rest_is_judged(tmp_path):
    """Issue 25 items 5 and 6: a 'db' name of 256 characters was an internal error (OSError: File name too long)."""
    _db(tmp_path / "dbs" / "one.sqlite", [(1, "a")])
    cases, _ = _judge_db_dir(tmp_path, ["a" * 256, "b" * 249, "x\x00y", "/etc/passwd", "../dbs/one", "one\n", "one"])
    reasons = [c.get("reason") or "" for c in cases]
    assert "names a database of 256 characters, too long for a file name" in reasons[0]
    assert "names a database of 249 characters" in reasons[1]
    assert all("no path), got" in r for r in reasons[2:6]), reasons
    assert cases[-1]["verdict"] == "match"
