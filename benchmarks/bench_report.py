#!/usr/bin/env python3
"""Benchmark: size and speed of the HTML report (``goldeval report``) at 1,000 and 100,000 free-text cases.

For each size N (default 1,000, 20,000 and 100,000) the corpus (``../shared/bench/make_corpus.py --n N``, deterministic, cached under
``benchmarks/out/``) is scored once with ``goldeval.score_file``; then, alternating for ``--repeat`` rounds so load
on the machine hits both alike:

* **anchor**: scoring the same corpus (``goldeval.score_file``, token F1 of every row, one process);
* **report**: building and rendering the report page from the same results (texts read back from the input,
  shared-token marks, charts, bootstrap interval, JSON embedding, template).

It prints the medians and the min-max of both, their ratio, the page's size, the bytes of case text it embeds
(each prediction and reference once) and the size minus those texts (the issue's budget: under 2 MB for 1,000
cases). Above 20,000 cases (``--max-cases``' default) the page embeds a stated sample: the 100,000-case run gives a
page of 20,000. With ``--browser`` it also opens each page in Debian's Chromium (Playwright), ``--repeat`` times,
and times load-until-ready, a search, two filter clicks, a sort and opening a case, against the anchor of loading
an empty page. Usage::

    python benchmarks/bench_report.py [--sizes 1000 20000 100000] [--repeat 3] [--browser]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("GOLDEVAL_SHARED", REPO.parent / "shared"))


def corpus(n: int) -> Path:
    out = HERE / "out" / f"corpus_{n}.jsonl"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        gen = SHARED / "bench" / "make_corpus.py"
        if not gen.exists():
            sys.exit(f"bench_report: {gen} not found; set GOLDEVAL_SHARED.")
        subprocess.run([sys.executable, str(gen), "--n", str(n), "--out", str(out)], check=True)
    return out


def fmt(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.3f} s (min {min(xs):.3f}, max {max(xs):.3f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 20_000, 100_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--browser", action="store_true", help="also time opening and filtering the page in Chromium")
    args = ap.parse_args()

    import orjson

    from goldeval.pipeline.files import score_file
    from goldeval.report.html import render_html
    from goldeval.report.model import ReportOptions, build_model
    from goldeval.report.build import sources_loader

    for n in args.sizes:
        path = corpus(n)
        results = score_file(path, workers=1)
        anchor_t, report_t = [], []
        html = ""
        model: dict = {}
        for _ in range(args.repeat):
            t = time.perf_counter()
            score_file(path, workers=1)
            anchor_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            model = build_model(results, sources=sources_loader(results, None), options=ReportOptions())
            html = render_html(model)
            report_t.append(time.perf_counter() - t)
        size = len(html.encode("utf-8"))
        texts = sum(len(orjson.dumps(c.get("prediction"))) + len(orjson.dumps(c.get("reference"))) for c in model["cases"])
        embedded = len(model["cases"])
        print(f"== {n:,} cases ({embedded:,} embedded)")
        if model["sample"]:
            print(f"  the page says: {model['sample']['note']}")
        print(f"  anchor (scoring it):  {fmt(anchor_t)}")
        print(f"  report page:          {fmt(report_t)}")
        print(f"  ratio report / anchor (medians): {statistics.median(report_t) / statistics.median(anchor_t):.1f}")
        print(f"  page {size / 1e6:.2f} MB = case texts {texts / 1e6:.2f} MB (JSON strings, once each) "
              f"+ the rest {(size - texts) / 1e6:.2f} MB"
              + (f" (issue 12's budget at 1,000 cases: the rest under 2 MB: {'yes' if size - texts < 2e6 else 'NO'})" if n == 1000 else ""))
        if args.browser:
            browse(html, n, args.repeat)


def browse(html: str, n: int, repeat: int) -> None:
    """Open the page in Chromium *repeat* times (a fresh page each time) and time: load until the table is drawn,
    a search that matches nothing (with its 120 ms debounce), a filter click that empties the table and one that
    fills it again, a sort of every embedded case by F1, and opening one case; the anchor is loading an empty page."""
    import re

    from playwright.sync_api import expect, sync_playwright

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"]
    times: dict[str, list[float]] = {}

    def lap(name: str, t: float) -> None:
        times.setdefault(name, []).append(time.perf_counter() - t)

    with tempfile.TemporaryDirectory() as d, sync_playwright() as p:
        page_path = Path(d) / "r.html"
        page_path.write_text(html, encoding="utf-8")
        empty = Path(d) / "e.html"
        empty.write_text("<!DOCTYPE html><title>x</title><p>x</p>", encoding="utf-8")
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        for _ in range(repeat):
            pg = b.new_page()
            t = time.perf_counter()
            pg.goto(empty.as_uri())
            lap("empty page (anchor)", t)
            t = time.perf_counter()
            pg.goto(page_path.as_uri())
            pg.wait_for_selector("html[data-ready='1']", timeout=120_000)
            lap("load until ready", t)
            shown = pg.inner_text("#count").split(" of ")[1].split(" ")[0]
            t = time.perf_counter()
            pg.fill("#search", "zzzz-no-such-case")
            expect(pg.locator("#count")).to_have_text(re.compile(r"^0 of "), timeout=60_000)
            lap("search (incl. 120 ms debounce)", t)
            pg.fill("#search", "")
            expect(pg.locator("#count")).to_have_text(re.compile(rf"^{shown} of "), timeout=60_000)
            t = time.perf_counter()
            pg.click("#filters button[data-filter='unscored']")
            expect(pg.locator("#count")).to_have_text(re.compile(r"^0 of "), timeout=60_000)
            lap("filter: unscored (empties the table)", t)
            t = time.perf_counter()
            pg.click("#filters button[data-filter='scored']")
            expect(pg.locator("#count")).to_have_text(re.compile(rf"^{shown} of "), timeout=60_000)
            lap("filter: scored (every case again)", t)
            t = time.perf_counter()
            pg.click("#case-table th[data-key='f1']")
            pg.wait_for_selector("#case-table th[data-key='f1'][aria-sort='ascending']", timeout=60_000)
            lap("sort by F1", t)
            first = pg.locator("#case-table tbody tr.case").first
            cid = first.get_attribute("data-id")
            t = time.perf_counter()
            first.click()
            pg.wait_for_selector(f"tr.detail[data-detail='{cid}'] mark, tr.detail[data-detail='{cid}'] .text", timeout=60_000)
            lap("open one case", t)
            pg.close()
        b.close()
    for name, xs in times.items():
        print(f"  browser {name}: {fmt(xs)}")


if __name__ == "__main__":
    main()
