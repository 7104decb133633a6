"""One call to a real judge endpoint. Runs only when asked (``pytest -m live``) and a key is set; never by default.

Model: ``$GOLDEVAL_JUDGE_MODEL`` (default ``gpt-4o-mini``); endpoint: ``$GOLDEVAL_JUDGE_BASE_URL`` (default hosted).
"""

from __future__ import annotations

import os

import pytest

from goldeval.llm import JudgeConfig, judge_cases

pytestmark = pytest.mark.live


@pytest.fixture
def live_config(request):
    if not os.environ.get("OPENAI_API_KEY"):
        pytest.skip("no OPENAI_API_KEY: live judge test skipped")
    if "live" not in (request.config.getoption("-m") or ""):
        pytest.skip("live judge test runs only with -m live (the default test run never touches the network)")
    pytest.importorskip("openai")
    return JudgeConfig.from_env(model=os.environ.get("GOLDEVAL_JUDGE_MODEL") or "gpt-4o-mini", timeout=60)


def test_live_judge_returns_a_parseable_verdict(live_config):
    # The seed's match anchor (seed-aj-match-extra-column, shortened): containment holds, extra column is benign.
    case = {
        "id": "live-1", "question": "total sales by category",
        "golden": {"kind": "value", "columns": ["category", "revenue"], "rows": [["Books", 1200.5], ["Games", 830.0]]},
        "columns": ["product_category", "gross_revenue", "order_count"],
        "rows": [["Games", 830.0, 20], ["Books", 1200.5, 31]],
    }
    res = judge_cases([case], config=live_config)
    r = res["per_example"][0]
    call = r["llm"]["calls"][0]
    assert call["error"] is None and "parse_error" not in call["verdict"], call
    assert r["verdict"] == "match"
