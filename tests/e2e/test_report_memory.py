"""`goldeval report` writes its page a chunk of cases at a time: the page (each case's texts, marks and numbers as
embedded JSON) is never held as one string, and the run's inputs are found without reading its cases again. The
run's cases are read from the store with a cursor (never held together) and each chunk's texts are read as it is
written: an embedded case costs its row (numbers, ids) until the page is written, a case left out of the page
(above --max-cases) next to nothing.

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
    # ~2,300 streamed; ~8,700 with the records and every embedded text held; ~31,000 when the page was one string
    assert per_case < 4_000, (peaks, f"{per_case:.0f} bytes a case")
    assert large / small < 1.3, peaks  # 1.11 streamed; 1.3 with the records held; 1.9 when the page was one string


def test_report_memory_does_not_grow_with_the_cases_it_leaves_out(tmp_path):
    # --max-cases 500: the page embeds 500 cases at both sizes; the 500 or 5,500 others are counted (summary, charts)
    # and sampled in one pass over the store's cursor, so the peak does not grow with them (measured: 91.2 MB at
    # both sizes; ~12 KB a case when every record was held)
    peaks = []
    for n in SIZES:
        env = {**os.environ, "GOLDEVAL_HOME": str(tmp_path / f"home{n}")}
        src = tmp_path / f"notes{n}.jsonl"
        with open(src, "w") as fh:
            for k in range(n):
                fh.write(json.dumps({"id": f"c{k}", "prediction": _note(k, 3), "reference": _note(k, 7)}) + "\n")
        peak_kib(["score", str(src), "-q", "--workers", "1"], env)
        page = tmp_path / f"page{n}.html"
        peaks.append(peak_kib(["report", "latest", "--out", str(page), "-q", "--max-cases", "500"], env))
        assert 500 * 4_000 < page.stat().st_size < 600 * 4_500 + 2_000_000  # 500 cases' texts, not more
    small, large = peaks
    per_case = (large - small) * 1024 / (SIZES[1] - SIZES[0])
    assert per_case < 1_000, (peaks, f"{per_case:.0f} bytes a case")
