"""Issue 10 items 4, 6 and 7 (the row-level part): a row nested 2,000 deep, a non-UTF-8 byte on one line and a
CSV field with an unbalanced quote each fail alone, with their line, while the other rows are scored."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from goldeval.cli import main
from goldeval.io import Row, RowError, read_csv, read_jsonl

OK = {"id": "a", "prediction": "blood pressure fine", "reference": "blood pressure fine"}


def _score(path: Path, tmp: Path) -> tuple[int, dict, str]:
    out = tmp / "r.json"
    r = CliRunner().invoke(main, ["score", str(path), "--no-store", "-q", "--out", str(out)], catch_exceptions=False)
    return r.exit_code, (json.loads(out.read_text()) if out.exists() else {}), r.output


def test_a_row_nested_2000_deep_fails_alone_in_score(tmp_path: Path) -> None:
    deep_list = "[" * 2000 + "]" * 2000
    deep_obj = '{"s":' * 2000 + '"x"' + "}" * 2000
    p = tmp_path / "p.jsonl"
    p.write_text(
        json.dumps(OK) + "\n"
        + '{"id": "b", "prediction": "x", "reference": "x", "extra": ' + deep_list + "}\n"
        + '{"id": "c", "prediction": ' + deep_obj + ', "reference": "x"}\n'
        + json.dumps({**OK, "id": "d"}) + "\n"
    )
    code, res, output = _score(p, tmp_path)
    assert code == 0, output
    assert res["aggregate"]["n"] == 2 and res["aggregate"]["n_failed"] == 2
    assert [f["line"] for f in res["failures"]] == [2, 3]
    assert all("nested" in f["error"] for f in res["failures"]), res["failures"]


def test_one_non_utf8_byte_fails_its_row_alone(tmp_path: Path) -> None:
    p = tmp_path / "p.jsonl"
    rows = [json.dumps({**OK, "id": f"r{i}"}).encode() for i in range(5)]
    rows[3] = rows[3].replace(b"fine", b"f\xefne", 1)  # line 4: a latin-1 byte
    p.write_bytes(b"\n".join(rows) + b"\n")
    code, res, output = _score(p, tmp_path)
    assert code == 0, output
    assert (res["aggregate"]["n"], res["aggregate"]["n_failed"]) == (4, 1)
    assert res["failures"][0]["line"] == 4 and "UTF-8" in res["failures"][0]["error"]


def test_read_jsonl_reports_a_non_utf8_line_as_a_row_error(tmp_path: Path) -> None:
    p = tmp_path / "l.jsonl"
    p.write_bytes(b'{"id": "1", "gold": "a", "pred": "a"}\n{"id": "2", "gold": "\xe9", "pred": "a"}\n{"id": "3", "gold": "a", "pred": "b"}\n')
    items = list(read_jsonl(p))
    assert [type(i).__name__ for i in items] == ["Row", "RowError", "Row"]
    assert items[1].line == 2 and "UTF-8" in items[1].error and "0xe9" in items[1].error


def test_a_csv_line_that_is_not_utf8_is_named_by_file_and_line(tmp_path: Path) -> None:
    # a latin-1 "café" on line 2 read "line 2: the line is not UTF-8" (no file) while every other row error reads
    # "file:line:"
    p = tmp_path / "latin.csv"
    p.write_bytes(b"id,prediction,reference\n1,caf\xe9 ok,caf\xe9 ok\n2,a b,a b\n")
    items = list(read_csv(p))
    assert [type(i).__name__ for i in items] == ["RowError", "Row"]
    assert items[0].error.startswith("latin.csv:2: the line is not UTF-8 (byte 0xe9 at column 6)")


def test_csv_unbalanced_quote_fails_its_row_and_the_rest_is_read(tmp_path: Path) -> None:
    p = tmp_path / "l.csv"
    p.write_text('id,gold,pred\n1,yes,yes\n2,"yes,no\n3,no,no\n4,yes,no\n')
    items = list(read_csv(p))
    rows = [i for i in items if isinstance(i, Row)]
    errors = [i for i in items if isinstance(i, RowError)]
    assert [r.data["id"] for r in rows] == ["1", "3", "4"]
    assert [(e.line, e.id) for e in errors] == [(3, "2")]
    assert "quote" in errors[0].error and ":3:" in errors[0].error


def test_csv_quote_closing_late_swallows_nothing(tmp_path: Path) -> None:
    # the quote opened on line 3 closes on line 5 ('no"'): a strict reader sees junk after the closing quote
    p = tmp_path / "l.csv"
    p.write_text('id,gold,pred\n1,yes,yes\n2,"yes,no\n3,no,no\n4,yes,"no"x\n5,no,no\n')
    items = list(read_csv(p))
    assert [i.data["id"] for i in items if isinstance(i, Row)] == ["1", "3", "5"]
    assert [i.line for i in items if isinstance(i, RowError)] == [3, 5]


def test_csv_quoted_newline_is_one_row_at_its_first_line(tmp_path: Path) -> None:
    p = tmp_path / "l.csv"
    p.write_text('id,gold,pred,note\n1,yes,yes,"two\nlines"\n2,no,no,x\n')
    items = list(read_csv(p))
    assert [(i.line, i.data["id"], i.data["note"]) for i in items] == [(2, "1", "two\nlines"), (4, "2", "x")]


def test_labels_csv_with_an_unbalanced_quote_scores_the_other_rows(tmp_path: Path) -> None:
    p = tmp_path / "l.csv"
    p.write_text('id,gold,pred\n1,yes,yes\n2,"yes,no\n3,no,no\n4,yes,no\n')
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["labels", str(p), "--positive", "yes", "--no-store", "--out", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    res = json.loads(out.read_text())
    assert (res["aggregate"]["n_scored"], res["aggregate"]["n_failed"]) == (3, 1)


def test_csv_bare_carriage_return_fails_its_row_and_the_rest_is_read(tmp_path: Path) -> None:
    # Found by a newcomer: a \r not followed by \n outside quotes (one bad cell, or old Mac line endings) crashed the
    # whole command with exit 3 ("internal error: new-line character seen in unquoted field"). By hand: line 3 holds
    # the \r and fails alone (its id "2" read from before it); lines 2 and 4 are rows; a quoted \r is a cell's text.
    p = tmp_path / "l.csv"
    p.write_bytes(b'id,gold,pred\n1,yes,yes\n2,y\rz,no\n3,"a\rb",no\n')
    items = list(read_csv(p))
    assert [(i.data["id"], i.data["gold"]) for i in items if isinstance(i, Row)] == [("1", "yes"), ("3", "a\rb")]
    errors = [i for i in items if isinstance(i, RowError)]
    assert [(e.line, e.id) for e in errors] == [(3, "2")]
    assert "l.csv:3: a carriage return" in errors[0].error and "old Mac line endings" in errors[0].error
    # old Mac line endings: after the header every "line" runs to the end of the file: one row error, exit 2, said
    mac = tmp_path / "mac.csv"
    mac.write_bytes(b"id,gold,pred\r\n1,escalate,escalate\r2,approve,escalate\r")
    r = CliRunner().invoke(main, ["labels", str(mac), "--positive", "escalate", "--no-store"], catch_exceptions=False)
    assert r.exit_code == 2 and "mac.csv:2: a carriage return" in r.output and "internal error" not in r.output


def test_a_malformed_attempt_row_is_named_by_the_attempts_file_and_line(tmp_path: Path) -> None:
    # Found on a fresh clone: a prediction row with 2 cells under 1 column was reported as "cases.jsonl:1 (id 'v1')
    # prediction: ...", the cases file's line, though the row lives in the attempts file (here at line 2).
    cases, attempts = tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl"
    cases.write_text(json.dumps({"id": "v1", "question": "How many?", "golden": {"kind": "value", "columns": ["n"], "rows": [[5]]}}) + "\n")
    attempts.write_text(json.dumps({"id": "other", "text": "7"}) + "\n"
                        + json.dumps({"id": "v1", "columns": ["n"], "rows": [[5, 6]]}) + "\n")
    out = tmp_path / "j.json"
    res = CliRunner().invoke(main, ["judge", str(cases), str(attempts), "--no-store", "-q", "--out", str(out)])
    assert res.exit_code == 2, res.output  # the one case could not be judged
    assert "attempts.jsonl:2 (id 'v1') prediction: row 1 has 2 cells, expected 1 cells (one per column)" in res.stderr
    assert "cases.jsonl:1 (id 'v1') prediction" not in res.stderr


def test_an_attempt_refused_for_a_nan_names_its_own_error_not_a_missing_attempt(tmp_path: Path) -> None:
    # Found by a newcomer (X2): an attempt line holding NaN (Python's json.dump writes it) was refused, as JSON has
    # no NaN, and its case then read "no attempt with this id" although the attempt is there. The line is still
    # refused (its NaN is not a value), but its id is read so that the case gives the line's own reason; a line
    # that is not JSON under any reading (cut short) has no id to read, and its case keeps "no attempt".
    cases, attempts = tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl"
    gold = {"kind": "value", "columns": ["n"], "rows": [[5]]}
    cases.write_text("".join(json.dumps({"id": i, "question": "How many?", "golden": gold}) + "\n" for i in ("a", "b", "c", "d")))
    attempts.write_text('{"id": "a", "columns": ["n"], "rows": [[NaN]]}\n'
                        '{"id": "b", "columns": ["n"], "rows": [[5]]\n'
                        '{"id": "c", "text": "five \\ud800", "rows": [[Infinity]], "columns": ["n"]}\n'
                        + json.dumps({"id": "d", "columns": ["n"], "rows": [[5]]}) + "\n")
    out = tmp_path / "j.json"
    res = CliRunner().invoke(main, ["judge", str(cases), str(attempts), "--no-store", "-q", "--out", str(out)])
    assert res.exit_code == 0, res.output
    per = {c["id"]: c for c in json.loads(out.read_text())["per_example"]}
    assert per["d"]["verdict"] == "match"
    assert per["a"]["status"] == "unscored" and per["a"]["reason"].startswith("attempts.jsonl:1: NaN is not JSON"), per["a"]
    assert per["c"]["status"] == "unscored" and per["c"]["reason"].startswith("attempts.jsonl:3: "), per["c"]
    assert "no attempt with this id" in per["b"]["reason"], per["b"]
    failures = json.loads(out.read_text())["failures"]
    assert [(f["line"], f["id"]) for f in failures] == [(1, "a"), (2, None), (3, "c")], failures


def test_a_refused_line_gives_its_id_unless_the_id_itself_is_refused() -> None:
    from goldeval.io import decode_line as plain

    def decode_line(raw: bytes, line: int, name: str, **kw: object) -> object:
        return plain(raw, line, name, id_field="id", **kw)

    assert plain(b'{"id": "x", "v": NaN}', 1, "f.jsonl").id is None  # no id_field: no id, as every other reader
    assert decode_line(b'{"qid": "x", "v": NaN}', 1, "f.jsonl").id is None  # another field is not the id
    assert decode_line(b'{"id": "x", "v": NaN}', 4, "f.jsonl") == RowError(4, "x", "f.jsonl:4: " + decode_line(b'{"v": NaN}', 4, "f").error.split(": ", 1)[1])
    assert decode_line(b'{"id": 7, "v": -Infinity}', 1, "f.jsonl").id == "7"
    assert decode_line(b'{"id": "\\ud800", "v": 1}', 1, "f.jsonl").id is None  # a surrogate in the id: no id
    assert decode_line(b'{"id": true, "v": NaN}', 1, "f.jsonl").id is None  # not a usable id
    assert decode_line(b'{"id": "x", "v": [1}', 1, "f.jsonl").id is None  # not JSON under any reading
    lenient = decode_line(b'{"id": "x", "v": NaN}', 1, "f.jsonl", lenient=True)  # read, not refused
    assert isinstance(lenient, Row) and lenient.data["id"] == "x"


def test_the_library_join_reads_a_refused_attempt_as_the_command_does(tmp_path: Path) -> None:
    from goldeval.answers.batch import iter_judged

    cases, attempts = tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl"
    cases.write_text(json.dumps({"id": "a", "question": "How many?", "golden": {"kind": "value", "columns": ["n"], "rows": [[5]]}}) + "\n")
    attempts.write_text('{"id": "a", "columns": ["n"], "rows": [[NaN]]}\n')
    failures: list = []
    (only,) = list(iter_judged(cases, attempts, failures=failures))
    assert only.outcome.status == "unscored" and only.outcome.reason.startswith("attempts.jsonl:1: NaN is not JSON"), only.outcome
    assert [(f["line"], f["id"]) for f in failures] == [(1, "a")]


def test_a_jsonl_file_with_old_mac_line_endings_says_so(tmp_path: Path) -> None:
    # Found by h-newcomer beside the CSV case: lines ending in \r alone read as one line, which failed as "not
    # valid JSON (unexpected content after document ...)" with no word about line endings. Two objects side by
    # side without a carriage return keep the plain message.
    p = tmp_path / "mac.jsonl"
    p.write_bytes(b'{"id": "a", "prediction": "x", "reference": "x"}\r{"id": "b", "prediction": "y", "reference": "y"}\r')
    code, _, output = _score(p, tmp_path)
    assert code == 2
    assert "old Mac line endings" in output and "tr '\\r' '\\n'" in output, output
    (plain := tmp_path / "two.jsonl").write_text('{"id": "a", "prediction": "x", "reference": "x"}{"id": "b"}\n')
    code, _, output = _score(plain, tmp_path)
    assert code == 2 and "old Mac" not in output and "one JSON object per line" in output, output


BIG = "1" * 4999 + "7"  # 5,000 digits: past Python's int-string limit (4,300), which json.loads / int() refuse


def test_integers_of_5000_digits_are_judged_and_the_rest_of_the_batch_scores(tmp_path: Path) -> None:
    """Issue 25 item 5: a 5,000-digit integer in a golden or an attempt was an internal error (exit 3) for the run."""
    deep = "[" * 300 + "]" * 300
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "big", "question": "Which account number?", "golden": {"kind": "value", "value": ' + BIG + '}}\n'
        '{"id": "wrong", "question": "Which account number?", "golden": {"kind": "value", "value": ' + BIG + '}}\n'
        '{"id": "deep", "question": "Which tags?", "golden": {"kind": "value", "columns": ["t"], "rows": [[' + deep + ']]}}\n'
        '{"id": "ok", "question": "How many wards?", "golden": {"kind": "value", "value": 7}}\n')
    (tmp_path / "attempts.jsonl").write_text(
        '{"id": "big", "columns": ["n"], "rows": [[' + BIG + ']]}\n'
        '{"id": "wrong", "columns": ["n"], "rows": [[' + BIG[:-1] + '8]]}\n'
        '{"id": "deep", "columns": ["t"], "rows": [[' + deep + ']]}\n'
        '{"id": "ok", "columns": ["n"], "rows": [[7]]}\n')
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["judge", str(tmp_path / "cases.jsonl"), str(tmp_path / "attempts.jsonl"),
                                  "--store", str(tmp_path / "s.db"), "-q", "--out", str(out)])
    assert r.exit_code == 0, r.output
    got = {c["id"]: c for c in json.loads(out.read_text())["per_example"]}
    assert (got["big"]["verdict"], got["wrong"]["verdict"], got["ok"]["verdict"]) == ("match", "no_match", "match")
    assert got["deep"]["status"] == "unscored" and "nested more than 100 levels" in got["deep"]["reason"]


def test_score_and_labels_read_a_5000_digit_integer_as_the_number_it_is(tmp_path: Path) -> None:
    p = tmp_path / "p.jsonl"
    p.write_text('{"id": "a", "prediction": ' + BIG + ', "reference": "x"}\n' + json.dumps({**OK, "id": "b"}) + "\n")
    code, res, output = _score(p, tmp_path)
    assert code == 0, output
    assert res["aggregate"]["n"] == 1 and res["failures"][0]["line"] == 1
    lab = tmp_path / "l.jsonl"
    lab.write_text('{"id": ' + BIG + ', "gold": "yes", "pred": "yes"}\n{"id": "b", "gold": ' + BIG + ', "pred": "yes"}\n')
    out = tmp_path / "l.json"
    r = CliRunner().invoke(main, ["labels", str(lab), "--positive", "yes", "--no-store", "-q", "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = {e["id"]: e for e in json.loads(out.read_text())["per_example"]}
    assert rows[BIG]["outcome"] == "tp" and rows["b"]["gold"] == BIG  # the id and the label keep every digit


def test_a_csv_header_that_names_a_column_twice_is_refused(tmp_path: Path) -> None:
    # 'prediction' in columns 2 and 4 (an edited spreadsheet): each row kept only the last value, so row a scored
    # f1 1.0 on "x" against "x" and its first prediction "x y" (f1 2/3 by hand: P 1/2, R 1) was dropped unseen,
    # exit 0. Refused (exit 2) with both positions; two unnamed columns (trailing commas) still read.
    p = tmp_path / "dup.csv"
    p.write_text("id,prediction,reference,prediction\na,x y,x,x\n")
    code, _, output = _score(p, tmp_path)
    assert code == 2, output
    assert "'prediction' twice (columns 2 and 4)" in output
    ok = tmp_path / "blank.csv"
    ok.write_text("id,prediction,reference,,\na,x y,x,,\n")
    code, res, output = _score(ok, tmp_path)
    assert code == 0, output
    assert res["per_example"][0]["whole_note"] == {"precision": 0.5, "recall": 1.0, "f1": 2 / 3}
