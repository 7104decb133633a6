#!/usr/bin/env python3
"""Benchmark: size and speed of the HTML report (``goldeval report``) at 1,000 and 100,000 free-text cases.

For each size N the corpus (``../shared/bench/make_corpus.py --n N``, deterministic, cached under
``benchmarks/out/``) is scored once with ``goldeval.score_file``; then, alternating for ``--repeat`` rounds so load
on the machine hits both alike:

* **anchor**: scoring the same corpus (``goldeval.score_file``, token F1 of every row, one process);
* **report**: building and rendering the report page from the same results (texts read back from the input,
  shared-token marks, charts, bootstrap interval, JSON embedding, template).

It prints the medians and the min-max of both, their ratio, the page's size, the bytes of case text it embeds
(each prediction and reference once) and the size minus those texts (the issue's budget: under 2 MB for 1,000
cases). With ``--browser`` it also opens the page in Debian's Chromium (Playwright) and times load-until-ready
and one filter click, against the anchor of loading an empty page. Usage::

    python benchmarks/bench_report.py [--sizes 1000 100000] [--repeat 3] [--browser]
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
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--browser", action="store_true", help="also time opening and filtering the page in Chromium")
    args = ap.parse_args()

    import orjson

    from goldeval.freetext import score_file
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
        print(f"== {n:,} cases ({embedded:,} embedded{'; ' + model['sample']['note'][:60] + '…' if model['sample'] else ''})")
        print(f"  anchor (scoring it):  {fmt(anchor_t)}")
        print(f"  report page:          {fmt(report_t)}")
        print(f"  ratio report / anchor (medians): {statistics.median(report_t) / statistics.median(anchor_t):.1f}")
        print(f"  page {size / 1e6:.2f} MB = case texts {texts / 1e6:.2f} MB (JSON strings, once each) "
              f"+ the rest {(size - texts) / 1e6:.2f} MB")
        if args.browser:
            browse(html, n)


def browse(html: str, n: int) -> None:
    from playwright.sync_api import expect, sync_playwright

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"]
    with tempfile.TemporaryDirectory() as d, sync_playwright() as p:
        page_path = Path(d) / "r.html"
        page_path.write_text(html, encoding="utf-8")
        empty = Path(d) / "e.html"
        empty.write_text("<!DOCTYPE html><title>x</title><p>x</p>", encoding="utf-8")
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        pg = b.new_page()
        t = time.perf_counter()
        pg.goto(empty.as_uri())
        anchor = time.perf_counter() - t
        t = time.perf_counter()
        pg.goto(page_path.as_uri())
        pg.wait_for_selector("html[data-ready='1']", timeout=60_000)
        load = time.perf_counter() - t
        t = time.perf_counter()
        pg.fill("#search", "zzzz-no-such-case")
        expect(pg.locator("#count")).to_have_text(__import__("re").compile(r"^0 of "), timeout=60_000)
        search = time.perf_counter() - t
        pg.fill("#search", "")
        t = time.perf_counter()
        pg.click("#filters button[data-filter='pass']")
        pg.locator("#case-table tbody tr.case").first.wait_for()
        click = time.perf_counter() - t
        b.close()
    print(f"  browser: empty page {anchor:.3f} s; report load-until-ready {load:.2f} s; search {search:.2f} s "
          f"(incl. 120 ms debounce); filter click {click:.2f} s")


if __name__ == "__main__":
    main()
