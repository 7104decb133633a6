"""``--slice-by`` on Spark (issue 28 item 4): the slices fold on the executors from the same partials as the whole,
and equal the local run's slices to the last digit — the published Open-Scribe figures for token F1, the clinic
verdicts for the data-answer judge."""

from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import EXAMPLES, REPO
from goldeval.cli import main
from goldeval.scoring.registry import get_scorer
from goldeval.scoring.slices import sliced

PRIMOCK = EXAMPLES / "openscribe_primock57_predictions.jsonl"
ACIBENCH = EXAMPLES / "openscribe_acibench_predictions.jsonl"
SQL = REPO / "examples" / "sql"


def _two_datasets(tmp_path):
    rows = [{**json.loads(x), "dataset": "primock57"} for x in PRIMOCK.read_text().splitlines() if x.strip()]
    rows += [{**json.loads(x), "dataset": "acibench"} for x in ACIBENCH.read_text().splitlines() if x.strip()]
    path = tmp_path / "both.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_token_f1_slices_on_spark_are_the_published_figures_and_the_local_slices(spark, tmp_path):
    from goldeval.engines import spark as gs
    from goldeval.engines.local import run

    path = _two_datasets(tmp_path)
    s = sliced(get_scorer("token_f1"), "dataset")
    cases = gs.score_path(spark, str(path), s, source=path.name)
    results = gs.aggregate(cases)  # the slice field travels in the DataFrame's metadata
    assert results["engine"]["partitions"] >= 2
    prim, aci = results["slices"]["primock57"], results["slices"]["acibench"]
    # Open-Scribe's published figures (DESIGN.md, "Real data")
    assert (prim["whole_note_f1_mean"], prim["n"]) == (0.27861937781204515, 57)
    assert (aci["whole_note_f1_mean"], aci["n"], aci["n_failed"]) == (0.4465338141844892, 35, 5)
    local = run(s, path, s.configure(source=path.name), keep_cases=False)
    assert results["slices"] == local["slices"]


def test_score_cli_on_spark_gates_a_slice(spark, tmp_path):
    path = _two_datasets(tmp_path)
    dod = tmp_path / "dod.toml"
    dod.write_text("[gates.slices.acibench]\nwhole_note_f1_mean = { min = 0.45 }\n")
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["score", str(path), "--engine", "spark", "--slice-by", "dataset", "--gates", str(dod),
                                    "--out", str(out), "--no-store", "-q"])
    assert res.exit_code == 1, res.output  # 0.4465… < 0.45
    r = json.loads(out.read_text())
    assert r["slices"]["acibench"]["whole_note_f1_mean"] == 0.4465338141844892
    assert r["gates"]["gates"][0]["slice"] == "acibench" and not r["gates"]["passed"]


def test_judge_slices_on_spark_equal_the_local_judge(spark, tmp_path):
    cases = [json.loads(x) for x in (SQL / "cases.jsonl").read_text().splitlines() if x.strip()]
    for i, c in enumerate(cases):
        c["difficulty"] = ["easy", "medium", "hard"][i % 3]
    cp = tmp_path / "cases.jsonl"
    cp.write_text("".join(json.dumps(c) + "\n" for c in cases))
    outs = {}
    for engine in ("local", "spark"):
        outs[engine] = tmp_path / f"{engine}.json"
        res = CliRunner().invoke(main, ["judge", str(cp), str(SQL / "arm_b.jsonl"), "--db", str(SQL / "clinic.sqlite"),
                                        "--engine", engine, "--slice-by", "difficulty", "--out", str(outs[engine]),
                                        "--no-store", "-q"])
        assert res.exit_code == 0, res.output
    local, on_spark = (json.loads(outs[e].read_text()) for e in ("local", "spark"))
    assert sorted(on_spark["slices"]) == ["easy", "hard", "medium"]
    assert on_spark["slices"] == local["slices"]


def test_judge_slices_after_the_llm_stage_on_spark_equal_the_local_ones(spark, tmp_path, monkeypatch):
    """Arm A leaves 2 cases needs_human (README); the LLM (a local test server) calls both match. Each slice counts
    them as the whole does, on Spark as locally."""
    import pytest

    pytest.importorskip("openai")
    from fake_openai_server import FakeOpenAI, Reply

    cases = [json.loads(x) for x in (SQL / "cases.jsonl").read_text().splitlines() if x.strip()]
    for i, c in enumerate(cases):
        c["difficulty"] = ["easy", "hard"][i % 2]
    cp = tmp_path / "cases.jsonl"
    cp.write_text("".join(json.dumps(c) + "\n" for c in cases))

    def reply(req):
        return Reply(content='{"verdict": "match", "confidence": 9, "why": "The answer gives the asked values."}')

    outs = {}
    with FakeOpenAI(default=reply) as srv:
        for engine in ("local", "spark"):
            monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / engine))
            res = CliRunner().invoke(main, ["judge", str(cp), str(SQL / "arm_a.jsonl"), "--db", str(SQL / "clinic.sqlite"),
                                            "--llm", "judge-model", "--base-url", srv.base_url, "--engine", engine,
                                            "--slice-by", "difficulty", "--no-store", "-q", "--out", str(tmp_path / f"{engine}.json")])
            assert res.exit_code == 0, res.output
            outs[engine] = json.loads((tmp_path / f"{engine}.json").read_text())
    local, on_spark = outs["local"], outs["spark"]
    assert sum(v["needs_human"] for v in local["slices"].values()) == local["aggregate"]["needs_human"] == 0
    for name, want in local["slices"].items():
        got = on_spark["slices"][name]
        for key in ("pass_rate", "match", "no_match", "decided", "near_match", "needs_human", "unscored", "verified_wrong", "n"):
            assert got[key] == want[key], (name, key)
