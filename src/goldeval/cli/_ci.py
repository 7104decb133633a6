"""The CI outputs every gating command shares: ``--junit FILE`` (with ``--junit-cases`` and ``--junit-min-f1``) and
``--summary-md FILE`` (also appended to ``$GITHUB_STEP_SUMMARY`` when that is set).

Use in a command::

    @ci_options                                  # the command receives them as `ci` (a CiOptions)
    def cmd(..., ci):
        guard_outputs({"--out": out, **ci.outputs()}, {...inputs...})    # before any work
        ...
        write_json(results, out)
        ci.write(results)                        # JUnit and Markdown (atomic, via goldeval.io.outputs)

``compare`` and ``replay`` take ``junit_option`` alone and call :func:`write_junit` with their own document.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import click

from goldeval.cli._types import Finite
from goldeval.io.outputs import write_output

__all__ = ["CiOptions", "ci_options", "junit_option", "write_junit", "STEP_SUMMARY_ENV"]

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


@dataclass(slots=True)
class CiOptions:
    """The parsed ``--junit`` / ``--junit-cases`` / ``--junit-min-f1`` / ``--summary-md`` options."""

    junit: str | None = None
    junit_cases: bool = False
    junit_min_f1: float | None = None
    summary_md: str | None = None

    def outputs(self) -> dict[str, str | None]:
        """role → path of each CI output, for :func:`goldeval.io.outputs.check_outputs` (the step summary included:
        it must not be an input either)."""
        out: dict[str, str | None] = {"--junit": self.junit, "--summary-md": self.summary_md}
        step = os.environ.get(STEP_SUMMARY_ENV)
        if step and not (self.summary_md and os.path.realpath(step) == os.path.realpath(self.summary_md)):
            out[f"${STEP_SUMMARY_ENV}"] = step
        return out

    def check(self) -> None:
        """Usage errors (click.UsageError, exit 2): ``--junit-cases`` / ``--junit-min-f1`` without ``--junit``."""
        InputError = click.UsageError

        if (self.junit_cases or self.junit_min_f1 is not None) and self.junit is None:
            raise InputError("--junit-cases and --junit-min-f1 shape the JUnit file: give --junit FILE with them.")
        if self.junit_min_f1 is not None and not self.junit_cases:
            raise InputError("--junit-min-f1 fails a case whose F1 is below it: it needs --junit-cases (one testcase per case).")

    def write(self, results: Mapping[str, Any]) -> None:
        """Write the JUnit file and the Markdown summary for *results* (each only when asked for); append the
        summary to ``$GITHUB_STEP_SUMMARY`` when that variable is set."""

        if self.junit is not None:
            # start-up: the report modules load only when one is written or rendered
            from goldeval.report.junit import results_junit

            write_output(self.junit, results_junit(results, cases=self.junit_cases, min_f1=self.junit_min_f1), role="--junit")
        step = os.environ.get(STEP_SUMMARY_ENV)
        if self.summary_md is not None or step:
            # start-up: the report modules load only when one is written or rendered
            from goldeval.report.markdown import summary_markdown

            text = summary_markdown(results).encode("utf-8")
            if self.summary_md is not None:
                write_output(self.summary_md, text, role="--summary-md")
            if step and not (self.summary_md and os.path.realpath(step) == os.path.realpath(self.summary_md)):
                write_output(step, text + b"\n", append=True, role=f"${STEP_SUMMARY_ENV}")


def junit_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--junit FILE`` alone (``compare``, ``replay``), passed as ``junit``."""
    return click.option("--junit", "junit", default=None, metavar="FILE", type=click.Path(dir_okay=False, path_type=str),
                        help="Also write JUnit XML here: one testcase per flipped case (pass → fail fails).")(f)


def write_junit(path: str | None, data: bytes) -> None:
    """Write a JUnit document to *path* (nothing when ``None``)."""
    if path is not None:

        write_output(path, data, role="--junit")


_OPTIONS = [
    click.option("--junit", default=None, metavar="FILE", type=click.Path(dir_okay=False, path_type=str),
                 help="Also write JUnit XML: one testsuite per run, one testcase per gate (a failing gate is a <failure>)."),
    click.option("--junit-cases", is_flag=True, help="With --junit: also one testcase per case (no_match, a false positive or a missed positive fails)."),
    click.option("--junit-min-f1", type=Finite(0, 1), default=None, metavar="X",
                 help="With --junit-cases: a free-text case whose F1 is below X fails."),
    click.option("--summary-md", default=None, metavar="FILE", type=click.Path(dir_okay=False, path_type=str),
                 help="Also write a Markdown summary (decision, gates, headline); appended to $GITHUB_STEP_SUMMARY when set."),
]


def ci_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--junit``, ``--junit-cases``, ``--junit-min-f1``, ``--summary-md``; the command receives ``ci``."""

    @functools.wraps(f)
    def wrapper(*args: Any, junit: str | None = None, junit_cases: bool = False, junit_min_f1: float | None = None,
                summary_md: str | None = None, **kwargs: Any) -> Any:
        ci = CiOptions(junit=junit, junit_cases=junit_cases, junit_min_f1=junit_min_f1, summary_md=summary_md)
        ci.check()
        return f(*args, ci=ci, **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper
