"""One strict, exact JSON decoding path for every reader (goldeval.io.reading.decode_json; issue 10, a newcomer's findings).

Before it, each reader decoded its own way: the answer judge's reader looked for 20 digits in a row (so a 19-digit
negative past -2**63 was rounded by orjson), the free-text reader used orjson alone on its fast path (an integer id
past 64 bits became a float and the row failed, "got 1.8446744073709552e+19"), the labels reader used orjson alone
(a non-UTF-8 line aborted the whole file, NaN was "unexpected character"). Expected values are the literals
themselves and the subtraction: the numbers below differ by 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main
from goldeval.io import JSONLineError, decode_json


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize(("text", "value"), [
    ('{"n": 18446744073709551617}', {"n": "18446744073709551617"}),       # 2**64 + 1: orjson gives 1.8446744073709552e19
    ('{"n": -9223372036854775809}', {"n": "-9223372036854775809"}),       # -2**63 - 1: 19 digits, missed by the old scan
    ('{"n": 18446744073709551615}', {"n": 2**64 - 1}),                    # inside orjson's range: an int, unchanged
    ('{"n": -9223372036854775808}', {"n": -(2**63)}),
    ("[" + "7" * 5000 + "]", ["7" * 5000]),                               # past Python's 4,300-digit int() limit and
                                                                          # orjson's float range: every digit kept
    ('{"f": 1e19, "g": 1.5}', {"f": 1e19, "g": 1.5}),                     # a float literal stays a float
])
def test_integers_are_read_exactly(text, value):
    got = decode_json(text)
    assert got == value and type(got) is type(value)
    assert decode_json(text.encode()) == value


@pytest.mark.parametrize(("text", "reason"), [
    ('{"n": NaN}', "NaN is not JSON (JSON has no NaN or Infinity; Python's json.dump writes them). Write null for a missing value, or the number."),
    ('[Infinity]', "Infinity is not JSON"),
    ('{"n": -Infinity}', "-Infinity is not JSON"),
    ('{"n": 1e400}', "the number 1e400 is past the largest float (about 1.8e308). Write it as a string if it is an identifier."),
    ('{"s": "\\ud800"}', "the text '\\ud800' holds a lone surrogate escape"),
    ('{"a": 1,}', "not valid JSON (trailing comma is not allowed: line 1 column 8 (char 7)). Fix the line"),
    ("[" * 3000 + "]" * 3000, "the JSON is nested too deep to read (over 1,000 levels"),
])
def test_what_cannot_be_read_is_refused_with_its_reason(text, reason):
    with pytest.raises(JSONLineError) as exc:
        decode_json(text)
    assert exc.value.reason.startswith(reason), exc.value.reason


def test_not_utf8_names_the_byte_and_its_column():
    with pytest.raises(JSONLineError, match=r"^the line is not UTF-8 \(byte 0xe9 at column 11\)"):  # { " x " : _ " c a f = 10 bytes before it
        decode_json(b'{"x": "caf\xe9"}')


def test_a_reader_that_refuses_them_itself_may_read_nan_and_surrogates():
    got = decode_json('{"a": NaN, "s": "\\ud800", "n": 18446744073709551617}', nonfinite=True, surrogates=True)
    assert got["a"] != got["a"] and got["s"] == "\ud800" and got["n"] == "18446744073709551617"


def test_the_judge_tells_apart_two_negative_integers_past_64_bits(tmp_path):
    # -2**63 - 1 against -2**63 - 2: both were orjson's float -9.223372036854776e18 (the 20-digit scan missed 19
    # digits), so the judge said match with confidence 10; they differ by 1, so no_match
    cases, attempts = tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl"
    cases.write_text(json.dumps({"id": "n1", "question": "What is the account number?",
                                 "golden": {"kind": "value", "columns": ["account"], "rows": [[-(2**63) - 1]]}}) + "\n")
    attempts.write_text(json.dumps({"id": "n1", "columns": ["account"], "rows": [[-(2**63) - 2]]}) + "\n")
    out = tmp_path / "r.json"
    assert invoke("judge", cases, attempts, "--no-store", "-q", "--out", out).exit_code == 0
    assert [c["verdict"] for c in json.loads(out.read_text())["per_example"]] == ["no_match"]


def test_free_text_ids_past_64_bits_are_their_digits_and_repeats_are_found(tmp_path):
    # 2**64 + 1 and 2**64 are two ids (they were one float, and every row failed); the third row repeats the first
    p = tmp_path / "p.jsonl"
    p.write_text('{"id": 18446744073709551617, "prediction": "a b", "reference": "a"}\n'
                 '{"id": 18446744073709551616, "prediction": "a", "reference": "a"}\n'
                 '{"id": 18446744073709551617, "prediction": "a", "reference": "a"}\n'
                 '{"id": "t", "prediction": NaN, "reference": "a"}\n'
                 '{"id": "u", "prediction": 18446744073709551617, "reference": "a"}\n')
    out = tmp_path / "r.json"
    assert invoke("score", p, "--no-store", "-q", "--out", out).exit_code == 0
    res = json.loads(out.read_text())
    assert [e["id"] for e in res["per_example"]] == ["18446744073709551617", "18446744073709551616"]
    # F1 of "a b" against "a": P = 1/2, R = 1, F1 = 2/3; of "a" against "a": 1
    assert [e["whole_note"]["f1"] for e in res["per_example"]] == [2 / 3, 1.0]
    failures = {f["line"]: f["error"] for f in res["failures"]}
    assert failures[3].startswith("p.jsonl:3: id '18446744073709551617' repeats line 1.")
    assert "field 'prediction' must be a string or an object of sections, got nan" in failures[4]
    # the digits as written, not orjson's 1.8446744073709552e+19
    assert "field 'prediction' must be a string or an object of sections, got 18446744073709551617." in failures[5]


def test_labels_past_64_bits_nan_and_a_bad_byte_each_fail_or_score_alone(tmp_path: Path):
    # 2**64 + 1 and 2**64 are two labels (an integer label is read as its decimal string): a is a missed positive,
    # b a caught one; c (NaN) and d (a latin-1 byte) fail alone with their line — d used to abort the whole file
    p = tmp_path / "l.jsonl"
    p.write_bytes(b'{"id": "a", "gold": 18446744073709551617, "pred": 18446744073709551616}\n'
                  b'{"id": "b", "gold": 18446744073709551617, "pred": 18446744073709551617}\n'
                  b'{"id": "c", "gold": "x", "pred": NaN}\n'
                  b'{"id": "d", "gold": "caf\xe9", "pred": "x"}\n'
                  b'{"id": "e", "gold": "x", "pred": "x"}\n')
    out = tmp_path / "r.json"
    r = invoke("labels", p, "--positive", "18446744073709551617", "--no-store", "-q", "--out", out)
    assert r.exit_code == 0, r.output
    res = json.loads(out.read_text())
    assert [(e["id"], e["outcome"]) for e in res["per_example"]] == [("a", "fn"), ("b", "tp"), ("e", "tn")]
    assert (res["aggregate"]["tp"], res["aggregate"]["fn"], res["aggregate"]["recall"]) == (1, 1, 0.5)
    failures = {f["line"]: f["error"] for f in res["failures"]}
    assert failures[3].startswith("l.jsonl:3: NaN is not JSON")
    assert failures[4].startswith("l.jsonl:4: the line is not UTF-8 (byte 0xe9 at column 25)")


def test_an_integer_past_64_bits_is_text_for_ids_and_labels_but_never_a_text_to_score(tmp_path):
    from goldeval.io import BigInt

    n = decode_json("[18446744073709551617]")[0]
    assert type(n) is BigInt and n == "18446744073709551617" and repr(n) == "18446744073709551617"
    p = tmp_path / "s.jsonl"
    p.write_text('{"id": "s", "prediction": {"plan": 18446744073709551617}, "reference": {"plan": "x"}}\n'
                 '{"id": "t", "prediction": {"plan": "x"}, "reference": {"plan": "x"}}\n')
    out = tmp_path / "r.json"
    assert invoke("score", p, "--no-store", "-q", "--out", out).exit_code == 0
    (f,) = json.loads(out.read_text())["failures"]
    assert f["line"] == 1 and "prediction.plan: a section must be a string (or null for absent), got int 18446744073709551617." in f["error"]
