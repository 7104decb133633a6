"""The key on the report's case view, in Chromium: a criteria golden reads as its rubric clauses, a value golden shows
its ACCEPT / PREFERRED clauses, each clause styled by the verdict its marker fixes and marked with the part it played
(decided the verdict, held the rule verdict open), ``must_not_use`` with the use found, and no line repeating the
``why``. The clinic example (examples/sql) is the data: q13 is its criteria golden, q14 its value golden with
PREFERRED / ACCEPT clauses, q11 its ``must_not_use`` case (examples/sql/cases.jsonl, README "The clinic example").

Uses the browser fixture, page helper and skips of :mod:`test_report_browser` (Debian's Chromium; a screenshot of
each page under ``test-artifacts/report/``).
"""

from __future__ import annotations

import json
import re

import pytest

from test_report_browser import ARTIFACTS, CHROMIUM, Q13_RAW, SQL, Page, expect, run


pytestmark = [
    pytest.mark.skipif(not __import__("os").path.exists(CHROMIUM), reason=f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"),
    pytest.mark.skipif(expect is None, reason="playwright is not installed (pip install -e '.[test]')"),
]

CASES = {json.loads(x)["id"]: json.loads(x) for x in (SQL / "cases.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()}

# computed colours of report.css: --pass #2e7d32, --fail #c62828, white
GREEN, RED, WHITE = "rgb(46, 125, 50)", "rgb(198, 40, 40)", "rgb(255, 255, 255)"


def _clauses(detail) -> list[dict]:
    return detail.locator("ol.rubric li.clause").evaluate_all("""ls => ls.map(l => ({
        marker: l.dataset.marker, role: l.dataset.role || null, text: l.querySelector('.clause-text').textContent,
        effect: l.querySelector('.effect').textContent, said: (l.querySelector('.role') || {}).textContent || null,
        bg: getComputedStyle(l.querySelector('.marker')).backgroundColor,
        fg: getComputedStyle(l.querySelector('.marker')).color}))""")


def _detail_shot(p: Page, cid: str, name: str) -> None:
    """One opened case view as ``ARTIFACTS/name.png``, taken in a window as tall as the page (as ``Page.shot``): a
    scrolled capture would show the table's sticky header over it."""
    pg = p.page
    size = pg.viewport_size
    pg.set_viewport_size({"width": size["width"], "height": min(20_000, pg.evaluate("document.documentElement.scrollHeight"))})
    try:
        pg.locator(f"tr.detail[data-detail='{cid}']").screenshot(path=str(ARTIFACTS / f"{name}.png"))
    finally:
        pg.set_viewport_size(size)


def _why_repeats(pg) -> dict[str, int]:
    """case id → how many elements of its opened detail hold exactly its why (the cases opened, with a why)."""
    return pg.evaluate("""() => {
        const D = JSON.parse(document.getElementById('goldeval-data').textContent);
        const out = {};
        D.cases.forEach(c => {
            const d = document.querySelector(`tr.detail[data-detail="${c.id}"]`);
            if (!c.why || !d) return;
            out[c.id] = Array.from(d.querySelectorAll('td, div.text, li, span, p')).filter(e => e.textContent === c.why).length;
        });
        return out; }""")


def test_a_criteria_golden_reads_as_its_clauses_and_an_accept_clause_is_shown(browser, tmp_path):
    out = tmp_path / "key.html"
    run("judge", SQL / "cases.jsonl", SQL / "arm_b.jsonl", "--db", SQL / "clinic.sqlite", "--no-store", "--out",
        tmp_path / "b.json", "-q")
    run("report", "--results", tmp_path / "b.json", "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        # chips for the outcomes the answer judge can produce (the pass rate's buckets), no "changed" outside a
        # comparison; q19's golden is verified_wrong (README), the only one
        chips = pg.locator("#filters button").evaluate_all("bs => bs.map(b => b.dataset.filter)")
        assert chips == ["all", "fail", "pass", "near_match", "needs_human", "unscored", "verified_wrong"]
        pg.click("#filters button[data-filter='verified_wrong']")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^1 of 22"))
        assert p.rows() == ["q19"]
        pg.click("#filters button[data-filter='all']")

        # q13, the criteria golden: the golden's place holds its three clauses, as the case file gives them, each
        # with what its marker does (DESIGN.md "Rubric markers"); no rule decided by a clause, so none is marked
        pg.click("#case-table tr.case[data-id='q13']")
        d13 = pg.locator("tr.detail[data-detail='q13']")
        crit = d13.locator(".criteria")
        assert crit.locator("h4").inner_text() == "golden (criteria): the rubric clauses are the whole key"
        got = _clauses(crit)
        assert [f"{c['marker']}: {c['text']}" for c in got] == CASES["q13"]["rubric"]
        assert [c["effect"] for c in got] == ["→ no_match when the answer omits it", "→ credited: omitting it still leaves a match",
                                              "→ no_match when the answer does this"]
        assert [c["role"] for c in got] == [None, None, None]
        # styled by what they do: WRONG filled red, REQUIRED outlined red (red on white), CREDITED grey
        wrong, required, credited = got[2], got[0], got[1]
        assert wrong["bg"] == RED and wrong["fg"] == WHITE
        assert required["bg"] == WHITE and required["fg"] == RED
        assert credited["bg"] not in (RED, GREEN, WHITE)
        assert d13.locator(".key ol.rubric").count() == 0  # shown once, as the golden

        # q14, a value golden (347) with PREFERRED and ACCEPT clauses: its rows and then its rubric; the rules held
        # their no_match (301 against 347) open because "an ACCEPT/PREFERRED/DIVERGENT rubric clause may cover this
        # answer" (answer.py), so both clauses say so
        pg.click("#case-table tr.case[data-id='q14']")
        d14 = pg.locator("tr.detail[data-detail='q14']")
        assert "347" in d14.locator("table.rows").first.inner_text()
        assert d14.locator(".key h4").first.inner_text() == "rubric (2 clauses)"
        got = _clauses(d14.locator(".key"))
        accept = next(c for c in got if c["marker"] == "ACCEPT")
        assert accept["text"] == "counts by discharge date, if the answer says so"
        assert accept["effect"] == "→ match when the answer does this" and accept["bg"] == GREEN
        assert [(c["marker"], c["role"], c["said"]) for c in got] == [
            ("PREFERRED", "held_open", "kept the rule verdict from being final"),
            ("ACCEPT", "held_open", "kept the rule verdict from being final")]

        # q11: must_not_use, the field entry a hard veto with the use the parsed query showed, the prose entry the
        # LLM judge's; q01 (no rubric, no must_not_use) shows no key at all
        pg.click("#case-table tr.case[data-id='q11']")
        mnu = pg.locator("tr.detail[data-detail='q11'] ul.mnu li")
        assert mnu.evaluate_all("ls => ls.map(l => [l.dataset.kind, l.querySelector('code').textContent])") == [
            ["field", "patients.ssn"], ["prose", "Do not identify patients by name or address."]]
        assert mnu.nth(0).locator(".role").inner_text() == "▶ decided the verdict: used as ssn (unqualified, read from patients)"
        assert mnu.nth(1).locator(".role").count() == 0
        pg.click("#case-table tr.case[data-id='q01']")
        assert pg.locator("tr.detail[data-detail='q01'] .key, tr.detail[data-detail='q01'] ol.rubric").count() == 0

        # the clauses are searchable: "steady decline" is in q13's WRONG clause only (the answer says "declined steadily")
        pg.fill("#search", "steady decline")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^1 of 22"))
        assert p.rows() == ["q13"]
        pg.fill("#search", "")
        expect(pg.locator("#count")).to_have_text(re.compile(r"^22 of 22"))
        p.shot("key_clinic_arm_b")
        for cid in ("q11", "q13", "q14"):  # each case view alone, to look at
            _detail_shot(p, cid, f"key_clinic_arm_b_{cid}")
        for cid in p.rows():  # open every case: no detail line repeats its why
            if not pg.locator(f"tr.detail[data-detail='{cid}']").count():
                pg.click(f"#case-table tr.case[data-id='{cid}']")
        repeats = _why_repeats(pg)
        assert len(repeats) == 22 - 3 and set(repeats.values()) == {1}, repeats  # q16, q17, q22 unscored: no why
        # a mismatch the why quotes is not a line of its own (q01: "… (one column off: 'n_admissions' (5 of 6 rows
        # differ, every other value right))."); one the why does not hold is (q06: "different value: 81 instead of 79")
        def labels(cid):
            return pg.locator(f"tr.detail[data-detail='{cid}'] > td > table.kv th").all_inner_texts()

        assert "mismatch" not in labels("q01") and "mismatch" in labels("q06")
        p.assert_offline()
    finally:
        p.close()


#: The LLM judge's answer for q14: a match, citing the ACCEPT clause by its words.
Q14_ACCEPT = ('{"verdict": "match", "confidence": 8, "why": "The answer counts by discharge date and says so, which the '
              'rubric accepts (counts by discharge date, if the answer says so).", "gold_status": "verified"}')


def test_the_clause_that_decided_an_llm_verdict_is_marked(browser, tmp_path, monkeypatch):
    # q13: the judge's why "Reports a steady decline, which the rubric marks WRONG." names WRONG, the only WRONG
    # clause, and its verdict no_match is the one WRONG fixes: that clause decided. q14: the why holds the ACCEPT
    # clause's words and the verdict is match, the one ACCEPT fixes: it decided; PREFERRED is not cited.
    pytest.importorskip("openai")
    from fake_openai_server import FakeOpenAI, Reply

    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))  # the judge's call cache
    store = tmp_path / "g.db"

    def answer(req):
        return Reply(content=Q13_RAW if "admission volume changed over 2024" in req["messages"][1]["content"] else Q14_ACCEPT)

    with FakeOpenAI(default=answer) as srv:
        run("judge", SQL / "cases.jsonl", SQL / "arm_b.jsonl", "--db", SQL / "clinic.sqlite", "--llm", "judge-model",
            "--base-url", srv.base_url, "--store", store, "--arm", "arm-b-llm", "-q")
        assert srv.calls == 2
    out = tmp_path / "key_llm.html"
    run("report", "latest", "--store", store, "--out", out)
    p = Page(browser, out)
    try:
        pg = p.page
        pg.click("#case-table tr.case[data-id='q13']")
        d13 = pg.locator("tr.detail[data-detail='q13']")
        assert [(c["marker"], c["role"]) for c in _clauses(d13.locator(".criteria"))] == [
            ("REQUIRED", None), ("CREDITED", None), ("WRONG", "decided")]
        assert d13.locator("li.clause[data-role='decided'] .role").inner_text() == "▶ decided the verdict"
        pg.click("#case-table tr.case[data-id='q14']")
        d14 = pg.locator("tr.detail[data-detail='q14']")
        assert [(c["marker"], c["role"]) for c in _clauses(d14.locator(".key"))] == [("PREFERRED", None), ("ACCEPT", "decided")]
        # the LLM call's parsed why is the case's why: pointed back to, not printed again
        assert re.search(r"why\s+\(the case's why, above\)", d14.locator(".llm-call").inner_text())
        assert _why_repeats(pg) == {"q13": 1, "q14": 1}
        p.shot("key_llm_decided")
        _detail_shot(p, "q13", "key_llm_decided_q13")
        _detail_shot(p, "q14", "key_llm_decided_q14")
        p.assert_offline()
    finally:
        p.close()
