"""Issue 29 item 6 in Chromium: a report made after its input file was deleted shows the texts, read from the copy
the run store kept, and the page says where they came from. The data is Open-Scribe's published PriMock57
predictions (examples/data), copied and deleted after scoring.

Uses the browser fixture, page helper and skips of :mod:`test_report_browser` (Debian's Chromium; the screenshot is
``test-artifacts/report/kept_texts.png``).
"""

from __future__ import annotations

import json
import shutil

import pytest

from test_report_browser import CHROMIUM, PRIMOCK, Page, expect, run

pytestmark = [
    pytest.mark.skipif(not __import__("os").path.exists(CHROMIUM), reason=f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"),
    pytest.mark.skipif(expect is None, reason="playwright is not installed (pip install -e '.[test]')"),
]


def test_the_texts_of_a_deleted_input_are_on_the_page(browser, tmp_path):
    preds = tmp_path / "preds.jsonl"
    shutil.copy(PRIMOCK, preds)
    want = {r["id"]: r for r in map(json.loads, preds.read_text(encoding="utf-8").splitlines())}
    store = tmp_path / "g.db"
    run("score", preds, "--store", store, "-q")
    preds.unlink()
    out = tmp_path / "kept.html"
    run("report", "latest", "--store", store, "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        assert "57 of 57 case(s) shown" in p.count_text()
        assert "shown from the copy kept in the run store" in pg.inner_text("#header")
        for cid in ("day1_consultation01", "day5_consultation07"):  # the first row and one further down
            pg.click(f"#case-table tr.case[data-id='{cid}']")
            detail = pg.locator(f"tr.detail[data-detail='{cid}']")
            expect(detail).to_be_visible()
            shown = " ".join(detail.inner_text().split())
            for side in ("prediction", "reference"):
                first_line = next(x for x in want[cid][side].splitlines() if len(x.split()) >= 4)
                assert " ".join(first_line.split()) in shown, (cid, side, first_line)
            assert detail.locator("mark").count() > 10  # the shared tokens are marked on the kept texts too
        p.shot("kept_texts")
        p.assert_offline()
    finally:
        p.close()
