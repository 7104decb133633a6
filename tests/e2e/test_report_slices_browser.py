"""The report of a run scored with ``--slice-by`` shows its per-slice table in a real browser (Chromium, headless,
offline), with the slice gates named in the decision table (issue 28 item 4)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main

try:
    from playwright.sync_api import expect
except ImportError:  # the test extra brings it; without it the test below is skipped
    expect = None

REPO = Path(__file__).resolve().parents[2]
SQL = REPO / "examples" / "sql"
CHROMIUM = os.environ.get("GOLDEVAL_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("GOLDEVAL_TEST_ARTIFACTS", REPO / "test-artifacts")) / "report"

if os.environ.get("GOLDEVAL_REQUIRE_BROWSER") == "1" and (not os.path.exists(CHROMIUM) or expect is None):
    raise RuntimeError(f"GOLDEVAL_REQUIRE_BROWSER=1 but no Chromium at {CHROMIUM} or no playwright.")

pytestmark = [
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"),
    pytest.mark.skipif(expect is None, reason="playwright is not installed (pip install -e '.[test]')"),
]


def test_the_report_shows_the_slices_and_the_slice_gate(tmp_path, browser):
    # `browser`: the session's one Chromium (tests/browser_session.py)
    cases = [json.loads(x) for x in (SQL / "cases.jsonl").read_text().splitlines() if x.strip()]
    for i, c in enumerate(cases):
        c["difficulty"] = "hard" if i % 2 else "easy"
    cp = tmp_path / "cases.jsonl"
    cp.write_text("".join(json.dumps(c) + "\n" for c in cases))
    dod = tmp_path / "dod.toml"
    dod.write_text("[gates.slices.hard]\npass_rate = { min = 0.5 }\n")
    results, report = tmp_path / "r.json", tmp_path / "report.html"
    res = CliRunner().invoke(main, ["judge", str(cp), str(SQL / "arm_a.jsonl"), "--db", str(SQL / "clinic.sqlite"),
                                    "--slice-by", "difficulty", "--gates", str(dod), "--out", str(results), "--no-store", "-q"])
    r = json.loads(results.read_text())
    assert res.exit_code == (0 if r["slices"]["hard"]["pass_rate"] >= 0.5 else 1), res.output  # the slice gate decides
    res = CliRunner().invoke(main, ["report", "--results", str(results), "--out", str(report)])
    assert res.exit_code == 0, res.output
    requests: list[str] = []
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    try:
        page = context.new_page()
        page.on("request", lambda q: requests.append(q.url))
        page.goto(report.as_uri())
        table = page.locator("#slices-table")
        expect(page.locator("#slices h2")).to_have_text("Per slice of difficulty")
        expect(table.locator("tr")).to_have_count(3)  # the header and the two slices
        hard = r["slices"]["hard"]
        expect(table.locator("tr", has_text="hard").locator("td").nth(1)).to_have_text(f"{hard['pass_rate']:.4f}")
        expect(page.locator("#decision")).to_contain_text("pass_rate [slice hard]")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.locator("#slices").screenshot(path=str(ARTIFACTS / "slices.png"))
    finally:
        context.close()
    assert all(u.startswith("file://") for u in requests)  # nothing fetched
