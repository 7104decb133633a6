"""The page across runs (:mod:`goldeval.report.runs_page`): which runs it holds, each run's headline and interval,
what changed between two runs of an arm, and the page's markup and CSP. Each rule both ways.

The runs are recorded in a temporary store from tiny token-F1 inputs whose F1 is worked out by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from goldeval.errors import InputError
from goldeval.report.html import render_runs_html
from goldeval.report.model import headline_summary
from goldeval.report.runs_page import measurement_changes, parse_since, runs_model
from goldeval.runs.store import RunStore
from goldeval.cli import main
from click.testing import CliRunner


def record(tmp_path, store, name, rows, *args):
    f = tmp_path / f"{name}.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = CliRunner().invoke(main, ["score", str(f), "--store", str(store), "-q", *args])
    assert res.exit_code == 0, res.output


# "x y" against "x": P = 1/2, R = 1, F1 = 2/3; "x" against "x": F1 = 1; the mean over the two rows is 5/6
TWO = [{"id": "a", "prediction": "x y", "reference": "x"}, {"id": "b", "prediction": "x", "reference": "x"}]
# "z" against "x": no overlap, F1 = 0; the mean with row b is 1/2
WORSE = [{"id": "a", "prediction": "z", "reference": "x"}, {"id": "b", "prediction": "x", "reference": "x"}]


@pytest.fixture()
def store(tmp_path):
    path = tmp_path / "runs.db"
    record(tmp_path, path, "two", TWO, "--arm", "alpha")
    record(tmp_path, path, "worse", WORSE, "--arm", "alpha")
    record(tmp_path, path, "two_b", TWO, "--arm", "beta")
    return path


def test_every_run_is_a_row_with_the_headline_its_report_shows(store):
    with RunStore.open_existing(store) as st:
        m = runs_model(st)
        assert m["n_runs"] == 3 and [r["arm"] for r in m["rows"]] == ["beta", "alpha", "alpha"]  # newest first
        values = [r["value"] for r in m["rows"]]
        assert values == pytest.approx([5 / 6, 1 / 2, 5 / 6])
        # the interval is the one the run's own report shows (the same function, the same seed)
        newest = st.get_run(m["rows"][0]["id"])
        assert m["rows"][0]["ci"] == headline_summary(newest["results"])["ci"]
        assert m["rows"][0]["headline"] == "whole-note F1 (macro)" and m["rows"][0]["gates"] is None
    # one chart per arm, oldest run first; the alpha arm's dataset changed between its two runs (another file)
    assert [(a["arm"], a["n_runs"]) for a in m["arms"]] == [("alpha", 2), ("beta", 1)]
    alpha = m["arms"][0]
    assert [c["fields"] for c in alpha["changes"]] == [["dataset"]] and "<svg" in alpha["chart"]
    assert m["rows"][1]["changed"][0].startswith("dataset ")  # the newer alpha run says what changed
    assert m["rows"][2]["changed"] == [] and m["arms"][1]["changes"] == []  # a first run, and beta's only run


def test_arm_and_since_choose_the_runs_and_nothing_matching_is_refused(store):
    with RunStore.open_existing(store) as st:
        assert [r["arm"] for r in runs_model(st, arm="beta")["rows"]] == ["beta"]
        assert runs_model(st, since=datetime(2000, 1, 1, tzinfo=UTC))["n_runs"] == 3
        with pytest.raises(InputError, match=r"no run in store .* matches --since 2999-01-01T00:00:00\+00:00; drop a filter"):
            runs_model(st, since=parse_since("2999-01-01"))
        with pytest.raises(InputError, match="matches --arm gamma"):
            runs_model(st, arm="gamma")


def test_tag_chooses_the_runs_that_carry_it_or_a_tag_under_it(store):
    with RunStore.open_existing(store) as st:
        runs = [r["id"] for r in st.list_runs()]  # newest first: beta, alpha (worse), alpha (two)
    with RunStore(store) as st:
        st.tag(runs[2], "release/2026-11")
        st.tag(runs[1], "release/2026-12")
        st.tag(runs[0], "releases")
    with RunStore.open_existing(store) as st:
        assert [r["id"] for r in runs_model(st, tag="release/")["rows"]] == [runs[1], runs[2]]
        assert [r["id"] for r in runs_model(st, tag="releases")["rows"]] == [runs[0]]
        m = runs_model(st, tag="release/2026-12")
        assert [r["id"] for r in m["rows"]] == [runs[1]] and m["rows"][0]["tags"] == ["release/2026-12"]
        with pytest.raises(InputError, match="matches --tag nightly/"):
            runs_model(st, tag="nightly/")


def test_parse_since_reads_dates_and_times_in_utc_and_refuses_the_rest():
    assert parse_since("2026-12-01") == datetime(2026, 12, 1, tzinfo=UTC)
    assert parse_since("2026-12-01T09:30+02:00") == datetime(2026, 12, 1, 7, 30, tzinfo=UTC)
    with pytest.raises(InputError, match=r"--since 'yesterday': expected a date \(2026-12-01\)"):
        parse_since("yesterday")


def test_measurement_changes_names_what_moved_and_nothing_else():
    a = {"judge_version": "1.5.0", "rubric_hash": "r" * 64, "dataset_hash": "d" * 64, "scorer_version": "1", "tokenizer": None}
    assert measurement_changes(a, dict(a)) == []
    b = {**a, "judge_version": "1.6.0", "rubric_hash": "s" * 64}
    assert measurement_changes(a, b) == ["judge 1.5.0 → 1.6.0", f"rubric {'r' * 12} → {'s' * 12}"]


def test_the_page_is_one_file_under_the_report_csp_with_every_value_escaped(store, tmp_path):
    record(tmp_path, store, "hostile", TWO, "--arm", "<script>alert(1)</script>")
    with RunStore.open_existing(store) as st:
        html = render_runs_html(runs_model(st))
    assert "default-src &#39;none&#39;" in html and "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<tr class=\"run ") == 4 and html.count("<figure class=\"chart arm-chart\"") == 3


def test_timeline_draws_the_markers_and_the_gate_and_skips_a_run_without_a_value():
    from goldeval.report import charts

    t0 = datetime(2026, 12, 1, tzinfo=UTC)
    points = [{"when": t0, "value": 0.5, "low": 0.4, "high": 0.6, "passed": False},
              {"when": t0.replace(day=2), "value": None, "low": None, "high": None, "passed": None},
              {"when": t0.replace(day=3), "value": 0.9, "low": 0.8, "high": 1.0, "passed": True}]
    svg = charts.timeline(points, title="arm: pass rate", ylabel="pass rate", changes=[(t0.replace(day=2), "1 judge")],
                          gate=("min", 0.8))
    assert "1 judge" in svg and "gate min 0.8" in svg and "arm: pass rate" in svg
    # two points drawn, each named in the SVG; the run without a value is skipped
    assert svg.count('id="run-point-') == 2 and 'id="run-point-3"' not in svg
    assert "no run has a value" in charts.timeline([points[1]], title="t", ylabel="y")


def test_a_run_that_did_not_finish_is_a_row_with_its_status_and_no_point(store):
    from goldeval.runs.store import RunMeta

    with RunStore(store) as st:
        unfinished = st.create_run(RunMeta(run_key="k", scorer_name="token_f1", scorer_version="1", dataset_hash="d",
                                           arm="alpha"))
        st.set_status(unfinished, "interrupted")
    with RunStore.open_existing(store) as st:
        m = runs_model(st)
    row = next(r for r in m["rows"] if r["id"] == unfinished)
    assert row["status"] == "interrupted" and row["value"] is None and row["headline"] is None
    html = render_runs_html(m)
    assert "(interrupted)" in html
    # the alpha arm's chart still holds its two finished runs; the unfinished run has no headline, so no chart
    alpha = next(a for a in m["arms"] if a["arm"] == "alpha" and a["headline"])
    assert alpha["n_points"] == 2
    assert next(a for a in m["arms"] if a["headline"] is None)["chart"] is None


def test_a_slices_gate_is_named_as_the_slices_and_never_drawn_as_the_headlines_gate(tmp_path):
    # TWO scored with --slice-by difficulty (a: hard, F1 2/3; b: easy, F1 1) under a whole-run gate
    # whole_note_f1_mean >= 0.5 (5/6 passes) and a slice gate [gates.slices.hard] whole_note_f1_mean >= 0.9 (2/3 fails).
    # The arm's timeline plots the whole run's F1, so its dashed line is the whole run's 0.5; the slice's line is listed
    # with its slice named (it read "whole_note_f1_mean 0.667 >= 0.9", as if the whole run had failed it).
    path = tmp_path / "runs.db"
    rows = [{**TWO[0], "difficulty": "hard"}, {**TWO[1], "difficulty": "easy"}]
    f = tmp_path / "two.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    dod = tmp_path / "dod.toml"
    dod.write_text("[gates]\nwhole_note_f1_mean = { min = 0.5 }\n[gates.slices.hard]\nwhole_note_f1_mean = { min = 0.9 }\n")
    res = CliRunner().invoke(main, ["score", str(f), "--store", str(path), "-q", "--slice-by", "difficulty", "--gates",
                                    str(dod), "--arm", "alpha"])
    assert res.exit_code == 1, res.output  # the slice's gate fails
    with RunStore.open_existing(path) as st:
        m = runs_model(st)
    lines = m["rows"][0]["gate_lines"]
    assert [(g["slice"], g["limit"], g["passed"]) for g in lines] == [(None, 0.5, True), ("hard", 0.9, False)]
    assert lines[1]["text"].startswith("whole_note_f1_mean [slice hard] ") and "[slice" not in lines[0]["text"]
    chart = m["arms"][0]["chart"]
    assert "gate min 0.5" in chart and "gate min 0.9" not in chart
