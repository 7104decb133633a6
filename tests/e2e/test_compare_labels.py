"""``goldeval compare`` of two label runs speaks of labels (issue 10 item 11): missed positives and false positives,
new and fixed, and the cases whose predicted label changed — not match / no_match, near_match or a pass rate.

The two runs below are built by hand so that every kind of move occurs once and the headline does not move:

    case  gold      A pred    B pred    A → B     what moved
    c1    escalate  escalate  approve   tp → fn   a new miss
    c2    escalate  approve   escalate  fn → tp   a fixed miss
    c3    approve   approve   escalate  tn → fp   a new false positive
    c4    approve   escalate  approve   fp → tn   a fixed false positive
    c5    approve   approve   reject    tn → tn   a label flip that leaves the outcome
    c6    escalate  escalate  escalate  tp → tp
    c7    reject    escalate  escalate  fp → fp

A: tp {c1, c6} = 2, fn {c2} = 1, fp {c4, c7} = 2, tn {c3, c5} = 2; B: tp {c2, c6} = 2, fn {c1} = 1, fp {c3, c7} = 2,
tn {c4, c5} = 2. So both runs have precision 2/4 = 0.5 and recall 2/3 — the same headline over four moves, which is
why the comparison must name them. McNemar: right → wrong {c1, c3} = 2, wrong → right {c2, c4} = 2; two-sided exact
p = binomtest(2, 4, 0.5) = 1 (the distribution is symmetric: P(X ≤ 2) + P(X ≥ 2) capped at 1).
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from goldeval.cli import main

GOLD = {"c1": "escalate", "c2": "escalate", "c3": "approve", "c4": "approve", "c5": "approve", "c6": "escalate", "c7": "reject"}
PRED_A = {"c1": "escalate", "c2": "approve", "c3": "approve", "c4": "escalate", "c5": "approve", "c6": "escalate", "c7": "escalate"}
PRED_B = {"c1": "approve", "c2": "escalate", "c3": "escalate", "c4": "approve", "c5": "reject", "c6": "escalate", "c7": "escalate"}


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, (args, result.output)
    return result.stdout


def _label_runs(tmp_path: Path, gold_b: dict[str, str] | None = None) -> Path:
    store = tmp_path / "g.db"
    for arm, pred, gold in (("a", PRED_A, GOLD), ("b", PRED_B, gold_b or GOLD)):
        f = tmp_path / f"{arm}.jsonl"
        f.write_text("".join(json.dumps({"id": c, "gold": gold[c], "pred": pred[c]}) + "\n" for c in GOLD), encoding="utf-8")
        run("labels", f, "--positive", "escalate", "--store", store, "--arm", arm, "-q")
    return store


def test_compare_of_two_label_runs_speaks_of_labels(tmp_path):
    store = _label_runs(tmp_path)
    out = tmp_path / "cmp.json"
    text = run("compare", "latest~1", "latest", "--store", store, "--out", out, "--junit", tmp_path / "cmp.xml")
    flat = " ".join(text.split())  # rich wraps long lines at the terminal width
    assert "labels A: positive 'escalate' · precision 0.500 (2 of 4 predicted positive) · recall 0.667 (2 of 3 gold positives) · missed 1 · false positives 2" in flat
    assert "labels B: positive 'escalate' · precision 0.500 (2 of 4 predicted positive)" in flat
    assert "missed positives: 1 in A → 1 in B · 1 new · 1 fixed" in flat
    assert "false positives: 2 in A → 2 in B · 1 new · 1 fixed" in flat
    assert "label flips: 5 case(s) whose predicted label changed" in flat
    assert "McNemar exact: 2 right → wrong vs 2 wrong → right, two-sided p = 1" in flat
    assert "2 case(s) went from a right label to a wrong one: 1 new missed positive(s), 1 new false positive(s)" in flat
    for what in ("new miss", "fixed miss", "new false", "fixed false", "still tn"):
        assert what in text
    # none of the verdict words: a label run has no verdict, pass rate or near_match
    for word in ("verdict", "near_match", "pass rate", "match ·", "no_match", "pass → fail"):
        assert word not in text, word

    lab = json.loads(out.read_text())["labels"]
    assert (lab["a"]["tp"], lab["a"]["fp"], lab["a"]["fn"], lab["a"]["tn"]) == (2, 2, 1, 2)
    assert (lab["b"]["tp"], lab["b"]["fp"], lab["b"]["fn"], lab["b"]["tn"]) == (2, 2, 1, 2)
    assert lab["a"]["precision"] == 0.5 and lab["a"]["recall"] == 2 / 3
    assert [c["id"] for c in lab["missed"]["new"]] == ["c1"] and [c["id"] for c in lab["missed"]["fixed"]] == ["c2"]
    assert [c["id"] for c in lab["false_positives"]["new"]] == ["c3"]
    assert [c["id"] for c in lab["false_positives"]["fixed"]] == ["c4"]
    assert [c["id"] for c in lab["label_flips"]] == ["c1", "c2", "c3", "c4", "c5"]
    assert lab["label_flips"][0] == {"id": "c1", "gold_a": "escalate", "gold_b": "escalate", "pred_a": "escalate",
                                     "pred_b": "approve", "outcome_a": "tp", "outcome_b": "fn"}
    assert lab["transitions"] == {"fn->tp": 1, "fp->fp": 1, "fp->tn": 1, "tn->fp": 1, "tn->tn": 1, "tp->fn": 1, "tp->tp": 1}
    assert lab["gold_changed"] == [] and lab["positive"] == {"a": "escalate", "b": "escalate"}

    xml = (tmp_path / "cmp.xml").read_text()
    assert "right -&gt; wrong label: gold 'escalate', A predicted 'escalate' (tp) -&gt; B predicted 'approve' (fn)" in xml


def test_a_gold_label_that_changed_is_named_not_counted_as_a_model_move(tmp_path):
    # c6's gold goes escalate -> approve in B (pred stays escalate): tp -> fp by the gold alone
    store = _label_runs(tmp_path, gold_b={**GOLD, "c6": "approve"})
    out = tmp_path / "cmp.json"
    text = " ".join(run("compare", "latest~1", "latest", "--store", store, "--out", out).split())
    lab = json.loads(out.read_text())["labels"]
    assert [c["id"] for c in lab["gold_changed"]] == ["c6"]
    assert [c["id"] for c in lab["false_positives"]["new"]] == ["c3"]  # c6 is not a new false positive of the model
    assert "1 case(s) carry a different gold label in the two runs" in text
    assert "gold label changed" in text
    assert "3 case(s) went from a right label to a wrong one: 1 new missed positive(s), 1 new false positive(s), the others where the gold label changed" in text


def test_a_verdict_comparison_keeps_its_words(tmp_path):
    # the SQL example's arm A against itself: verdict runs have no labels part and keep the pass-rate lines
    sql = Path(__file__).resolve().parents[2] / "examples" / "sql"
    store = tmp_path / "g.db"
    for _ in range(2):
        run("judge", sql / "cases.jsonl", sql / "arm_a.jsonl", "--db", sql / "clinic.sqlite", "--store", store, "-q", "--arm", "a")
    out = tmp_path / "cmp.json"
    text = run("compare", "latest~1", "latest", "--store", store, "--out", out)
    assert "pass rate A:" in text and "labels A:" not in text
    assert json.loads(out.read_text())["labels"] is None
