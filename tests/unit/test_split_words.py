"""Issue 10 item 12: under the openscribe rule, "Café résumé" becomes caf / r / sum (the upstream rule: scores
must not change). The rows where the rule split a word at a non-ASCII letter are counted and reported with the
--tokenizer unicode hint."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from goldeval.cli import main
from goldeval.pipeline.files import score_file
from goldeval.freetext.tokens import get_tokenizer


def test_openscribe_splits_accented_words_as_upstream() -> None:
    assert get_tokenizer("openscribe").tokenize("Café résumé") == ["caf", "r", "sum"]


def _rows(tmp: Path) -> Path:
    p = tmp / "p.jsonl"
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [
        {"id": "a", "prediction": "Café résumé", "reference": "cafe resume"},   # split: F1 0 (caf r sum vs cafe resume)
        {"id": "b", "prediction": "ok fine", "reference": "ok fine"},           # F1 1
        {"id": "c", "prediction": "東京 only", "reference": "only"},            # unreadable, not split: F1 1 (only/only)
    ]), encoding="utf-8")
    return p


def test_rows_with_split_words_are_counted_and_scores_unchanged(tmp_path: Path) -> None:
    res = score_file(_rows(tmp_path))
    agg = res["aggregate"]
    assert agg["whole_note_f1_mean"] == 2 / 3  # (0 + 1 + 1) / 3, worked out above
    assert agg["n_with_split_words"] == 1
    assert agg["first_split_word"] == {"id": "a", "side": "prediction", "word": "Café"}
    assert agg["n_with_unreadable_text"] == 2


def test_the_summary_says_so_with_the_unicode_hint(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["score", str(_rows(tmp_path)), "--no-store"], terminal_width=250)
    assert r.exit_code == 0, r.output
    assert "1 scored row(s) have words the openscribe rule split at a non-ASCII letter" in r.output
    assert "'Café'" in r.output and "--tokenizer unicode" in r.output


def test_no_count_under_the_unicode_rule(tmp_path: Path) -> None:
    agg = score_file(_rows(tmp_path), tokenizer="unicode")["aggregate"]
    assert agg.get("n_with_split_words", 0) == 0
