"""Per-slice metrics and gates (``--slice-by FIELD``, goldeval.scoring.slices; issue 28 item 4).

Every slice's aggregate must be exactly what the scorer gives on that slice's rows alone: checked against the
published Open-Scribe figures (PriMock57 and ACI-Bench scored as two slices of one file), against the scorer run on
each slice's rows by itself (token F1, labels, the data-answer judge on real Spider answers), and by hand.
"""

from __future__ import annotations

import json
import pickle
import sys

import pytest

from conftest import EXAMPLES, REPO, SHARED
from goldeval.errors import InputError
from goldeval.gates import evaluate_gates, parse_gates
from goldeval.io import read_rows
from goldeval.pipeline.gating import check_slice_gates
from goldeval.report.junit import results_junit
from goldeval.scoring.registry import get_scorer
from goldeval.scoring.slices import BAD_SLICE, NO_SLICE, slice_names, sliced, unsliced

PRIMOCK = EXAMPLES / "openscribe_primock57_predictions.jsonl"
ACIBENCH = EXAMPLES / "openscribe_acibench_predictions.jsonl"
SPIDER = SHARED / "data" / "spider"


def _no_elapsed(agg: dict) -> dict:
    return {k: v for k, v in agg.items() if k != "elapsed_sec"}


# ---------------------------------------------------------------------------------------------------------------
# slice names


def test_slice_names_of_each_kind_of_value():
    assert slice_names("hard") == (["hard"], None)
    assert slice_names(3) == (["3"], None)  # as JSON writes it
    assert slice_names(True) == (["true"], None)
    assert slice_names(0.5) == (["0.5"], None)
    assert slice_names(["b", "a", "b"]) == (["b", "a"], None)  # a tag column: each tag once, in its first order
    for none in (None, "", "   ", [], [None]):
        assert slice_names(none) == ([NO_SLICE], None), none


def test_a_value_that_names_no_slice_says_what_was_expected():
    names, problem = slice_names({"level": 2})
    assert names == [BAD_SLICE] and problem == 'a text, a number or a list of them, got {"level":2}'
    names, problem = slice_names(["a", ["b"]])
    assert names == [BAD_SLICE] and problem == 'a list of texts or numbers, got a list holding ["b"]'


def test_sliced_by_a_blank_field_is_refused():
    with pytest.raises(InputError, match=r"--slice-by: expected the name of a case field"):
        sliced(get_scorer("token_f1"), " ")


def test_a_sliced_scorer_pickles_and_is_still_its_scorer():
    base = get_scorer("token_f1")
    s = sliced(base, "difficulty")
    assert isinstance(s, type(base)) and s.name == "token_f1" and not s.has_batch_kernel
    back = pickle.loads(pickle.dumps(s))
    assert type(back) is type(s) and back.slice_by == "difficulty"
    assert type(unsliced(back)) is type(base)
    assert sliced(s, "db").slice_by == "db"  # re-sliced, not sliced twice


# ---------------------------------------------------------------------------------------------------------------
# token F1: the published figures as two slices of one file


def _two_datasets(tmp_path):
    rows = [{**json.loads(x), "dataset": "primock57"} for x in PRIMOCK.read_text().splitlines() if x.strip()]
    rows += [{**json.loads(x), "dataset": "acibench"} for x in ACIBENCH.read_text().splitlines() if x.strip()]
    path = tmp_path / "both.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, rows


@pytest.mark.parametrize("workers", [1, 2])
def test_token_f1_slices_reproduce_the_published_figures(tmp_path, workers):
    """Open-Scribe's published macro F1: PriMock57 0.27861937781204515 over 57 of 57; ACI-Bench test1
    0.4465338141844892 over 35 scored, 5 failed (DESIGN.md, "Real data"). Scored as slices of one file, on one
    process or two (partials merged across processes), each slice gives its figure to the last digit."""
    from goldeval.engines.local import run

    path, _ = _two_datasets(tmp_path)
    s = sliced(get_scorer("token_f1"), "dataset")
    config = s.configure(source=path.name)
    results = run(s, path, config, workers=workers, keep_cases=False)
    prim, aci = results["slices"]["primock57"], results["slices"]["acibench"]
    assert (prim["whole_note_f1_mean"], prim["n"], prim["n_failed"]) == (0.27861937781204515, 57, 0)
    assert (aci["whole_note_f1_mean"], aci["n"], aci["n_failed"]) == (0.4465338141844892, 35, 5)
    assert list(results["slices"]) == ["acibench", "primock57"] and results["slice_by"] == "dataset"
    assert results["aggregate"]["n"] == 92 and results["aggregate"]["n_failed"] == 5  # the whole is unchanged


def test_token_f1_slice_equals_the_scorer_on_its_rows_alone(tmp_path):
    path, rows = _two_datasets(tmp_path)
    plain = get_scorer("token_f1")
    s = sliced(plain, "dataset")
    config = s.configure(source=path.name)
    results = s.aggregate(s.score_batch(read_rows(path), config), config)
    whole = plain.aggregate(plain.score_batch(read_rows(path), config), config)
    assert _no_elapsed(results["aggregate"]) == _no_elapsed(whole["aggregate"])
    for name in ("primock57", "acibench"):
        alone = [r for r in rows if r["dataset"] == name]
        want = plain.aggregate(plain.score_batch(alone, config), config)["aggregate"]
        assert results["slices"][name] == _no_elapsed(want), name


def test_a_row_without_the_field_is_in_the_none_slice_and_a_bad_value_is_listed():
    s = sliced(get_scorer("token_f1"), "difficulty")
    rows = [{"id": "a", "prediction": "x y", "reference": "x y", "difficulty": "easy"},
            {"id": "b", "prediction": "x", "reference": "x z"},
            {"id": "c", "prediction": "x", "reference": "y", "difficulty": {"level": 3}}]
    config = s.configure()
    results = s.aggregate(s.score_batch(rows, config), config)
    # by hand: a scores F1 1; b P 1, R 1/2, F1 2/3; c no overlap, 0
    assert {k: v["whole_note_f1_mean"] for k, v in results["slices"].items()} == {"easy": 1.0, NO_SLICE: 2 / 3, BAD_SLICE: 0.0}
    assert results["aggregate"]["n"] == 3  # nothing is lost from the whole
    assert results["slice_errors"] == [{"line": 3, "id": "c", "error": (
        "rows:3: field 'difficulty' (--slice-by) must be a text, a number or a list of them, got {\"level\":3}. The "
        "case is scored and counted in the whole, in the slice '(invalid)'; fix the row or slice by another field.")}]
    assert [r["per_example"] for r in [results]][0][1]["slice"] == NO_SLICE


def test_a_tag_list_puts_a_row_in_each_of_its_slices():
    s = sliced(get_scorer("token_f1"), "tags")
    rows = [{"id": "a", "prediction": "x", "reference": "x", "tags": ["cardio", "long"]},
            {"id": "b", "prediction": "x", "reference": "y", "tags": ["cardio"]}]
    config = s.configure()
    results = s.aggregate(s.score_batch(rows, config), config)
    assert {k: (v["n"], v["whole_note_f1_mean"]) for k, v in results["slices"].items()} == {"cardio": (2, 0.5), "long": (1, 1.0)}


# ---------------------------------------------------------------------------------------------------------------
# labels


def _label_rows():
    # slice "a": (y, y) tp, (n, y) fp, (y, n) fn, (n, n) tn; slice "b": no gold positive, no positive predicted
    return [{"id": "1", "gold": "y", "pred": "y", "team": "a"}, {"id": "2", "gold": "n", "pred": "y", "team": "a"},
            {"id": "3", "gold": "y", "pred": "n", "team": "a"}, {"id": "4", "gold": "n", "pred": "n", "team": "a"},
            {"id": "5", "gold": "n", "pred": "n", "team": "b"}, {"id": "6", "gold": "n", "pred": "n", "team": "b"}]


def test_labels_slices_by_hand_and_equal_the_scorer_on_each_slice_alone():
    plain = get_scorer("labels")
    s = sliced(plain, "team")
    config = s.configure(positive="y")
    results = s.aggregate(s.score_batch(_label_rows(), config), config)
    a, b = results["slices"]["a"], results["slices"]["b"]
    # by hand: slice a tp 1 fp 1 fn 1 -> precision 1/2, recall 1/2, missed 1 of 2 gold positives = 50 per 100
    assert (a["precision"], a["recall"], a["missed_per_100"], a["gold_positives"]) == (0.5, 0.5, 50.0, 2)
    # slice b holds no positive at all: a slice may (the whole run has one), precision and recall are undefined
    assert "precision" in b["undefined"] and "recall" in b["undefined"]
    for name in ("a", "b"):
        alone = [r for r in _label_rows() if r["team"] == name]
        want = plain.aggregate(plain.score_batch(alone, config), plain.slice_config(config))["aggregate"]
        assert results["slices"][name] == want, name


def test_a_slice_gate_on_an_undefined_metric_fails_and_a_healthy_one_passes():
    s = sliced(get_scorer("labels"), "team")
    config = s.configure(positive="y")
    results = s.aggregate(s.score_batch(_label_rows(), config), config)
    dod = parse_gates("[gates.slices.a]\nprecision = { min = 0.5 }\n[gates.slices.b]\nprecision = { min = 0.5 }\n",
                      source="dod.toml")
    report = evaluate_gates(results, dod)
    ok, bad = report.results
    assert ok.passed and ok.slice == "a" and ok.observed == 0.5
    assert not bad.passed and bad.slice == "b" and bad.reason.startswith("precision undefined:")
    assert bad.sentence.startswith("slice team = b: precision undefined")
    assert not report.passed


# ---------------------------------------------------------------------------------------------------------------
# gates on slices


def _sliced_answers(slices: dict, slice_by: str = "difficulty") -> dict:
    return {"scorer": {"name": "answer_judge"}, "aggregate": {"pass_rate": 0.9, "match": 9, "no_match": 1, "decided": 10,
                                                             "n": 10, "n_scored": 10, "n_failed": 0, "undefined": {}},
            "slice_by": slice_by, "slices": slices}


def test_slice_gates_parse_with_their_lines():
    dod = parse_gates('[gates]\npass_rate = { min = 0.8 }\n\n[gates.slices.hard]\npass_rate = { min = 0.6, note = "BIRD" }\n'
                      '[gates.slices."(none)"]\npass_rate = { min = 0.5 }\n', source="dod.toml")
    assert [(g.metric, g.slice, g.line, g.note) for g in dod.gates] == [
        ("pass_rate", None, 2, None), ("pass_rate", "hard", 5, "BIRD"), ("pass_rate", "(none)", 7, None)]


def test_slice_gate_refusals_name_the_line():
    with pytest.raises(InputError, match=r"^dod\.toml:2: gate 'pass_rat' is not a metric .*Did you mean 'pass_rate'\?"):
        parse_gates("[gates.slices.hard]\npass_rat = { min = 0.6 }\n", source="dod.toml")
    with pytest.raises(InputError, match=r"^dod\.toml:2: gate 'pass_rate' must be a table of bounds"):
        parse_gates("[gates.slices.hard]\npass_rate = 0.6\n", source="dod.toml")
    with pytest.raises(InputError, match=r"^dod\.toml:2: slice 'hard' must be a table of gates"):
        parse_gates("[gates.slices]\nhard = 0.6\n", source="dod.toml")
    with pytest.raises(InputError, match=r"^dod\.toml:2: gates\.slices must hold one table per slice"):
        parse_gates("[gates]\nslices = 3\n", source="dod.toml")


def test_slice_gate_passes_on_a_healthy_slice_and_fails_below_its_bound():
    dod = parse_gates("[gates.slices.hard]\npass_rate = { min = 0.6 }\n", source="dod.toml")
    hard = {"pass_rate": 0.75, "match": 3, "no_match": 1, "decided": 4, "n": 4, "n_scored": 4, "undefined": {}}
    report = evaluate_gates(_sliced_answers({"hard": hard}), dod)
    assert report.passed and report.results[0].observed == 0.75
    assert report.summary.startswith("PASS: Slice difficulty = hard: pass_rate 0.750 passes 0.6")
    low = {**hard, "pass_rate": 0.5, "match": 2, "no_match": 2}
    report = evaluate_gates(_sliced_answers({"hard": low}), dod)
    assert not report.passed and report.results[0].to_dict()["slice"] == "hard"


def test_a_slice_gate_never_passes_on_an_absent_or_empty_slice():
    dod = parse_gates("[gates.slices.hard]\npass_rate = { min = 0.0 }\n", source="dod.toml")  # even at min 0
    absent = evaluate_gates(_sliced_answers({"easy": {"pass_rate": 1.0, "n": 1, "n_scored": 1}}), dod)
    assert not absent.passed
    assert absent.results[0].reason == ("slice 'hard' is absent: no case has difficulty = 'hard' (slices in this run: "
                                        "'easy')")
    # every case of the slice unscored: nothing decided, nothing scored
    empty = {"pass_rate": 0.0, "match": 0, "no_match": 0, "decided": 0, "n": 2, "n_scored": 0, "unscored": 2,
             "undefined": {"pass_rate": "nothing was decided: no case came out match or no_match"}}
    report = evaluate_gates(_sliced_answers({"hard": empty}), dod)
    assert not report.passed and "nothing was scored" in report.results[0].reason
    unsliced_results = {k: v for k, v in _sliced_answers({}).items() if k not in ("slices", "slice_by")}
    report = evaluate_gates(unsliced_results, dod)
    assert not report.passed and "has no slices" in report.results[0].reason
    failed = evaluate_gates(_sliced_answers({"hard": {"n": 2, "error": "no column 'pred'"}}), dod)
    assert not failed.passed and failed.results[0].reason == "slice 'hard' could not be aggregated: no column 'pred'"


def test_a_whole_run_gate_dict_has_no_slice_key():
    dod = parse_gates("[gates]\npass_rate = { min = 0.5 }\n", source="dod.toml")
    assert "slice" not in evaluate_gates(_sliced_answers({}), dod).results[0].to_dict()


def test_slice_gates_without_slice_by_are_refused_before_scoring():
    dod = parse_gates("[gates]\npass_rate = { min = 0.5 }\n[gates.slices.hard]\npass_rate = { min = 0.6 }\n", source="dod.toml")
    with pytest.raises(InputError, match=r"^dod\.toml:4: gate on 'pass_rate' of slice 'hard' .*Pass --slice-by FIELD"):
        check_slice_gates(dod, None)
    check_slice_gates(dod, "difficulty")  # sliced: accepted
    check_slice_gates(parse_gates("[gates]\npass_rate = { min = 0.5 }\n", source="d"), None)  # no slice gate


# ---------------------------------------------------------------------------------------------------------------
# JUnit


def test_junit_has_a_testcase_per_slice_and_names_slice_gates():
    from junitparser import JUnitXml

    dod = parse_gates("[gates.slices.hard]\npass_rate = { min = 0.6 }\n", source="dod.toml")
    hard = {"pass_rate": 0.5, "match": 2, "no_match": 2, "decided": 4, "n": 4, "n_scored": 4, "undefined": {}}
    empty = {"pass_rate": 0.0, "n": 1, "n_scored": 0, "undefined": {"pass_rate": "nothing was decided"}}
    results = _sliced_answers({"hard": hard, "(none)": empty})
    results["gates"] = evaluate_gates(results, dod).to_dict()
    xml = JUnitXml.fromstring(results_junit(results).decode())
    cases = {(c.classname, c.name): c for suite in xml for c in suite}
    gate = cases[("goldeval.gates", "slice hard: pass_rate >= 0.6")]
    assert gate.result and gate.result[0].message.startswith("slice difficulty = hard: pass_rate 0.500 fails 0.6")
    hard_case = cases[("goldeval.slices", "difficulty = hard")]
    assert not hard_case.result  # a slice's testcase passes: its gate decides
    props = {p.get("name"): p.get("value") for p in hard_case._elem.iter("property")}
    assert props["pass_rate"] == "0.5" and props["n"] == "4"
    none_case = cases[("goldeval.slices", "difficulty = (none)")]
    assert type(none_case.result[0]).__name__ == "Skipped"  # nothing scored: neither a pass nor a fail
    assert {p.get("name"): p.get("value") for p in none_case._elem.iter("property")}["pass_rate"] == "undefined"


# ---------------------------------------------------------------------------------------------------------------
# the data-answer judge on real Spider answers


@pytest.mark.skipif(not (SPIDER / "spider_dinsql-gpt4_cases.jsonl").is_file(), reason="the Spider data are not at hand")
def test_judge_slices_by_db_equal_the_judge_on_each_database_alone(tmp_path):
    """DIN-SQL's GPT-4 answers to every 12th Spider dev question (29 cases over the six databases), judged once with
    --slice-by db: each database's slice is the aggregate of judging that database's cases by themselves."""
    sys.path.insert(0, str(REPO / "examples" / "spider"))
    from to_cli import convert

    from goldeval.answers.config import AnswerConfig
    from goldeval.pipeline.files import judge_file

    rows = [json.loads(x) for x in (SPIDER / "spider_dinsql-gpt4_cases.jsonl").read_text().splitlines() if x.strip()][::12]
    cases, attempts = convert(rows)
    assert len({c["db"] for c in cases}) == 6

    def write(name, subset):
        (tmp_path / f"{name}_cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in subset))
        ids = {c["id"] for c in subset}
        (tmp_path / f"{name}_attempts.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attempts if a["id"] in ids))
        return str(tmp_path / f"{name}_cases.jsonl"), str(tmp_path / f"{name}_attempts.jsonl")

    config = AnswerConfig(db_dir=str(SPIDER / "database"), timeout_s=10.0)
    results = judge_file(*write("all", cases), config=config, slice_by="db")
    assert sorted(results["slices"]) == sorted({c["db"] for c in cases})
    assert all(c["slice"] == c_in["db"] for c, c_in in zip(results["per_example"], cases))
    for db in sorted({c["db"] for c in cases}):
        alone = judge_file(*write(db, [c for c in cases if c["db"] == db]), config=config)
        assert results["slices"][db] == _no_elapsed(alone["aggregate"]), db
    assert sum(v["match"] for v in results["slices"].values()) == results["aggregate"]["match"]


# ---------------------------------------------------------------------------------------------------------------
# the report


def test_report_shows_a_slices_table_and_names_slice_gates():
    from goldeval.report.html import render_html
    from goldeval.report.model import build_model, slices_view

    assert slices_view({"scorer": {"name": "token_f1"}, "aggregate": {}}) is None  # not sliced: no table
    dod = parse_gates("[gates.slices.hard]\npass_rate = { min = 0.6 }\n", source="dod.toml")
    hard = {"pass_rate": 0.5, "match": 2, "no_match": 2, "decided": 4, "n": 4, "n_scored": 4, "undefined": {}}
    empty = {"pass_rate": 0.0, "n": 1, "n_scored": 0, "undefined": {"pass_rate": "nothing was decided"}}
    results = {**_sliced_answers({"hard": hard, "(none)": empty}), "per_example": [], "failures": []}
    results["gates"] = evaluate_gates(results, dod).to_dict()
    model = build_model(results)
    view = model["slices"]
    assert view["field"] == "difficulty" and view["columns"][:2] == ["n", "pass_rate"]
    assert [(r["name"], r["cells"][:2]) for r in view["rows"]] == [("hard", [4, 0.5]), ("(none)", [1, "undefined"])]
    assert model["decision"]["gates"][0]["metric"] == "pass_rate [slice hard]"
    html = render_html(model)
    table = html[html.index('<section id="slices">'):]
    table = table[: table.index("</section>")]
    assert "Per slice of difficulty" in table and "<th>hard</th><td>4</td><td>0.5000</td>" in table
    assert "<th>(none)</th><td>1</td><td>undefined</td>" in table


def test_markdown_summary_has_a_slices_table():
    from goldeval.report.markdown import summary_markdown

    dod = parse_gates("[gates.slices.hard]\npass_rate = { min = 0.6 }\n", source="dod.toml")
    hard = {"pass_rate": 0.5, "match": 2, "no_match": 2, "decided": 4, "n": 4, "n_scored": 4, "undefined": {}}
    empty = {"pass_rate": 0.0, "n": 1, "n_scored": 0, "undefined": {"pass_rate": "nothing was decided"}}
    results = _sliced_answers({"hard": hard, "(none)": empty})
    results["gates"] = evaluate_gates(results, dod).to_dict()
    md = summary_markdown(results)
    assert "| pass\\_rate \\[slice hard\\] | ≥ 0.6 | 0.500 |" in md  # (Markdown's own characters escaped)
    assert "Per slice of difficulty:" in md and "| hard | 4 | 0.5000 |" in md and "| (none) | 1 | undefined |" in md
    assert "Per slice" not in summary_markdown({"scorer": {"name": "token_f1"}, "aggregate": {"n": 1}})


# ---------------------------------------------------------------------------------------------------------------
# a resumed run


class _Recorder:
    def __init__(self, previous):
        self._previous, self.recorded = previous, []

    def previous(self):
        return self._previous

    def record(self, case):
        self.recorded.append(dict(case))

    def finish(self, results):
        pass


@pytest.mark.parametrize("stored_slice", [True, False], ids=["stored-with-slice", "stored-before-slicing"])
def test_a_resumed_run_gives_the_slices_of_a_fresh_run(tmp_path, stored_slice):
    """Half the cases come from the store (reused, not scored again): their slice is the recorded one, or read from
    their row when the run was recorded before --slice-by was given."""
    from goldeval.engines.local import run

    rows = [{"id": f"r{i}", "prediction": "a b" if i % 2 else "a", "reference": "a b", "difficulty": ["easy", "hard"][i % 2]}
            for i in range(6)]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = sliced(get_scorer("token_f1"), "difficulty")
    config = s.configure(source=path.name)
    fresh = run(s, path, config, keep_cases=False)
    first = list(s.score_batch(rows[:3], config))
    previous = {r["id"]: (r if stored_slice else {k: v for k, v in r.items() if k != "slice"}) for r in first}
    rec = _Recorder(previous)
    resumed = run(s, path, config, recorder=rec, keep_cases=False)
    assert [c["id"] for c in rec.recorded] == ["r3", "r4", "r5"]  # the first three were reused
    assert resumed["slices"] == fresh["slices"]
    # by hand: easy rows (even i) score F1 2/3 (P 1, R 1/2), hard rows 1
    assert {k: v["whole_note_f1_mean"] for k, v in resumed["slices"].items()} == {"easy": 2 / 3, "hard": 1.0}


def test_the_console_lists_at_most_max_slices():
    import io

    from rich.console import Console

    from goldeval.scoring.render import render_slices

    results = {"slice_by": "id", "slices": {f"s{i:03d}": {"n": 1, "n_scored": 1} for i in range(60)}}
    out = io.StringIO()
    render_slices(results, Console(file=out, width=100), max_slices=50)
    text = out.getvalue()
    assert "s049" in text and "s050" not in text and "… and 10 more slices" in text
    out = io.StringIO()
    render_slices({"slice_by": "id", "slices": {"a": {"n": 1}}}, Console(file=out, width=100), max_slices=50)
    shown = " ".join(out.getvalue().split())  # (the title wraps at the table's width)
    assert "more slices" not in shown and "per slice of id (1 slice)" in shown
