"""`goldeval compare` holds little a case: each stored case is read down to what a comparison reads (a free-text
case to its score) as it is decoded, the runs' inputs are found without reading their cases, and the JSON is
written without a second copy.

Peak RSS of the whole invocation (tests/peak_rss.py) at two sizes in fresh processes, a ratio of memory and never a
timing. What a case must cost: its two scores, its row of ``deltas`` ({id, a, b, delta}: ~220 bytes as Python
objects) and that row in the JSON written (~150 bytes), ~0.7 KiB in all; the whole records of both runs held in
memory, as compare did before, cost ~2.8 KiB a case (371 MB at 100,000 cases, benchmarks/README.md).

Both layouts of a ``score`` run's stored cases are covered (goldeval.runs.recorder.Recorder.record_lines): rows of
one length score to a few distinct tails (token counts and F1) and are stored as coded blocks (format 3, read back
through the store's rows); rows whose lengths vary bring a tail of their own each and stay JSON-line blocks
(format 1, read by the decode-once path) — the layout of the long-note runs of benchmarks/bench_compare.py. The
test checks which layout each run got, so that it keeps covering both.
"""

from __future__ import annotations

import json
import os

import pytest
from peak_rss import peak_kib
from store_layout import block_formats

SIZES = (2_000, 40_000)


def _score(path, n, seed, env, varied):
    words = ["bp", "138/86", "well-controlled", "metformin", "500", "mg", "daily", "chest", "pain", "denies"]
    with open(path, "w") as fh:
        for k in range(n):
            # varied: 6-46 and 5-41 tokens, (k % 41, k % 37) apart, so nearly every case's tail is its own
            ref = " ".join(words[(k + j) % 10] for j in range(6 + (k % 41 if varied else 0)))
            pred = " ".join(words[(k * seed + j * 3) % 10] for j in range(5 + (k % 37 if varied else k % 3)))
            fh.write(json.dumps({"id": f"c{k}", "prediction": pred, "reference": ref}) + "\n")
    peak_kib(["score", str(path), "-q", "--workers", "1"], env)  # records the run (exit 0 is checked)


@pytest.mark.parametrize(("varied", "layout"), [(False, 3), (True, 1)], ids=["coded-format-3", "json-lines-format-1"])
def test_compare_memory_a_case_is_small(tmp_path, varied, layout):
    peaks = []
    for n in SIZES:
        home = tmp_path / f"home{n}"
        env = {**os.environ, "GOLDEVAL_HOME": str(home)}
        _score(tmp_path / f"a{n}.jsonl", n, 1, env, varied)
        _score(tmp_path / f"b{n}.jsonl", n, 7, env, varied)
        assert block_formats(home) == ({layout}, 0)  # the layout this case covers, every case in blocks
        out = tmp_path / f"cmp{n}.json"
        peaks.append(peak_kib(["compare", "latest~1", "latest", "-q", "--out", str(out)], env))
        cmp = json.loads(out.read_text())
        assert cmp["scores"]["n_pairs"] == n and len(cmp["scores"]["deltas"]) == n  # every case compared
        assert cmp["scores"]["bootstrap"]["ci"] is not None
    small, large = peaks
    per_case = (large - small) * 1024 / (SIZES[1] - SIZES[0])
    assert per_case < 1024, (peaks, f"{per_case:.0f} bytes a case")
    assert large / small < 1.8, peaks  # 38,000 more cases: less than 80% above the peak at 2,000 (it was 2.3x)
