"""``--engine spark`` for ``score`` and ``judge``: the options, and the console side of ``judge --engine spark``
(the run itself is :mod:`goldeval.pipeline.spark`; ``score`` reaches it through :func:`goldeval.evaluate`)."""

from __future__ import annotations

import sys
from typing import Any

import click

from goldeval.cli._common import EXIT_BAD_INPUT, fail, report_console
from goldeval.cli._observe import ConsoleObserver

__all__ = ["judge_on_spark", "spark_options"]


def spark_options(f: Any) -> Any:
    """``--engine local|spark``, ``--spark-master URL``, ``--per-case PATH``."""
    f = click.option("--per-case", "per_case", default=None, metavar="PATH",
                     help="With --engine spark: write the per-case DataFrame here as Parquet (for `goldeval runs import`).")(f)
    f = click.option("--spark-master", default="local[2]", show_default=True, metavar="URL",
                     help="With --engine spark: the Spark master (local[N], spark://host:7077, yarn...).")(f)
    f = click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
                     help="Where to score: this machine, or Apache Spark (pip install 'goldeval[spark]'). A Spark run is "
                          "not resumable (a re-run is a new run; `runs import` is idempotent); the Spark judge takes "
                          "one --db, without --db-dir, --sql-dialect or --llm-send all.")(f)
    return f


def judge_on_spark(cases: str, attempts: str, *, db: str | None, timeout_s: float, max_rows: int, check_canonical: bool,
                   master: str, per_case: str | None, out: str | None, quiet: bool, gates: str | None, run_store: Any,
                   llm_opts: Any, ci: Any = None, out_format: str = "json", max_result_bytes: int | None = None,
                   slice_by: str | None = None) -> None:
    """``goldeval judge CASES ATTEMPTS --engine spark``: :func:`goldeval.pipeline.spark.judge_on_spark`, shown on
    the console; exits with the gate code (2 when no case could be judged, 0 after a dry run)."""
    from goldeval.answers.render import render_judge  # start-up: the answer judge loads only when the command runs

    # start-up: the library loads only when the command runs, not for --help
    from goldeval.pipeline.spark import judge_on_spark as judge

    console = report_console(out)
    observer = ConsoleObserver(console, quiet=quiet, render=lambda results, scorer, c: render_judge(results, c))
    ev = judge(cases, attempts, db=db, timeout_s=timeout_s, max_rows=max_rows, check_canonical=check_canonical,
               master=master, per_case=per_case, out=out, gates=gates, recording=run_store, llm_opts=llm_opts,
               observer=observer, guard=ci.outputs() if ci is not None else None, out_format=out_format,
               max_result_bytes=max_result_bytes, slice_by=slice_by)
    results = ev.results
    if ev.dry_run:
        dr = results["llm_dry_run"]
        click.echo(f"goldeval: dry run: {dr['sent']} of {results['aggregate']['n']} cases go to the LLM judge "
                   f"{llm_opts.model!r}, {dr['calls']} calls ({llm_opts.repeat} per case), {dr['cached']} cached, "
                   f"{dr['http_calls']} would be sent.", err=True)
        sys.exit(0)
    if ci is not None:
        ci.write(results)  # --junit / --summary-md (cases stay in the per-case output: one testcase per gate)
    if ev.problem is not None:
        fail(ev.problem, EXIT_BAD_INPUT)
    sys.exit(ev.exit_code)
