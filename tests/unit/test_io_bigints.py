"""Integers past 64 bits in a JSONL line keep every digit (orjson turns them into floats).

Found by a new user's try: orjson 3.8 reads ``18446744073709551617`` (2**64 + 1) as the float 1.8446744073709552e19,
so a golden account number 2**64 + 1 and an answer of 2**64 were the same float, and the judge said ``match``
with confidence 10 (the rule that identifiers are exact, tests/unit/test_answers_issue11.py, never saw them as
integers). orjson can write no such integer either, so the reader keeps one as the string of its digits, which the
judge reads as the integer it spells. Expected values are the literals themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from goldeval.cli import main
from goldeval.io import Row, RowError, read_jsonl

BIG = 123456789012345678901234567890  # 30 digits, past 2**64 (20 digits)


def test_big_integers_keep_every_digit(tmp_path):
    p = tmp_path / "rows.jsonl"
    p.write_text(
        '{"id": "a", "rows": [[18446744073709551617, -18446744073709551617, 1.5]]}\n'
        f'{{"id": "b", "n": {BIG}, "s": "{BIG}", "f": 1.5e300}}\n'
        '{"id": "c", "n": 18446744073709551615}\n'  # 2**64 - 1: orjson already exact
        '{"id": "d", "n": NaN, "note": "12345678901234567890123"}\n',  # NaN stays refused, now by name
        encoding="utf-8",
    )
    items = list(read_jsonl(p))
    a, b, c, d = items
    assert isinstance(a, Row) and a.data["rows"] == [["18446744073709551617", "-18446744073709551617", 1.5]]
    assert isinstance(b, Row) and b.data["n"] == str(BIG) and b.data["s"] == str(BIG) and b.data["f"] == 1.5e300
    assert isinstance(c, Row) and c.data["n"] == 2**64 - 1 and type(c.data["n"]) is int
    assert isinstance(d, RowError) and d.line == 4 and "rows.jsonl:4: NaN is not JSON" in d.error


def test_judge_tells_apart_account_numbers_past_64_bits(tmp_path):
    # 2**64 + 1 against 2**64, and two 30-digit numbers one apart: different identifiers, so no_match (the
    # worked value is the subtraction: they differ by 1). In prose, a different number is not a match, and the
    # rules leave a prose paraphrase to a person (needs_human, as tests/unit/test_answers_issue11.py has it for
    # 2**53 + 1); the same digits in prose are a match. Before the fix b1-b3 were 'match', confidence 8-10.
    cases = tmp_path / "cases.jsonl"
    attempts = tmp_path / "attempts.jsonl"
    q = "What is the account number?"
    cases.write_text("".join(json.dumps(c) + "\n" for c in [
        {"id": "b1", "question": q, "golden": {"kind": "value", "columns": ["account"], "rows": [[BIG]]}},
        {"id": "b2", "question": q, "golden": {"kind": "value", "columns": ["account"], "rows": [[2**64 + 1]]}},
        {"id": "b3", "question": q, "golden": {"kind": "value", "columns": ["account"], "rows": [[BIG]]}},
        {"id": "b4", "question": q, "golden": {"kind": "value", "columns": ["account"], "rows": [[BIG]]}},
        {"id": "b5", "question": q, "golden": {"kind": "value", "columns": ["account"], "rows": [[BIG]]}},
    ]), encoding="utf-8")
    attempts.write_text("".join(json.dumps(a) + "\n" for a in [
        {"id": "b1", "columns": ["account"], "rows": [[BIG + 1]]},
        {"id": "b2", "columns": ["account"], "rows": [[2**64]]},
        {"id": "b3", "text": f"The account number is {BIG + 1}."},
        {"id": "b4", "columns": ["account"], "rows": [[BIG]]},  # the same number: match
        {"id": "b5", "text": f"The account number is {BIG}."},
    ]), encoding="utf-8")
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["judge", str(cases), str(attempts), "--no-store", "--out", str(out)])
    assert res.exit_code == 0, res.output
    verdicts = {c["id"]: c["verdict"] for c in json.loads(Path(out).read_text())["per_example"]}
    assert verdicts == {"b1": "no_match", "b2": "no_match", "b3": "needs_human", "b4": "match", "b5": "match"}
