"""Issue 10 item 11: control characters in arm names, case ids and labels are printed escaped (runs list, runs
show, compare, the gate decision line, failure lines, error messages), never sent raw to the terminal.

On the main of 2026-12-01 rich printed an ESC in an arm name raw (``A<ESC>[2Jarm`` clears a terminal's screen) and
a U+202E reversed the rest of the runs table's line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from goldeval.io.printable import printable

ESC_ARM = "A\x1b[2Jarm"
RLO_ARM = "B\u202eb"
EVIL_ID = "c\x1b[31m1\u202e"
RAW = ("\x1b", "\u202e", "\x9b")


def goldeval(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "GOLDEVAL_HOME": str(cwd / "home")}
    return subprocess.run([sys.executable, "-c", "from goldeval.cli import main; main()", *[str(a) for a in args]],
                          capture_output=True, timeout=300, cwd=cwd, env=env)


def text_of(done: subprocess.CompletedProcess) -> str:
    return done.stdout.decode() + done.stderr.decode()


def assert_escaped(out: str, *shown: str) -> None:
    for ch in RAW:
        assert ch not in out, f"raw {ch!r} printed: {out!r}"
    for s in shown:
        assert s in out, f"{s!r} not in {out!r}"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("controls")
    # F1 by hand: EVIL_ID "a b" vs "a b" = 1 in A; "a" vs "a b" in B: P 1, R 1/2, F1 2/3. "r2\x9b" is 1 in both.
    rows_a = [{"id": EVIL_ID, "prediction": "a b", "reference": "a b"}, {"id": "r2\x9b", "prediction": "x", "reference": "x"}]
    rows_b = [{"id": EVIL_ID, "prediction": "a", "reference": "a b"}, {"id": "r2\x9b", "prediction": "x", "reference": "x"}]
    (d / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows_a))
    (d / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows_b))
    assert goldeval("score", "a.jsonl", "--arm", ESC_ARM, cwd=d).returncode == 0
    assert goldeval("score", "b.jsonl", "--arm", RLO_ARM, cwd=d).returncode == 0
    return d


def test_runs_list_and_show_escape_arm_names(folder: Path) -> None:
    listed = goldeval("runs", "list", cwd=folder)
    assert listed.returncode == 0
    assert_escaped(text_of(listed), "A\\x1b[2Jarm", "B\\u202eb")
    shown = goldeval("runs", "show", "latest~1", cwd=folder)
    assert shown.returncode == 0
    assert_escaped(text_of(shown), "A\\x1b[2Jarm")


def test_compare_escapes_arms_and_case_ids(folder: Path) -> None:
    done = goldeval("compare", "latest~1", "latest", cwd=folder)
    assert done.returncode == 0, text_of(done)
    # the one mover, EVIL_ID, F1 1 -> 2/3 (worked out in the fixture)
    assert_escaped(text_of(done), "A\\x1b[2Jarm", "B\\u202eb", "c\\x1b[31m1\\u202e")


def test_decision_line_failure_lines_and_errors_escape_labels_and_ids(folder: Path) -> None:
    rows = [{"id": "k1", "gold": "esc\x1b[0m", "pred": "esc\x1b[0m"}, {"id": "k2", "gold": "ok", "pred": "esc\x1b[0m"},
            {"id": "k1", "gold": "ok", "pred": "ok"}]  # k1 repeated: a failed row, listed on stderr
    (folder / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "dod.toml").write_text('positive = "esc\\u001b[0m"\n[gates]\nprecision = { min = 0.9 }\n')
    done = goldeval("labels", "labels.jsonl", "--gates", "dod.toml", "--no-store", cwd=folder)
    assert done.returncode == 1, text_of(done)  # precision 1/2 < 0.9
    out = text_of(done)
    assert_escaped(out, "FAIL: Precision 0.500 fails 0.9", "'esc\\x1b[0m'")
    missing = goldeval("gate", "no\x1bsuch.json", "--gates", "dod.toml", cwd=folder)
    assert missing.returncode == 2
    assert_escaped(text_of(missing), "no\\x1bsuch.json")


def test_printable_by_hand() -> None:
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable("x\ry\u202ez\x9b\x7f") == "x\\ry\\u202ez\\x9b\\x7f"
    assert printable("two\nlines\tand tab") == "two\nlines\tand tab"
    assert printable("two\nlines\t", keep_newlines=False) == "two\\nlines\\t"
    plain = "Café 138/86 \\ ok"
    assert printable(plain) is plain


def _bidi_labels(folder: Path) -> None:
    """Labels whose positive label, noun, annotator and ids hold U+202E (RLO) and an ESC. By hand: k1 tp, k2 fp
    (pred is the positive label, gold is not): precision 1/2, recall 1/1; the precision gate (min 0.9) fails."""
    rows = [{"id": "k1\u202e", "gold": "esc\u202ealate", "pred": "esc\u202ealate"},
            {"id": "k2\x1b[2J", "gold": "ok", "pred": "esc\u202ealate"}]
    (folder / "bidi.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "bidi.toml").write_text('agreed_by = "Head \\u202eof triage"\npositive = "esc\\u202ealate"\n'
                                      'positive_noun = "escal\\u202eation"\n[gates]\nprecision = { min = 0.9 }\n'
                                      'recall = { min = 0.5 }\n')


def test_markdown_junit_and_html_show_controls_escaped(folder: Path) -> None:
    # The console escaped them (above); the CI outputs and the report sent them raw on the main of 2026-12-01: in a
    # step summary, a JUnit page or the report, U+202E showed the rest of the decision line reversed.
    _bidi_labels(folder)
    done = goldeval("labels", "bidi.jsonl", "--gates", "bidi.toml", "--store", "bidi.db", "--junit", "bidi.xml",
                    "--junit-cases", "--summary-md", "bidi.md", "-q", cwd=folder)
    assert done.returncode == 1, text_of(done)  # precision 1/2 < 0.9
    markdown = (folder / "bidi.md").read_text(encoding="utf-8")
    assert_escaped(markdown, "Precision 0.500 fails 0.9", "escal\\\\u202eation")  # Markdown's own \ doubled
    junit = (folder / "bidi.xml").read_text(encoding="utf-8")
    assert_escaped(junit, "k1\\u202e", "k2\\x1b[2J", "escal\\u202eation")
    report = goldeval("report", "latest", "--store", "bidi.db", "--out", "bidi.html", cwd=folder)
    assert report.returncode == 0, text_of(report)
    html = (folder / "bidi.html").read_text(encoding="utf-8")
    # everything but the embedded data (which keeps the values as they are, for the page's script)
    start = html.index('<script type="application/json" id="goldeval-data">')
    shown = html[:start] + html[html.index("</script>", start):]
    assert_escaped(shown, "Head \\u202eof triage", "escal\\u202eation caught")
    assert "\u202e" in html[start:]  # the data itself is kept


def test_a_junit_testcase_name_is_one_line(folder: Path) -> None:
    # A fresh-user run: a case id 'bell\x07\r\nnewline' became the testcase name 'bell\x07\r<LF>newline' (the line
    # feed kept while the BEL and CR were escaped): a CI page showed one case as two lines. A name is one line.
    rows = [{"id": "two\nlines", "gold": "y", "pred": "n"}, {"id": "tab\tbed", "gold": "y", "pred": "y"}]
    (folder / "nl.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = goldeval("labels", "nl.jsonl", "--positive", "y", "--no-store", "--junit", "nl.xml", "--junit-cases", "-q",
                    cwd=folder)
    assert done.returncode == 0, text_of(done)
    import xml.etree.ElementTree as ET

    names = [tc.get("name") for tc in ET.parse(folder / "nl.xml").iter("testcase")]
    assert "two\\nlines" in names and "tab\\tbed" in names, names


def test_a_junit_case_without_a_prediction_says_so(folder: Path) -> None:
    # A fresh-user run: a labels row {"gold": "y", "pred": null} failed in JUnit as "missed positive: gold 'y',
    # predicted None" (Python's word; the console says "without a prediction"). By hand: a (gold y, no pred) is a
    # missed positive, d (gold n, pred y) a false positive, b and c pass.
    rows = [{"id": "a", "gold": "y", "pred": None}, {"id": "b", "gold": "n", "pred": None},
            {"id": "c", "gold": "y", "pred": "y"}, {"id": "d", "gold": "n", "pred": "y"}]
    (folder / "np.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = goldeval("labels", "np.jsonl", "--positive", "y", "--no-store", "--junit", "np.xml", "--junit-cases", "-q",
                    cwd=folder)
    assert done.returncode == 0, text_of(done)
    import xml.etree.ElementTree as ET

    got = {tc.get("name"): [c.get("message") for c in tc if c.tag == "failure"] for tc in ET.parse(folder / "np.xml").iter("testcase")}
    assert got["a"] == ["missed positive: gold 'y', no prediction"]
    assert got["d"] == ["false positive: predicted 'y', gold 'n'"]
    assert got["b"] == [] and got["c"] == []
