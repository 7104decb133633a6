"""`goldeval report` writes its page a chunk of cases at a time: the page (each case's texts, marks and numbers as
embedded JSON) is never held as one string, and the run's inputs are found without reading its cases again.

Peak RSS of the whole invocation (tests/peak_rss.py) at two sizes in fresh processes, a ratio of memory and never a
timing. Each case here has two ~2 KB notes, so its share of the page is ~4.5 KB. What an embedded case must cost:
its texts once in the model (~4.2 KB as Python strings) and its marks and numbers; the page written whole held that
share four more times (as JSON bytes, decoded, escaped, inside the rendered template) and the run's per-case records
twice (931 MB at 100,000 cases against 461 MB written in chunks, benchmarks/README.md).
"""

from __future__ import annotations

import json
import os

from peak_rss import peak_kib

SIZES = (1_000, 6_000)
WORDS = ["bp", "138/86", "well-controlled", "metformin", "500", "mg", "daily", "chest", "pain", "denies", "history",
         "of", "hypertension", "follow-up", "in", "two", "weeks", "patient", "reports", "improved"]


def _note(k: int, step: int) -> str:
    return " ".join(WORDS[(k + j * step) % len(WORDS)] for j in range(300))  # ~2 KB


def test_report_memory_a_case_is_its_texts_once(tmp_path):
    peaks = []
    for n in SIZES:
        env = {**os.environ, "GOLDEVAL_HOME": str(tmp_path / f"home{n}")}
        src = tmp_path / f"notes{n}.jsonl"
        with open(src, "w") as fh:
            for k in range(n):
                fh.write(json.dumps({"id": f"c{k}", "prediction": _note(k, 3), "reference": _note(k, 7)}) + "\n")
        peak_kib(["score", str(src), "-q", "--workers", "1"], env)  # records the run
        page = tmp_path / f"page{n}.html"
        peaks.append(peak_kib(["report", "latest", "--out", str(page), "-q"], env))
        assert page.stat().st_size > n * 4_000  # every case embedded, texts included
    small, large = peaks
    per_case = (large - small) * 1024 / (SIZES[1] - SIZES[0])
    assert per_case < 12_000, (peaks, f"{per_case:.0f} bytes a case")  # ~8,700 now; ~31,000 when the page was one string
    assert large / small < 1.8, peaks  # 1.3 written in chunks; 1.9 when the page was one string
