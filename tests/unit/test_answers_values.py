"""goldeval.answers.values on cells no float holds: an integer past Python's int-string limit (4,300 digits; ``int()``
and ``str()`` refuse it), a number past the largest float (1.8e308), and a cell nested hundreds of levels deep. Each
is compared exactly, or refused with its column, never an internal error. Source: issue 25 item 5."""

from __future__ import annotations

from decimal import Decimal

import pytest

from goldeval.answers.judge import judge_answer, judge_case
from goldeval.answers.values import make_column
from goldeval.errors import InputError
from goldeval.io import BigInt, decode_json

DIGITS = "1" * 4999 + "7"  # 5,000 digits
OTHER = "1" * 4999 + "8"  # the same but its last digit


@pytest.mark.parametrize("cell", [BigInt(DIGITS), DIGITS, "+" + DIGITS, int(Decimal(DIGITS)), Decimal(DIGITS),
                                  Decimal(DIGITS + ".000")], ids=["BigInt", "text", "plus", "int", "Decimal", "Decimal.000"])
def test_an_integer_past_the_int_string_limit_is_its_exact_digits(cell) -> None:
    col = make_column("n", [cell])
    assert col.kind == "text" and col.text[0] == DIGITS


def test_a_negative_one_and_a_list_holding_one_keep_their_digits() -> None:
    assert make_column("n", ["-" + DIGITS]).text[0] == "-" + DIGITS
    assert make_column("n", [[int(Decimal(DIGITS))]]).text[0] == f'["{DIGITS}"]'
    # a list holding an integer past 64 bits meets the same list read from JSON (the reader keeps its digits)
    assert make_column("n", [[2**64 + 1]]).text[0] == make_column("n", [decode_json("[18446744073709551617]")]).text[0]


def test_numbers_past_the_largest_float_are_never_infinity() -> None:
    texts = make_column("x", ["1e400", "10E399", "2e400", "1" + ",000" * 200, Decimal("1" * 400 + ".50")]).text.tolist()
    assert texts[0] == texts[1] == "1e400"  # one number, two spellings
    assert texts[2] == "2e400" != texts[0]  # both were inf, hence equal, before
    assert texts[3] == "1e600" and texts[4] == "1." + "1" * 399 + "5e399"


def test_ordinary_numbers_keep_their_kinds() -> None:
    col = make_column("x", [12, "12", 12.0, "1,234.5", "20%"])
    assert col.kind == "number" and col.num.tolist() == [12.0, 12.0, 12.0, 1234.5, 20.0]
    # identifiers from 2**53 on: exact digits, as before
    assert make_column("x", ["9007199254740993", 9007199254740992]).text.tolist() == ["9007199254740993", "9007199254740992"]


def test_a_cell_nested_past_the_bound_is_refused_with_its_column() -> None:
    deep = []
    for _ in range(500):
        deep = [deep]
    with pytest.raises(InputError, match=r"column 'tags': a cell holds arrays or objects nested more than 100 levels"):
        make_column("tags", [deep, [1]])
    shallow = []
    for _ in range(60):
        shallow = [shallow]
    assert make_column("tags", [shallow]).kind == "text"


def _golden(value):
    return {"kind": "value", "columns": ["n"], "rows": [[value]]}


def test_the_judge_compares_5000_digit_integers_exactly() -> None:
    golden = _golden(BigInt(DIGITS))
    assert judge_answer("Which account number?", golden, {"columns": ["n"], "rows": [[DIGITS]]}).verdict == "match"
    assert judge_answer("Which account number?", golden, {"columns": ["n"], "rows": [[OTHER]]}).verdict == "no_match"


def test_a_deeply_nested_cell_makes_its_case_unscored() -> None:
    deep = []
    for _ in range(400):
        deep = [deep]
    res = judge_case({"id": "c1", "question": "Which tags?", "golden": _golden(deep)},
                     {"id": "c1", "columns": ["n"], "rows": [[deep]]})
    assert res.outcome.status == "unscored" and "nested more than 100 levels" in res.outcome.reason
