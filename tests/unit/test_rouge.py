"""The ROUGE scorers (rouge1, rouge2, rougeL, rougeLsum): equal to Google's rouge-score 0.1.2 to the last digit on the
shipped PriMock57 and ACI-Bench predictions, with and without its stemmer (rouge-score itself is the oracle, run
in the test); hand-worked values; sections; the exact, mergeable aggregation; options, gates and the CLI.

Shipped data: examples/data/openscribe_primock57_predictions.jsonl (57 rows) and openscribe_acibench_predictions.jsonl
(40 rows, 5 without a prediction), Open-Scribe's published runs (CC BY 4.0, see examples/data/LICENSE-NOTES.md).
"""

from __future__ import annotations

import json
import statistics

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES
from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.freetext.rouge import ROUGE_TYPES, rouge, rouge_pairs
from goldeval.io import read_rows
from goldeval.scoring.registry import get_scorer

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")  # the oracle (the `test` extra installs it)

PRIMOCK = EXAMPLES / "openscribe_primock57_predictions.jsonl"
ACI = EXAMPLES / "openscribe_acibench_predictions.jsonl"


def _pairs(path):
    """(id, prediction, reference) of every row with both texts (ACI-Bench has 5 rows without a prediction)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if isinstance(row.get("prediction"), str) and isinstance(row.get("reference"), str):
            out.append((row["id"], row["prediction"], row["reference"]))
    return out


@pytest.fixture(scope="module", params=[False, True], ids=["no_stemmer", "stemmer"])
def oracle(request):
    """rouge-score 0.1.2's scores of every shipped pair, all four variants at once: {path: {id: {type: Score}}}."""
    sc = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=request.param)
    return request.param, {path: {rid: sc.score(ref, pred) for rid, pred, ref in _pairs(path)} for path in (PRIMOCK, ACI)}


@pytest.mark.parametrize("path", [PRIMOCK, ACI], ids=["primock57", "acibench"])
@pytest.mark.parametrize("rouge_type", ROUGE_TYPES)
def test_every_row_and_mean_equal_rouge_score_to_the_last_digit(oracle, path, rouge_type):
    use_stemmer, expected = oracle
    want = expected[path]
    scorer = get_scorer(rouge_type)
    config = scorer.configure(use_stemmer=use_stemmer, source=path.name)
    records = list(scorer.score_batch(read_rows(path), config))
    scored = [r for r in records if r["status"] == "scored"]
    assert [r["id"] for r in scored] == list(want)  # every row with both texts scored, in order
    for r in scored:
        s = want[r["id"]][rouge_type]
        assert (r["whole_note"]["precision"], r["whole_note"]["recall"], r["whole_note"]["f1"]) == \
            (s.precision, s.recall, s.fmeasure), r["id"]  # exact: no tolerance
    agg = scorer.aggregate(records, config)["aggregate"]
    # the macro means are statistics.mean of rouge-score's per-row values, correctly rounded (not a float sum / n)
    assert agg[f"{rouge_type}_f1_mean"] == statistics.mean(s[rouge_type].fmeasure for s in want.values())
    assert agg[f"{rouge_type}_precision_mean"] == statistics.mean(s[rouge_type].precision for s in want.values())
    assert agg[f"{rouge_type}_recall_mean"] == statistics.mean(s[rouge_type].recall for s in want.values())
    assert (agg["n"], agg["n_failed"]) == ((57, 0) if path == PRIMOCK else (35, 5))


def test_the_stemmer_changes_the_scores_on_the_shipped_data(oracle):
    # guards the oracle test against an option that is silently ignored: stemming moves rouge1 on PriMock57
    use_stemmer, expected = oracle
    other = rouge_pairs([p for _, p, _ in _pairs(PRIMOCK)], [r for _, _, r in _pairs(PRIMOCK)], rouge_type="rouge1",
                        use_stemmer=not use_stemmer)
    mine = [s["rouge1"].fmeasure for s in expected[PRIMOCK].values()]
    assert sum(a != b.f1 for a, b in zip(mine, other)) > 40


# -- hand-worked values ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("rouge_type", "prediction", "reference", "expected"),
    [
        # tokens: pred the cat sat on the mat (6), ref the cat is on the mat (6); shared the x2, cat, on, mat = 5
        ("rouge1", "The cat sat on the mat.", "the cat is on the mat", (5 / 6, 5 / 6, 5 / 6)),
        # bigrams: 5 each; shared the-cat, on-the, the-mat = 3
        ("rouge2", "The cat sat on the mat.", "the cat is on the mat", (3 / 5, 3 / 5, 3 / 5)),
        # LCS: the cat on the mat = 5
        ("rougeL", "The cat sat on the mat.", "the cat is on the mat", (5 / 6, 5 / 6, 5 / 6)),
        # the same words with the clauses swapped: LCS is "on the mat" (3 of 6)
        ("rougeL", "on the mat\nthe cat sat", "the cat is on the mat", (0.5, 0.5, 0.5)),
        # rougeLsum splits at the newline: the reference sentence's LCS with "on the mat" (on, the, mat) united
        # with its LCS with "the cat sat" (the, cat) covers 5 of 6 tokens
        ("rougeLsum", "on the mat\nthe cat sat", "the cat is on the mat", (5 / 6, 5 / 6, 5 / 6)),
        # on one line it is rougeL again: newlines, not full stops, split sentences (as rouge-score does)
        ("rougeLsum", "on the mat. the cat sat", "the cat is on the mat", (0.5, 0.5, 0.5)),
        # one side without tokens scores 0, and so do both (rouge-score's rule; token F1 would give 1.0)
        ("rouge1", "", "the cat", (0.0, 0.0, 0.0)),
        ("rougeL", "...", "", (0.0, 0.0, 0.0)),
    ],
)
def test_hand_worked_values(rouge_type, prediction, reference, expected):
    got = rouge(prediction, reference, rouge_type=rouge_type)
    assert (got.precision, got.recall, got.f1) == pytest.approx(expected, abs=1e-15)
    s = rouge_scorer.RougeScorer([rouge_type]).score(reference, prediction)[rouge_type]
    assert (got.precision, got.recall, got.f1) == tuple(s)


def test_use_stemmer_matches_inflected_forms():
    # "cats" -> cat, "running" -> run (Porter, tokens longer than 3 characters): the, cat, run shared of 4 each
    pred, ref = "the cats were running", "the cat was running"
    assert rouge(pred, ref, rouge_type="rouge1").f1 == 0.5  # the, running
    assert rouge(pred, ref, rouge_type="rouge1", use_stemmer=True).f1 == 0.75


def test_bad_arguments_are_refused():
    with pytest.raises(InputError, match="rouge_type must be one of rouge1, rouge2, rougeL, rougeLsum, got 'rouge3'"):
        rouge("a", "b", rouge_type="rouge3")
    with pytest.raises(InputError, match=r"predictions\[0\] must be a str, got int 3"):
        rouge_pairs([3], ["b"])
    with pytest.raises(InputError, match="2 predictions but 1 references"):
        rouge_pairs(["a", "b"], ["b"])


# -- rows, sections, aggregation ---------------------------------------------------------------------------------

SECTIONED = {"id": "s1", "prediction": {"s": "the cat sat on the mat", "p": "rest"},
             "reference": {"s": "the cat is on the mat", "p": "rest and fluids", "o": None}}


def test_sections_are_scored_each_and_as_a_whole():
    scorer = get_scorer("rouge1")
    config = scorer.configure()
    (rec,) = scorer.score_batch([SECTIONED], config)
    assert rec["sections"]["s"]["f1"] == pytest.approx(5 / 6)
    # p: prediction [rest], reference [rest, and, fluids]: P 1, R 1/3, F 0.5
    assert (rec["sections"]["p"]["precision"], rec["sections"]["p"]["recall"], rec["sections"]["p"]["f1"]) == \
        pytest.approx((1.0, 1 / 3, 0.5))
    assert rec["sections_empty_both"] == ["o"]  # left out of the section macro (rouge-score would count a 0)
    assert rec["section_macro"]["f1"] == pytest.approx((5 / 6 + 0.5) / 2)
    # whole note: the sections joined by newlines, 7 prediction and 9 reference tokens, 6 shared: F = 12 / 16
    assert rec["whole_note"]["f1"] == pytest.approx(0.75)
    assert rec["whole_note"]["precision"] == pytest.approx(6 / 7)
    agg = scorer.aggregate([rec], config)["aggregate"]
    assert agg["rouge1_section_f1_mean"] == rec["section_macro"]["f1"]
    assert agg["sections"]["o"] == {"n": 0, "n_empty_both": 1, "precision_mean": None, "recall_mean": None, "f1_mean": None}


def test_bad_rows_are_unscored_with_token_f1s_messages_and_flags_are_counted():
    rows = [
        {"id": "a", "prediction": "the cat", "reference": "the cat"},
        {"id": "b", "prediction": None, "reference": "x"},
        {"id": "c", "prediction": 42, "reference": "x"},
        {"id": "a", "prediction": "x", "reference": "x"},
        {"id": "e", "prediction": "", "reference": "Café au lait"},
        {"id": "f", "prediction": {"s": 1}, "reference": {"s": "x"}},
    ]
    scorer = get_scorer("rougeL")
    config = scorer.configure(source="rows")
    recs = list(scorer.score_batch(rows, config))
    assert [r["status"] for r in recs] == ["scored", "unscored", "unscored", "unscored", "scored", "unscored"]
    assert recs[1]["error"].startswith("rows:2: field 'prediction' is null")
    assert recs[2]["error"] == ("rows:3: field 'prediction' must be a string or an object of sections, got 42. "
                                "Fix the row or pass --prediction-field.")
    assert recs[3]["duplicate_of"] == 1
    assert recs[5]["error"].startswith("rows:6: prediction.s: a section must be a string")
    assert recs[4]["empty"] == "prediction" and recs[4]["unreadable"] == {"side": "reference", "char": "é"}
    assert "empty" not in recs[0] and "unreadable" not in recs[0]
    agg = scorer.aggregate(recs, config)["aggregate"]
    assert (agg["n"], agg["n_failed"], agg["n_rows"]) == (2, 4, 6)
    assert (agg["n_with_empty_text"], agg["n_with_unreadable_text"]) == (1, 1)
    assert agg["first_unreadable"] == {"id": "e", "side": "reference", "char": "é"}
    assert agg["rougeL_f1_mean"] == 0.5  # (1.0 + 0.0) / 2


def test_any_split_of_the_records_merges_to_the_same_results():
    scorer = get_scorer("rouge2")
    config = scorer.configure(source=ACI.name)
    records = list(scorer.score_batch(read_rows(ACI), config))
    whole = scorer.aggregate(records, config)
    parts = [scorer.new_partial(config).update(records[a:b]) for a, b in ((0, 7), (7, 19), (19, len(records)))]
    for p in parts[1:]:
        parts[0].merge(p)
    assert scorer.finish(parts[0], config) == whole


def test_no_row_leaves_the_means_undefined():
    scorer = get_scorer("rougeLsum")
    config = scorer.configure()
    agg = scorer.aggregate(scorer.score_batch([{"id": "a", "prediction": None, "reference": "x"}], config), config)["aggregate"]
    assert agg["rougeLsum_f1_mean"] is None
    assert agg["undefined"]["rougeLsum_f1_mean"] == "no row could be scored"


# -- the CLI: option, gates ---------------------------------------------------------------------------------------

def test_cli_rougeL_with_the_stemmer_writes_the_keys_and_gates_on_them(tmp_path):
    # (rouge_pairs equals rouge-score on this file: test_every_row_and_mean_equal_rouge_score_to_the_last_digit)
    pairs = _pairs(PRIMOCK)
    want = statistics.mean(s.f1 for s in rouge_pairs([p for _, p, _ in pairs], [r for _, _, r in pairs],
                                                     rouge_type="rougeL", use_stemmer=True))
    out = tmp_path / "r.json"
    for bound, code in ((round(want, 3) - 0.001, 0), (round(want, 3) + 0.001, 1)):
        dod = tmp_path / f"dod{bound}.toml"
        dod.write_text(f'agreed_by = "Clinical lead"\nagreed_on = 2026-12-04\n[gates]\nrougeL_f1_mean = {{ min = {bound} }}\n')
        res = CliRunner().invoke(main, ["score", str(PRIMOCK), "--scorer", "rougeL", "-O", "use_stemmer=true", "--gates",
                                        str(dod), "--out", str(out), "--no-store", "-q"])
        assert res.exit_code == code, res.output
        data = json.loads(out.read_text())
        assert data["gates"]["passed"] is (code == 0)
    assert data["config"]["use_stemmer"] is True
    assert data["aggregate"]["rougeL_f1_mean"] == want
    assert {"rougeL_precision_mean", "rougeL_recall_mean", "n_scored", "n_failed"} <= set(data["aggregate"])


def test_cli_refuses_a_gate_on_another_variants_metric_and_a_bad_stemmer_value(tmp_path):
    dod = tmp_path / "dod.toml"
    dod.write_text('[gates]\nrouge1_f1_mean = { min = 0.1 }\n')
    res = CliRunner().invoke(main, ["score", str(PRIMOCK), "--scorer", "rougeL", "--gates", str(dod), "--no-store", "-q"])
    assert res.exit_code == 2 and "rouge1_f1_mean" in res.stderr
    res = CliRunner().invoke(main, ["score", str(PRIMOCK), "--scorer", "rouge2", "-O", "use_stemmer=maybe", "--no-store"])
    assert res.exit_code == 2
    assert "-O use_stemmer=maybe: scorer 'rouge2' option 'use_stemmer' expects true or false, got 'maybe'." in res.stderr


# -- report -------------------------------------------------------------------------------------------------------

def test_the_report_and_the_markdown_summary_lead_with_the_rouge_mean(tmp_path):
    from goldeval.report.html import render_html
    from goldeval.report.markdown import summary_markdown
    from goldeval.report.model import build_model
    from goldeval.report.sources import load_sources

    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["score", str(ACI), "--scorer", "rougeL", "--no-store", "-q", "--out", str(out)])
    assert res.exit_code == 0, res.output
    results = json.loads(out.read_text())
    agg = results["aggregate"]
    model = build_model(results, sources=load_sources(results, None))
    head = model["summary"]["headline"]
    assert (head["name"], head["key"], head["value"]) == ("rougeL F1 (macro)", "rougeL_f1_mean", agg["rougeL_f1_mean"])
    assert dict(model["summary"]["items"])["precision (macro)"] == agg["rougeL_precision_mean"]
    assert "rougeL F1 (macro)" in render_html(model)
    md = summary_markdown(results)
    assert f"| rougeL\\_f1\\_mean | {agg['rougeL_f1_mean']:.4f} |" in md
