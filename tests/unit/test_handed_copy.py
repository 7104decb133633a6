"""The vendored copy of the handed cases (tests/cases/handed) must equal ../shared/cases when that exists."""

from __future__ import annotations

import pytest

from conftest import SHARED, VENDORED_CASES


@pytest.mark.skipif(not (SHARED / "cases").is_dir(), reason="../shared/cases is not beside this clone")
def test_vendored_handed_cases_equal_shared():
    shared = {p.name: p.read_bytes() for p in (SHARED / "cases").glob("*.jsonl")}
    vendored = {p.name: p.read_bytes() for p in VENDORED_CASES.glob("*.jsonl")}
    assert shared == vendored, "re-copy ../shared/cases/*.jsonl into tests/cases/handed/"
