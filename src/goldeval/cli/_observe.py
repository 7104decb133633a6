"""The CLI's :class:`~goldeval.pipeline.result.Observer`: what a scoring command shows while the pipeline runs —
progress on stderr (:mod:`goldeval.cli._progress`), the run's note on stderr, the summary, the gate table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from goldeval.cli._progress import ProgressDisplay
from goldeval.pipeline.result import Observer

__all__ = ["ConsoleObserver"]


class ConsoleObserver(Observer):
    """Prints a run as it goes. ``quiet``: no progress, note or summary (the gate table and decision still print).
    ``render(results, scorer, console)`` prints the summary; ``note=False`` leaves the run's note to the command
    (``labels`` prints it after the gate table). Progress goes to stderr (:class:`~goldeval.cli._progress.ProgressDisplay`:
    a bar on a terminal from ``min_total`` rows, else a plain line every ``$GOLDEVAL_PROGRESS_INTERVAL`` s), named
    *what*, in *unit*; the LLM stage of ``judge --llm`` is a second stage with its calls, cache hits, failures and
    spend. Use as a context manager: the bar stops on exit."""

    def __init__(self, console: Any, *, quiet: bool, render: Callable[[dict[str, Any], Any, Any], None],
                 note: bool = True, what: str = "scoring", unit: str = "rows", min_total: int = 0) -> None:
        self.console, self.quiet, self.render, self.note = console, quiet, render, note
        self.display = ProgressDisplay(what, unit=unit, quiet=quiet, min_total=min_total)

    def total(self, total: int) -> None:
        self.display.start(total)

    def progress(self, k: int) -> None:
        self.display.advance(k)

    def llm_progress(self, tally: Any) -> None:
        if tally.sent == 0:  # nothing goes to the judge: no stage to show
            return
        if tally.cases == 0:  # the stage begins: its own bar, in cases sent to the judge
            self.display.unit = "cases"
            self.display.start(tally.sent, what="LLM judge")
        self.display.llm(tally.to_dict())

    def _stop(self) -> None:
        self.display.stop()

    def recorded(self, note: str) -> None:
        self._stop()
        if self.note and not self.quiet:
            click.echo(f"goldeval: {note}", err=True)

    def summary(self, results: dict[str, Any], scorer: Any) -> None:
        self._stop()
        if not self.quiet:
            from goldeval.io.streams import relabel  # start-up: loaded only when the command runs, not for --help

            self.render(relabel(results), scorer, self.console)  # rows named in the user's file, not its decoded copy
            if results.get("slices"):
                # start-up: as above
                from goldeval.scoring.registry import scorer_of
                from goldeval.scoring.render import render_slices

                shown = scorer if scorer is not None else scorer_of((results.get("scorer") or {}).get("name"))
                render_slices(results, self.console, columns=getattr(shown, "slice_columns", ()),
                              headline=getattr(shown, "headline", None))

    def gates(self, report: Any) -> None:
        # start-up: loaded only when the command runs, not for --help
        from goldeval.cli._gating import render_gate_report

        render_gate_report(report, self.console)

    def __enter__(self) -> ConsoleObserver:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop()
