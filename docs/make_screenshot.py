#!/usr/bin/env python3
"""Regenerate the README's screenshot of the HTML report: ``docs/report-clinic-arm-b.png``.

The clinic SQL example's arm B is judged into a throwaway store (``examples/sql``, as the README runs it), its
report is written, opened in Debian's Chromium (Playwright, ``/usr/bin/chromium``; no browser download), the
failures filter is clicked and case q01 is opened; the picture is the window from the charts to the opened case.
Run it after changing the page (templates, charts) and look at the result before committing::

    python docs/make_screenshot.py [--out docs/report-clinic-arm-b.png]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SQL = REPO / "examples" / "sql"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "report-clinic-arm-b.png"))
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()

    from click.testing import CliRunner
    from playwright.sync_api import sync_playwright

    from goldeval.cli import main as cli

    with tempfile.TemporaryDirectory() as d:
        store, page = Path(d) / "g.db", Path(d) / "report.html"
        r = CliRunner().invoke(cli, ["judge", str(SQL / "cases.jsonl"), str(SQL / "arm_b.jsonl"), "--db", str(SQL / "clinic.sqlite"),
                                     "--gates", str(SQL / "dod.toml"), "--store", str(store), "--arm", "arm-b", "-q"])
        if r.exit_code != 1:  # arm B fails its definition of done (examples/sql/README.md)
            raise SystemExit(f"judge exited {r.exit_code}: {r.output}")
        r = CliRunner().invoke(cli, ["report", "latest", "--store", str(store), "--out", str(page)])
        if r.exit_code != 0:
            raise SystemExit(f"report exited {r.exit_code}: {r.output}")
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=args.chromium, args=LAUNCH_ARGS)
            pg = b.new_page(viewport={"width": 1280, "height": 1000})
            pg.goto(page.as_uri())
            pg.wait_for_selector("html[data-ready='1']")
            pg.click("#filters button[data-filter='fail']")
            pg.click("#case-table tr.case[data-id='q01']")
            pg.wait_for_selector("tr.detail[data-detail='q01']")
            top = pg.evaluate("document.getElementById('charts').getBoundingClientRect().top + window.scrollY")
            pg.evaluate(f"window.scrollTo(0, {top - 8})")
            pg.screenshot(path=args.out)
            b.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
