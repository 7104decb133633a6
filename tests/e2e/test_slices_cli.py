"""``--slice-by FIELD`` on ``score``, ``labels`` and ``judge`` as a user runs them: the results' ``slices``, the
console table, slice gates deciding the exit code, JUnit, and the run store (issue 28 item 4)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from goldeval.cli import main


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _texts(tmp_path):
    # by hand: easy rows score F1 1; the hard row shares 1 of 2 reference tokens with a 1-token prediction
    # (P 1, R 1/2, F1 2/3); the row without a difficulty shares nothing (F1 0)
    return _write(tmp_path / "p.jsonl", [
        {"id": "e1", "prediction": "bp 138/86", "reference": "bp 138/86", "difficulty": "easy"},
        {"id": "e2", "prediction": "no fever", "reference": "no fever", "difficulty": "easy"},
        {"id": "h1", "prediction": "cough", "reference": "dry cough", "difficulty": "hard"},
        {"id": "x1", "prediction": "rash", "reference": "itch"}])


def test_score_slices_in_results_console_and_gates(tmp_path):
    p = _texts(tmp_path)
    dod = tmp_path / "dod.toml"
    dod.write_text("[gates]\nwhole_note_f1_mean = { min = 0.5 }\n[gates.slices.hard]\nwhole_note_f1_mean = { min = 0.6 }\n")
    out, junit = tmp_path / "r.json", tmp_path / "j.xml"
    res = CliRunner().invoke(main, ["score", p, "--slice-by", "difficulty", "--gates", str(dod), "--out", str(out),
                                    "--junit", str(junit)])
    assert res.exit_code == 0, res.output  # whole 2/3 ≥ 0.5 and hard 2/3 ≥ 0.6
    r = json.loads(out.read_text())
    assert r["slice_by"] == "difficulty"
    assert {k: v["whole_note_f1_mean"] for k, v in r["slices"].items()} == {"easy": 1.0, "hard": 2 / 3, "(none)": 0.0}
    assert [e["slice"] for e in r["per_example"]] == ["easy", "easy", "hard", "(none)"]
    assert "per slice of difficulty (3 slices)" in res.output and "Slice difficulty = hard: whole_note_f1_mean 0.667 passes 0.6" in res.output
    xml = junit.read_text()
    assert 'name="difficulty = hard" classname="goldeval.slices"' in xml and 'name="slice hard: whole_note_f1_mean &gt;= 0.6"' in xml
    # the same run against a stricter slice gate fails (exit 1), and against an absent slice too
    dod.write_text("[gates.slices.hard]\nwhole_note_f1_mean = { min = 0.7 }\n")
    res = CliRunner().invoke(main, ["score", p, "--slice-by", "difficulty", "--gates", str(dod), "--no-store", "-q"])
    assert res.exit_code == 1 and "Slice difficulty = hard: whole_note_f1_mean 0.667 fails 0.7" in res.output
    dod.write_text("[gates.slices.medium]\nwhole_note_f1_mean = { min = 0.0 }\n")
    res = CliRunner().invoke(main, ["score", p, "--slice-by", "difficulty", "--gates", str(dod), "--no-store", "-q"])
    assert res.exit_code == 1 and "slice 'medium' is absent: no case has difficulty = 'medium'" in res.output


def test_slice_gates_without_slice_by_are_usage_errors(tmp_path):
    p = _texts(tmp_path)
    dod = tmp_path / "dod.toml"
    dod.write_text("[gates.slices.hard]\nwhole_note_f1_mean = { min = 0.6 }\n")
    res = CliRunner().invoke(main, ["score", p, "--gates", str(dod), "--no-store", "-q"])
    assert res.exit_code == 2 and "Pass --slice-by FIELD" in res.output


def test_a_sliced_run_is_stored_with_its_slices_and_gate_reads_them(tmp_path):
    p = _texts(tmp_path)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["score", p, "--slice-by", "difficulty", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    run_id = json.loads(out.read_text())["run"]["id"]
    stored = tmp_path / "stored.json"
    shown = CliRunner().invoke(main, ["runs", "show", run_id, "--out", str(stored)])
    assert shown.exit_code == 0, shown.output
    assert "per slice of difficulty (3 slices)" in shown.output
    slices = json.loads(stored.read_text())["slices"]
    assert slices["hard"]["whole_note_f1_mean"] == 2 / 3 and slices["(none)"]["n"] == 1
    dod = tmp_path / "dod.toml"
    dod.write_text("[gates.slices.easy]\nwhole_note_f1_mean = { min = 1.0 }\n")
    res = CliRunner().invoke(main, ["gate", str(out), "--gates", str(dod), "-q"])
    assert res.exit_code == 0, res.output


def test_labels_slice_without_positives_is_undefined_and_its_gate_fails(tmp_path):
    rows = [{"id": "1", "gold": "esc", "pred": "esc", "team": "a"}, {"id": "2", "gold": "ok", "pred": "esc", "team": "a"},
            {"id": "3", "gold": "ok", "pred": "ok", "team": "b"}]
    p = _write(tmp_path / "l.jsonl", rows)
    dod = tmp_path / "dod.toml"
    dod.write_text('positive = "esc"\n[gates.slices.a]\nprecision = { min = 0.5 }\n[gates.slices.b]\nrecall = { min = 0.0 }\n')
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["labels", p, "--slice-by", "team", "--gates", str(dod), "--out", str(out), "--no-store"])
    assert res.exit_code == 1, res.output
    r = json.loads(out.read_text())
    assert r["slices"]["a"]["precision"] == 0.5  # by hand: tp 1, fp 1
    assert "recall" in r["slices"]["b"]["undefined"]  # slice b has no gold positive: recall has no evidence
    assert [g["passed"] for g in r["gates"]["gates"]] == [True, False]


def test_judge_slices_by_a_case_field(tmp_path):
    from conftest import REPO

    sql = REPO / "examples" / "sql"
    cases = [json.loads(x) for x in (sql / "cases.jsonl").read_text().splitlines() if x.strip()]
    for i, c in enumerate(cases):
        c["difficulty"] = "hard" if i % 2 else "easy"
    cp = _write(tmp_path / "cases.jsonl", cases)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["judge", cp, str(sql / "arm_a.jsonl"), "--db", str(sql / "clinic.sqlite"),
                                    "--slice-by", "difficulty", "--out", str(out), "--no-store", "-q"])
    assert res.exit_code == 0, res.output
    r = json.loads(out.read_text())
    easy, hard = r["slices"]["easy"], r["slices"]["hard"]
    agg = r["aggregate"]
    for key in ("n", "match", "no_match", "near_match", "needs_human", "unscored", "verified_wrong"):
        assert easy[key] + hard[key] == agg[key], key  # the slices partition the cases
    assert easy["n"] == (len(cases) + 1) // 2
    by_slice = {}
    for e in r["per_example"]:
        by_slice.setdefault(e["slice"], []).append(e["verdict"] if e.get("status") == "scored" else None)
    assert hard["match"] == by_slice["hard"].count("match")


def test_a_third_party_scorer_gets_slices_and_slice_gates(tmp_path):
    """tests/plugins/exact_match, installed through its entry point: nothing in it knows of slices."""
    import os
    import subprocess
    import sys

    from conftest import REPO

    rows = [{"id": "a", "prediction": "Paris ", "reference": "Paris", "lang": "fr"},   # match after strip
            {"id": "b", "prediction": "Lyon", "reference": "Paris", "lang": "fr"},     # no match
            {"id": "c", "prediction": "Rome", "reference": "Rome", "lang": "it"},      # match
            {"id": "a", "prediction": "x", "reference": "x", "lang": "it"}]            # repeats line 1: unscored
    _write(tmp_path / "em.jsonl", rows)
    (tmp_path / "dod.toml").write_text("[gates.slices.fr]\nexact_match_rate = { min = 0.6 }\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "tests" / "plugins" / "exact_match"), str(REPO / "src")]),
           "GOLDEVAL_HOME": str(tmp_path / "home")}
    res = subprocess.run([sys.executable, "-m", "goldeval", "score", "em.jsonl", "--scorer", "exact_match", "--slice-by",
                          "lang", "--gates", "dod.toml", "--out", "r.json"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 1, res.stdout + res.stderr  # by hand: fr 1 of 2 = 0.5 < 0.6
    r = json.loads((tmp_path / "r.json").read_text())
    fr, it = r["slices"]["fr"], r["slices"]["it"]
    assert (fr["n"], fr["n_exact"], fr["exact_match_rate"]) == (2, 1, 0.5)
    assert (it["n"], it["n_scored"], it["n_failed"], it["exact_match_rate"]) == (2, 1, 1, 1.0)  # the repeat counts, unscored
    assert "Slice lang = fr: exact_match_rate 0.500 fails 0.6" in res.stdout
