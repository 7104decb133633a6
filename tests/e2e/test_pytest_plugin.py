"""goldeval.testing.assert_gates and the pytest plugin's fixture, run the way a user runs them: pytest on an example
test file (pytester), against the labels pilot of the README (4 escalations missed against 2 per 100: FAIL) and
the clinic SQL example's arm A (pass rate 1.000 against 0.90: PASS)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main
from goldeval.testing import assert_gates

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]
LABELS = REPO / "examples" / "labels"
SQL = REPO / "examples" / "sql"
#: The decision line the README prints for the labels pilot.
LABELS_DECISION = ("FAIL: 4 escalations missed (10.0 per 100) against the agreed 2 per 100; on these 40 gold escalations "
                   "the limit allows 0 misses. Precision 0.857 passes 0.80. "
                   # issue 29's warning beside the decision: 36/42 has a Wilson low end of 0.7216, below 0.80
                   "Warning: precision 0.857 passes on the point but not on its 95% Wilson score interval, whose low end is 0.722.")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    d = tmp_path_factory.mktemp("plugin")
    labels, arm_a = d / "labels.json", d / "arm_a.json"
    for args, code in (
        (["labels", LABELS / "pilot_claims.jsonl", "--positive", "escalate", "--store", d / "g.db", "--out", labels], 0),
        (["judge", SQL / "cases.jsonl", SQL / "arm_a.jsonl", "--db", SQL / "clinic.sqlite", "--no-store", "--out", arm_a, "-q"], 0),
    ):
        res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
        assert res.exit_code == code, res.output
    return labels, arm_a


def test_assert_gates_raises_the_plain_decision(results):
    labels, arm_a = results
    with pytest.raises(AssertionError) as info:
        assert_gates(labels, LABELS / "dod.toml")
    assert str(info.value) == LABELS_DECISION
    report = assert_gates(json.loads(arm_a.read_text()), SQL / "dod.toml")  # a dict works as a path does
    assert report.passed and report.summary.startswith("PASS: pass_rate 1.000 passes 0.90")


def test_assert_gates_never_passes_on_no_evidence():
    # a judge run where nothing was decided: pass_rate is undefined, so `pass_rate = { min = 0.90 }` fails
    nothing = {"scorer": {"name": "answer_judge"},
               "aggregate": {"n": 0, "n_scored": 0, "n_failed": 0, "match": 0, "no_match": 0, "decided": 0,
                             "pass_rate": 0.0, "undefined": {"pass_rate": "nothing was decided"}}}
    with pytest.raises(AssertionError, match=r"^FAIL: .*pass_rate"):
        assert_gates(nothing, SQL / "dod.toml")


def test_the_plugin_fixture_in_a_users_test_file(pytester, results):
    labels, arm_a = results
    pytester.makepyfile(test_release=f'''
        from goldeval.testing import assert_gates

        def test_sql_arm_a_meets_the_signed_gates(goldeval_gates):
            goldeval_gates({str(arm_a)!r}, {str(SQL / "dod.toml")!r})

        def test_claims_model_meets_the_signed_gates(goldeval_gates):
            goldeval_gates({str(labels)!r}, {str(LABELS / "dod.toml")!r})

        def test_plain_helper():
            assert_gates({str(labels)!r}, {str(LABELS / "dod.toml")!r})
    ''')
    junit = pytester.path / "pytest-junit.xml"
    # record_property reaches the JUnit file under the xunit1 family (pytest drops it under xunit2)
    res = pytester.runpytest(f"--junitxml={junit}", "-o", "junit_family=xunit1")
    res.assert_outcomes(passed=1, failed=2)
    res.stdout.fnmatch_lines([f"*AssertionError: {LABELS_DECISION}*"])
    from junitparser import JUnitXml, Properties

    cases = {c.name: c for s in JUnitXml.fromfile(str(junit)) for c in s}
    prop = {p.name: p.value for p in cases["test_claims_model_meets_the_signed_gates"].child(Properties)}
    assert prop["goldeval_decision"] == LABELS_DECISION and prop["goldeval_run"]
