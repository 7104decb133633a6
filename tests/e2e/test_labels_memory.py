"""`goldeval labels` keeps its memory flat: pair counts and streamed per-case rows, never a list of every row.

A ratio of peak RSS at two sizes in fresh processes (never a timing), as tests/e2e/test_score_streaming.py does
for `score` (the peak is read by tests/peak_rss.py).
"""

from __future__ import annotations

import json
import os

import pytest

from peak_rss import assert_flat, peak_kib

def _labels(path, n):
    with open(path, "w") as fh:
        for k in range(n):
            gold = "escalate" if k % 5 == 0 else "approve"
            pred = gold if k % 7 else ("approve" if gold == "escalate" else "escalate")
            fh.write(json.dumps({"id": f"c{k}", "gold": gold, "pred": pred}) + "\n")


@pytest.mark.parametrize("store", [False, True])
def test_labels_memory_does_not_grow_with_rows(tmp_path, store):
    # 2,000 rows vs 80,000 rows. Before issue 15 the command held every row and record: ~870 bytes a row
    # (869 MiB at 1e6), i.e. about +65 MiB here. A ratio of peaks, not a timing.
    env = {**os.environ, "GOLDEVAL_HOME": str(tmp_path / "home")}
    peaks = []
    for n in (2_000, 80_000):
        src = tmp_path / f"labels{n}.jsonl"
        _labels(src, n)
        args = ["labels", str(src), "--positive", "escalate", "--out", str(tmp_path / f"out{n}.json"), "-q"]
        if not store:
            args.append("--no-store")
        peaks.append(peak_kib(args, env))
    assert_flat(peaks)
