"""goldeval.pipeline: :func:`goldeval.evaluate` runs a scorer end to end as ``goldeval score`` does — the same
aggregates and gate decision, the same record in the store, resume of an interrupted run — and never prints,
exits or imports the CLI.

The free-text file is written here; its figures are worked out by hand (Open-Scribe token rule, multiset overlap):

    a: "bp 138/86 stable" vs "bp 138/86"  tokens {bp, 138/86, stable} vs {bp, 138/86}: overlap 2, P 2/3, R 1, F1 0.8
    b: "no change"        vs "no change"  P 1, R 1, F1 1
    c: "x"                vs "y"          overlap 0: P 0, R 0, F1 0
    macro means: F1 (0.8 + 1 + 0) / 3 = 0.6, precision (2/3 + 1 + 0) / 3 = 5/9, recall (1 + 1 + 0) / 3 = 2/3
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import goldeval
from goldeval.answers.judge import AnswerConfig
from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.pipeline import Evaluation, Observer
from goldeval.pipeline.judging import judge_answers
from goldeval.pipeline.recording import RunRecording
from goldeval.runs.store import RunStore

ROWS = [
    {"id": "a", "prediction": "bp 138/86 stable", "reference": "bp 138/86"},
    {"id": "b", "prediction": "no change", "reference": "no change"},
    {"id": "c", "prediction": "x", "reference": "y"},
]


@pytest.fixture
def preds(tmp_path):
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def _dod(tmp_path, bound: float):
    path = tmp_path / f"dod_{bound}.toml"
    path.write_text(f"[gates]\nwhole_note_f1_mean = {{ min = {bound} }}\n", encoding="utf-8")
    return path


def test_evaluate_gives_the_hand_worked_means(preds, tmp_path):
    ev = goldeval.evaluate("token_f1", preds, store=str(tmp_path / "runs.db"))
    assert isinstance(ev, Evaluation)
    agg = ev.aggregate
    assert (agg["n"], agg["n_failed"]) == (3, 0)
    assert agg["whole_note_f1_mean"] == pytest.approx(0.6, abs=1e-15)
    assert agg["whole_note_precision_mean"] == pytest.approx(5 / 9, abs=1e-15)
    assert agg["whole_note_recall_mean"] == pytest.approx(2 / 3, abs=1e-15)
    assert [e["id"] for e in ev.results["per_example"]] == ["a", "b", "c"]  # kept by default for a library caller
    assert ev.gate_report is None and ev.exit_code == 0 and ev.passed


@pytest.mark.parametrize(("bound", "code"), [(0.6, 0), (0.61, 1)])  # min is inclusive: 0.6 passes at 0.6, fails at 0.61
def test_evaluate_decides_as_the_cli_does(preds, tmp_path, bound, code):
    dod = _dod(tmp_path, bound)
    ev = goldeval.evaluate("token_f1", preds, gates=dod, store=str(tmp_path / "lib.db"), out=str(tmp_path / "lib.json"))
    assert ev.exit_code == code and ev.gate_report.passed is (code == 0)
    cli_out = tmp_path / "cli.json"
    res = CliRunner().invoke(main, ["score", str(preds), "--gates", str(dod), "--store", str(tmp_path / "cli.db"),
                                    "--out", str(cli_out)])
    assert res.exit_code == code, res.output
    from_cli = json.loads(cli_out.read_text())
    from_lib = json.loads((tmp_path / "lib.json").read_text())
    for results in (from_cli, from_lib):
        results["aggregate"].pop("elapsed_sec")
        results.pop("run")  # (another store, another run id)
        results["gates"]["definition"].pop("path", None)
    assert from_lib == from_cli
    assert from_lib["gates"]["passed"] is (code == 0)


def test_evaluate_records_the_run_with_its_decision(preds, tmp_path):
    store = tmp_path / "runs.db"
    ev = goldeval.evaluate("token_f1", preds, gates=_dod(tmp_path, 0.61), store=str(store), arm="arm-a")
    assert ev.results["run"] == {"id": ev.run_id, "arm": "arm-a", "store": str(store)}
    with RunStore(str(store)) as st:
        run = st.get_run(ev.run_id)
        assert (run["status"], run["scorer_name"], run["arm"], run["n_recorded"]) == ("finished", "token_f1", "arm-a", 3)
        assert run["gates_passed"] is False and run["results"]["gates"]["passed"] is False


def test_record_false_records_nothing(preds, tmp_path):
    ev = goldeval.evaluate("token_f1", preds, record=False)
    assert ev.run_id is None and "run" not in ev.results


class _StopAfterScoring(Observer):
    """Stops the run as Ctrl-C would, after every case is recorded and before the gates finish it."""

    def summary(self, results, scorer):
        raise KeyboardInterrupt


def test_an_interrupted_run_is_resumed_with_its_cases_reused(preds, tmp_path):
    store, dod = str(tmp_path / "runs.db"), _dod(tmp_path, 0.5)
    with pytest.raises(KeyboardInterrupt):
        goldeval.evaluate("token_f1", preds, gates=dod, store=store, observer=_StopAfterScoring())
    with RunStore(store) as st:
        (stopped,) = st.list_runs()
        assert stopped["status"] == "interrupted"
    ev = goldeval.evaluate("token_f1", preds, gates=dod, store=store)
    assert ev.resumed and ev.run_id == stopped["id"]
    assert ev.aggregate["whole_note_f1_mean"] == pytest.approx(0.6, abs=1e-15) and ev.exit_code == 0
    with RunStore(store) as st:
        assert [r["status"] for r in st.list_runs()] == ["finished"]  # the same run, now finished; no second run


def test_a_finished_run_is_not_resumed(preds, tmp_path):
    store = str(tmp_path / "runs.db")
    first = goldeval.evaluate("token_f1", preds, store=store)
    second = goldeval.evaluate("token_f1", preds, store=store)
    assert not second.resumed and second.run_id != first.run_id


def test_observer_sees_note_summary_and_gates_in_order(preds, tmp_path):
    seen = []

    class Watch(Observer):
        def recorded(self, note):
            seen.append(("recorded", note.split()[0]))

        def summary(self, results, scorer):
            seen.append(("summary", scorer.name))

        def gates(self, report):
            seen.append(("gates", report.passed))

    goldeval.evaluate("token_f1", preds, gates=_dod(tmp_path, 0.5), store=str(tmp_path / "r.db"), observer=Watch())
    assert seen == [("recorded", "run"), ("summary", "token_f1"), ("gates", True)]


def test_labels_take_the_positive_label_of_the_definition_of_done(tmp_path):
    # gold / pred: e,e (tp) · e,ok (fn) · ok,e (fp) · ok,ok (tn): precision 1/2, recall 1/2
    path = tmp_path / "labels.jsonl"
    pairs = [("e", "e"), ("e", "ok"), ("ok", "e"), ("ok", "ok")]
    path.write_text("".join(json.dumps({"id": str(i), "gold": g, "pred": p}) + "\n" for i, (g, p) in enumerate(pairs)))
    dod = tmp_path / "dod.toml"
    dod.write_text('positive = "e"\n[gates]\nprecision = { min = 0.5 }\n')
    ev = goldeval.evaluate("labels", path, gates=dod, record=False)
    agg = ev.aggregate
    assert (agg["tp"], agg["fp"], agg["fn"], agg["tn"]) == (1, 1, 1, 1)
    assert agg["precision"] == 0.5 and agg["recall"] == 0.5 and ev.exit_code == 0


@pytest.mark.parametrize(("kernel", "message"), [
    (True, "positive label: none given; labels seen: 'e'"),  # the batch kernel read the file: it names the labels
    (False, "no positive label given"),  # row by row (`score --scorer labels`): refused before anything is read
])
def test_labels_without_a_positive_label_is_refused_and_leaves_no_run(tmp_path, kernel, message):
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"id": "1", "gold": "e", "pred": "e"}) + "\n")
    store = str(tmp_path / "runs.db")
    with pytest.raises(InputError, match=message):
        goldeval.evaluate("labels", path, store=store, batch_kernel=kernel)
    with RunStore(store) as st:
        assert st.list_runs() == []


def test_labels_kernel_and_row_by_row_agree(tmp_path):
    """The labels batch kernel (C reader, `goldeval labels`) and the row-by-row engine (`score --scorer labels`)
    count the same: 5 rows, one without an id (a failure), one with a null prediction (a miss)."""
    path = tmp_path / "labels.jsonl"
    rows = [{"id": "1", "gold": "e", "pred": "e"}, {"id": "2", "gold": "e", "pred": None}, {"gold": "e", "pred": "e"},
            {"id": "4", "gold": "ok", "pred": "e"}, {"id": "5", "gold": "ok", "pred": "ok"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kernel = goldeval.evaluate("labels", path, options={"positive": "e"}, record=False).aggregate
    rows_ = goldeval.evaluate("labels", path, options={"positive": "e"}, record=False, batch_kernel=False).aggregate
    # tp: row 1; fn: row 2 (no prediction); fp: row 4; tn: row 5; row 3 has no id
    assert (kernel["tp"], kernel["fn"], kernel["fp"], kernel["tn"], kernel["n_failed"]) == (1, 1, 1, 1, 1)
    for key in ("tp", "fp", "fn", "tn", "n_scored", "n_failed", "precision", "recall", "missed_per_100", "kappa"):
        assert kernel[key] == rows_[key], key


def test_nothing_scored_is_exit_2_with_the_first_reason(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "a", "prediction": 42, "reference": "x"}) + "\n")
    ev = goldeval.evaluate("token_f1", path, record=False)
    assert ev.exit_code == 2 and not ev.passed
    assert ev.problem.startswith(f"no row of {path} could be scored (1 failed); the first: bad.jsonl:1:")


def test_an_output_over_the_input_is_refused_before_scoring(preds, tmp_path):
    before = preds.read_bytes()
    with pytest.raises(InputError):
        goldeval.evaluate("token_f1", preds, out=str(preds), record=False)
    assert preds.read_bytes() == before


def test_per_case_without_spark_is_refused(preds):
    with pytest.raises(InputError, match="--per-case writes the per-case Parquet of a Spark run"):
        goldeval.evaluate("token_f1", preds, per_case="cases.parquet", record=False)


def test_evaluate_prints_nothing_and_never_loads_the_cli(preds, tmp_path):
    code = (
        "import sys, goldeval\n"
        f"ev = goldeval.evaluate('token_f1', {str(preds)!r}, gates={str(_dod(tmp_path, 0.9))!r}, store={str(tmp_path / 'r.db')!r})\n"
        "sys.stderr.write(repr((ev.exit_code, sorted(m for m in sys.modules if m.startswith('goldeval.cli')))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout == ""
    assert proc.stderr == "(1, [])"  # the gate fails (0.6 < 0.9): decided, not printed; no CLI module loaded


def _library_modules():
    import pathlib

    root = pathlib.Path(goldeval.__file__).parent
    return [p for p in sorted(root.rglob("*.py")) if "cli" not in p.relative_to(root).parts[:1]]


def test_no_library_module_reaches_the_cli():
    """Below cli/ nothing imports goldeval.cli (module level or in a function) nor names a CLI function in a string
    to load it (report/runs.py loaded two CLI renderers by name; spark_judge.py imported cli._llm)."""
    import ast

    reaching = []
    for path in _library_modules():
        if path.name == "__main__.py":
            continue  # `python -m goldeval` is the command itself
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("goldeval.cli."):
                names = [node.value]  # a "module:function" to load (whether goldeval.cli is loaded, _startup asks)
            reaching += [f"{path.name}:{node.lineno} {n}" for n in names if n == "goldeval.cli" or n.startswith("goldeval.cli.")]
    assert reaching == []


def test_runs_show_renders_through_the_scorers_hook(tmp_path):
    """`runs show` of a labels run prints the labels summary (Labels.render_summary), of a free-text run the
    token-F1 summary (TokenF1.render_summary): no table of scorer names in the report."""
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": str(i), "gold": g, "pred": p}) + "\n"
                              for i, (g, p) in enumerate([("e", "e"), ("e", "ok"), ("ok", "ok")])))
    store = str(tmp_path / "runs.db")
    runner = CliRunner()
    assert runner.invoke(main, ["labels", str(labels), "--positive", "e", "--store", store, "-q"]).exit_code == 0
    shown = runner.invoke(main, ["runs", "show", "latest", "--store", store])
    assert shown.exit_code == 0, shown.output
    assert "labels: positive = 'e'" in shown.output and "1 of 2 gold positives" in shown.output


EXAMPLE_SQL = Path(__file__).resolve().parents[2] / "examples" / "sql"


@pytest.mark.parametrize(("bound", "code"), [(1.0, 0), (None, 0)])
def test_judge_answers_gives_the_cli_verdicts_and_records(tmp_path, bound, code):
    """pipeline.judging.judge_answers on the shipped clinic example, arm_a (tests/e2e/test_judge_cli.py lists its
    verdicts: 19 match, 0 no_match, q19's golden verified_wrong, 2 needs_human): pass rate 19/19 = 1.0, recorded,
    the same aggregate as `goldeval judge`."""
    gates = None
    if bound is not None:
        gates = tmp_path / "dod.toml"
        gates.write_text(f"[gates]\npass_rate = {{ min = {bound} }}\n")
    cases, attempts, db = (str(EXAMPLE_SQL / n) for n in ("cases.jsonl", "arm_a.jsonl", "clinic.sqlite"))
    seen = []
    ev = judge_answers(cases, attempts, AnswerConfig(db=db, timeout_s=1), gates=gates,
                       recording=RunRecording(store=str(tmp_path / "runs.db")), on_example=seen.append)
    agg = ev.aggregate
    assert (agg["pass_rate"], agg["match"], agg["decided"], agg["verified_wrong"], agg["needs_human"]) == (1.0, 19, 19, 1, 2)
    assert len(seen) == agg["n"] == 22 and ev.exit_code == code and ev.problem is None
    assert (ev.gate_report is None) is (bound is None)
    with RunStore(str(tmp_path / "runs.db")) as st:
        run = st.get_run(ev.run_id)
        assert (run["status"], run["scorer_name"], run["n_recorded"]) == ("finished", "answer_judge", 22)
    out = tmp_path / "cli.json"
    res = CliRunner().invoke(main, ["judge", cases, attempts, "--db", db, "--timeout", "1", "--no-store", "--out", str(out)])
    assert res.exit_code == 0, res.output
    from_cli = json.loads(out.read_text())["aggregate"]
    assert {k: v for k, v in from_cli.items() if "elapsed" not in k} == {k: v for k, v in agg.items() if "elapsed" not in k}


def test_judge_answers_with_no_case_judged_is_exit_2(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "q1", "question": "how many?", "golden": {"kind": "value", "columns": ["n"],
                                                                                 "rows": [[3]]}}) + "\n")
    attempts = tmp_path / "attempts.jsonl"
    attempts.write_text(json.dumps({"id": "q1", "final_query": "SELECT 3"}) + "\n")  # no --db: the query cannot run
    ev = judge_answers(str(cases), str(attempts), AnswerConfig(), recording=RunRecording(no_store=True))
    assert ev.exit_code == 2 and ev.problem.startswith("no case could be judged (1 cases, 1 unscored); the first: ")
