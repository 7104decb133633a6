"""`goldeval judge` keeps its memory flat: each case streams to --out and to the store as it is judged, the join
keeps ~25 bytes an attempt (goldeval.answers.join), never a list of every case.

A ratio of peak RSS at two sizes in fresh processes (never a timing; the peak is read by tests/peak_rss.py), as
tests/e2e/test_score_streaming.py does for `score`.
"""

from __future__ import annotations

import json
import os

import pytest

from peak_rss import assert_flat, peak_kib


def _files(tmp_path, n):
    """n cases and their attempts. Every 10th case has a one-row table answer (every 30th of those a wrong value:
    no_match, else match); the others have a final_query and no --db is given (unscored: it cannot be run), the
    cheapest case to judge, so that the large size stays quick. One attempt has no case (a row failure)."""
    cases, attempts = tmp_path / f"cases{n}.jsonl", tmp_path / f"attempts{n}.jsonl"
    with open(cases, "w") as c, open(attempts, "w") as a:
        for k in range(n):
            if k % 10 == 0:
                c.write(json.dumps({"id": f"c{k}", "question": "How many?", "golden": {"kind": "value", "columns": ["n"], "rows": [[k % 7]]}}) + "\n")
                a.write(json.dumps({"id": f"c{k}", "columns": ["n"], "rows": [[k % 7 + (k % 30 == 0)]]}) + "\n")
            else:
                c.write(json.dumps({"id": f"c{k}", "question": "How many?", "golden": {"kind": "value", "value": k % 7}}) + "\n")
                a.write(json.dumps({"id": f"c{k}", "final_query": f"SELECT {k % 7}"}) + "\n")
        a.write(json.dumps({"id": "orphan", "text": "7"}) + "\n")
    return cases, attempts


@pytest.mark.parametrize("store", [False, True])
def test_judge_memory_does_not_grow_with_cases(tmp_path, store):
    # 1,000 cases vs 20,000. Before the judge streamed, it kept every outcome for per_example, both files' ids, and
    # the results dict written at the end: the peak grew by about 7 KiB a case on one-row table cases (99.9 MiB at
    # 2k, 503 MiB at 60k) and, on this mix, by several KiB a case (+60 MiB or more here). A ratio of peaks.
    env = {**os.environ, "GOLDEVAL_HOME": str(tmp_path / "home")}
    peaks = []
    for n in (1_000, 20_000):
        cases, attempts = _files(tmp_path, n)
        out = tmp_path / f"out{n}.jsonl"
        args = ["judge", str(cases), str(attempts), "--out", str(out), "--out-format", "jsonl", "-q"]
        if not store:
            args.append("--no-store")
        peaks.append(peak_kib(args, env))
        lines = out.read_text().splitlines()
        agg = json.loads(lines[-1])["aggregate"]
        # by construction (k = 0 .. n-1): n/10 table cases (k % 10 == 0), of which ceil(n/30) no_match (k % 30 == 0);
        # the rest unscored; one orphan attempt
        wrong = -(-n // 30)
        assert (agg["n"], agg["no_match"], agg["match"], agg["unscored"]) == (n, wrong, n // 10 - wrong, n - n // 10)
        assert agg["n_row_failures"] == 1 and len(lines) == n + 1
    assert_flat(peaks)


def test_join_tells_apart_ids_that_share_a_hash(tmp_path, monkeypatch):
    # Every id hashed to 0 (the index's look-up then reads each candidate's line to compare the id itself): the
    # joined rows, failures and order are those of the join with real hashes. Files: _files(…, 40) plus a case
    # without an attempt and a repeated attempt id (a failure naming line 1).
    from goldeval.answers import join
    from goldeval.answers.batch import joined_rows

    cases, attempts = _files(tmp_path, 40)
    with open(cases, "a") as c:
        c.write(json.dumps({"id": "lonely", "question": "?", "golden": {"kind": "value", "value": 1}}) + "\n")
    with open(attempts, "a") as a:
        a.write(json.dumps({"id": "c0", "text": "again"}) + "\n")
    want = list(joined_rows(cases, attempts))
    monkeypatch.setattr(join, "hash", lambda s: 0, raising=False)
    got = list(joined_rows(cases, attempts))
    assert got == want
    assert [r["id"] for r in got if "id" in r][-1] == "lonely" and got[40]["attempt"] is None
    fails = [r["row_failure"] for r in got if "row_failure" in r]
    assert [(f["line"], f["id"]) for f in fails] == [(42, "c0"), (41, "orphan")]
    assert "repeats line 1" in fails[0]["error"] and "has no case" in fails[1]["error"]


def test_jsonl_out_holds_the_json_results(tmp_path):
    # --out-format jsonl: one per_example entry a line, then the rest; the same results as --out-format json.
    from click.testing import CliRunner

    from goldeval.cli import main

    cases, attempts = _files(tmp_path, 60)
    outs = {}
    for fmt in ("json", "jsonl"):
        out = tmp_path / f"r.{fmt}"
        res = CliRunner().invoke(main, ["judge", str(cases), str(attempts), "--no-store", "--out", str(out), "--out-format", fmt, "-q"])
        assert res.exit_code == 0, res.output
        outs[fmt] = out.read_text()
    full = json.loads(outs["json"])
    lines = [json.loads(x) for x in outs["jsonl"].splitlines()]
    assert "per_example" not in lines[-1] and lines[:-1] == full["per_example"] and len(lines) == 61
    strip = lambda r: {k: v for k, v in r.items() if k not in ("per_example", "elapsed_sec")}  # noqa: E731
    assert strip(lines[-1]) == strip(full)


def test_console_lists_the_first_cases_and_counts_the_rest(tmp_path):
    # The console keeps no list of every case: it lists the first TABLE_CASES (200) and counts the rest (here 250
    # cases: 50 more), saying where every case is.
    from click.testing import CliRunner

    from goldeval.cli import main
    from goldeval.cli.judge import TABLE_CASES

    cases, attempts = _files(tmp_path, 250)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["judge", str(cases), str(attempts), "--no-store", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert TABLE_CASES == 200 and "\n c199 " in res.output and " c200 " not in res.output
    text = " ".join(res.output.split())  # (the console wraps long lines)
    assert f"… and 50 more cases not listed (the first 200 are); every case is in --out {out}." in text
    assert len(json.loads(out.read_text())["per_example"]) == 250
