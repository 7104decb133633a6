"""The CLI's progress display (goldeval.cli._progress): the plain line's figures, worked out by hand; its cadence
in a non-terminal, with a fake clock; the interval's environment variable; -q."""

from __future__ import annotations

import pytest

from goldeval.cli._progress import DEFAULT_INTERVAL_S, ProgressDisplay, line_interval, progress_line
from goldeval.errors import InputError
from goldeval.io.printable import fmt_seconds


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def plain(monkeypatch, interval: str | None = None, **kw):
    if interval is None:
        monkeypatch.delenv("GOLDEVAL_PROGRESS_INTERVAL", raising=False)
    else:
        monkeypatch.setenv("GOLDEVAL_PROGRESS_INTERVAL", interval)
    clock, lines = Clock(), []
    display = ProgressDisplay("judging", unit="cases", clock=clock, write=lines.append, terminal=False, **kw)
    return display, clock, lines


def test_progress_line_figures():
    # 50 of 200 in 10 s: 5.0 cases/s; 150 left at 5/s = 30 s
    assert progress_line("judging", "cases", 50, 200, 10.0) == "goldeval: judging: 50/200 cases (25%), 5.0 cases/s, about 30 s left"
    # 3 of 7 is 42.857 %: the percentage is floored (never says 43 % before it is reached)
    # 3 in 2 s: 1.5/s; 4 left / 1.5 = 2.67 s -> "3 s"
    assert progress_line("judging", "cases", 3, 7, 2.0) == "goldeval: judging: 3/7 cases (42%), 1.5 cases/s, about 3 s left"
    # 100 of 10,000 in 60 s: 9,900 left at 1.6667/s = 5,940 s = 1 h 39 min
    assert progress_line("scoring", "rows", 100, 10_000, 60.0).endswith("about 1 h 39 min left")
    # done: no time left; unknown total: a count and a rate only
    assert progress_line("judging", "cases", 7, 7, 2.0) == "goldeval: judging: 7/7 cases (100%), 3.5 cases/s"
    assert progress_line("replaying", "verdicts", 4, None, 2.0) == "goldeval: replaying: 4 verdicts, 2.0 verdicts/s"


def test_progress_line_with_the_llm_tally():
    tally = {"calls": 80, "cached": 12, "failed": 1, "spend_usd": 0.01234}
    assert progress_line("LLM judge", "cases", 40, 100, 20.0, tally) == (
        "goldeval: LLM judge: 40/100 cases (40%), 2.0 cases/s, about 30 s left; "
        "LLM calls 80 (12 cached, 1 failed), $0.0123 spent")
    # no price: no spend figure rather than a made-up $0
    assert progress_line("LLM judge", "cases", 1, 1, 1.0, {**tally, "spend_usd": None}).endswith("LLM calls 80 (12 cached, 1 failed)")


def test_a_non_terminal_gets_a_line_at_most_every_interval(monkeypatch):
    display, clock, lines = plain(monkeypatch)
    assert display.interval == DEFAULT_INTERVAL_S == 10.0
    display.start(100)
    for _ in range(40):  # one case every second for 40 s
        clock.now += 1.0
        display.advance()
    # lines at 10, 20, 30 and 40 s: never two within 10 s, none before the first 10 s
    assert [line.split(",")[0] for line in lines] == [f"goldeval: judging: {n}/100 cases ({n}%)" for n in (10, 20, 30, 40)]


def test_a_run_shorter_than_the_interval_writes_nothing(monkeypatch):
    display, clock, lines = plain(monkeypatch)
    display.start(5)
    for _ in range(5):
        clock.now += 1.9
        display.advance()
    display.stop()
    assert lines == []


def test_the_interval_comes_from_the_environment(monkeypatch):
    display, clock, lines = plain(monkeypatch, "2.5")
    display.start(10)
    for _ in range(10):
        clock.now += 1.0
        display.advance()
    assert [line.split(" cases")[0] for line in lines] == ["goldeval: judging: 3/10", "goldeval: judging: 6/10", "goldeval: judging: 9/10"]


def test_quiet_writes_nothing(monkeypatch):
    display, clock, lines = plain(monkeypatch, "0", quiet=True)
    display.start(3)
    for _ in range(3):
        clock.now += 20.0
        display.advance()
    display.llm({"sent": 3, "cases": 3, "calls": 3, "cached": 0, "failed": 0, "spend_usd": None})
    assert lines == []


def test_the_llm_tally_sets_the_cases_done(monkeypatch):
    display, clock, lines = plain(monkeypatch, "0")
    clock.now += 4.0
    display.llm({"sent": 8, "cases": 0, "calls": 0, "cached": 0, "failed": 0, "spend_usd": 0.0})  # starts the stage
    clock.now += 4.0
    display.llm({"sent": 8, "cases": 2, "calls": 4, "cached": 1, "failed": 0, "spend_usd": 0.5})
    # 2 of 8 in 4 s since the stage began: 0.5/s, 6 left = 12 s
    assert lines[-1] == ("goldeval: judging: 2/8 cases (25%), 0.5 cases/s, about 12 s left; "
                         "LLM calls 4 (1 cached, 0 failed), $0.5000 spent")


@pytest.mark.parametrize("text", ["soon", "-1", "nan", "inf"])
def test_a_bad_interval_is_refused(text):
    with pytest.raises(InputError, match=r"\$GOLDEVAL_PROGRESS_INTERVAL: expected the seconds between progress lines"):
        line_interval({"GOLDEVAL_PROGRESS_INTERVAL": text})


def test_an_empty_interval_is_the_default():
    assert line_interval({"GOLDEVAL_PROGRESS_INTERVAL": ""}) == line_interval({}) == 10.0
    assert line_interval({"GOLDEVAL_PROGRESS_INTERVAL": "0"}) == 0.0


def test_cap_columns_folds_a_long_cell_and_keeps_set_widths():
    import io

    from rich.table import Table

    from goldeval.io.printable import cap_columns, escaping_console

    def draw(cap):
        t = Table(box=None, show_header=False, pad_edge=False)
        t.add_column("label")
        t.add_column("n", width=3)  # set by its table: kept
        for label, n in (("x" * 25, 1), ("short", 2)):
            t.add_row(label, str(n))
        buf = io.StringIO()
        escaping_console(file=buf, width=100, column_cap=cap, color_system=None).print(t)
        return buf.getvalue().splitlines(), t

    wide, _ = draw(None)
    # one column of 25 for every row: the second column starts after 25 cells and two of padding, "short" too
    assert [line.index(n) for line, n in zip(wide, "12", strict=True)] == [27, 27]
    capped, table = draw(10)
    # 25 x's fold into 10 + 10 + 5 in their own row; "short" keeps its row; nothing is cut
    assert [line.split()[0] for line in capped] == ["x" * 10, "x" * 10, "x" * 5, "short"]
    assert table.columns[0].max_width == 10 and table.columns[0].overflow == "fold"
    assert table.columns[1].max_width is None and table.columns[1].width == 3
    t = Table()
    t.add_column("a", max_width=80)
    cap_columns(t, 10)
    assert t.columns[0].max_width == 80


def test_an_activity_writes_a_line_per_interval_until_the_work_ends(monkeypatch):
    import time

    from goldeval.cli._progress import Activity

    monkeypatch.setenv("GOLDEVAL_PROGRESS_INTERVAL", "0.1")
    lines: list[str] = []
    assert Activity("building the report", write=lines.append, terminal=False).run(lambda: time.sleep(0.45) or 7) == 7
    # 0.45 s of work at one line every 0.1 s: about four lines (a loaded machine may write fewer), then none
    assert 1 <= len(lines) <= 5 and all(line.startswith("goldeval: building the report: ") and line.endswith(" s so far")
                                        for line in lines)
    n = len(lines)
    time.sleep(0.3)
    assert len(lines) == n  # the timer stopped with the work


def test_an_activity_stops_when_the_work_fails_and_is_silent_when_quiet(monkeypatch):
    from goldeval.cli._progress import Activity

    monkeypatch.setenv("GOLDEVAL_PROGRESS_INTERVAL", "0")  # 0 is taken as the shortest interval, 0.1 s
    lines: list[str] = []

    def fails() -> None:
        raise InputError("no such run")

    with pytest.raises(InputError, match="no such run"):
        Activity("building the report", write=lines.append, terminal=False).run(fails)
    Activity("building the report", write=lines.append, terminal=False, quiet=True).run(lambda: None)
    assert lines == []


def test_durations_on_the_screen_keep_their_digits():
    # Worked by hand: 3.8 ms must not read "0.00 s" (the score table's "elapsed" did, for PriMock57's 57 rows);
    # below 10 ms one decimal of ms, below a second whole ms, from 999.5 ms on seconds to two decimals.
    assert fmt_seconds(0.0038) == "3.8 ms"
    assert fmt_seconds(0.0) == "0 ms"
    assert fmt_seconds(0.0099) == "9.9 ms"
    assert fmt_seconds(0.00996) == "10 ms"
    assert fmt_seconds(0.25) == "250 ms"
    assert fmt_seconds(0.9994) == "999 ms"
    assert fmt_seconds(0.9996) == "1.00 s"
    assert fmt_seconds(2.456) == "2.46 s"
