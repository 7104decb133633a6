"""Messages a newcomer found unclear (issue 10 item 11, "words a new user tripped on"): each names the file, the
field and what to do, and the exit code is the usage one (2) where nothing could be used.

* ``{"id": null, ...}`` is a null id, not a "missing" one (the field is there: "missing" sent the user looking for
  a field their file has);
* ``goldeval gate`` on a results file that is ``{}`` (or another tool's JSON) names the file and what is missing;
* ``goldeval score --scorer labels`` without a positive label says how to give one on that command (``score`` has
  no ``--positive``; it said "Pass --positive LABEL"), and takes the one a ``--gates`` file agrees, as ``labels``
  does (it said "set positive in the gates file" while the gates file set it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]
CLAIMS = REPO / "examples" / "labels" / "pilot_claims.jsonl"
DOD = REPO / "examples" / "labels" / "dod.toml"


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _failures(out: Path) -> dict[int, str]:
    return {f["line"]: f["error"] for f in json.loads(out.read_text())["failures"]}


def test_a_null_id_is_called_null_and_an_absent_one_missing(tmp_path):
    text = tmp_path / "t.jsonl"
    text.write_text('{"id": null, "prediction": "a", "reference": "a"}\n{"prediction": "a", "reference": "a"}\n'
                    '{"id": "x", "prediction": "a", "reference": "a"}\n')
    labels = tmp_path / "l.jsonl"
    labels.write_text('{"id": null, "gold": "y", "pred": "y"}\n{"gold": "y", "pred": "y"}\n{"id": "x", "gold": "y", "pred": "y"}\n')
    out = tmp_path / "r.json"
    assert invoke("score", text, "--no-store", "-q", "--out", out).exit_code == 0
    f = _failures(out)
    assert f[1] == ("t.jsonl:1: field 'id' must be a non-empty string (or an integer), it is null. Give every row a "
                    "stable id, or name the id field with --id-field.")
    # the fields the row has are named, so a misspelt or differently cased id field shows itself
    assert ("field 'id' must be a non-empty string (or an integer), it is missing (the row has 'prediction', "
            "'reference').") in f[2]
    for cmd in (["labels", labels, "--positive", "y"], ["score", labels, "--scorer", "labels", "-O", "positive=y"]):
        assert invoke(*cmd, "--no-store", "-q", "--out", out).exit_code == 0
        f = _failures(out)
        assert f[1] == "l.jsonl:1: field 'id' must be a non-empty string, it is null. Give every row a stable id."
        assert f[2] == ("l.jsonl:2: field 'id' must be a non-empty string, it is missing (the row has 'gold', 'pred'). "
                        "Give every row a stable id.")


def test_a_null_id_in_a_judge_case_file_is_called_null(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": null, "question": "How many?", "golden": {"kind": "value", "columns": ["n"], "rows": [[1]]}}\n'
                     '{"id": "q2", "question": "How many?", "golden": {"kind": "value", "columns": ["n"], "rows": [[1]]}}\n')
    attempts = tmp_path / "attempts.jsonl"
    attempts.write_text('{"id": "q2", "columns": ["n"], "rows": [[1]]}\n')
    out = tmp_path / "r.json"
    r = invoke("judge", cases, attempts, "--no-store", "-q", "--out", out)
    assert r.exit_code == 0, r.output
    assert "cases.jsonl:1: field 'id' must be a non-empty string, it is null." in json.dumps(json.loads(out.read_text()))


@pytest.mark.parametrize(("content", "said"), [
    ("{}", "it has no 'aggregate' object (the figures a gate reads) and no 'scorer' (the scorer that wrote it); it is an empty object {}"),
    ('{"name": "eslint", "errors": 3}', "it has no 'aggregate' object (the figures a gate reads) and no 'scorer' (the scorer that wrote it); it holds 'name', 'errors'"),
    ('{"scorer": {"name": "labels"}, "aggregate": [1]}', "its 'aggregate' is list, not an object of the figures a gate reads; it holds 'scorer', 'aggregate'"),
])
def test_gate_on_a_file_goldeval_did_not_write_names_it_and_what_is_missing(tmp_path, content, said):
    f = tmp_path / "other.json"
    f.write_text(content)
    r = invoke("gate", f, "--gates", DOD)
    assert r.exit_code == 2
    assert r.stderr.startswith(f"goldeval: error: {f}: not a goldeval results file: {said}. Pass the JSON a goldeval "
                               "scoring command wrote with --out"), r.stderr


def test_assert_gates_on_an_empty_results_file_names_it(tmp_path):
    from goldeval.errors import InputError
    from goldeval.testing import assert_gates

    f = tmp_path / "results.json"
    f.write_text("{}")
    with pytest.raises(InputError, match=r"results\.json: not a goldeval results file: it has no 'aggregate' object"):
        assert_gates(f, DOD)


def test_score_with_the_labels_scorer_says_how_to_give_the_positive_label(tmp_path):
    store = tmp_path / "g.db"
    r = invoke("score", CLAIMS, "--scorer", "labels", "--store", store)
    assert r.exit_code == 2
    assert ("score --scorer labels: no positive label given. Pass -O positive=LABEL (e.g. -O positive=escalate), or "
            "--gates with a definition of done that sets positive") in r.stderr
    assert not store.exists()  # refused before anything was recorded (item 7: no junk run)
    r = invoke("score", CLAIMS, "--scorer", "labels", "-O", "positive=Escalate", "--no-store")
    assert r.exit_code == 2
    # the file is named, not an option `score` does not have
    assert "pilot_claims.jsonl: the positive label 'Escalate' occurs in neither gold nor pred" in r.stderr
    assert "--positive" not in r.stderr
    r = invoke("score", CLAIMS, "--scorer", "labels", "--gates", DOD, "-O", "positive=approve", "--no-store")
    assert r.exit_code == 2 and "-O positive=approve: the definition of done" in r.stderr


def test_score_with_the_labels_scorer_takes_the_agreed_positive_from_the_gates(tmp_path):
    # examples/labels/dod.toml agrees positive = "escalate": the same decision as `goldeval labels` (README: 4 of 40
    # escalations missed, 10.0 per 100 against 2 per 100: FAIL, exit 1; precision 36/42 = 0.857 passes 0.80)
    out = tmp_path / "r.json"
    r = invoke("score", CLAIMS, "--scorer", "labels", "--gates", DOD, "--no-store", "-q", "--out", out)
    assert r.exit_code == 1, r.output
    res = json.loads(out.read_text())
    assert (res["aggregate"]["missed"], res["aggregate"]["gold_positives"]) == (4, 40)
    assert res["aggregate"]["precision"] == 36 / 42
    assert res["gates"]["passed"] is False


def test_report_of_a_results_file_without_per_case_records_says_where_they_are(tmp_path):
    # `goldeval score --engine spark --out results.json --per-case cases.parquet` (README, "Past one machine") writes
    # the per-case records to the Parquet file; `goldeval report --results results.json` said "an object without
    # 'scorer' and 'per_example'" of a file that has 'scorer'. The keys below are the ones that command writes.
    spark = tmp_path / "results.json"
    spark.write_text(json.dumps({"scorer": {"name": "token_f1", "version": "1"}, "aggregate": {"n": 57},
                                 "failures": [], "engine": {"name": "spark", "partitions": 2, "master": "local[2]"}}))
    r = invoke("report", "--results", spark, "--out", tmp_path / "r.html")
    assert r.exit_code == 2
    assert "a Spark run's results file holds no per-case records (they went to its --per-case file)" in r.stderr
    assert "goldeval runs import CASES.parquet" in r.stderr
    other = tmp_path / "other.json"
    other.write_text('{"aggregate": {}}')
    r = invoke("report", "--results", other, "--out", tmp_path / "r.html")
    assert r.exit_code == 2 and "but it has no 'scorer' and no 'per_example'" in r.stderr
    assert not (tmp_path / "r.html").exists()


def test_the_scorer_interface_id_check_says_null_too():
    # goldeval.scoring.protocol.check_id: the id rule third-party scorers get (tests/plugins/exact_match)
    from goldeval.scoring.protocol import check_id

    assert check_id({"id": None, "x": 1}, "id", "p.jsonl:3")[1].startswith(
        "p.jsonl:3: field 'id' must be a non-empty string (or an integer), it is null.")
    assert "it is missing" in check_id({"x": 1}, "id", "p.jsonl:4")[1]
    assert check_id({"id": 7}, "id", "p.jsonl:5") == ("7", None)


def test_a_csv_separated_by_semicolons_or_tabs_is_named_as_such(tmp_path):
    # A fresh-user run: a spreadsheet's CSV export with ';' (many locales) read 'semi.csv:2: field 'id' must be a
    # non-empty string (or an integer), it is missing.' - the row's one field 'id;prediction;reference' was not shown.
    # The message now names that field and the separator; a comma CSV missing its id lists the fields it has.
    for name, sep, said in (("semi.csv", ";", "';'"), ("tab.csv", "\t", "tabs")):
        f = tmp_path / name
        f.write_text(sep.join(["id", "prediction", "reference"]) + "\n" + sep.join(["1", "a b", "a b"]) + "\n")
        r = invoke("score", f, "--no-store", "-q")
        assert r.exit_code == 2  # no row could be scored
        assert f"{name}:2: field 'id' must be a non-empty string (or an integer), it is missing (the row has one field " in r.stderr
        assert f"the file looks separated by {said}, and CSV is read with commas; save it comma-separated)" in r.stderr
    f = tmp_path / "upper.csv"
    f.write_text("ID,prediction,reference\n1,a,a\n")
    r = invoke("score", f, "--no-store", "-q")
    assert "upper.csv:2: field 'id' must be a non-empty string (or an integer), it is missing (the row has 'ID', " \
           "'prediction', 'reference')." in r.stderr


def test_a_labels_file_given_to_score_says_which_command_reads_it(tmp_path):
    # A fresh-user run: `goldeval score examples/labels/pilot_claims.jsonl` failed every row with "field 'prediction'
    # is missing (the row has 'id', 'gold', 'pred')" and no word of the labels command those rows are written for.
    f = tmp_path / "claims.jsonl"
    f.write_text('{"id": "1", "gold": "escalate", "pred": "approve"}\n')
    r = invoke("score", f, "--no-store", "-q")
    assert r.exit_code == 2
    assert ("claims.jsonl:1: field 'prediction' is missing (the row has 'id', 'gold', 'pred'). Add it, or name the "
            "prediction field with --prediction-field. A row of 'gold' and 'pred' labels is scored by goldeval labels "
            "FILE --positive LABEL (or score --scorer labels).") in r.stderr


def test_a_device_given_for_a_database_or_a_gates_file_is_named_as_such(tmp_path):
    # A fresh-user run: `judge ... --db /dev/null` read "/dev/null: no such file (the db input)" (it is there: a
    # device), and `score ... --gates /dev/null` asked for "rows, e.g. one JSON object per line" (a gates file is TOML).
    sql = Path(__file__).resolve().parents[2] / "examples" / "sql"
    r = invoke("judge", sql / "cases.jsonl", sql / "arm_a.jsonl", "--db", "/dev/null", "-q")
    assert r.exit_code == 2
    assert "/dev/null: not a regular file (the db input is read as a file, and this is a character device)" in r.stderr
    f = tmp_path / "t.jsonl"
    f.write_text('{"id": "1", "prediction": "a", "reference": "a"}\n')
    r = invoke("score", f, "--gates", "/dev/null", "-q")
    assert r.exit_code == 2
    assert "--gates /dev/null: read as a stream, and nothing was read (the device was empty). Expected the definition " \
           "of done (TOML: agreed_by, [gates] ...)" in r.stderr
