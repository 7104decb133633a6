"""A judge run recorded under the /2 doctrine, then run again under /3 (issue 16): a new run, every case re-judged
over HTTP, nothing served from the cache or resumed from the store."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAI

from goldeval.cli import main
from goldeval.llm.prompt import JUDGE_VERSION

pytest.importorskip("openai")

#: The released /2 doctrine (tests/unit/test_judge_prompt.py RELEASED).
V2 = ("goldeval-llm-judge/2", "02b372bd7ec77a26b276ba885415f890b740e86c0fe6a3a112fcfd050d190fbe")


def test_a_run_recorded_before_the_doctrine_change_is_rejudged(tmp_path, monkeypatch):
    import goldeval.llm as judge_pkg
    import goldeval.llm.cache as cache_mod
    import goldeval.llm.prompt as prompt_mod
    import goldeval.llm.run as run_mod

    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))  # one judge cache for both runs
    cases = tmp_path / "cases.jsonl"
    attempts = tmp_path / "attempts.jsonl"
    cases.write_text("".join(json.dumps({"id": f"k{i}", "question": "Why did churn rise?", "golden": {"kind": "criteria"},
                                         "rubric": [f"REQUIRED: reason {i}"]}) + "\n" for i in range(3)))
    attempts.write_text("".join(json.dumps({"id": f"k{i}", "text": "Prices rose."}) + "\n" for i in range(3)))
    store = tmp_path / "runs.db"
    with FakeOpenAI() as srv:
        args = ["llm-judge", str(cases), str(attempts), "--llm", "judge-model", "--base-url", srv.base_url,
                "--store", str(store), "--out", "-", "-q"]
        with monkeypatch.context() as m:
            for mod in (judge_pkg, cache_mod, prompt_mod, run_mod):
                m.setattr(mod, "JUDGE_VERSION", V2[0])
                m.setattr(mod, "SYSTEM_PROMPT_SHA256", V2[1])
            old = CliRunner().invoke(main, args, catch_exceptions=False)
            assert old.exit_code == 0, old.output
            assert srv.calls == 3 and json.loads(old.stdout)["judge"]["judge_version"] == V2[0]
        new = CliRunner().invoke(main, args, catch_exceptions=False)
        assert new.exit_code == 0, new.output
        assert srv.calls == 6, "the /3 doctrine must judge every case again"
    out = json.loads(new.stdout)
    assert out["judge"]["judge_version"] == JUDGE_VERSION == "goldeval-llm-judge/3"
    assert (out["aggregate"]["n_http_calls"], out["aggregate"]["n_cached"], out["aggregate"]["n_resumed"]) == (3, 0, 0)
    from goldeval.runs.store import RunStore

    with RunStore(store) as st:
        versions = sorted(r["scorer_version"] for r in st.list_runs())
    assert versions == [V2[0], JUDGE_VERSION]  # two runs: the old one was not resumed under the new doctrine
