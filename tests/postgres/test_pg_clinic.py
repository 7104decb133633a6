"""The clinic example on PostgreSQL: the same data, and the same verdicts for both arms as on SQLite.

The database is written by the example's own build script (``make_db.py --postgres URL``). The arms' queries
are SQLite SQL (``strftime``, ``ROUND`` on a double, ``SUM`` of a comparison); they run translated
(``--sql-dialect sqlite``): the arms are the recorded evidence of what the model wrote, so they are judged as
written, not as someone ported them. As written, without translation, five cases of each arm fail on PostgreSQL
(``strftime`` / ``round(double precision, integer)`` / ``sum(boolean)`` do not exist there), which the last test
pins, so the choice is visible.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from goldeval.answers.judge import AnswerConfig
from goldeval.pipeline.files import judge_file

EX = Path(__file__).resolve().parents[2] / "examples" / "sql"
TABLES = ("wards", "patients", "admissions", "trial_enrollments")


@pytest.fixture(scope="module")
def clinic(pg, tmp_path_factory):
    pg.create_database("clinic")
    out = tmp_path_factory.mktemp("clinic_build")
    subprocess.run([sys.executable, str(EX / "make_db.py"), "--out", str(out), "--postgres", pg.url("clinic")],
                   check=True, capture_output=True, text=True)
    pg.grant_read("clinic")
    return pg


def test_the_build_script_writes_the_same_rows_to_postgres(clinic):
    con = sqlite3.connect(EX / "clinic.sqlite")
    with clinic.admin("clinic") as pgc:
        for t in TABLES:
            lite = [tuple(r) for r in con.execute(f"SELECT * FROM {t} ORDER BY 1")]
            pg_rows = [tuple(r) for r in pgc.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()]
            assert pg_rows == lite, t
    con.close()
    assert len(lite) == 181  # trial_enrollments, the last table (make_db.py: SITES sums to 181)


def _verdicts(results):
    return {c["id"]: (c["status"], c.get("verdict"), c.get("gold_status")) for c in results["per_example"]}


@pytest.mark.parametrize("arm", ["arm_a.jsonl", "arm_b.jsonl"])
def test_the_arms_get_the_same_verdicts_on_postgres_as_on_sqlite(clinic, arm):
    # arm_b q22 is an endless recursive CTE: a 1 s limit stops it on both engines.
    lite = judge_file(EX / "cases.jsonl", EX / arm, config=AnswerConfig(db=str(EX / "clinic.sqlite"), timeout_s=1))
    pg = judge_file(EX / "cases.jsonl", EX / arm, config=AnswerConfig(db=clinic.url("clinic", role="ro"), timeout_s=1,
                                                                        sql_dialect="sqlite"))
    assert len(_verdicts(lite)) == 22
    assert _verdicts(pg) == _verdicts(lite)
    assert pg["aggregate"] == {**lite["aggregate"]}
    # the README's figures for the example: arm A 19 match / 19 decided, arm B below the 0.90 gate
    if arm == "arm_a.jsonl":
        assert (pg["aggregate"]["match"], pg["aggregate"]["decided"]) == (19, 19)
    assert pg["inputs"]["db_identity"]["database"] == "clinic" and pg["inputs"]["db_sha256"] is None


def test_written_sqlite_sql_without_translation_fails_on_five_cases_per_arm(clinic):
    for arm in ("arm_a.jsonl", "arm_b.jsonl"):
        lite = _verdicts(judge_file(EX / "cases.jsonl", EX / arm, config=AnswerConfig(db=str(EX / "clinic.sqlite"), timeout_s=1)))
        raw = _verdicts(judge_file(EX / "cases.jsonl", EX / arm, config=AnswerConfig(db=clinic.url("clinic", role="ro"), timeout_s=1)))
        differ = sorted(k for k in lite if lite[k] != raw[k])
        # arm A: q07 strftime, q10/q12 round(double, int), q19 avg(boolean); q05 the canonical query (SUM of a
        # comparison) fails, so its golden turns suspect. Arm B: q05 sum(boolean), q07 strftime, q19 avg(boolean);
        # q10/q12 the canonical queries' round(double, int).
        assert differ == ["q05", "q07", "q10", "q12", "q19"], (arm, differ)


@pytest.mark.parametrize("dialect", [None, "sqlite"])
def test_must_not_use_sees_select_star_through_the_catalog(clinic, dialect):
    """``SELECT *`` over patients reads patients.ssn: the schema comes from PostgreSQL's catalog, as SQLite's does."""
    from goldeval.answers.judge import judge_case
    from goldeval.answers.postgres import PostgresDatabase
    from goldeval.answers.sql import ReadOnlyDatabase

    case = {"id": "m1", "question": "How many patients are there?", "must_not_use": ["patients.ssn"],
            "golden": {"kind": "value", "columns": ["n"], "rows": [[1500]]}}
    star = {"id": "m1", "final_query": "SELECT count(*) AS n FROM (SELECT * FROM patients) AS p"}
    plain = {"id": "m1", "final_query": "SELECT count(patient_id) AS n FROM patients"}
    with PostgresDatabase(clinic.url("clinic", role="ro"), sql_dialect=dialect) as pg, ReadOnlyDatabase(EX / "clinic.sqlite") as lite:
        assert pg.schema()["patients"] == ["patient_id", "sex", "birth_year", "age", "ssn", "postcode"]
        for db in (lite, pg):
            v = judge_case(case, star, db=db).outcome.verdict
            assert v.verdict == "no_match" and "patients.ssn" in v.why, (db.engine, v.why)
            assert judge_case(case, plain, db=db).outcome.verdict.verdict == "match", db.engine
