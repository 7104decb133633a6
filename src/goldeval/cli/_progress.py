"""Progress of a long command on stderr: a Rich bar on a terminal, a plain line at most every N seconds elsewhere.

The library reports progress through callbacks (``on_total`` / ``progress`` of the engines,
:meth:`goldeval.pipeline.result.Observer.llm_progress`, the ``progress`` of :func:`goldeval.llm.judge_cases`); this
module draws it. Nothing here writes to stdout (results are piped from there), and ``-q/--quiet`` draws nothing.

On a terminal (stderr is one, or rich is told so by ``FORCE_COLOR`` / ``TTY_COMPATIBLE``) the bar shows the cases
done of the total, the rate, the time left and, for the LLM judge, the calls made, cached and failed and the spend
so far; it is transient (gone once the summary prints). Elsewhere (a CI log, a file) one line is written when at
least ``GOLDEVAL_PROGRESS_INTERVAL`` seconds (default 10) have passed since the start or the last line::

    goldeval: judging: 120/343 cases (34%), 4.1 cases/s, about 54 s left

A run shorter than the interval prints no line at all.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

from goldeval.cli._common import stderr_console
from goldeval.errors import InputError

__all__ = ["DEFAULT_INTERVAL_S", "INTERVAL_ENV", "Activity", "ProgressDisplay", "line_interval", "progress_line"]

#: Seconds between two plain progress lines when stderr is not a terminal.
DEFAULT_INTERVAL_S = 10.0
#: The environment variable that sets that interval (seconds, a number ≥ 0; 0 writes a line at every update).
INTERVAL_ENV = "GOLDEVAL_PROGRESS_INTERVAL"


def line_interval(environ: Any = None) -> float:
    """Seconds between plain progress lines: ``$GOLDEVAL_PROGRESS_INTERVAL``, else :data:`DEFAULT_INTERVAL_S`.

    Raises:
        InputError: the variable is set to something that is not a finite number ≥ 0.

    Example:
        >>> line_interval({"GOLDEVAL_PROGRESS_INTERVAL": "2.5"})
        2.5
    """
    env = os.environ if environ is None else environ
    text = env.get(INTERVAL_ENV)
    if text is None or text.strip() == "":
        return DEFAULT_INTERVAL_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise InputError(f"${INTERVAL_ENV}: expected the seconds between progress lines, a number ≥ 0, got {text!r}. "
                         f"Set it to e.g. 10, or unset it (default {DEFAULT_INTERVAL_S:g}).")
    return value


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _llm_text(llm: dict[str, Any] | None) -> str:
    if not llm:
        return ""
    text = f"LLM calls {llm.get('calls', 0)} ({llm.get('cached', 0)} cached, {llm.get('failed', 0)} failed)"
    spend = llm.get("spend_usd")
    return text + (f", ${spend:.4f} spent" if spend is not None else "")


def progress_line(what: str, unit: str, done: int, total: int | None, elapsed: float,
                  llm: dict[str, Any] | None = None) -> str:
    """One plain progress line (no colour, no control character).

    Args:
        what: The work (``judging``). unit: What is counted (``cases``, ``rows``). done: How many are done.
        total: How many there are (``None`` when not known). elapsed: Seconds since the work started.
        llm: The LLM judge's running tally (``calls``, ``cached``, ``failed``, ``spend_usd``), or ``None``.

    Example:
        >>> progress_line("judging", "cases", 50, 200, 10.0)
        'goldeval: judging: 50/200 cases (25%), 5.0 cases/s, about 30 s left'
    """
    rate = done / elapsed if elapsed > 0 else 0.0
    if total:
        head = f"{done}/{total} {unit} ({100 * done // total}%)"
    else:
        head = f"{done} {unit}"
    parts = [f"goldeval: {what}: {head}, {rate:.1f} {unit}/s"]
    if total and rate > 0 and done < total:
        parts[0] += f", about {_duration((total - done) / rate)} left"
    extra = _llm_text(llm)
    return "; ".join(parts + ([extra] if extra else []))


class ProgressDisplay:
    """Draws one piece of work's progress on stderr (see the module docstring).

    Args:
        what: The work, shown first (``judging``, ``LLM judge``).
        unit: What is counted (``cases``, ``rows``).
        quiet: Draw nothing (``-q``).
        min_total: On a terminal, no bar below this many (``score``: 2,000 rows); plain lines are not affected.
        clock: Seconds, monotonic (tests give a fake one).
        write: Where a plain line goes (default: stderr).
        terminal: Force the terminal (``True``) or plain (``False``) form; default: what the stderr console is.

    Use :meth:`start` with the total, :meth:`advance` as work finishes, :meth:`llm` with the LLM tally, and
    :meth:`stop` (or the ``with`` block's end) before anything else is printed.
    """

    def __init__(self, what: str, *, unit: str = "cases", quiet: bool = False, min_total: int = 0,
                 clock: Callable[[], float] = time.monotonic, write: Callable[[str], None] | None = None,
                 terminal: bool | None = None) -> None:
        self.what, self.unit, self.quiet, self.min_total = what, unit, quiet, min_total
        self.clock = clock
        self.write = write if write is not None else (lambda line: click.echo(line, err=True))
        self._terminal = terminal
        self.interval = line_interval() if not quiet else DEFAULT_INTERVAL_S  # a bad value fails before any work
        self.total: int | None = None
        self.done = 0
        self.tally: dict[str, Any] | None = None
        self._t0 = self._last = 0.0
        self._started = False
        self._bar: Any = None
        self._task: Any = None

    @property
    def terminal(self) -> bool:
        if self._terminal is None:
            self._terminal = bool(stderr_console().is_terminal)
        return self._terminal

    def start(self, total: int | None, *, what: str | None = None) -> None:
        """The work begins: *total* units (``None``: not known). A second call starts it again: a new stage,
        named *what* (default: the same name)."""
        self._stop_bar()
        self.what = what if what is not None else self.what
        self.total, self.done, self._started = total, 0, True
        self._t0 = self._last = self.clock()
        if self.quiet or not self.terminal or (total is not None and total < self.min_total):
            return
        # start-up: rich loads only when a bar is drawn
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._bar = Progress(TextColumn(self.what), BarColumn(), MofNCompleteColumn(), TextColumn(self.unit),
                             TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), TextColumn("{task.fields[llm]}"),
                             console=stderr_console(), transient=True)
        self._bar.start()
        self._task = self._bar.add_task(self.what, total=total, rate="", llm=_llm_text(self.tally))

    def advance(self, k: int = 1) -> None:
        """*k* more units are done."""
        if not self._started:
            self.start(None)
        self.done += k
        self._update()

    def llm(self, tally: dict[str, Any]) -> None:
        """The LLM judge's running tally (:class:`goldeval.llm.accounting.CallTally` as a dict): ``cases`` done
        (the units of this stage), ``calls``, ``cached``, ``failed``, ``spend_usd`` (``None``: no price). Where the
        units are something else (a replay's verdicts, of which only some go to the LLM), set :attr:`tally` and
        call :meth:`advance` instead."""
        self.tally = dict(tally)
        if not self._started:
            self.start(self.tally.get("sent"))
        self.done = int(self.tally.get("cases", self.done))
        self._update()

    def _update(self) -> None:
        if self.quiet or not self._started:
            return
        now = self.clock()
        elapsed = now - self._t0
        if self._bar is not None:
            rate = f"{self.done / elapsed:.1f}/s" if elapsed > 0 else ""
            self._bar.update(self._task, completed=self.done, rate=rate, llm=_llm_text(self.tally))
        elif not self.terminal and now - self._last >= self.interval:
            self._last = now
            self.write(progress_line(self.what, self.unit, self.done, self.total, elapsed, self.tally))

    def _stop_bar(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def stop(self) -> None:
        """Take the bar away (before a summary is printed); plain lines stop too."""
        self._stop_bar()
        self._started = False

    def __enter__(self) -> ProgressDisplay:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


#: The shortest time between two lines of an :class:`Activity` (it has no update to wait for: an interval of 0 would
#: write without end).
ACTIVITY_MIN_INTERVAL_S = 0.1
T = TypeVar("T")


class Activity:
    """Work with nothing to count (a report being built): on a terminal a transient spinner with the time so far;
    elsewhere a plain line every ``$GOLDEVAL_PROGRESS_INTERVAL`` seconds (at least every 0.1 s) from a timer
    thread, ``goldeval: building the report: 20 s so far``. ``quiet``: nothing.

    Example::

        html, model = Activity("building the report", quiet=quiet).run(report_from_store, store, run)
    """

    def __init__(self, what: str, *, quiet: bool = False, write: Callable[[str], None] | None = None,
                 terminal: bool | None = None) -> None:
        self.what, self.quiet = what, quiet
        self.write = write if write is not None else (lambda line: click.echo(line, err=True))
        self._terminal = terminal
        self.interval = max(line_interval(), ACTIVITY_MIN_INTERVAL_S) if not quiet else DEFAULT_INTERVAL_S

    def run(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``func(*args, **kwargs)``, shown as under way until it returns or raises."""
        if self.quiet:
            return func(*args, **kwargs)
        terminal = self._terminal if self._terminal is not None else bool(stderr_console().is_terminal)
        if terminal:
            # start-up: rich loads only when a bar is drawn
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            with Progress(SpinnerColumn(), TextColumn(self.what), TimeElapsedColumn(), console=stderr_console(),
                          transient=True) as bar:
                bar.add_task(self.what, total=None)
                return func(*args, **kwargs)
        done = threading.Event()
        t0 = time.monotonic()

        def tick() -> None:
            while not done.wait(self.interval):
                self.write(f"goldeval: {self.what}: {_duration(time.monotonic() - t0)} so far")

        thread = threading.Thread(target=tick, name="goldeval-activity", daemon=True)
        thread.start()
        try:
            return func(*args, **kwargs)
        finally:
            done.set()
            thread.join()
