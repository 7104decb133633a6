"""`goldeval judge` as a user runs it, on the shipped clinic example (examples/sql)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]
EX = REPO / "examples" / "sql"

# What each arm must come out as, case by case (the reason is the rule each case was written to exercise).
ARM_A = {
    "q01": "match",        # columns swapped and renamed (admissions_count, ward_name): paired by name and values
    "q02": "match",        # duplicates kept: 14 admissions, Cardiology 4 times
    "q03": "match",        # ordered; Oncology/Geriatrics tie at 49 and come in the other order
    "q04": "match",        # unrounded 11.880165… within the golden's 2-decimal display precision (11.88 ± 0.005)
    "q05": "match",        # emergency share given as a percentage (34.17… for 0.3417…): a rate column
    "q06": "match",        # prose: "79 admissions" (2024 is in the question, not an answer)
    "q07": "match",        # extra column n does not reduce a containing answer
    "q08": "match",        # top 2 with a tie at 40: Site B instead of Site C, checked against the tie rows (no secondary key pins it)
    "q09": "match",        # unanswerable: declines and names the missing field
    "q10": "match",        # extra columns n_admissions, min_cost
    "q11": "needs_human",  # rows right, ssn only in a comment/string; a prose mustNotUse entry needs the LLM judge
    "q12": "match",        # renamed columns (dept, spend): paired by values, no name evidence
    "q13": "needs_human",  # criteria golden
    "q14": "match",        # right count; the rubric's PREFERRED/ACCEPT clauses do not move a match
    "q15": "match",        # prose: 24 beds
    "q16": "match",
    "q17": "match",        # COUNT cast to TEXT: "128" is 128
    "q18": "match",        # NULL head nurse for Surgery meets NULL
    "q19": "no_match",     # right answer (0.252) against a golden typed in as 135: gold_status verified_wrong
    "q20": "match",        # '2024-01-01 00:00:00' is the date 2024-01-01
    "q21": "match",
    "q22": "match",
}
ARM_B = {
    "q01": "no_match",     # COUNT(DISTINCT patient_id): one column off
    "q02": "no_match",     # DISTINCT drops duplicate admissions (multiset)
    "q03": "no_match",     # ascending where highest first was asked
    "q04": "no_match",     # rate over all admissions (11.5) instead of discharged ones (11.88)
    "q05": "no_match",     # a count (n_emergency) where a rate was asked: roles conflict, column missing
    "q06": "no_match",     # prose 81 vs 79; the grader-aimed text after [END DATA] is ignored
    "q07": "no_match",     # a count where the month was asked
    "q08": "no_match",     # bottom 2 instead of top 2: boundary 20 instead of 40
    "q09": "near_match",   # generic refusal on an unanswerable question
    "q10": "no_match",     # refusal against a value golden
    "q11": "no_match",     # reads patients.ssn through a CTE alias: mustNotUse veto
    "q12": "no_match",     # cost in cents: uniformly scaled ×100
    "q13": "needs_human",  # criteria golden
    "q14": "needs_human",  # counted by discharge date (301): an ACCEPT clause may cover it
    "q15": "no_match",     # hedge: "either 22 or 24"
    "q16": "unscored",     # no such column: ward_name
    "q17": "unscored",     # DELETE refused by the read-only connection
    "q18": "no_match",     # '' for a NULL head nurse
    "q19": "no_match",     # percentage against a share golden of 135 (verified_wrong)
    "q20": "no_match",     # MAX instead of MIN date
    "q21": "no_match",     # every ward listed: extra rows are not containment
    "q22": "unscored",     # runaway recursive query stopped at the time limit
}


def _run(arm: str, tmp_path: Path, *extra: str):
    out = tmp_path / f"{arm}.json"
    result = CliRunner().invoke(main, ["judge", str(EX / "cases.jsonl"), str(EX / f"{arm}.jsonl"), "--db", str(EX / "clinic.sqlite"),
                                       "--timeout", "1", "--no-store", "--out", str(out), *extra])
    return result, out


@pytest.mark.parametrize("arm,expected", [("arm_a", ARM_A), ("arm_b", ARM_B)])
def test_example_arms(tmp_path: Path, arm: str, expected: dict) -> None:
    before = (EX / "clinic.sqlite").read_bytes()
    result, out = _run(arm, tmp_path)
    assert result.exit_code == 0, result.output
    res = json.loads(out.read_text())
    got = {c["id"]: (c["verdict"] if c["status"] == "scored" else "unscored") for c in res["per_example"]}
    assert got == expected
    assert (EX / "clinic.sqlite").read_bytes() == before  # the DELETE of arm_b changed nothing
    assert "pass rate" in result.output
    agg = res["aggregate"]
    if arm == "arm_a":
        # 19 match, 0 no_match (q19's golden is verified_wrong, so it is counted beside, not in, the rate).
        assert (agg["pass_rate"], agg["match"], agg["decided"], agg["verified_wrong"], agg["needs_human"]) == (1.0, 19, 19, 1, 2)
        q19 = next(c for c in res["per_example"] if c["id"] == "q19")
        assert q19["gold_status"] == "verified_wrong"
    else:
        # 0 match of 15 decided; near_match 1, needs_human 2, unscored 3, verified_wrong 1: 15+1+2+3+1 = 22.
        assert (agg["pass_rate"], agg["decided"], agg["near_match"], agg["needs_human"], agg["unscored"]) == (0.0, 15, 1, 2, 3)


def test_json_to_stdout(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["judge", str(EX / "cases.jsonl"), str(EX / "arm_a.jsonl"), "--db", str(EX / "clinic.sqlite"),
                                       "--no-store", "--out", "-", "--quiet"])
    assert result.exit_code == 0
    res = json.loads(result.stdout)
    assert set(res) >= {"scorer", "aggregate", "per_example", "failures", "config", "inputs"}
    assert set(res["aggregate"]) >= {"pass_rate", "match", "no_match", "near_match", "needs_human", "unscored", "verified_wrong",
                                     "n", "n_scored", "n_failed", "undefined"}


def test_bad_input_exits_2(tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(main, ["judge", str(tmp_path / "missing.jsonl"), str(EX / "arm_a.jsonl"), "--no-store"])
    assert r.exit_code == 2 and "no such file" in r.output
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database" * 20)
    r = runner.invoke(main, ["judge", str(EX / "cases.jsonl"), str(EX / "arm_a.jsonl"), "--db", str(junk), "--no-store"])
    assert r.exit_code == 2 and "not a SQLite database" in r.output


def test_run_is_recorded_in_the_store(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    r = CliRunner().invoke(main, ["judge", str(EX / "cases.jsonl"), str(EX / "arm_b.jsonl"), "--db", str(EX / "clinic.sqlite"),
                                  "--timeout", "1", "--store", str(store), "--arm", "arm_b", "--quiet"])
    assert r.exit_code == 0, r.output
    con = sqlite3.connect(store)
    tables = {t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    con.close()
    assert tables, "the run store holds tables after a recorded run"


def test_rebuilding_the_example_gives_the_same_data(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(EX / "make_db.py"), "--out", str(tmp_path)], check=True, capture_output=True)
    assert (tmp_path / "cases.jsonl").read_text() == (EX / "cases.jsonl").read_text()

    def dump(p: Path) -> list:
        con = sqlite3.connect(p)
        out = [list(con.execute(f"SELECT * FROM {t} ORDER BY 1")) for t in ("wards", "patients", "admissions", "trial_enrollments")]
        con.close()
        return out

    rebuilt, shipped = dump(tmp_path / "clinic.sqlite"), dump(EX / "clinic.sqlite")
    assert rebuilt == shipped
    assert [len(t) for t in shipped] == [6, 1500, 4000, 181]


def test_judge_gates_on_pass_rate(tmp_path):
    # The shipped example: arm A decides 19 cases, all match (pass rate 1.0); `pass_rate = { min = 0.9 }` passes (0).
    # Arm B (hand-written to exercise the no_match rules) falls below it and fails (exit 1). The gate report is in
    # the JSON either way.
    from click.testing import CliRunner

    from goldeval.cli import main

    ex = Path(__file__).resolve().parents[2] / "examples" / "sql"
    dod = tmp_path / "dod.toml"
    dod.write_text('agreed_by = "Analytics lead"\nagreed_on = 2026-11-20\n[gates]\npass_rate = { min = 0.9 }\n')
    for arm, code in (("arm_a.jsonl", 0), ("arm_b.jsonl", 1)):
        out = tmp_path / f"{arm}.json"
        res = CliRunner().invoke(main, ["judge", str(ex / "cases.jsonl"), str(ex / arm), "--db", str(ex / "clinic.sqlite"),
                                        "--gates", str(dod), "--out", str(out), "--no-store", "-q"])
        assert res.exit_code == code, res.output
        data = json.loads(out.read_text())
        assert data["gates"]["passed"] is (code == 0)


def test_judge_with_no_case_judged_exits_2(tmp_path):
    # Found by a newcomer: cases and attempts given in the wrong order made all 22 cases unscored, exit 0.
    from click.testing import CliRunner

    from goldeval.cli import main

    ex = Path(__file__).resolve().parents[2] / "examples" / "sql"
    res = CliRunner().invoke(main, ["judge", str(ex / "arm_a.jsonl"), str(ex / "cases.jsonl"), "--db", str(ex / "clinic.sqlite"), "--no-store", "-q"])
    assert res.exit_code == 2
    assert "no case could be judged (22 cases, 22 unscored)" in res.stderr and "argument order" in res.stderr


def test_judge_dry_run_without_llm_is_a_usage_error(tmp_path):
    from click.testing import CliRunner

    from goldeval.cli import main

    ex = Path(__file__).resolve().parents[2] / "examples" / "sql"
    res = CliRunner().invoke(main, ["judge", str(ex / "cases.jsonl"), str(ex / "arm_a.jsonl"), "--dry-run", "--no-store"])
    assert res.exit_code == 2 and "give --llm MODEL" in res.stderr
