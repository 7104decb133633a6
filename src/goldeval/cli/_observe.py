"""The CLI's :class:`~goldeval.pipeline.result.Observer`: what a scoring command shows while the pipeline runs —
a progress bar on stderr for 2,000 rows or more, the run's note on stderr, the summary, the gate table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from goldeval.cli._common import stderr_console
from goldeval.pipeline.result import Observer

__all__ = ["ConsoleObserver"]


class ConsoleObserver(Observer):
    """Prints a run as it goes. ``quiet``: no bar, note or summary (the gate table and decision still print).
    ``render(results, scorer, console)`` prints the summary; ``note=False`` leaves the run's note to the command
    (``labels`` prints it after the gate table). Use as a context manager: the bar stops on exit."""

    def __init__(self, console: Any, *, quiet: bool, render: Callable[[dict[str, Any], Any, Any], None],
                 note: bool = True) -> None:
        self.console, self.quiet, self.render, self.note = console, quiet, render, note
        self._bar: Any = None
        self._task: Any = None

    def total(self, total: int) -> None:
        if self.quiet or total < 2000:
            return
        # start-up: rich loads only when a table is rendered
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


        self._bar = Progress(TextColumn("scoring"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                             console=stderr_console(), transient=True)
        self._bar.start()
        self._task = self._bar.add_task("rows", total=total)

    def progress(self, k: int) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, k)

    def _stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

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
