"""Alternative goldens as a user meets them: ``goldeval judge`` over a case file whose goldens carry
``alternatives`` (the local engine and the store), ``goldeval compare`` of two runs in which a case's deciding
golden moved, and a case file with a malformed alternative.

The database: singers Joe 52, Tim 32, Rose 40, Ann 25. "Over 40" is {Joe} read strictly (the primary golden) and
{Joe, Rose} read as "40 and over" (the alternative). Arm A answers strictly, arm B inclusively.

Source: goldeval issue 26, item 5.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from goldeval.cli import main

STRICT = "SELECT name FROM singer WHERE age > 40"
INCLUSIVE = "SELECT name FROM singer WHERE age >= 40"


def _files(tmp_path: Path) -> dict[str, Path]:
    db = tmp_path / "singers.sqlite"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE singer (name TEXT, age INTEGER);"
                      "INSERT INTO singer VALUES ('Joe', 52), ('Tim', 32), ('Rose', 40), ('Ann', 25);")
    con.commit()
    con.close()
    q = "Which singers are over 40?"
    rows = {
        "cases.jsonl": [
            {"id": "q1", "question": q, "golden": {"canonical_query": STRICT, "alternatives": [{"canonical_query": INCLUSIVE}]}},
            {"id": "q2", "question": q, "golden": {"canonical_query": STRICT}},
        ],
        "arm_a.jsonl": [{"id": "q1", "final_query": STRICT}, {"id": "q2", "final_query": STRICT}],
        "arm_b.jsonl": [{"id": "q1", "final_query": INCLUSIVE}, {"id": "q2", "final_query": STRICT}],
        "bad_cases.jsonl": [
            {"id": "q1", "question": q, "golden": {"canonical_query": STRICT, "alternatives": [{"columns": ["name"], "rows": "Joe"}]}},
            {"id": "q2", "question": q, "golden": {"canonical_query": STRICT}},
        ],
    }
    out = {"db": db}
    for name, lines in rows.items():
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
        out[name] = tmp_path / name
    return out


def _invoke(*args: object) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_judge_names_the_golden_that_decided_and_compare_shows_it_moved(tmp_path):
    f = _files(tmp_path)
    store = tmp_path / "g.db"
    for arm in ("arm_a", "arm_b"):
        res = _invoke("judge", f["cases.jsonl"], f[f"{arm}.jsonl"], "--db", f["db"], "--store", store, "--arm", arm,
                      "--out", tmp_path / f"{arm}.json", "-q")
        assert res.exit_code == 0, res.output
    a = {c["id"]: c for c in json.loads((tmp_path / "arm_a.json").read_text())["per_example"]}
    b = {c["id"]: c for c in json.loads((tmp_path / "arm_b.json").read_text())["per_example"]}
    # q1: arm A's {Joe} is the primary's match, arm B's {Joe, Rose} the alternative's; q2 has no alternative.
    assert (a["q1"]["verdict"], a["q1"]["golden_used"]) == ("match", "primary")
    assert (b["q1"]["verdict"], b["q1"]["golden_used"]) == ("match", "alternatives[0]")
    assert [g["verdict"] for g in b["q1"]["golden_verdicts"]] == ["no_match", "match"]
    assert "golden_used" not in a["q2"] and "golden_verdicts" not in b["q2"]
    # compare reads the records back from the store: the same pass rate, q1 decided by another golden
    res = _invoke("compare", "latest~1", "latest", "--store", store, "--out", tmp_path / "cmp.json")
    assert res.exit_code == 0, res.output
    assert "deciding golden changed: 1 (q1 primary → alternatives[0])" in " ".join(res.output.split())
    cmp = json.loads((tmp_path / "cmp.json").read_text())
    assert cmp["verdicts"]["golden_changed"] == [{"id": "q1", "a": "primary", "b": "alternatives[0]"}]
    assert cmp["verdicts"]["stayed"]["pass"] == ["q1", "q2"]


def test_a_malformed_alternative_is_one_unscored_case_named_by_line_and_field(tmp_path):
    f = _files(tmp_path)
    res = _invoke("judge", f["bad_cases.jsonl"], f["arm_a.jsonl"], "--db", f["db"], "--no-store", "--out", tmp_path / "r.json")
    assert res.exit_code == 0, res.output  # the other case is judged, so the run stands
    text = " ".join(res.output.split())
    assert "bad_cases.jsonl:1 (id 'q1') golden.alternatives[0].rows: must be a list of rows" in text
    out = json.loads((tmp_path / "r.json").read_text())
    assert (out["aggregate"]["unscored"], out["aggregate"]["match"], out["aggregate"]["n_failed"]) == (1, 1, 1)
