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

Both layouts of a ``score`` run's stored cases are covered (goldeval.runs.recorder.Recorder.record_lines): notes of
one length (300 tokens each) score to a few distinct tails (token counts and F1) and are stored as coded blocks
(format 3, read back through the store's rows); notes whose lengths vary bring a tail of their own each and stay
JSON-line blocks (format 1, read by the decode-once path). Each test checks which layout its runs got.
"""

from __future__ import annotations

import json
import os

import pytest
from peak_rss import peak_kib
from store_layout import block_formats

SIZES = (1_000, 6_000)
WORDS = ["bp", "138/86", "well-controlled", "metformin", "500", "mg", "daily", "chest", "pain", "denies", "history",
         "of", "hypertension", "follow-up", "in", "two", "weeks", "patient", "reports", "improved"]


LAYOUTS = pytest.mark.parametrize(("varied", "layout"), [(False, 3), (True, 1)],
                                  ids=["coded-format-3", "json-lines-format-1"])


def _note(k: int, step: int, varied: bool = False) -> str:
    # ~2 KB; varied: k % 93 (step 3, the prediction) or k % 97 (step 7, the reference) tokens more, 9,021 pairs of
    # lengths, so that the token counts give nearly every case a tail of its own
    return " ".join(WORDS[(k + j * step) % len(WORDS)] for j in range(300 + (k % (90 + step) if varied else 0)))


@LAYOUTS
def test_report_memory_a_case_is_its_texts_once(tmp_path, varied, layout):
    peaks = []
    for n in SIZES:
        home = tmp_path / f"home{n}"
        env = {**os.environ, "GOLDEVAL_HOME": str(home)}
        src = tmp_path / f"notes{n}.jsonl"
        with open(src, "w") as fh:
            for k in range(n):
                fh.write(json.dumps({"id": f"c{k}", "prediction": _note(k, 3, varied), "reference": _note(k, 7, varied)})
                         + "\n")
        peak_kib(["score", str(src), "-q", "--workers", "1"], env)  # records the run
        page = tmp_path / f"page{n}.html"
        assert block_formats(home) == ({layout}, 0)  # the layout this case covers, every case in blocks
        peaks.append(peak_kib(["report", "latest", "--out", str(page), "-q"], env))
        assert page.stat().st_size > n * 4_000  # every case embedded, texts included
    small, large = peaks
    per_case = (large - small) * 1024 / (SIZES[1] - SIZES[0])
    # ~2,300 streamed; ~8,700 with the records and every embedded text held; ~31,000 when the page was one string
    assert per_case < 4_000, (peaks, f"{per_case:.0f} bytes a case")
    assert large / small < 1.3, peaks  # 1.11 streamed; 1.3 with the records held; 1.9 when the page was one string


@LAYOUTS
def test_report_memory_does_not_grow_with_the_cases_it_leaves_out(tmp_path, varied, layout):
    # --max-cases 500: the page embeds 500 cases at both sizes; the 500 or 5,500 others are counted (summary, charts)
    # and sampled in one pass over the store's cursor, so the peak does not grow with them (measured: 91.2 MB at
    # both sizes; ~12 KB a case when every record was held)
    peaks = []
    for n in SIZES:
        home = tmp_path / f"home{n}"
        env = {**os.environ, "GOLDEVAL_HOME": str(home)}
        src = tmp_path / f"notes{n}.jsonl"
        with open(src, "w") as fh:
            for k in range(n):
                fh.write(json.dumps({"id": f"c{k}", "prediction": _note(k, 3, varied), "reference": _note(k, 7, varied)})
                         + "\n")
        peak_kib(["score", str(src), "-q", "--workers", "1"], env)
        assert block_formats(home) == ({layout}, 0)
        page = tmp_path / f"page{n}.html"
        peaks.append(peak_kib(["report", "latest", "--out", str(page), "-q", "--max-cases", "500"], env))
        assert 500 * 4_000 < page.stat().st_size < 600 * 4_500 + 2_000_000  # 500 cases' texts, not more
    small, large = peaks
    per_case = (large - small) * 1024 / (SIZES[1] - SIZES[0])
    assert per_case < 1_000, (peaks, f"{per_case:.0f} bytes a case")
