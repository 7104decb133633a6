"""The one Scorer interface: the three built-ins give today's results through score_batch + aggregate, any split
of the records merges to the same results, and a third-party scorer (tests/plugins/exact_match, found through
its entry point) runs through the CLI, the store and the gates."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import EXAMPLES, REPO
from goldeval.errors import InputError
from goldeval.io import read_rows
from goldeval.scoring.protocol import Option, Scorer
from goldeval.scoring.registry import available_scorers, get_scorer
from goldeval.answers.scorer import join_answer_files
from plugin_rows import EM_ROWS  # (tests/plugin_rows.py)

PRIMOCK = EXAMPLES / "openscribe_primock57_predictions.jsonl"
ACIBENCH = EXAMPLES / "openscribe_acibench_predictions.jsonl"
PILOT = REPO / "examples" / "labels" / "pilot_claims.jsonl"
SQL = REPO / "examples" / "sql"
PLUGIN = REPO / "tests" / "plugins" / "exact_match"


def _no_elapsed(results: dict) -> dict:
    return {**results, "aggregate": {k: v for k, v in results["aggregate"].items() if k != "elapsed_sec"}}


def _split_merge(scorer, records: list, config, cuts=(7, 19)) -> dict:
    """Aggregate *records* as three partials (as engines do), merged in row order."""
    bounds = [0, *cuts, len(records)]
    parts = [scorer.new_partial(config).update(records[a:b]) for a, b in zip(bounds, bounds[1:])]
    head = parts[0]
    for p in parts[1:]:
        head.merge(p)
    return scorer.finish(head, config)


@pytest.mark.parametrize("path", [PRIMOCK, ACIBENCH], ids=["primock57", "acibench"])
def test_token_f1_equals_score_file(path):
    from goldeval.pipeline.files import score_file

    scorer = get_scorer("token_f1")
    config = scorer.configure(source=path.name)
    records = list(scorer.score_batch(read_rows(path), config))
    results = scorer.aggregate(records, config)
    today = score_file(path)
    expected = {k: v for k, v in _no_elapsed(today).items() if k != "input"}
    assert _no_elapsed(results) == expected
    assert _no_elapsed(_split_merge(scorer, records, config)) == expected
    if path == PRIMOCK:  # Open-Scribe's published PriMock57 figure, to the last digit
        assert results["aggregate"]["whole_note_f1_mean"] == 0.27861937781204515


def test_labels_equal_score_label_file():
    from goldeval.labels import score_label_file

    scorer = get_scorer("labels")
    config = scorer.configure(positive="escalate", source=PILOT.name)
    records = list(scorer.score_batch(read_rows(PILOT), config))
    today = score_label_file(PILOT, positive="escalate")
    expected = {k: v for k, v in today.items() if k != "dataset"}
    assert scorer.aggregate(records, config) == expected
    assert _split_merge(scorer, records, config, cuts=(50, 120)) == expected
    agg = expected["aggregate"]
    assert (agg["precision"], agg["recall"], agg["missed"]) == (agg["tp"] / (agg["tp"] + agg["fp"]), agg["tp"] / agg["gold_positives"], agg["fn"])


def test_labels_near_positive_and_second_annotator_match_score_label_rows(tmp_path):
    from goldeval.labels import score_label_file

    rows = [{"id": "1", "gold": "escalate", "pred": "Escalate", "g2": "escalate"},
            {"id": "2", "gold": " escalate", "pred": "approve", "g2": "approve"},
            {"id": "3", "gold": "approve", "g2": 4},
            {"id": "3", "gold": "approve", "pred": "approve"},
            {"id": "4", "gold": None, "pred": "approve"},
            {"id": "5", "gold": "escalate", "pred": "escalate", "g2": "approve"}]
    f = tmp_path / "l.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scorer = get_scorer("labels")
    config = scorer.configure(positive="escalate", second_gold_field="g2", source=f.name)
    records = list(scorer.score_batch(read_rows(f), config))
    expected = {k: v for k, v in score_label_file(f, positive="escalate", second_gold_field="g2").items() if k != "dataset"}
    assert scorer.aggregate(records, config) == expected
    assert _split_merge(scorer, records, config, cuts=(2, 4)) == expected
    # by hand: warnings = line 3 has no pred, gold ' escalate' and pred 'Escalate' look like the positive; failures =
    # line 4 repeats id 3, line 5 has a null gold; the annotators disagree on lines 2, 3 (approve vs "4") and 6
    assert len(expected["warnings"]) == 3 and [f["line"] for f in expected["failures"]] == [4, 5]
    assert [d["line"] for d in expected["disagreements"]] == [2, 3, 6]


def test_answer_judge_equals_judge_file():
    from goldeval.answers.judge import AnswerConfig
    from goldeval.pipeline.files import judge_file

    scorer = get_scorer("answer_judge")
    rows, failures = join_answer_files(str(SQL / "cases.jsonl"), str(SQL / "arm_b.jsonl"))
    config = scorer.configure(db=str(SQL / "clinic.sqlite"), cases_name="cases.jsonl", attempts_name="arm_b.jsonl")
    records = list(scorer.score_batch(rows + [{"row_failure": f} for f in failures], config))
    today = judge_file(SQL / "cases.jsonl", SQL / "arm_b.jsonl", config=AnswerConfig(db=str(SQL / "clinic.sqlite")))
    expected = {k: v for k, v in today.items() if k not in ("inputs", "elapsed_sec")}
    assert scorer.aggregate(records, config) == expected
    assert _split_merge(scorer, records, config, cuts=(5, 11)) == expected


def test_unknown_scorer_and_option_are_refused_with_what_there_is():
    with pytest.raises(InputError, match="no such scorer; there are: answer_judge, .*labels, rouge1, rouge2, rougeL, rougeLsum, semantic_similarity, token_f1"):
        get_scorer("nope")
    with pytest.raises(InputError, match="unknown option.*colour; it takes: id_field, prediction_field"):
        get_scorer("token_f1").configure(colour="red")
    with pytest.raises(InputError, match="unknown tokenizer|tokenizer"):
        get_scorer("token_f1").configure(tokenizer="klingon")


# --- -O KEY=VALUE: each value converted by the type the scorer declares for that option -----------------------


def test_option_text_is_converted_by_the_declared_type():
    labels, judge = get_scorer("labels"), get_scorer("answer_judge")
    # a label is text: "1" stays the string a JSON 1 in the file is read as (labels._label_value), never the number
    assert labels.options_from_text({"positive": "1"}) == {"positive": "1"}
    assert labels.options_from_text({"positive": "true", "gold_field": "2"}) == {"positive": "true", "gold_field": "2"}
    for word, value in (("false", False), ("No", False), ("off", False), ("0", False), ("TRUE", True), ("yes", True), ("1", True)):
        assert labels.options_from_text({"require-positive": word}) == {"require_positive": value}, word
    got = judge.options_from_text({"max_rows": "10", "timeout_s": "2.5", "check_canonical": "false", "db": "1.sqlite"})
    assert got == {"max_rows": 10, "timeout_s": 2.5, "check_canonical": False, "db": "1.sqlite"}
    assert type(got["max_rows"]) is int and type(judge.options_from_text({"timeout_s": "3"})["timeout_s"]) is float
    assert get_scorer("token_f1").options_from_text({"tokenizer": "unicode"}) == {"tokenizer": "unicode"}
    assert labels.options_from_text({}) == {}


def test_an_unknown_option_names_the_scorer_the_key_and_the_options_with_their_types():
    with pytest.raises(InputError) as exc:
        get_scorer("labels").options_from_text({"postive": "1"})
    assert str(exc.value) == (
        "-O postive=1: scorer 'labels' has no option 'postive'; it takes: gold_field (text), id_field (text), "
        "positive (text), pred_field (text), require_positive (true or false), second_gold_field (text).")


@pytest.mark.parametrize("key, text, expected", [
    ("max_rows", "ten", "an integer"),
    ("max_rows", "2.5", "an integer"),
    ("timeout_s", "soon", "a number"),
    ("timeout_s", "nan", "a finite number"),
    ("check_canonical", "maybe", "true or false"),
])
def test_a_bad_value_names_the_scorer_the_key_the_expected_type_and_what_was_given(key, text, expected):
    with pytest.raises(InputError) as exc:
        get_scorer("answer_judge").options_from_text({key: text})
    msg = str(exc.value)
    assert msg.startswith(f"-O {key}={text}: scorer 'answer_judge' option {key!r} expects {expected}, got {text!r}. ")
    assert "the options it takes: attempts_name (text), cases_name (text), check_canonical (true or false), " in msg
    assert "max_rows (an integer)" in msg and "timeout_s (a number)" in msg


def test_options_declared_by_bare_defaults_take_the_default_type_and_none_reads_json():
    class Bare(Scorer):  # a third-party scorer written before Option: its defaults declare the types
        name = "bare"
        options = {"mode": "strict", "k": 3, "alpha": 0.5, "flag": False, "extra": None,
                   "pick": Option("a", str, "one of two", choices=("a", "b"))}

        def score_batch(self, rows, config):
            yield from ()

        def new_partial(self, config, *, keep_cases=True):
            raise NotImplementedError

        def finish(self, partial, config):
            raise NotImplementedError

    bare = Bare()
    got = bare.options_from_text({"mode": "7", "k": "4", "alpha": "1", "flag": "on", "extra": "[1, 2]", "pick": "b"})
    assert got == {"mode": "7", "k": 4, "alpha": 1.0, "flag": True, "extra": [1, 2], "pick": "b"}
    assert bare.options_from_text({"extra": "not json"}) == {"extra": "not json"}  # untyped: JSON when it parses
    with pytest.raises(InputError, match=r"-O pick=c: scorer 'bare' option 'pick' expects one of 'a', 'b', got 'c'"):
        bare.options_from_text({"pick": "c"})
    # configure still fills the defaults from either form
    assert bare.configure() == {"mode": "strict", "k": 3, "alpha": 0.5, "flag": False, "extra": None, "pick": "a",
                                "source": "rows"}
    with pytest.raises(TypeError, match="Option type must be one of"):
        Option(1, complex)


# --- the third-party example scorer, installed by putting its folder (with its .dist-info) on the path --------



def _goldeval(*args: str, cwd, env_extra=None) -> subprocess.CompletedProcess:
    # the plug-in's folder, and this tree's goldeval (not whichever one the interpreter has installed)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLUGIN), str(REPO / "src")]), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "goldeval", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_exact_match_plugin_runs_through_cli_store_and_gates(tmp_path):
    (tmp_path / "em.jsonl").write_text("\n".join(EM_ROWS) + "\n")
    (tmp_path / "pass.toml").write_text("[gates]\nexact_match_rate = { min = 0.5 }\n")
    (tmp_path / "fail.toml").write_text("[gates]\nexact_match_rate = { min = 0.51 }\n")
    res = _goldeval("score", "em.jsonl", "--scorer", "exact_match", "--gates", "pass.toml", "--out", "r.json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    results = json.loads((tmp_path / "r.json").read_text())
    agg = results["aggregate"]
    # by hand: rows 1-2 scored, 1 of them matches; lines 3, 4, 5 unscored with their reasons
    assert (agg["n"], agg["n_scored"], agg["n_exact"], agg["n_failed"], agg["exact_match_rate"]) == (5, 2, 1, 3, 0.5)
    assert [f["line"] for f in results["failures"]] == [3, 4, 5]
    assert "em.jsonl:4: id 'a' repeats line 1" in results["failures"][1]["error"]
    assert results["gates"]["passed"] is True
    # the store holds the run and its cases; `runs list` shows its headline metric
    listed = _goldeval("runs", "list", cwd=tmp_path)
    assert "exact_match_rate 0.50" in listed.stdout, listed.stdout + listed.stderr
    export = _goldeval("runs", "export", "latest", "--format", "json", "--out", "cases.json", cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    cases = json.loads((tmp_path / "cases.json").read_text())
    cases = cases.get("cases", cases) if isinstance(cases, dict) else cases
    assert sorted((c["id"], c["status"]) for c in cases) == [("a", "scored"), ("b", "scored"), ("c", "unscored")]
    # a re-run resumes nothing new and gives the same figures; a gate above 0.5 fails (exit 1), here and in `gate`
    res = _goldeval("score", "em.jsonl", "--scorer", "exact_match", "--gates", "fail.toml", cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    gate = _goldeval("gate", "r.json", "--gates", "fail.toml", cwd=tmp_path)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    # an option of the plugin: exact comparison, so "Paris " no longer matches "Paris"
    res = _goldeval("score", "em.jsonl", "--scorer", "exact_match", "-O", "normalize=none", "--no-store", "--out", "-", "-q", cwd=tmp_path)
    assert json.loads(res.stdout)["aggregate"]["n_exact"] == 0


def test_exact_match_plugin_is_listed_only_when_installed(tmp_path):
    code = "from goldeval.scoring.registry import available_scorers; print(available_scorers())"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}  # this tree's goldeval, without the plug-in
    without = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    with_plugin = subprocess.run([sys.executable, "-c", code], env={**env, "PYTHONPATH": os.pathsep.join([str(PLUGIN), str(REPO / "src")])},
                                 capture_output=True, text=True, timeout=60)
    assert "exact_match" not in without.stdout and "exact_match" in with_plugin.stdout
    assert "exact_match" not in available_scorers() or str(PLUGIN) in sys.path
