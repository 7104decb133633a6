"""`goldeval judge` keeps its memory flat: each case streams to --out and to the store as it is judged, the join
keeps ~25 bytes an attempt (goldeval.answers.join), never a list of every case.

A ratio of peak RSS at two sizes in fresh processes (never a timing; the peak is read by tests/peak_rss.py), as
tests/e2e/test_score_streaming.py does for `score`.
"""

from __future__ import annotations

import json
import os

import pytest

from peak_rss import peak_kib


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
    small, large = peaks
    assert large / small < 1.2, peaks
    assert large - small < 12 * 1024, peaks
