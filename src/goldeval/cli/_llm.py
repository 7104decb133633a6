"""The LLM-judge options a command can add (``@llm_options``) and the stage that runs the judge after the rules.

Usage in a judging command::

    @click.command()
    ...
    @llm_options               # --llm MODEL, --base-url, --max-concurrency, --repeat, --dry-run, --llm-timeout, ...
    @guarded
    def judge(cases, attempts, ..., llm_opts):
        results = <rule-based judging>
        if llm_opts.enabled:
            results = run_llm_stage(results, cases, attempts, llm_opts, recorder=recorder, console=console)
            if results is None:          # --dry-run: the count was printed, nothing was judged
                return EXIT_OK

Only click is imported here at module level; the judge library is imported inside the functions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

__all__ = ["LlmOptions", "llm_options", "run_llm_stage", "llm_config"]


@dataclass(slots=True)
class LlmOptions:
    """The parsed LLM-judge options of one invocation (``model=None``: no LLM judge)."""

    model: str | None = None
    base_url: str | None = None
    max_concurrency: int | None = None
    repeat: int = 1
    dry_run: bool = False
    timeout: float | None = None
    temperature: float | None = None
    seed: int | None = None
    price_in: float | None = None
    price_out: float | None = None
    send: str = "undecided"
    cache: bool = True
    refresh: bool = False

    @property
    def enabled(self) -> bool:
        return self.model is not None


def llm_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add the LLM-judge options; the command receives them as one ``llm_opts`` (:class:`LlmOptions`)."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opts = LlmOptions(
            model=kwargs.pop("llm"), base_url=kwargs.pop("llm_base_url"), max_concurrency=kwargs.pop("max_concurrency"),
            repeat=kwargs.pop("repeat"), dry_run=kwargs.pop("dry_run"), timeout=kwargs.pop("llm_timeout"),
            temperature=kwargs.pop("llm_temperature"), seed=kwargs.pop("llm_seed"), price_in=kwargs.pop("price_in"),
            price_out=kwargs.pop("price_out"), send=kwargs.pop("llm_send"), cache=kwargs.pop("llm_cache"),
            refresh=kwargs.pop("llm_refresh"),
        )
        return f(*args, llm_opts=opts, **kwargs)

    options = [
        click.option("--llm", "llm", metavar="MODEL", default=None,
                     help="Send the cases the rules could not decide to this LLM judge model ('' = $GOLDEVAL_JUDGE_MODEL).",),
        click.option("--base-url", "llm_base_url", default=None, metavar="URL",
                     help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default $GOLDEVAL_JUDGE_BASE_URL, else OpenAI). Key: $OPENAI_API_KEY."),
        click.option("--max-concurrency", type=click.IntRange(min=1), default=None, help="Judge calls in flight at once (default 8)."),
        click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True, help="Judge each case N times and report per-case stability."),
        click.option("--dry-run", is_flag=True, help="Print how many judge calls the run would make (cache hits excluded) and stop."),
        click.option("--llm-timeout", "llm_timeout", type=click.FloatRange(min=0, min_open=True), default=None, help="Seconds per judge call (default 60)."),
        click.option("--llm-temperature", "llm_temperature", type=click.FloatRange(0, 2), default=None, help="Judge sampling temperature (default 0)."),
        click.option("--llm-seed", "llm_seed", type=int, default=None, help="Judge sampling seed (default $GOLDEVAL_JUDGE_SEED, else not sent)."),
        click.option("--price-in", type=click.FloatRange(min=0), default=None, help="USD per million prompt tokens (for the cost figure)."),
        click.option("--price-out", type=click.FloatRange(min=0), default=None, help="USD per million completion tokens."),
        click.option("--llm-send", type=click.Choice(["undecided", "all"]), default="undecided", show_default=True,
                     help="undecided: only cases the rules could not decide; all: also rule-decided ones, to measure agreement (the rule verdict stays final)."),
        click.option("--llm-cache/--no-llm-cache", "llm_cache", default=True, show_default=True,
                     help="Reuse cached judge answers ($GOLDEVAL_HOME/judge_cache.db)."),
        click.option("--llm-refresh", is_flag=True, help="Ask the judge again even where a cached answer exists (and replace it)."),
    ]
    for opt in reversed(options):
        wrapper = opt(wrapper)
    return wrapper


def llm_config(opts: LlmOptions):
    """A :class:`goldeval.judge.JudgeConfig` from the options, ``GOLDEVAL_JUDGE_*`` and ``OPENAI_API_KEY``."""
    from goldeval.judge import JudgeConfig

    return JudgeConfig.from_env(
        model=opts.model or None, base_url=opts.base_url, max_concurrency=opts.max_concurrency, timeout=opts.timeout,
        temperature=opts.temperature, seed=opts.seed, price_in=opts.price_in, price_out=opts.price_out,
    )


class _NoResume:
    """Wraps a run-store recorder for the LLM stage: records and finishes, but resumes through the judge cache."""

    def __init__(self, recorder: Any) -> None:
        self._r = recorder

    def previous(self) -> dict[str, dict[str, Any]]:
        return {}

    def record(self, case: dict[str, Any]) -> None:
        self._r.record(case)

    def finish(self, results: dict[str, Any]) -> None:  # the caller finishes with the merged results
        pass


def _read_by_id(path: str) -> dict[str, dict[str, Any]]:
    from goldeval.io import Row, read_rows

    out: dict[str, dict[str, Any]] = {}
    for item in read_rows(path):
        if isinstance(item, Row) and item.data.get("id") is not None:
            out.setdefault(str(item.data["id"]), item.data)
    return out


def run_llm_stage(rule_results: dict[str, Any], cases_path: str, attempts_path: str, opts: LlmOptions, *,
                  recorder: Any = None, console: Any = None) -> dict[str, Any] | None:
    """Send the cases of *rule_results* that the rules could not decide to the LLM judge and merge the verdicts.

    Returns the merged results, or ``None`` after a ``--dry-run`` (the count is printed on stderr).
    Raises InputError (bad option, the judge model answered these cases) or JudgeError (endpoint refuses).
    """
    from goldeval.judge import JudgeCache, judge_cases
    from goldeval.judge.wiring import case_materials, merge_llm

    config = llm_config(opts)
    cases = _read_by_id(cases_path)
    attempts = _read_by_id(attempts_path)
    materials = []
    for rec in rule_results.get("per_example", []):
        cid = str(rec.get("id"))
        if cid not in cases:
            continue
        pred = rec.get("prediction") if isinstance(rec.get("prediction"), dict) else {}
        materials.append(case_materials(cases[cid], attempts.get(cid), rec, columns=pred.get("columns"), rows=pred.get("rows")))
    cache = JudgeCache() if opts.cache else None
    try:
        results = judge_cases(
            materials, config=config, cache=cache, repeat=opts.repeat, dry_run=opts.dry_run, send=opts.send,
            refresh=opts.refresh, recorder=_NoResume(recorder) if recorder is not None else None,
        )
    finally:
        if cache is not None:
            cache.close()
    if opts.dry_run:
        click.echo(
            f"goldeval: dry run: {results['sent']} of {results['cases']} cases go to the LLM judge {config.model!r}, "
            f"{results['calls']} calls ({opts.repeat} per case), {results['cached']} cached, "
            f"{results['http_calls']} would be sent.",
            err=True,
        )
        return None
    merged = merge_llm(rule_results, results)
    if console is not None:
        agg = results["aggregate"]
        cost = "" if "cost_usd" in agg["undefined"] else f", ${agg['cost_usd']:.4f}"
        console.print(
            f"LLM judge {config.model}: {agg['n_sent']} cases sent, {agg['n_http_calls']} calls "
            f"({agg['n_cached']} cached, {agg['n_call_errors']} failed, {agg['n_unparseable']} unparseable), "
            f"{agg['prompt_tokens']}+{agg['completion_tokens']} tokens{cost}"
            + (f", {agg['n_flickering']} flickering of {agg['n_sent']}" if opts.repeat > 1 else "")
        )
    return merged
