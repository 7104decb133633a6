"""Unit tests of goldeval.labels: counts, undefined markers, errors, per-label table, matrix, row scoring."""

from __future__ import annotations

import json

import pytest
from conftest import FakeRecorder

from goldeval.errors import InputError
from goldeval.io import Row, RowError
from goldeval.labels.metrics import NO_LABEL
from goldeval.labels import confusion_counts, confusion_matrix, per_label_table, score_label_file, score_label_rows, score_labels, solve

PILOT_GOLD = ["escalate"] * 40 + ["approve"] * 160
PILOT_PRED = ["escalate"] * 36 + ["approve"] * 4 + ["escalate"] * 6 + ["approve"] * 154


def test_pilot_unrounded():
    # seed pilot: 36 caught, 4 missed, 6 false escalations, 154 true approvals (by hand: 36/42, 36/40, 72/82)
    s = score_labels(PILOT_GOLD, PILOT_PRED, positive="escalate")
    assert (s.tp, s.fp, s.fn, s.tn) == (36, 6, 4, 154)
    assert s.precision == 36 / 42 and s.recall == 0.9 and s.f1 == 72 / 82
    assert s.missed == 4 and s.missed_per_100 == 10.0 and s.accuracy == 0.95
    assert s.undefined == {}
    assert solve(PILOT_GOLD, PILOT_PRED) == (0.857, 0.9, 4)


def test_length_mismatch_names_both_counts():
    with pytest.raises(InputError, match=r"gold has 3 labels but pred has 2.*never truncate"):
        score_labels(["a", "b", "a"], ["a", "b"], positive="a")


def test_null_gold_is_refused_with_position():
    with pytest.raises(InputError, match=r"case 1: gold label is null"):
        score_labels(["a", None], ["a", "a"], positive="a")


def test_unhashable_label_is_refused():
    with pytest.raises(InputError, match=r"case 1: a label must be a string"):
        score_labels(["a", ["b"]], ["a", "a"], positive="a")


def test_null_prediction_is_a_miss():
    s = score_labels(["y", "y", "n"], [None, "y", None], positive="y")
    assert (s.tp, s.fp, s.fn, s.tn) == (1, 0, 1, 1)


def test_unknown_positive_lists_labels_and_suggests():
    with pytest.raises(InputError, match=r"'Escalate' occurs in neither gold nor pred; labels seen: 'approve', 'escalate'\. Did you mean 'escalate'\?"):
        score_labels(PILOT_GOLD, PILOT_PRED, positive="Escalate")
    # a slice that legitimately holds no positive can still be scored
    s = score_labels(["n", "n"], ["n", "n"], positive="y", require_positive=False)
    assert s.precision == 0.0 and set(s.undefined) == {"precision", "recall", "f1", "missed_per_100"}


def test_undefined_reasons():
    s = score_labels(["y", "n"], ["n", "n"], positive="y")
    assert s.undefined == {"precision": "nothing was predicted positive"}
    s = score_labels(["n", "n"], ["y", "n"], positive="y")
    assert s.undefined == {"recall": "there are no gold positives", "missed_per_100": "there are no gold positives"}
    assert s.f1 == 0.0  # tp = 0 with fp = 1: f1 = 0/1, defined
    e = score_labels([], [], positive="y")
    assert (e.precision, e.recall, e.missed, e.n) == (0.0, 0.0, 0, 0)
    assert set(e.undefined) == {"precision", "recall", "f1", "missed_per_100", "accuracy"}


def test_confusion_counts_one_vs_rest():
    c = confusion_counts(["a", "b", "c"], ["b", "b", "a"], positive="b")
    assert (c.tp, c.fp, c.fn, c.tn) == (1, 1, 0, 1)


def test_per_label_table_by_hand_and_against_sklearn():
    gold = ["a", "b", "c", "a", "b", "c", "a"]
    pred = ["a", "c", "c", "b", "b", None, "a"]
    rows = {r.label: r for r in per_label_table(gold, pred)}
    # by hand: a: tp 2, fp 0, fn 1 -> P 1, R 2/3; b: tp 1 fp 1 fn 1 -> 1/2, 1/2; c: tp 1 fp 1 fn 1 -> 1/2, 1/2
    assert (rows["a"].precision, rows["a"].recall, rows["a"].support, rows["a"].predicted) == (1.0, 2 / 3, 3, 2)
    assert (rows["b"].precision, rows["b"].recall, rows["b"].support) == (0.5, 0.5, 2)
    from sklearn.metrics import precision_recall_fscore_support

    p, r, f, sup = precision_recall_fscore_support(
        gold, ["<none>" if x is None else x for x in pred], labels=["a", "b", "c"], average=None, zero_division=0.0
    )
    for i, lab in enumerate("abc"):
        assert (rows[lab].precision, rows[lab].recall, rows[lab].f1, rows[lab].support) == pytest.approx((p[i], r[i], f[i], sup[i]))


def test_confusion_matrix_has_a_no_label_column():
    m = confusion_matrix(["a", "b", "a", "b"], ["a", None, "b", "b"])
    assert m.labels == ["a", "b"] and m.columns == ["a", "b", NO_LABEL]
    assert m.matrix == [[1, 1, 0], [0, 1, 1]]
    from sklearn.metrics import confusion_matrix as sk_cm

    assert confusion_matrix(["a", "b"], ["b", "a"]).matrix == sk_cm(["a", "b"], ["b", "a"]).tolist()


# ---- rows and files


def _rows(*dicts):
    return [Row(i + 1, d) for i, d in enumerate(dicts)]


def test_rows_failures_by_line_and_missing_pred_warning():
    rows = _rows(
        {"id": "1", "gold": "y", "pred": "y"},
        {"id": "1", "gold": "y", "pred": "y"},  # duplicate id
        {"id": "2", "gold": None, "pred": "y"},  # null gold
        {"id": "3", "pred": "y"},  # missing gold
        {"id": "4", "gold": 1.5, "pred": "y"},  # gold not a label
        {"id": "5", "gold": "y"},  # missing pred: scored as no prediction, warned
        {"gold": "y", "pred": "y"},  # no id
    ) + [RowError(8, None, "x.jsonl:8: not valid JSON"), Row(9, {"id": "9", "gold": "y", "pred": {"label": "y"}})]
    res = score_label_rows(rows, positive="y", file_name="x.jsonl")
    agg = res["aggregate"]
    assert (agg["n"], agg["n_scored"], agg["n_failed"]) == (9, 3, 6)
    assert (agg["tp"], agg["fn"]) == (1, 2)  # no pred field, and a pred that is no label: misses, never dropped
    assert "x.jsonl:9: field 'pred' must be a string label, got {'label': 'y'}; scored as no prediction" in res["warnings"][1]["warning"]
    lines = {f["line"]: f["error"] for f in res["failures"]}
    assert "repeats line 1" in lines[2]
    assert "x.jsonl:3: gold label is null" in lines[3]
    assert "x.jsonl:4: field 'gold' is missing" in lines[4]
    assert "x.jsonl:5: gold label must be a string label, got 1.5" in lines[5]
    assert "field 'id' must be a non-empty string" in lines[7]
    assert lines[8] == "x.jsonl:8: not valid JSON"
    assert res["warnings"][0]["line"] == 6 and "scored as no prediction" in res["warnings"][0]["warning"]


def test_integer_labels_read_as_strings():
    res = score_label_rows(_rows({"id": 1, "gold": 1, "pred": 0}, {"id": 2, "gold": 0, "pred": 0}), positive="1")
    assert res["aggregate"]["fn"] == 1 and res["per_example"][0]["gold"] == "1"


def test_wrong_column_names_are_refused():
    rows = _rows({"id": "1", "gold": "y", "prediction": "y"})
    with pytest.raises(InputError, match=r"no row has a 'pred' field .*fields of the first row: 'id', 'gold', 'prediction'\).*--pred-column"):
        score_label_rows(rows, positive="y")
    rows = _rows({"id": "1", "label": "y", "pred": "y"})
    with pytest.raises(InputError, match=r"no row has a 'gold' field .*fields of the first row: 'id', 'label', 'pred'\).*--gold-column"):
        score_label_rows(rows, positive="y")


def test_no_positive_lists_labels():
    with pytest.raises(InputError, match=r"positive label: none given; labels seen: 'n', 'y'"):
        score_label_rows(_rows({"id": "1", "gold": "y", "pred": "n"}), positive=None)




def test_recorder_gets_one_record_per_row_and_reuses_previous():
    rec = FakeRecorder(previous={"a": {"id": "a", "status": "scored", "gold": "y", "pred": "y", "outcome": "tp"}})
    rows = _rows(
        {"id": "a", "gold": "y", "pred": "y"},
        {"id": "b", "gold": "y", "pred": None},
        {"id": "c", "gold": "n", "pred": "y"},
        {"id": "d", "gold": None, "pred": "y"},
    )
    res = score_label_rows(rows, positive="y", recorder=rec)
    assert rec.records == [
        {"id": "b", "status": "scored", "line": 2, "gold": "y", "pred": None, "outcome": "fn"},
        {"id": "c", "status": "scored", "line": 3, "gold": "n", "pred": "y", "outcome": "fp"},
        {"id": "d", "status": "unscored", "line": 4, "reason": "line 4: gold label is null; every case needs an adjudicated gold label. Adjudicate it or remove the row."},
    ]
    assert rec.finished is res
    assert (res["aggregate"]["tp"], res["aggregate"]["fn"], res["aggregate"]["fp"]) == (1, 1, 1)


def test_csv_with_selected_columns(tmp_path):
    f = tmp_path / "labels.csv"
    f.write_text("case,truth,model\nc1,fraud,fraud\nc2,fraud,\nc3,clear,fraud\nc4,clear,clear\n", encoding="utf-8")
    res = score_label_file(f, positive="fraud", id_field="case", gold_field="truth", pred_field="model")
    agg = res["aggregate"]
    # by hand: c1 tp, c2 empty cell = no label -> fn, c3 fp, c4 tn
    assert (agg["tp"], agg["fn"], agg["fp"], agg["tn"], agg["null_predictions"]) == (1, 1, 1, 1, 1)
    assert res["per_example"][1] == {"id": "c2", "line": 3, "gold": "fraud", "pred": None, "outcome": "fn"}
    assert len(res["dataset"]["sha256"]) == 64


def test_second_annotator_agreement_and_disagreements():
    rows = _rows(
        {"id": "1", "gold": "y", "pred": "y", "gold_b": "y"},
        {"id": "2", "gold": "y", "pred": "n", "gold_b": "n"},
        {"id": "3", "gold": "n", "pred": "n", "gold_b": "n"},
        {"id": "4", "gold": "n", "pred": "n", "gold_b": None},
    )
    res = score_label_rows(rows, positive="y", second_gold_field="gold_b")
    agg = res["aggregate"]
    # by hand over the 3 doubly-annotated cases: agreement 2/3; p_e = (2/3)(1/3) + (1/3)(2/3) = 4/9;
    # kappa = (2/3 - 4/9) / (1 - 4/9) = (2/9)/(5/9) = 0.4
    assert agg["annotator_n"] == 3
    assert agg["annotator_agreement"] == pytest.approx(2 / 3)
    assert agg["annotator_kappa"] == pytest.approx(0.4)
    assert res["disagreements"] == [{"id": "2", "a": "y", "b": "n", "line": 2}]


# ---- break-fix (labels that look alike, blank cells, a mistyped second-annotator column)


def test_second_gold_column_that_no_row_has_is_refused():
    # Break-fix: `--second-gold-column g3` on a file whose column is `g2` used to score "0 annotator cases" and exit 0.
    rows = _rows({"id": "1", "gold": "y", "pred": "y", "g2": "y"}, {"id": "2", "gold": "n", "pred": "n", "g2": "n"})
    with pytest.raises(InputError, match=r"no row has a 'g3' field \(fields of the first row: 'id', 'gold', 'pred', 'g2'\).*--second-gold-column"):
        score_label_rows(rows, positive="y", second_gold_field="g3")


def test_blank_gold_is_a_failure_and_blank_pred_is_no_label():
    # A blank JSON string is what an empty CSV cell is: gold "" used to be scored as a label "" (here an fp row).
    rows = _rows(
        {"id": "1", "gold": "", "pred": "y"},
        {"id": "2", "gold": "  ", "pred": "y"},
        {"id": "3", "gold": "y", "pred": ""},
        {"id": "4", "gold": "y", "pred": "y"},
    )
    res = score_label_rows(rows, positive="y", file_name="x.jsonl")
    agg = res["aggregate"]
    # by hand: rows 1 and 2 fail; row 3 gold y, no label -> fn; row 4 tp
    assert (agg["n_scored"], agg["n_failed"], agg["tp"], agg["fn"], agg["fp"], agg["null_predictions"]) == (2, 2, 1, 1, 0, 1)
    assert res["failures"][0]["error"].startswith("x.jsonl:1: gold label is blank ('')")
    assert res["failures"][1]["error"].startswith("x.jsonl:2: gold label is blank ('  ')")


def test_labels_differing_from_the_positive_only_by_case_or_spaces_are_warned_not_folded():
    # A CSV written as "c1, escalate, escalate" gives ' escalate': scored as another label (never folded silently,
    # never silently either). By hand: 'escalate' vs ' escalate' gold -> that row is a negative with pred 'Escalate'
    # (tn); row 2: gold escalate, pred 'Escalate' -> fn; row 3: tp.
    rows = _rows(
        {"id": "1", "gold": " escalate", "pred": "Escalate"},
        {"id": "2", "gold": "escalate", "pred": "Escalate"},
        {"id": "3", "gold": "escalate", "pred": "escalate"},
    )
    res = score_label_rows(rows, positive="escalate", file_name="c.jsonl")
    agg = res["aggregate"]
    assert (agg["tp"], agg["fn"], agg["fp"], agg["tn"]) == (1, 1, 0, 1)
    assert [(w["line"], w["id"]) for w in res["warnings"]] == [(1, "1"), (1, "1")]
    assert res["warnings"][0]["warning"] == (
        "c.jsonl:1: gold label ' escalate' (1 row) differs from the positive label 'escalate' only by case, spaces or "
        "invisible characters; it is scored as another label: a negative case, not a gold positive. Fix the file if it "
        "means 'escalate'."
    )
    assert res["warnings"][1]["warning"].startswith("c.jsonl:1: pred label 'Escalate' (2 rows) differs from")


def test_an_id_column_that_no_row_has_is_refused_with_the_near_name():
    # Break-fix: a CSV headed "ID,Gold,Pred" failed every row on its id and then scored nothing, exit 0.
    rows = _rows({"ID": "1", "Gold": "y", "Pred": "y"}, {"ID": "2", "Gold": "n", "Pred": "n"})
    with pytest.raises(InputError, match=r"^x\.csv: no row has a 'id' field \(fields of the first row: 'ID', 'Gold', 'Pred'\)\. Did you mean 'ID'\? Pass the case id column with --id-column\.$"):
        score_label_rows(rows, positive="y", file_name="x.csv")
    # a header written "id, gold, pred" has spaces in its names: the message shows them and names the column
    rows = _rows({"id": "1", " gold": " y", " pred": " y"})
    with pytest.raises(InputError, match=r"'id', ' gold', ' pred'\)\. Did you mean ' gold'\?"):
        score_label_rows(rows, positive="y", file_name="x.csv")


def test_look_alike_positive_with_invisible_or_full_width_characters_is_warned():
    # 'escalate' + zero-width space (copied from a web page) and full-width 'ｅｓｃａｌａｔｅ' (NFKC folds it) look like the
    # positive but are other labels: by hand row 1 is fn (pred not positive), row 2 tn (gold not positive), row 3 tp.
    rows = _rows(
        {"id": "1", "gold": "escalate", "pred": "escalate\u200b"},
        {"id": "2", "gold": "\uff45\uff53\uff43\uff41\uff4c\uff41\uff54\uff45", "pred": "approve"},
        {"id": "3", "gold": "escalate", "pred": "escalate"},
    )
    res = score_label_rows(rows, positive="escalate")
    agg = res["aggregate"]
    assert (agg["tp"], agg["fn"], agg["fp"], agg["tn"]) == (1, 1, 0, 1)
    assert sorted((w["line"], w["warning"].split(" label ")[0]) for w in res["warnings"]) == [(1, "labels:1: pred"), (2, "labels:2: gold")]


def test_nan_gold_label_is_refused_like_null():
    # pandas writes a missing label as float NaN; it used to be counted as a negative label "nan" (here: tn)
    with pytest.raises(InputError, match=r"^labels: case 1: gold label is NaN \(a missing value\); every case needs"):
        score_labels(["y", float("nan")], ["y", "n"], positive="y")


def test_refuse_empty_raises_before_anything_is_recorded_as_finished():
    rec = FakeRecorder()
    with pytest.raises(InputError, match=r"^x\.jsonl: none of the 2 rows could be scored; the first failure: x\.jsonl:1: gold label is null"):
        score_label_rows(_rows({"id": "1", "gold": None, "pred": "y"}, {"id": "2", "gold": None, "pred": "n"}),
                         positive="y", file_name="x.jsonl", recorder=rec, refuse_empty=True)
    assert rec.finished is None
    with pytest.raises(InputError, match=r"^x\.csv: no rows \(a header without data\?\)"):
        score_label_rows([], positive="y", file_name="x.csv", refuse_empty=True)
    # the library default keeps returning the (empty) results, every rate undefined
    assert score_label_rows([], positive="y")["aggregate"]["n_scored"] == 0


def test_a_bad_second_annotator_cell_does_not_drop_the_case_from_the_model_score():
    # break-fix: a number in the second annotator's column made the whole row a failure, so a gold escalation the
    # model missed vanished from recall. By hand: rows 1 tp, 2 fn (kept), 3 tn -> recall 1/2; annotators on rows 1, 3.
    rows = _rows(
        {"id": "1", "gold": "y", "pred": "y", "b": "y"},
        {"id": "2", "gold": "y", "pred": "n", "b": 3.5},
        {"id": "3", "gold": "n", "pred": "n", "b": "n"},
    )
    res = score_label_rows(rows, positive="y", second_gold_field="b", file_name="x.jsonl")
    agg = res["aggregate"]
    assert (agg["n_scored"], agg["n_failed"], agg["fn"], agg["recall"]) == (3, 0, 1, 0.5)
    assert agg["annotator_n"] == 2
    assert res["warnings"] == [{"line": 2, "id": "2", "warning": "x.jsonl:2: field 'b' must be a string label, got 3.5; the case is scored but left out of the annotator agreement."}]


@pytest.mark.parametrize("kind", ["plain_jsonl", "ruled_jsonl", "second_annotator", "csv"])
def test_score_label_path_reports_its_progress(tmp_path, kind):
    from goldeval.labels.reader import score_label_path

    n = 2500  # more than one 64 KiB block of JSONL, and more than one batch of 1,000 CSV rows
    if kind == "csv":
        f = tmp_path / "labels.csv"
        f.write_text("id,gold,pred\n" + "".join(f"r{i},{'yes' if i % 5 == 0 else 'no'},yes\n" for i in range(n)))
    else:
        f = tmp_path / "labels.jsonl"
        # "ruled": integer ids, read row by row by the rules; "plain": string ids, counted by the C reader
        rid = (lambda i: i) if kind == "ruled_jsonl" else (lambda i: f"r{i}-" + "x" * 20)
        # "second_annotator": a fourth field, read by Python alone
        f.write_text("".join(json.dumps({"id": rid(i), "gold": "yes" if i % 5 == 0 else "no", "pred": "yes", "gold2": "no"})
                             + "\n" for i in range(n)))
    totals, steps = [], []
    more = {"second_gold_field": "gold2"} if kind == "second_annotator" else {}
    res = score_label_path(f, positive="yes", on_total=totals.append, progress=steps.append, keep_per_example=False,
                           **more)
    # every row is read once: the total is the file's rows (lines), and the steps add up to it
    assert totals == [n] and sum(steps) == n and len(steps) > 1
    # 500 of the 2,500 rows are gold "yes", every prediction "yes": tp 500, fp 2,000
    assert (res["aggregate"]["tp"], res["aggregate"]["fp"]) == (500, 2000)


# ---- break-fix (hG, 2026-12-05): a resumed run counts the reused rows' columns as an uninterrupted run does


def _done(rid, gold, pred, second=None):
    """The record a run stored for a scored case before it was interrupted (what Recorder.previous() gives)."""
    outcome = ("tp" if pred == "y" else "fn") if gold == "y" else ("fp" if pred == "y" else "tn")
    return {"id": rid, "status": "scored", "gold": gold, "pred": pred, "outcome": outcome, "second_gold": second}


def test_a_resumed_run_sees_the_second_annotators_column_of_the_rows_it_reuses():
    # The second annotator labelled the first rows only (the later rows have no 'gold_b' field), and the run was
    # interrupted after those rows. Before: the resumed run counted the column only in the rows it read afresh and
    # refused with "no row has a 'gold_b' field (fields of the first row: ..., 'gold_b')" where the uninterrupted
    # run scores. Expected: the resumed results equal the uninterrupted run's (the uninterrupted run, without a
    # recorder, is the definition).
    data = [{"id": "1", "gold": "y", "pred": "y", "gold_b": "y"}, {"id": "2", "gold": "y", "pred": "n", "gold_b": "n"},
            {"id": "3", "gold": "n", "pred": "n"}, {"id": "4", "gold": "n", "pred": "y"}]
    whole = score_label_rows(_rows(*data), positive="y", second_gold_field="gold_b")
    rec = FakeRecorder(previous={"1": _done("1", "y", "y", "y"), "2": _done("2", "y", "n", "n")})
    resumed = score_label_rows(_rows(*data), positive="y", second_gold_field="gold_b", recorder=rec)
    assert resumed["aggregate"] == whole["aggregate"]
    assert resumed["aggregate"]["annotator_n"] == 2 and resumed["disagreements"] == whole["disagreements"]
    assert [r["id"] for r in rec.records] == ["3", "4"]  # only the rows not reused are recorded


def test_a_resumed_run_refuses_a_prediction_column_no_row_has_as_the_uninterrupted_run_does():
    # --pred-column mistyped: no row has the field. The uninterrupted run refuses (and records its cases on the way,
    # so the same command again resumes them); the resumed run took every reused row as having the field and scored
    # every case as a miss instead of refusing.
    data = [{"id": "1", "gold": "y", "prediction": "y"}, {"id": "2", "gold": "n", "prediction": "n"}]
    with pytest.raises(InputError, match=r"no row has a 'pred' field"):
        score_label_rows(_rows(*data), positive="y")
    rec = FakeRecorder(previous={"1": _done("1", "y", None)})
    with pytest.raises(InputError, match=r"no row has a 'pred' field"):
        score_label_rows(_rows(*data), positive="y", recorder=rec)
    assert rec.finished is None


def test_a_run_resumed_with_every_case_reused_refuses_a_second_column_no_row_has():
    # --second-gold-column mistyped: no row has the field. The uninterrupted run refuses (after recording its cases);
    # the same command again reused every case and, having read no row "afresh", skipped the check and scored with
    # annotator agreement over no case.
    data = [{"id": "1", "gold": "y", "pred": "y"}, {"id": "2", "gold": "n", "pred": "n"}]
    with pytest.raises(InputError, match=r"no row has a 'gold_b' field"):
        score_label_rows(_rows(*data), positive="y", second_gold_field="gold_b")
    rec = FakeRecorder(previous={"1": _done("1", "y", "y"), "2": _done("2", "n", "n")})
    with pytest.raises(InputError, match=r"no row has a 'gold_b' field"):
        score_label_rows(_rows(*data), positive="y", second_gold_field="gold_b", recorder=rec)
    assert rec.finished is None
