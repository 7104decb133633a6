"""The HTML report in a real browser: Debian's Chromium driven by Playwright for Python (never a downloaded browser).

Each test opens a report written by ``goldeval report`` from ``file://``, clicks a filter, searches, opens a row and
checks what the page shows; every request the page makes is recorded and must be the page itself; a hostile
answer is shown as text and never runs. A screenshot of every page is kept as a test artifact under
``test-artifacts/report/NAME.png`` in the repository (gitignored; ``GOLDEVAL_TEST_ARTIFACTS=DIR`` moves it to
``DIR/report/``).

Skipped, with the reason, only where /usr/bin/chromium is absent; ``.ci/run`` installs it and sets
``GOLDEVAL_REQUIRE_BROWSER=1``, which turns that skip into an error.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.answers.config import JUDGE_VERSION
from goldeval.cli import main

try:
    from playwright.sync_api import expect
except ImportError:  # the test extra brings it; without it the tests below are skipped
    expect = None

REPO = Path(__file__).resolve().parents[2]
PRIMOCK = REPO / "examples" / "data" / "openscribe_primock57_predictions.jsonl"
SQL = REPO / "examples" / "sql"
LABELS = REPO / "examples" / "labels"
CHROMIUM = os.environ.get("GOLDEVAL_CHROMIUM", "/usr/bin/chromium")  # (the `browser` fixture: tests/browser_session.py)
ARTIFACTS = Path(os.environ.get("GOLDEVAL_TEST_ARTIFACTS", REPO / "test-artifacts")) / "report"

# .ci/run sets GOLDEVAL_REQUIRE_BROWSER=1: there a missing browser is an error, never a quiet skip
if os.environ.get("GOLDEVAL_REQUIRE_BROWSER") == "1" and (not os.path.exists(CHROMIUM) or expect is None):
    raise RuntimeError(f"GOLDEVAL_REQUIRE_BROWSER=1 but no Chromium at {CHROMIUM} or no playwright: the report's browser "
                       "tests must run here (apt-get install chromium; pip install -e '.[test]').")

pytestmark = [
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"),
    pytest.mark.skipif(expect is None, reason="playwright is not installed (pip install -e '.[test]')"),
]


def run(*args, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, (args, result.output)
    return result.output


class Page:
    """A report opened in a fresh browser context, with every request and console error recorded."""

    def __init__(self, browser, path: Path, *, width: int = 1300):
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)
        self.page.wait_for_selector("html[data-ready='1']", timeout=10_000)

    def shot(self, name: str) -> Path:
        """The whole page as ``ARTIFACTS/name.png``. The window is made as tall as the page first (up to 20,000 px)
        rather than using ``full_page``: in a ``full_page`` capture the case table's sticky header came out blank."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        out = ARTIFACTS / f"{name}.png"
        size = self.page.viewport_size
        height = min(20_000, self.page.evaluate("document.documentElement.scrollHeight"))
        self.page.set_viewport_size({"width": size["width"], "height": max(size["height"], height)})
        try:
            self.page.screenshot(path=str(out))
        finally:
            self.page.set_viewport_size(size)
        return out

    def rows(self) -> list[str]:
        return self.page.locator("#case-table tbody tr.case").evaluate_all("rs => rs.map(r => r.dataset.id)")

    def count_text(self) -> str:
        return self.page.inner_text("#count")

    def assert_offline(self):
        # The only request is the page itself: no script, style, font, image or beacon from anywhere.
        assert self.requests == [self.url], self.requests
        assert not self.errors, self.errors

    def assert_charts_fit(self):
        # every text of every chart (titles, labels, annotations) lies inside its chart: none is cut at an edge
        out = self.page.evaluate("""() => Array.from(document.querySelectorAll('figure.chart svg')).flatMap(svg => {
            const r = svg.getBoundingClientRect();
            return Array.from(svg.querySelectorAll('text')).filter(t => {
                const b = t.getBoundingClientRect();
                return b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5;
            }).map(t => t.textContent); })""")
        assert self.page.locator("figure.chart svg text").count() > 0  # text is text (not paths): the check sees it
        assert out == [], out

    def close(self):
        self.context.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One store: PriMock57 scored (Open-Scribe's published predictions), the clinic SQL example judged for arm A
    and arm B with its definition of done. Returns (store, {name: run id}, folder)."""
    d = tmp_path_factory.mktemp("report")
    store = d / "g.db"
    run("score", PRIMOCK, "--store", store, "--arm", "openscribe", "-q")
    run("judge", SQL / "cases.jsonl", SQL / "arm_a.jsonl", "--db", SQL / "clinic.sqlite", "--gates", SQL / "dod.toml",
        "--store", store, "--arm", "arm-a", "-q")
    run("judge", SQL / "cases.jsonl", SQL / "arm_b.jsonl", "--db", SQL / "clinic.sqlite", "--gates", SQL / "dod.toml",
        "--store", store, "--arm", "arm-b", "-q", code=1)
    run("score", PRIMOCK, "--store", store, "--arm", "unicode", "--tokenizer", "unicode", "-q")
    ids = [r["id"] for r in reversed(json.loads(run("runs", "list", "--store", store, "--json", "--limit", "0")))]
    return store, dict(zip(["primock", "arm_a", "arm_b", "primock_unicode"], ids)), d


def test_primock57_report(browser, runs):
    store, ids, d = runs
    out = d / "primock.html"
    run("report", ids["primock"], "--store", store, "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        assert pg.inner_text("#banner") == "NO GATES"
        # the published figure, 0.27861937781204515 (DESIGN.md "Real data"), rounded to 4 places on the page
        assert "whole-note F1 (macro): 0.2786" in pg.inner_text("#headline")
        assert "57 of 57 case(s) shown" in p.count_text()
        assert pg.locator("#charts svg").count() == 2  # histogram of F1, precision against recall
        # search narrows to the consultations of day 3 (ids day3_consultation01 … 10 in the published file)
        pg.fill("#search", "day3_consultation")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^10 of 57"))
        assert all(r.startswith("day3_consultation") for r in p.rows())
        # sort by F1, descending (click twice): the first row holds the highest F1 of day 3
        pg.click("#case-table th[data-key='f1']")
        pg.click("#case-table th[data-key='f1']")
        f1s = [float(x) for x in pg.locator("#case-table tbody tr.case td:nth-child(3)").all_inner_texts()]
        assert f1s == sorted(f1s, reverse=True) and len(f1s) == 10
        # open a row: prediction beside reference, with shared tokens marked
        first = p.rows()[0]
        pg.click(f"#case-table tr.case[data-id='{first}']")
        detail = pg.locator(f"tr.detail[data-detail='{first}']")
        assert "prediction (shared tokens marked)" in detail.inner_text()
        assert detail.locator("mark").count() > 10
        # no --min-f1: an F1 is not a verdict, so no case is a "pass" (newcomer F6): every row reads "scored", there
        # is no failures or passes chip (only outcomes the scorer can produce: issue 29), a note says why, and
        # "scored" holds all 57
        assert set(pg.locator("#case-table tbody tr.case td:nth-child(2)").all_inner_texts()) == {"scored"}
        chips = pg.locator("#filters button").evaluate_all("bs => bs.map(b => b.dataset.filter)")
        assert chips == ["all", "scored", "unscored"]
        assert "--min-f1" in pg.inner_text("#no-threshold")
        pg.fill("#search", "")
        pg.click("#filters button[data-filter='scored']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^57 of 57"))
        pg.click("#filters button[data-filter='unscored']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^0 of 57"))  # nothing failed to score in this run
        p.shot("primock57")
        p.assert_offline()
    finally:
        p.close()


def test_clinic_judge_report(browser, runs):
    store, ids, d = runs
    out = d / "arm_b.html"
    run("report", ids["arm_b"], "--store", store, "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        assert pg.inner_text("#banner") == "FAIL"
        assert pg.inner_text("#decision-line").startswith("FAIL: pass_rate 0.000 fails 0.90")
        assert pg.locator("#gates tbody tr").count() == 2
        header = pg.inner_text("#header")
        rec = _stored_run(store, ids["arm_b"])
        for want in (ids["arm_b"], "arm-b", rec["goldeval_version"], f"answer_judge@{rec['scorer_version']}",
                     rec["judge_version"], rec["rubric_hash"], _sha256(SQL / "cases.jsonl"), _sha256(SQL / "arm_b.jsonl"),
                     _sha256(SQL / "dod.toml"), "Analytics lead", "2026-11-20"):
            assert want in header, want
        # the summary lists the 3 unscored cases with their reasons (README: q16 no such column, q17 DELETE refused,
        # q22 time limit)
        pg.click("#unscored summary")
        reasons = pg.locator("#unscored li").all_inner_texts()
        assert [r.split(":")[0] for r in reasons] == ["q16", "q17", "q22"]
        assert "no such column" in reasons[0] and "time limit" in reasons[2]
        assert pg.locator("#charts svg").count() == 3  # verdicts, gold_status, pass rate with its interval
        # arm B: 15 no_match, 1 near_match, 3 unscored, 2 needs_human, 1 match-but-verified_wrong (examples/sql/README.md)
        pg.click("#filters button[data-filter='unscored']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^3 of 22"))
        pg.click("#filters button[data-filter='near_match']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^1 of 22"))
        pg.click("#filters button[data-filter='needs_human']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^2 of 22"))
        assert p.rows() == ["q13", "q14"]
        pg.click("#filters button[data-filter='pass']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^0 of 22"))
        pg.click("#filters button[data-filter='fail']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^15 of 22"))
        assert "q01" in p.rows()
        pg.click("#case-table tr.case[data-id='q01']")
        detail = pg.locator("tr.detail[data-detail='q01']")
        text = detail.inner_text()
        assert "How many admissions did each ward have in March 2024?" in text  # the question
        assert "final query" in text and "SELECT" in text
        assert "golden" in text and "predicted" in text and "Cardiology" in text
        assert "missing golden rows" in text and "column pairing" in text
        # the bars are the summary's counts (newcomer F5: q19, verified_wrong, was a 16th no_match bar), and every
        # chart text is whole (the pass-rate title was cut)
        assert "counted there (out of the pass rate) whatever its verdict" in pg.inner_text("#charts")
        p.assert_charts_fit()
        p.shot("clinic_arm_b")
        p.assert_offline()
    finally:
        p.close()


def test_compare_report(browser, runs):
    store, ids, d = runs
    out = d / "compare.html"
    run("report", ids["arm_a"], "--compare", ids["arm_b"], "--store", store, "--out", out)
    # what `goldeval compare` finds (tests/e2e/test_runs_cli.py works those flips out from the judge outputs)
    cmp = json.loads(CliRunner().invoke(main, ["compare", ids["arm_a"], ids["arm_b"], "--store", str(store), "--out", "-", "-q"]).stdout)
    p2f = [f["id"] for f in cmp["verdicts"]["flips"]["pass_to_fail"]]
    assert p2f
    p = Page(browser, out)
    try:
        pg = p.page
        verdict = pg.inner_text("#compare-verdict")
        assert "McNemar exact" in verdict and "pass-rate difference B − A" in verdict
        pg.click("#compare-flips-summary")  # the flipped cases, each with both whys, open on a click
        flips = pg.locator("#compare-flips table.flip-pf tr.flip-pf")
        assert flips.locator("td:first-child").all_inner_texts() == p2f  # pass → fail, in red, both whys
        assert flips.first.evaluate("r => getComputedStyle(r).backgroundColor") == "rgb(253, 236, 234)"  # #fdecea
        a_why, b_why = flips.first.locator("td").all_inner_texts()[1:]
        assert a_why.startswith("match · ") and b_why.startswith("no_match · ")
        assert f"pass → fail: {len(p2f)}" in pg.inner_text("#compare-flips")
        pg.click("#filters button[data-filter='changed']")
        n_changed = int(pg.inner_text("#count").split(" of ")[0])
        assert n_changed >= len(p2f)
        assert pg.locator("#case-table tbody tr.flip-pf").count() >= 1
        pg.click("#case-table tr.case[data-id='q01']")
        text = pg.locator("tr.detail[data-detail='q01']").inner_text()
        assert "A (before) beside B (after)" in text and "A why" in text and "B why" in text
        p.shot("compare_arm_a_arm_b")
        p.assert_offline()
    finally:
        p.close()


def test_compare_page_leads_with_the_comparison(browser, runs):
    # issue 29 item 3: the compare page opens with the verdict of the comparison, then A-against-B charts, then each
    # run's gates side by side, then the case table. Arm A → arm B of the clinic example: every one of A's 19
    # matches that B decided became a no_match (examples/sql/README.md), 14 pass → fail and 0 fail → pass, so
    # McNemar's exact p is 2 · 0.5**14 = 1.221e-4 and `goldeval compare --fail-on-regression` exits 1.
    store, ids, d = runs
    out = d / "compare_first.html"
    run("report", ids["arm_a"], "--compare", ids["arm_b"], "--store", store, "--out", out)
    cli = CliRunner().invoke(main, ["compare", ids["arm_a"], ids["arm_b"], "--store", str(store), "--fail-on-regression",
                                    "--out", "-", "-q"])
    assert cli.exit_code == 1
    p2f = [f["id"] for f in json.loads(cli.stdout)["verdicts"]["flips"]["pass_to_fail"]]
    assert len(p2f) == 14
    p = Page(browser, out)
    try:
        pg = p.page
        title = pg.inner_text("header.top h1")
        assert f"A {ids['arm_a']} (arm-a) → B {ids['arm_b']} (arm-b)" in title and pg.title() == title
        # the order of the page, and the comparison first: at the top of the first screen
        assert pg.eval_on_selector_all("main > section", "ss => ss.map(s => s.id)") == ["compare", "charts", "gates-ab", "header", "cases"]
        first = pg.locator("main > section").first
        assert first.get_attribute("id") == "compare" and first.bounding_box()["y"] < 200
        assert pg.locator("#compare-banner").bounding_box()["y"] < 900
        assert pg.inner_text("#compare-banner") == "REGRESSION"
        assert pg.locator("#compare-banner").evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(198, 40, 40)"  # --fail
        decision = pg.inner_text("#compare-decision")
        assert decision.startswith("--fail-on-regression would exit 1: 14 case(s) went from pass to fail: " + ", ".join(p2f[:10]))
        verdict = dict(r.split("\t", 1) for r in pg.locator("#compare-verdict tr").all_inner_texts())
        assert verdict["cases"] == "22 in both · 0 added in B · 0 removed from A"
        assert verdict["pass → fail"].startswith("14: " + ", ".join(p2f[:10])) and verdict["fail → pass"] == "0"
        assert verdict["McNemar exact"] == "14 pass→fail vs 0 fail→pass, two-sided p = 0.0001221"
        # Newcombe's paired interval of −100 pt over 14 discordant pairs (README "Runs": [−100, −69.6] pt)
        assert verdict["pass-rate difference B − A"].startswith("-100.0 pt [-100.0 pt, -69.6 pt], 95% Newcombe")
        runs_text = pg.inner_text("#compare-runs")
        assert f"run {ids['arm_a']} · arm arm-a" in runs_text and f"run {ids['arm_b']} · arm arm-b" in runs_text
        # the charts set A against B: verdict flows (A: 19 match; B: 15 no_match), both pass rates, the difference
        flows = pg.inner_text("#chart-flows")
        assert "match 19" in flows and "no_match 15" in flows and "A arm-a" in flows and "B arm-b" in flows
        assert "A arm-a" in pg.inner_text("#chart-headlines") and "B arm-b" in pg.inner_text("#chart-headlines")
        assert "-1.0000" in pg.inner_text("#chart-difference")
        p.assert_charts_fit()
        # each run's gates side by side: A passes, B fails, at the same height
        assert pg.inner_text("#banner-a") == "PASS" and pg.inner_text("#banner-b") == "FAIL"
        box_a, box_b = pg.locator("#run-a").bounding_box(), pg.locator("#run-b").bounding_box()
        assert abs(box_a["y"] - box_b["y"]) < 1 and box_a["x"] + box_a["width"] <= box_b["x"]
        assert pg.locator("#gates-a tbody tr").count() == 2 and pg.locator("#gates-b tbody tr.fail").count() == 2
        # then the case table, B's cases with A's beside them
        assert "22 of 22 case(s) shown" in p.count_text()
        p.shot("compare_first_section")
        p.assert_offline()
    finally:
        p.close()


def test_label_compare_report_speaks_of_labels(browser, tmp_path):
    # issue 10 item 11: two label runs compared on the page read as labels (the hand-built runs of
    # tests/e2e/test_compare_labels.py: c1 a new miss, c3 a new false positive; c2 and c4 fixed)
    gold = {"c1": "escalate", "c2": "escalate", "c3": "approve", "c4": "approve", "c5": "approve", "c6": "escalate", "c7": "reject"}
    preds = {"a": ["escalate", "approve", "approve", "escalate", "approve", "escalate", "escalate"],
             "b": ["approve", "escalate", "escalate", "approve", "reject", "escalate", "escalate"]}
    store = tmp_path / "g.db"
    for arm, pred in preds.items():
        f = tmp_path / f"{arm}.jsonl"
        f.write_text("".join(json.dumps({"id": c, "gold": g, "pred": p}) + "\n" for (c, g), p in zip(gold.items(), pred)))
        run("labels", f, "--positive", "escalate", "--store", store, "--arm", arm, "-q")
    out = tmp_path / "compare_labels.html"
    run("report", "latest~1", "--compare", "latest", "--store", store, "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        stats = pg.inner_text("#compare-stats")
        pg.click("#compare-flips-summary")
        assert "missed positives: 1 in A → 1 in B · 1 new · 1 fixed" in stats
        assert "false positives: 2 in A → 2 in B · 1 new · 1 fixed" in stats
        assert "pass rate" not in stats and "near_match" not in stats
        # the verdict speaks of labels too: 2 right → wrong (c1, c3), 2 wrong → right (c2, c4)
        verdict = pg.inner_text("#compare-verdict")
        assert "right → wrong label\t2: c1, c3" in verdict and "wrong → right label\t2: c2, c4" in verdict
        assert "McNemar exact\t2 right → wrong vs 2 wrong → right" in verdict
        assert pg.inner_text("#compare-banner") == "REGRESSION"
        assert "2 case(s) went from a right label to a wrong one: c1, c3" in pg.inner_text("#compare-decision")
        box = pg.inner_text("#compare-flips")
        assert "right → wrong label (new misses, new false positives): 2" in box and "near_match" not in box
        rows = pg.locator("#compare-flips table.flip-pf tr.flip-pf")
        assert rows.locator("td:first-child").all_inner_texts() == ["c1", "c3"]
        assert rows.first.locator("td").all_inner_texts() == ["c1", "escalate · escalate (tp)", "escalate · approve (fn)"]
        p.shot("compare_labels")
        p.assert_offline()
    finally:
        p.close()


def test_free_text_compare_at_1280_px_shows_each_line_whole(browser, runs):
    # newcomer F7: in a 1280-px window the compare note ended "…part of any difference below comes from" (the
    # line was cut where the terminal rendering wrapped it). PriMock57 under openscribe, then under unicode: the
    # same published predictions, two tokenizers (README: 0 up, 2 down).
    store, ids, d = runs
    out = d / "compare_tokenizers.html"
    run("report", ids["primock"], "--compare", ids["primock_unicode"], "--store", store, "--out", out)
    p = Page(browser, out, width=1280)
    try:
        pg = p.page
        items = pg.locator("#compare-stats li")
        note = next(t for t in items.all_inner_texts() if t.startswith("note: the runs were measured differently"))
        assert note.endswith("part of any difference below comes from that, not from the model under test.")
        assert "(tokenizer: openscribe → unicode)" in note
        # no line of the block runs past its box
        assert items.evaluate_all("ls => ls.filter(l => l.scrollWidth > l.clientWidth + 1).length") == 0
        assert "0 up, 2 down" in pg.inner_text("#compare-verdict")
        assert pg.inner_text("#compare-banner") == "NO VERDICTS"  # --fail-on-regression does not apply to F1 runs
        # per-case F1 of A against B, the two movers marked with their ids (shortened in the middle to 18 characters)
        scatter = pg.inner_text("#chart-paired-f1")
        assert "day4_consu…ation01" in scatter and "day4_consu…ation05" in scatter
        pg.click("#compare-flips-summary")
        # the biggest F1 movers: the two notes that moved (README: day4_consultation01 and 05, -0.0010 each)
        movers = [r.split("\t") for r in pg.locator("#compare-flips table.movers tr").all_inner_texts()[1:]]
        assert sorted(m[0] for m in movers[:2]) == ["day4_consultation01", "day4_consultation05"]
        assert [m[3] for m in movers[:2]] == ["-0.0010", "-0.0010"]
        pg.click("#filters button[data-filter='changed']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^2 of 57"))
        p.assert_charts_fit()
        p.shot("compare_tokenizers_1280")
        p.assert_offline()
    finally:
        p.close()


HOSTILE = [
    "<script>window.__pwned = 1</script>",
    "</script><script>window.__pwned = 2</script>",
    '<img src=x onerror="window.__pwned = 3">',
    "javascript:window.__pwned = 4",
    "<!-- <script>window.__pwned = 5</script>",
]


def test_hostile_answer_is_text_and_never_runs(browser, tmp_path):
    rows = [{"id": f"evil-{i}", "prediction": f"the patient {h} has a cough", "reference": "the patient has a cough"}
            for i, h in enumerate(HOSTILE)]
    rows.append({"id": "<b>id</b>\"'", "prediction": "x", "reference": "x"})
    src = tmp_path / "hostile.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    results = tmp_path / "r.json"
    run("score", src, "--no-store", "--out", results, "-q")
    out = tmp_path / "hostile.html"
    run("report", "--results", results, "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        assert pg.evaluate("window.__pwned") is None
        for i, h in enumerate(HOSTILE):
            pg.click(f"#case-table tr.case[data-id='evil-{i}']")
            shown = pg.locator(f"tr.detail[data-detail='evil-{i}'] .text").first.inner_text()
            assert h in shown  # the markup is shown, character for character
        assert pg.evaluate("window.__pwned") is None
        assert pg.locator("#case-table img, #case-table script, a[href^='javascript']").count() == 0
        assert "<b>id</b>\"'" in p.rows()
        p.shot("hostile")
        p.assert_offline()
    finally:
        p.close()


# The clinic's arm B leaves two cases to a judge (examples/sql/README.md: q13 criteria, q14 ACCEPT clause). The
# loopback endpoint answers q13 as judges often do (prose, then fenced JSON, the confidence written "9/10", read as 9
# by the parse rules of DESIGN.md) and q14 with prose only, which parses to no verdict: needs_human, raw text kept.
Q13_RAW = ('The answer says admissions "declined steadily"; the rubric marks a steady decline WRONG.\n```json\n'
           '{"verdict": "no_match", "confidence": "9/10", "why": "Reports a steady decline, which the rubric marks WRONG.", '
           '"gold_status": "verified"}\n```')
Q14_RAW = "I believe the count is probably right, but I cannot tell from the rows alone."


def test_llm_calls_show_prompt_model_raw_answer_and_parsed_verdict(browser, tmp_path, monkeypatch):
    pytest.importorskip("openai")
    from fake_openai_server import FakeOpenAI, Reply

    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))  # the judge's call cache lives there
    store = tmp_path / "g.db"

    def answer(req):
        user = req["messages"][1]["content"]
        return Reply(content=Q13_RAW if "admission volume changed over 2024" in user else Q14_RAW)

    judge = ["judge", SQL / "cases.jsonl", SQL / "arm_b.jsonl", "--db", SQL / "clinic.sqlite", "--gates", SQL / "dod.toml",
             "--llm", "judge-model", "--store", store, "-q"]
    with FakeOpenAI(default=answer) as srv:
        run(*judge, "--base-url", srv.base_url, "--arm", "arm-b-llm", code=1)
        assert srv.calls == 2
        sent = {("q13" if "admission volume" in r["messages"][1]["content"] else "q14"): r["messages"][1]["content"]
                for r in srv.requests}
        base_url = srv.base_url
    # the same run again with the endpoint gone: both calls are answered from the cache, which kept the prompts
    run(*judge, "--base-url", base_url, "--arm", "arm-b-cached", code=1)
    for ref, name, cached in (("latest~1", "clinic_arm_b_llm", False), ("latest", "clinic_arm_b_llm_cached", True)):
        out = tmp_path / f"{name}.html"
        run("report", ref, "--store", store, "--out", out)
        p = Page(browser, out)
        try:
            pg = p.page
            pg.click("#case-table tr.case[data-id='q13']")
            call = pg.locator("tr.detail[data-detail='q13'] .llm-call")
            assert call.count() == 1
            text = call.inner_text()
            assert ("LLM call 1 of 1 (answered from the cache)" in text) == cached
            assert re.search(r"model\s+judge-model\n", text)
            assert re.search(r"system prompt\s+goldeval-llm-judge/\d+ · sha256 [0-9a-f]{64}", text)
            # the prompt sent, folded until opened, then shown whole and as sent (the case materials, the answer fenced)
            prompt = call.locator("details.llm-prompt")
            assert not prompt.evaluate("d => d.open")
            prompt.locator("summary").click()
            assert prompt.locator(".text").inner_text() == sent["q13"]
            assert "Describe how the admission volume changed over 2024." in sent["q13"]
            assert "Admissions declined steadily through 2024." in sent["q13"]  # arm_b.jsonl's answer to q13
            # the raw answer character for character, and the verdict parsed from it
            assert call.locator(".llm-raw").inner_text() == Q13_RAW
            # (its why is the case's, shown once above: the call points back to it, issue 29)
            assert re.search(r"parsed verdict\nverdict\s+no_match\nconfidence\s+9\nwhy\s+\(the case's why, above\)", text)
            assert re.search(r"\nwhy\s+Reports a steady decline", pg.locator("tr.detail[data-detail='q13'] > td > table.kv").nth(1).inner_text())
            # q14: nothing to parse: the parsed verdict is needs_human, says why, and the raw text is kept
            pg.click("#case-table tr.case[data-id='q14']")
            call14 = pg.locator("tr.detail[data-detail='q14'] .llm-call")
            assert call14.locator(".llm-raw").inner_text() == Q14_RAW
            t14 = call14.inner_text()
            assert re.search(r"verdict\s+needs_human\n", t14) and re.search(r"could not parse\s+\S", t14)
            call14.locator("details.llm-prompt summary").click()
            assert call14.locator("details.llm-prompt .text").inner_text() == sent["q14"]
            p.shot(name)
            p.assert_offline()
        finally:
            p.close()


def test_compare_shows_stable_near_match_apart_from_flickering(browser, tmp_path, monkeypatch):
    # The same answers (arm B) judged twice, the LLM judge asked again the second time (--llm-refresh). q09 is
    # near_match by rule in both runs (examples/sql/README.md: "q9 generic refusal"): stable, a coverage finding.
    # q14 goes to the LLM, which says near_match the first time and match the second: it flickers, and since the
    # answers are the same file that is judge noise. q13 is no_match both times. So: 1 stable (q09), 1 flickering
    # (q14, A near_match → B match), no pass → fail or fail → pass flip (q14 is decided in B only).
    pytest.importorskip("openai")
    from fake_openai_server import FakeOpenAI, Reply

    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))
    store = tmp_path / "g.db"
    second = {"on": False}

    def answer(req):
        user = req["messages"][1]["content"]
        if "admission volume changed over 2024" in user:
            return Reply(content=Q13_RAW)
        if second["on"]:
            return Reply(content='{"verdict": "match", "confidence": 8, "why": "347 emergency admissions, as the golden.", "gold_status": "verified"}')
        return Reply(content='{"verdict": "near_match", "confidence": 7, "why": "The count is right but counts transfers the ACCEPT clause does not name.", "gold_status": "verified"}')

    judge = ["judge", SQL / "cases.jsonl", SQL / "arm_b.jsonl", "--db", SQL / "clinic.sqlite", "--llm", "judge-model",
             "--store", store, "-q"]
    with FakeOpenAI(default=answer) as srv:
        run(*judge, "--base-url", srv.base_url, "--arm", "judge-1")
        second["on"] = True
        run(*judge, "--base-url", srv.base_url, "--arm", "judge-2", "--llm-refresh")
        assert srv.calls == 4
    out = tmp_path / "noise.html"
    run("report", "latest~1", "--compare", "latest", "--store", store, "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        stats = pg.inner_text("#compare-stats")
        assert ("near_match: 1 stable (near_match in both: a coverage finding) · 1 flickering (near_match in one run "
                "only: judge noise, the answers are the same)") in stats
        pg.click("#compare-flips-summary")
        box = pg.locator("#compare-flips")
        assert "near_match stable in both runs (a coverage finding): q09" in box.inner_text()
        flicker = box.locator("table.flicker tr.flicker")
        assert flicker.count() == 1
        cells = flicker.locator("td").all_inner_texts()
        assert cells[0] == "q14" and cells[1].startswith("near_match · The count is right") and cells[2].startswith("match · 347")
        assert "pass → fail: 0" in box.inner_text() and "fail → pass: 0" in box.inner_text()
        # the table's near_match filter holds the near_match cases of B (q09 only: q14 is a match in B)
        pg.click("#filters button[data-filter='near_match']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^1 of 22"))
        assert p.rows() == ["q09"]
        pg.click("#filters button[data-filter='changed']")
        assert "q14" in p.rows()
        p.shot("compare_stable_flickering")
        p.assert_offline()
    finally:
        p.close()


def _stored_run(store: Path, ref: str) -> dict:
    from goldeval.runs.store import RunStore

    with RunStore(store) as s:
        return dict(s.get_run(ref))


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_labels_report(browser, tmp_path):
    # examples/labels (README): tp 36, fp 6, fn 4, tn 154 on 200 claims; 4 of 40 gold escalations missed = 10.0 per
    # 100 against the agreed 2 per 100 (FAIL); precision 36/42 = 0.857 ≥ 0.80 (pass); F1 of 'escalate' =
    # 2·36 / (2·36 + 6 + 4) = 72/82 = 0.8780.
    store = tmp_path / "g.db"
    claims, dod = LABELS / "pilot_claims.jsonl", LABELS / "dod.toml"
    run("labels", claims, "--gates", dod, "--store", store, "--arm", "pilot", "-q", code=1)
    rec = _stored_run(store, "latest")
    out = tmp_path / "labels.html"
    run("report", "latest", "--store", store, "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        assert pg.inner_text("#banner") == "FAIL"
        assert pg.inner_text("#decision-line").startswith("FAIL: 4 escalations missed (10.0 per 100) against the agreed 2 per 100")
        gates = [r.split("\t") for r in pg.locator("#gates tbody tr").all_inner_texts()]
        # columns: gate, bound, value, interval (issue 29), result, what it allows
        assert [(g[0], g[1], g[4]) for g in gates] == [("missed_per_100", "≤ 2", "FAIL"), ("precision", "≥ 0.80", "pass")]
        assert gates[0][2] == "10.0" and gates[1][2] == "0.857"
        # Wilson intervals, as statsmodels' proportion_confint(k, n, method="wilson") gives them: 4 missed of 40 gold
        # escalations is 4.0–23.1 per 100; 36 of 42 predicted is 0.722–0.933, whose low end is below the bound 0.80
        assert (gates[0][3], gates[1][3]) == ("4.0–23.1 (95% Wilson)", "0.722–0.933 (95% Wilson)")
        assert "40" in gates[0][5]  # what 2 per 100 allows on these 40 gold escalations (0.8: none may be missed)
        assert pg.inner_text("#decision-line").endswith(
            "Warning: precision 0.857 passes on the point but not on its 95% Wilson score interval, whose low end is 0.722.")
        # the header: what pins the run
        header = pg.inner_text("#header")
        for want in (rec["id"], "pilot", rec["goldeval_version"], f"labels@{rec['scorer_version']}", _sha256(claims),
                     _sha256(dod), "Head of underwriting", "2026-11-02"):
            assert want in header, want
        assert "F1 of 'escalate': 0.8780" in pg.inner_text("#headline")
        lo, hi = (float(x) for x in re.search(r"\[(\d\.\d+), (\d\.\d+)\]", pg.inner_text("#headline")).groups())
        assert lo <= 0.8780 <= hi and "bootstrap" in pg.inner_text("#headline")
        # confusion matrix, precision / recall against their gates, missed per 100 against its gate
        assert [c.split("\n")[0] for c in pg.locator("figure.chart figcaption").all_inner_texts()] == [
            "confusion matrix", "precision and recall against their gates", "missed per 100 gold positives"]
        p.assert_charts_fit()
        # a label is right or wrong: no near_match, needs_human or changed chip (only outcomes the scorer can produce)
        chips = pg.locator("#filters button").evaluate_all("bs => bs.map(b => b.dataset.filter)")
        assert chips == ["all", "fail", "pass", "unscored"]
        pg.click("#filters button[data-filter='fail']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^10 of 200"))  # 6 false positives + 4 missed
        outcomes = pg.locator("#case-table tbody tr.case td:nth-child(3)").all_inner_texts()
        assert sorted(set(outcomes)) == ["fn", "fp"] and outcomes.count("fn") == 4
        pg.click("#filters button[data-filter='pass']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^190 of 200"))
        # a missed escalation opens to gold beside pred
        rows = [json.loads(x) for x in claims.read_text().splitlines() if x.strip()]
        missed = next(r for r in rows if r["gold"] == "escalate" and r["pred"] != "escalate")
        pg.click("#filters button[data-filter='all']")
        pg.fill("#search", missed["id"])
        expect(pg.locator("#count")).to_have_text(re.compile(r"^1 of 200"))
        pg.click(f"#case-table tr.case[data-id='{missed['id']}']")
        detail = pg.locator(f"tr.detail[data-detail='{missed['id']}']")
        gold, pred = detail.locator(".side > div").all()
        assert gold.inner_text() == "gold\nescalate"
        assert pred.inner_text() == "pred\n" + (missed["pred"] if missed["pred"] is not None else "(no prediction)")
        assert gold.bounding_box()["y"] == pred.bounding_box()["y"]  # beside each other, not one under the other
        assert re.search(r"outcome\s+fn", detail.inner_text())
        # sort by a text column, descending: ids in reverse order
        pg.fill("#search", "")
        # the search re-filters after its debounce: wait for the whole table before sorting (a loaded CI machine read
        # the rows while the one searched case was still the only one shown)
        expect(pg.locator("#count")).to_have_text(re.compile(r"^200 of 200"))
        pg.click("#case-table th[data-key='id']")
        pg.click("#case-table th[data-key='id']")
        expect(pg.locator("#case-table tbody tr.case").first).to_have_attribute("data-id", max(r["id"] for r in rows))
        ids = p.rows()
        assert ids[0] == max(r["id"] for r in rows) and ids == sorted(ids, reverse=True)
        p.shot("labels_pilot_claims")
        p.assert_offline()
    finally:
        p.close()


def test_compare_fixes_in_green_regressions_in_red_and_the_lines_compare_prints(browser, runs):
    # B → A of the clinic example is A → B backwards: the 14 regressions of test_compare_report are 14 fixes
    # (tests/e2e/test_report_cli.py works them out: every case but q09, q11, q13, q14, q16, q17, q19, q22).
    store, ids, d = runs
    out = d / "compare_b_to_a.html"
    run("report", ids["arm_b"], "--compare", ids["arm_a"], "--store", store, "--out", out)
    cli = CliRunner().invoke(main, ["compare", ids["arm_b"], ids["arm_a"], "--store", str(store)], terminal_width=200).stdout
    p = Page(browser, out)
    try:
        pg = p.page
        pg.click("#compare-flips-summary")
        green = pg.locator("#compare-flips table.flip-fp tr.flip-fp")
        assert green.count() == 14 and pg.locator("#compare-flips table.flip-pf tr.flip-pf").count() == 0
        assert green.first.evaluate("r => getComputedStyle(r).backgroundColor") == "rgb(232, 245, 233)"  # #e8f5e9
        first = green.first.locator("td").all_inner_texts()
        assert first[1].startswith("no_match · ") and first[2].startswith("match · ")  # both whys, side by side
        # McNemar as `goldeval compare` prints it: 0 pass→fail vs 14 fail→pass, p = 2·0.5**14; the other lines too
        verdict = dict(r.split("\t", 1) for r in pg.locator("#compare-verdict tr").all_inner_texts())
        assert verdict["McNemar exact"] == "0 pass→fail vs 14 fail→pass, two-sided p = 0.0001221"
        flat = " ".join(cli.split())
        assert "McNemar exact: " + verdict["McNemar exact"] in flat
        # Newcombe's interval of the difference as compare prints it: +100.0 pt [+69.6 pt, +100.0 pt] over 14 pairs
        assert verdict["pass-rate difference B − A"].startswith("+100.0 pt [+69.6 pt, +100.0 pt], 95% Newcombe")
        assert pg.inner_text("#compare-banner") == "NO REGRESSION"
        stats = pg.locator("#compare-stats li").all_inner_texts()
        assert stats
        for line in stats:
            assert " ".join(line.split()) in flat, line
        pg.click("#filters button[data-filter='changed']")
        assert pg.locator("#case-table tbody tr.flip-fp").count() >= 1
        assert pg.locator("#case-table tbody tr.flip-fp").first.evaluate("r => getComputedStyle(r).backgroundColor") == "rgb(232, 245, 233)"
        p.shot("compare_arm_b_arm_a")
        p.assert_offline()
    finally:
        p.close()


def test_hostile_data_answer_is_text_and_never_runs(browser, tmp_path):
    # The same markup in every text a data-answer case opens to: the question, the golden's column name, the
    # answer's prose, its final query, its column names and cells.
    cases = [{"id": f"q{i}", "question": f"How many wards? {h}",
              "golden": {"kind": "value", "columns": ["n"], "rows": [[4]]}} for i, h in enumerate(HOSTILE)]
    attempts = [{"id": f"q{i}", "text": f"There are 4 wards. {h}", "final_query": f"SELECT 4 AS n -- {h}",
                 "columns": ["n", h], "rows": [[4, h]]} for i, h in enumerate(HOSTILE)]
    for name, rows in (("cases.jsonl", cases), ("attempts.jsonl", attempts)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run("judge", tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl", "--no-store", "--out", tmp_path / "r.json", "-q")
    out = tmp_path / "hostile_answers.html"
    run("report", "--results", tmp_path / "r.json", "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        assert pg.evaluate("window.__pwned") is None
        for i, h in enumerate(HOSTILE):
            pg.click(f"#case-table tr.case[data-id='q{i}']")
            detail = pg.locator(f"tr.detail[data-detail='q{i}']")
            texts = detail.locator(".text").all_inner_texts()
            assert f"How many wards? {h}" in texts and f"There are 4 wards. {h}" in texts and f"SELECT 4 AS n -- {h}" in texts
            assert h in detail.locator("table.rows").last.inner_text()  # the predicted column name and cell
        assert pg.evaluate("window.__pwned") is None
        assert pg.locator("#case-table img, #case-table script, a[href^='javascript']").count() == 0
        p.shot("hostile_answers")
        p.assert_offline()
    finally:
        p.close()


def test_sectioned_free_text_shows_mean_f1_per_section(browser, tmp_path):
    # Worked by hand (openscribe tokens): plan — row 1 "start metformin" against "start metformin 500 mg": 2 shared,
    # P 1, R 0.5, F1 2/3; row 2 "stop aspirin" both: 1. Mean 5/6 = 0.833. assessment — row 1 "type 2 diabetes" both:
    # 1; row 2 "gastritis" against "peptic ulcer": 0. Mean 0.500.
    rows = [
        {"id": "r1", "prediction": {"plan": "start metformin", "assessment": "type 2 diabetes"},
         "reference": {"plan": "start metformin 500 mg", "assessment": "type 2 diabetes"}},
        {"id": "r2", "prediction": {"plan": "stop aspirin", "assessment": "gastritis"},
         "reference": {"plan": "stop aspirin", "assessment": "peptic ulcer"}},
    ]
    src = tmp_path / "sections.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    store = tmp_path / "g.db"
    run("score", src, "--store", store, "-q")
    out = tmp_path / "sections.html"
    run("report", "latest", "--store", store, "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        chart = pg.locator("figure.chart", has_text="mean F1 per section")
        assert chart.count() == 1
        texts = chart.locator("svg text").all_text_contents()
        assert {"plan", "assessment", "0.833", "0.500"} <= {t.strip() for t in texts}, texts
        p.assert_charts_fit()
        pg.click("#case-table tr.case[data-id='r1']")
        detail = pg.locator("tr.detail[data-detail='r1']").inner_text()
        assert re.search(r"section plan F1\s+0\.6667", detail) and re.search(r"section assessment F1\s+1\.0000", detail)
        # each section beside its counterpart, the tokens that section's F1 shares marked: "start metformin" in both
        # plans (merged into one mark across the space); the whole assessment
        names = pg.locator("tr.detail[data-detail='r1'] h4.section-name").all_inner_texts()
        assert names == ["section plan · F1 0.6667", "section assessment · F1 1.0000"]
        marks = pg.locator("tr.detail[data-detail='r1'] .side mark").all_inner_texts()
        assert marks == ["start metformin", "start metformin", "type 2 diabetes", "type 2 diabetes"]
        pg.fill("#search", "peptic")  # search reads the sections' texts too: only r2's reference says it
        expect(pg.locator("#count")).to_have_text(re.compile(r"^1 of 2"))
        assert p.rows() == ["r2"]
        p.shot("sections")
        p.assert_offline()
    finally:
        p.close()


# the control characters goldeval.io.printable escapes: C0 but \t \n, DEL, C1, and the bidirectional marks
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_control_characters_are_shown_escaped_never_reordering_the_page(browser, tmp_path):
    # A U+202E (RLO) in a label showed the rest of the decision line reversed ("FAIL: ... sevitisop eslaf 0 tsom ta");
    # in a case text it reversed what followed it in the detail view. By hand: e1 is a true positive, e2 a false
    # positive (gold ok, pred the positive label): precision 1/2 fails the gate min 0.9.
    rows = [{"id": "e1\u202e", "gold": "esc\u202ealate", "pred": "esc\u202ealate"},
            {"id": "e2\x1b[2J", "gold": "ok\r", "pred": "esc\u202ealate"}]
    src = tmp_path / "bidi.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dod = tmp_path / "bidi.toml"
    dod.write_text('agreed_by = "Head \\u202eof triage"\npositive = "esc\\u202ealate"\n'
                   'positive_noun = "escal\\u202eation"\n[gates]\nprecision = { min = 0.9 }\n', encoding="utf-8")
    store = tmp_path / "g.db"
    run("labels", src, "--gates", dod, "--store", store, "-q", code=1)
    out = tmp_path / "bidi.html"
    run("report", "latest", "--store", store, "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        pg.click("#case-table tr.case[data-id='e2\x1b[2J']")  # the row's data-id is the id as it is
        detail = pg.locator("tr.detail").first.inner_text()
        assert "e2\\x1b[2J" in detail and "ok\\r" in detail and "esc\\u202ealate" in detail
        page_text = pg.inner_text("body") + "".join(pg.locator("svg text").all_text_contents())
        assert CONTROLS.findall(page_text) == []
        assert pg.inner_text("#decision-line").startswith("FAIL: Precision 0.500 fails 0.9; with the 1 escal\\u202eation caught")
        assert "Head \\u202eof triage" in pg.inner_text("#header")
        assert sorted(p.rows()) == ["e1\u202e", "e2\x1b[2J"]
        p.assert_charts_fit()  # the confusion matrix's title ran past its right edge beside labels this long
        p.shot("control_characters")
        p.assert_offline()
    finally:
        p.close()


def test_a_long_id_wraps_and_never_widens_the_page(browser, tmp_path):
    # Found on a fresh clone: a 300-character id widened a 1024 px page to 3016 px, the F1 column off screen.
    # F1 by hand: "a b" vs "a b" = 1.0 for both rows.
    rows = [{"id": "x" * 300, "prediction": "a b", "reference": "a b"}, {"id": "short", "prediction": "a b", "reference": "a b"}]
    src = tmp_path / "long.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    results = tmp_path / "r.json"
    run("score", src, "--no-store", "--out", results, "-q")
    out = tmp_path / "long.html"
    run("report", "--results", results, "--out", out)
    p = Page(browser, out, width=1024)
    try:
        pg = p.page
        assert pg.evaluate("document.documentElement.scrollWidth") <= 1024
        f1 = pg.locator("#case-table tbody tr.case").first.locator("td").nth(2)
        box = f1.bounding_box()
        assert box["x"] + box["width"] <= 1024 and f1.inner_text() == "1.000"
        pg.click("#case-table th[data-key='id']")  # sorting by id still orders the rows
        expect(pg.locator("#case-table tbody tr.case").first).to_have_attribute("data-id", "short")
        assert p.rows() == ["short", "x" * 300]
        p.shot("long_id_1024")
        p.assert_offline()
    finally:
        p.close()


def test_a_case_with_alternative_goldens_shows_each_and_marks_the_one_that_decided(browser, tmp_path):
    # Singers Joe 52, Tim 32, Rose 40: "over 40" is {Joe} (the primary, strictly) or {Joe, Rose} (the alternative,
    # "40 and over"); the answer gives {Joe, Rose}, so alternatives[0] decides. q2 has no alternative.
    import sqlite3

    db = tmp_path / "s.sqlite"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE singer (name TEXT, age INTEGER); INSERT INTO singer VALUES ('Joe', 52), ('Tim', 32), ('Rose', 40);")
    con.commit()
    con.close()
    inclusive = "SELECT name FROM singer WHERE age >= 40"
    cases = [{"id": "q1", "question": "Which singers are over 40?", "golden": {
                  "canonical_query": "SELECT name FROM singer WHERE age > 40",
                  "alternatives": [{"columns": ["name"], "rows": [["Joe"], ["Rose"]], "canonical_query": inclusive}]}},
             {"id": "q2", "question": "Which singers are over 40?", "golden": {"columns": ["name"], "rows": [["Joe"]]}}]
    attempts = [{"id": "q1", "final_query": inclusive}, {"id": "q2", "final_query": inclusive}]
    for name, rows in (("cases.jsonl", cases), ("attempts.jsonl", attempts)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run("judge", tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl", "--db", db, "--no-store", "--out", tmp_path / "r.json", "-q")
    out = tmp_path / "alternatives.html"
    run("report", "--results", tmp_path / "r.json", "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        pg.click("#case-table tr.case[data-id='q1']")
        detail = pg.locator("tr.detail[data-detail='q1']")
        text = detail.inner_text()
        assert "golden used\talternatives[0]" in text
        assert "goldens judged (1 alternative; the one that decided marked)" in text
        rows = detail.locator(".goldens tr[data-golden]")
        assert rows.locator("td:first-child").all_inner_texts() == ["primary", "▶ alternatives[0]"]
        assert detail.locator(".goldens tr.decided").get_attribute("data-golden") == "alternatives[0]"
        assert [r.split("\t")[:2] for r in rows.all_inner_texts()] == [["primary", "no_match"], ["▶ alternatives[0]", "match"]]
        # the primary golden's rows, then the alternative's own rows and canonical query, marked as the one that decided
        assert "golden: primary" in text and "golden: primary (decided)" not in text
        alt = detail.locator(".alternative.decided[data-golden='alternatives[0]']")
        assert alt.locator("h4").inner_text() == "golden.alternatives[0] (decided)"
        assert "Rose" in alt.locator("table.rows").inner_text() and inclusive in alt.inner_text()
        pg.click("#case-table tr.case[data-id='q2']")
        plain = pg.locator("tr.detail[data-detail='q2']")
        assert plain.locator(".goldens, .alternative").count() == 0 and "golden used" not in plain.inner_text()
        p.shot("alternative_goldens")
        p.assert_offline()
    finally:
        p.close()


def test_runs_page_shows_every_run_and_each_arms_headline_over_time(browser, tmp_path):
    # issue 29 item 4: `report --runs`. Arm "clinic" judged twice, first with arm A's answers then with arm B's
    # (another attempts file: the dataset changed between the two runs); arm "notes" scored twice, under the
    # openscribe then the unicode tokenizer. Arm A: 19/19 decided cases match, Wilson 95% [19/(19 + z²), 1] =
    # [0.8318, 1]; arm B: 0/15, [0, z²/(15 + z²)] = [0, 0.2039] (z = 1.95996; examples/sql/README.md for the counts).
    store = tmp_path / "g.db"
    judge = ["judge", SQL / "cases.jsonl", "--db", SQL / "clinic.sqlite", "--gates", SQL / "dod.toml", "--store", store,
             "--arm", "clinic", "-q"]
    run(judge[0], judge[1], SQL / "arm_a.jsonl", *judge[2:])
    run(judge[0], judge[1], SQL / "arm_b.jsonl", *judge[2:], code=1)
    run("score", PRIMOCK, "--store", store, "--arm", "notes", "-q")
    run("score", PRIMOCK, "--store", store, "--arm", "notes", "--tokenizer", "unicode", "-q")
    listed = [r["id"] for r in json.loads(run("runs", "list", "--store", store, "--json", "--limit", "0"))]
    out = tmp_path / "runs.html"
    run("report", "--runs", "--store", store, "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        rows = pg.locator("#runs-table tbody tr.run")
        assert rows.evaluate_all("rs => rs.map(r => r.dataset.id)") == listed  # every run, newest first
        clinic = {r["id"]: r for r in rows.evaluate_all(
            "rs => rs.filter(r => r.dataset.arm === 'clinic').map(r => ({id: r.dataset.id, cells: Array.from(r.cells).map(c => c.innerText)}))")}
        newest, oldest = listed[2], listed[3]
        # cells: run, arm, when, n, headline, value, interval, gates, versions, changed since the arm's previous run
        assert clinic[oldest]["cells"][3:7] == ["22", "pass rate", "1.0000", "[0.8318, 1.0000]"]
        assert clinic[oldest]["cells"][7].startswith("pass") and clinic[newest]["cells"][7].startswith("FAIL")
        assert clinic[newest]["cells"][5:7] == ["0.0000", "[0.0000, 0.2039]"]
        assert clinic[newest]["cells"][9].startswith("dataset ") and clinic[oldest]["cells"][9] == ""
        versions = clinic[newest]["cells"][8]
        assert versions.startswith("answer_judge@") and f"judge {JUDGE_VERSION}" in versions and "rubric " in versions
        # one chart per arm, with the numbered marker where the measurement changed
        charts = pg.locator("figure.arm-chart")
        assert charts.count() == 2
        chart = pg.locator("figure.arm-chart[data-arm='clinic']")
        assert "1 dataset" in chart.locator("svg").text_content()
        assert chart.locator("svg [id^='run-point-']").count() == 2  # one point (with its interval) per run of the arm
        assert chart.locator("li[data-change='1']").inner_text().startswith(f"1 · between {oldest} and {newest}: dataset ")
        notes = pg.locator("figure.arm-chart[data-arm='notes']")
        assert "1 tokenizer" in notes.locator("svg").text_content()
        assert "tokenizer openscribe → unicode" in notes.locator("li[data-change='1']").inner_text()
        p.assert_charts_fit()
        # sorted by value (a click: ascending), arm B's 0.0000 comes first
        pg.click("#runs-table th[data-key='value']")
        assert rows.first.get_attribute("data-id") == newest
        p.shot("runs_page")
        p.assert_offline()
    finally:
        p.close()
