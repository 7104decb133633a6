"""Issue 10 item 11: `goldeval runs list` in an 80-column terminal cut numbers and words ("F1 0.2" for 0.279, the
gates column "(interrupte" / "d)"). The table now drops or folds a column (never a digit or a word): all seven
columns where they fit; then without "when" (a run id starts with its UTC date and time); then with the arm over
the scorer in one column; narrower than that, one run a line, wrapped at spaces.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from goldeval.report.runs import render_runs_list

RUNS = [
    {"id": "20261201-112933-817b94", "arm": None, "created_at": "2026-12-01T11:29:33+00:00", "scorer_name": "answer_judge",
     "n": 22, "headline_name": "pass_rate", "headline_value": 1.0, "gates_passed": None, "status": "finished"},
    {"id": "20261201-112932-bfb596", "arm": "labels-a", "created_at": "2026-12-01T11:29:32+00:00", "scorer_name": "labels",
     "n": 200, "headline_name": "f1", "headline_value": 0.878, "gates_passed": False, "status": "finished"},
    {"id": "20261201-112932-aee381", "arm": "openscribe-rule", "created_at": "2026-12-01T11:29:32+00:00",
     "scorer_name": "token_f1", "n": None, "n_recorded": 57, "headline_name": "whole_note_f1_mean",
     "headline_value": 0.27861937781204515, "gates_passed": None, "status": "interrupted"},
]


def rendered(width: int) -> list[str]:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    render_runs_list(RUNS, console)
    return [line.rstrip() for line in console.export_text().splitlines()]


def test_at_80_columns_the_arm_is_folded_over_the_scorer_and_every_number_is_whole():
    # Worked by hand. Column widths are the longest line of each column; columns are 2 cells apart (1 of padding,
    # 1 blank divider). All seven columns: id 22 + arm 15 + when 11 + scorer 12 + n 3 + headline 10 ("pass 1.000")
    # + gates 13 ("(interrupted)") = 86, + 6 gaps of 2 = 98 > 80; folding "when" and "headline" to their longest
    # words (5, 8) still leaves 90. Without "when": 75 + 10 = 85, at best 83 > 80. With the arm over the scorer
    # (one column, 15 wide): 22 + 15 + 3 + 10 + 13 = 63, + 8 = 71 ≤ 80: that layout, at its natural widths.
    row = "{:<22}  {:<15}  {:>3}  {:<10}  {}"
    expected = [
        "runs (newest first; an id starts with its UTC date and time)",
        row.format("", "arm", "", "", "").rstrip(),  # rich aligns header cells at the bottom
        row.format("id", "scorer", "n", "headline", "gates"),
        "─" * 71,
        row.format("20261201-112933-817b94", "—", "22", "pass 1.000", "—"),
        row.format("", "answer_judge", "", "", "").rstrip(),
        row.format("20261201-112932-bfb596", "labels-a", "200", "f1 0.878", "FAIL"),
        row.format("", "labels", "", "", "").rstrip(),
        row.format("20261201-112932-aee381", "openscribe-rule", "57", "F1 0.279", "(interrupted)"),
        row.format("", "token_f1", "", "", "").rstrip(),
    ]
    assert rendered(80) == expected


def test_a_wide_terminal_shows_all_seven_columns():
    # 98 cells (see above) fit 100: every column at its natural width, "when" as MM-DD HH:MM
    row = "{:<22}  {:<15}  {:<11}  {:<12}  {:>3}  {:<10}  {}"
    lines = rendered(100)
    assert lines[0] == "runs (newest first; times UTC)"
    assert lines[1] == row.format("id", "arm", "when", "scorer", "n", "headline", "gates")
    assert lines[3] == row.format("20261201-112933-817b94", "—", "12-01 11:29", "answer_judge", "22", "pass 1.000", "—")
    assert lines[5] == row.format("20261201-112932-aee381", "openscribe-rule", "12-01 11:29", "token_f1", "57", "F1 0.279", "(interrupted)")


def test_narrower_than_any_table_each_run_is_a_line_wrapped_at_spaces():
    # 71 cells at the least for the folded table (only "headline" can give 2: 69); at 60 each run is one line
    lines = rendered(60)
    text = " ".join(" ".join(lines).split())
    assert ("20261201-112932-aee381 arm openscribe-rule · token_f1 · n 57 · F1 0.279 · gates (interrupted)") in text
    assert all(len(line) <= 60 for line in lines)


@pytest.mark.parametrize("width", range(30, 130, 7))
def test_no_width_cuts_a_number_or_a_word(width):
    lines = rendered(width)
    assert all(len(line) <= width for line in lines), width
    words = {w for line in lines for w in line.split()}
    for whole in ("0.279", "0.878", "1.000", "200", "57", "22", "(interrupted)", "FAIL", "openscribe-rule",
                  "answer_judge", "labels-a", "20261201-112933-817b94", "20261201-112932-bfb596", "20261201-112932-aee381"):
        assert whole in words, (width, whole, lines)
