"""The LLM-judge options a command can add (``@llm_options``), and the console side of the rules-then-LLM stage
(:mod:`goldeval.pipeline.llm_stage` runs it).

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

Only click is imported here at module level (``--help`` stays fast); the judge package when a command runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from goldeval.cli._types import COUNT, Finite

if TYPE_CHECKING:
    from goldeval.llm.options import LlmOptions

__all__ = ["llm_options", "render_llm_stage", "llm_config", "llm_cache_files", "spend_line", "dry_run_cap_text"]


def llm_cache_files(opts: LlmOptions | None, *, always: bool = False) -> list[str]:
    """The judge cache's files when this invocation uses it: :func:`goldeval.llm.options.cache_files`."""
    from goldeval.llm.options import cache_files  # (the judge package is loaded only when a command runs)

    return cache_files(opts, always=always)


def llm_options(f: Callable[..., Any] | None = None, *, exclude: tuple[str, ...] = ()) -> Any:
    """Add the LLM-judge options; the command receives them as one ``llm_opts`` (:class:`LlmOptions`).

    ``@llm_options`` adds all of them; ``@llm_options(exclude=("repeat", "dry_run", …))`` leaves those out of the
    command (and of its ``--help``): they then keep their defaults (``repeat`` 1, ``dry_run`` off, ``llm_send``
    ``undecided``, no ``max_concurrency`` / prices / ``max_cost``). Only those seven can be left out.
    """
    if f is None:
        return functools.partial(llm_options, exclude=exclude)
    defaults = {"repeat": 1, "dry_run": False, "llm_send": "undecided", "max_concurrency": None, "price_in": None,
                "price_out": None, "max_cost": None}
    unknown = set(exclude) - set(defaults)
    if unknown:
        raise ValueError(f"llm_options: cannot leave out {sorted(unknown)} (only {sorted(defaults)}).")

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from goldeval.llm.options import LlmOptions  # at run time: `--help` does not load the judge package

        for name in exclude:
            kwargs[name] = defaults[name]
        opts = LlmOptions(
            model=kwargs.pop("llm"), base_url=kwargs.pop("llm_base_url"), max_concurrency=kwargs.pop("max_concurrency"),
            repeat=kwargs.pop("repeat"), dry_run=kwargs.pop("dry_run"), timeout=kwargs.pop("llm_timeout"),
            temperature=kwargs.pop("llm_temperature"), seed=kwargs.pop("llm_seed"), price_in=kwargs.pop("price_in"),
            price_out=kwargs.pop("price_out"), send=kwargs.pop("llm_send"), cache=kwargs.pop("llm_cache"),
            refresh=kwargs.pop("llm_refresh"), max_cost=kwargs.pop("max_cost"), max_calls=kwargs.pop("max_calls"),
            response_format=kwargs.pop("response_format"),
        )
        return f(*args, llm_opts=opts, **kwargs)

    options = [
        ("llm", click.option("--llm", "llm", metavar="MODEL", default=None,
                     help="Send the cases the rules could not decide to this LLM judge model ('' = $GOLDEVAL_JUDGE_MODEL).",)),
        ("llm_base_url", click.option("--base-url", "llm_base_url", default=None, metavar="URL",
                     help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default $GOLDEVAL_JUDGE_BASE_URL, else OpenAI). Key: $OPENAI_API_KEY.")),
        ("max_concurrency", click.option("--max-concurrency", type=COUNT, default=None, help="Judge calls in flight at once (default 8).")),
        ("repeat", click.option("--repeat", type=COUNT, default=1, show_default=True, help="Judge each case N times and report per-case stability.")),
        ("dry_run", click.option("--dry-run", is_flag=True, help="Print how many judge calls the run would make (cache hits excluded) and stop.")),
        ("llm_timeout", click.option("--llm-timeout", "llm_timeout", type=Finite(min=0, min_open=True), default=None, help="Seconds per judge call (default 60).")),
        ("llm_temperature", click.option("--llm-temperature", "llm_temperature", type=Finite(0, 2), default=None, help="Judge sampling temperature (default 0).")),
        ("llm_seed", click.option("--llm-seed", "llm_seed", type=click.IntRange(min=-(2**63), max=2**63 - 1), default=None, help="Judge sampling seed (default $GOLDEVAL_JUDGE_SEED, else not sent).")),
        ("price_in", click.option("--price-in", type=Finite(min=0), default=None, help="USD per million prompt tokens (for the cost figure).")),
        ("price_out", click.option("--price-out", type=Finite(min=0), default=None, help="USD per million completion tokens.")),
        ("max_cost", click.option("--max-cost", "max_cost", type=Finite(min=0), default=None, metavar="USD",
                     help="Stop calling the judge before the spend would pass USD (each call reserved at its worst case: "
                          "prompt chars/4 at --price-in + max_tokens at --price-out; default $GOLDEVAL_JUDGE_MAX_COST). "
                          "Needs both prices, unless --max-calls is given.")),
        ("max_calls", click.option("--max-calls", "max_calls", type=click.IntRange(min=0), default=None, metavar="N",
                     help="Make at most N judge HTTP calls (retries and --repeat samples count; cache hits do not). "
                          "Cases left unsent are needs_human: spend cap reached.")),
        ("llm_send", click.option("--llm-send", type=click.Choice(["undecided", "all"]), default="undecided", show_default=True,
                     help="undecided: only cases the rules could not decide; all: also rule-decided ones, to measure agreement (the rule verdict stays final).")),
        # The choices are goldeval.llm.response_format.RESPONSE_FORMATS, spelled out so that --help does not load the
        # judge package (JudgeConfig checks the value again).
        ("response_format", click.option("--response-format", "response_format",
                     type=click.Choice(["auto", "json_schema", "json_object", "format", "none"]), default=None,
                     help="How the verdict's JSON schema is sent: auto (default $GOLDEVAL_JUDGE_RESPONSE_FORMAT, else auto: "
                          "OpenAI json_schema, then llama.cpp json_object+schema, then Ollama format, then none, learnt from "
                          "the endpoint's first refusal), one of them forced, or none.")),
        ("llm_cache", click.option("--llm-cache/--no-llm-cache", "llm_cache", default=True, show_default=True,
                     help="Reuse cached judge answers ($GOLDEVAL_HOME/judge_cache.db).")),
        ("llm_refresh", click.option("--llm-refresh", is_flag=True, help="Ask the judge again even where a cached answer exists (and replace it).")),
    ]
    for name, opt in reversed(options):
        if name not in exclude:
            wrapper = opt(wrapper)
    return wrapper


def llm_config(opts: LlmOptions, *, cost_cap: bool = True):
    """A :class:`goldeval.llm.JudgeConfig` from the options: :func:`goldeval.llm.options.judge_config`."""
    from goldeval.llm.options import judge_config  # start-up: the LLM judge loads only when the command runs

    return judge_config(opts, cost_cap=cost_cap)


def spend_line(agg: dict[str, Any]) -> str:
    """The spend and the cap in one line for a summary: ``$0.003600 spent (usage), 2 cases not sent: spend cap
    reached (--max-calls 3)``; rounding happens here only."""
    spend = agg.get("spend") or {}
    if spend.get("spent_usd") is None:
        text = f"{spend.get('calls', agg.get('n_http_calls', 0))} calls; spend unknown (no --price-in/--price-out)"
    else:
        basis = {"usage": "from the endpoint's usage", "estimate": "reserved estimate: no usage reported",
                 "usage and estimate": f"usage, plus the reserved estimate for {spend.get('calls_estimated')} call(s) "
                                       "without usage", "none": "no call made"}.get(spend.get("basis") or "", spend.get("basis"))
        text = f"${spend['spent_usd']:.6f} spent over {spend.get('calls', 0)} calls ({basis})"
    caps = []
    if spend.get("max_cost_usd") is not None:
        caps.append(f"--max-cost {spend['max_cost_usd']:g}")
    if spend.get("max_calls") is not None:
        caps.append(f"--max-calls {spend['max_calls']}")
    if caps:
        text += f"; cap {', '.join(caps)}"
    if spend.get("reached"):
        text += f"; {agg.get('n_not_sent', 0)} case(s) not sent, {agg.get('n_capped', 0)} left needs_human: spend cap reached ({spend['reached']})"
    if spend.get("cost_cap_note"):
        text += f"; {spend['cost_cap_note']}"
    return text


def dry_run_cap_text(res: dict[str, Any]) -> str:
    """The dry run's words on spend: the worst case of the calls it would send, and how many the cap lets through."""
    out = ""
    if res.get("worst_case_usd") is not None:
        out += f", worst case ${res['worst_case_usd']:.6f} (one attempt each)"
    cap = res.get("cap") or {}
    if cap.get("max_cost_usd") is not None or cap.get("max_calls") is not None:
        out += f"; the cap lets {res.get('within_cap')} of {res.get('http_calls')} through"
    if cap.get("cost_cap_note"):
        out += f" ({cap['cost_cap_note']})"
    return out


def render_llm_stage(stage: Any, opts: LlmOptions, console: Any = None) -> None:
    """What the rules-then-LLM stage (:func:`goldeval.pipeline.llm_stage.run_llm_stage`) did: after a ``--dry-run``
    the count on stderr; else one line of calls and tokens on *console* (and the spend, when capped), or the spend
    line on stderr when the cap stopped calls and *console* is ``None`` (``--quiet``)."""
    results = stage.judged
    if stage.results is None:
        click.echo(
            f"goldeval: dry run: {results['sent']} of {stage.n_cases} cases go to the LLM judge {stage.model!r}, "
            f"{results['calls']} calls ({opts.repeat} per case), {results['cached']} cached, "
            f"{results['http_calls']} would be sent{dry_run_cap_text(results)}.",
            err=True,
        )
        return
    agg = results["aggregate"]
    if console is not None:
        cost = "" if "cost_usd" in agg["undefined"] else f", ${agg['cost_usd']:.4f}"
        console.print(
            f"LLM judge {stage.model}: {agg['n_sent']} cases sent, {agg['n_http_calls']} calls "
            f"({agg['n_cached']} cached, {agg['n_call_errors']} failed, {agg['n_unparseable']} unparseable), "
            f"{agg['prompt_tokens']}+{agg['completion_tokens']} tokens{cost}"
            + (f", {agg['n_flickering']} flickering of {agg['n_sent']}" if opts.repeat > 1 else "")
            + (f", {agg['n_incomplete']} incomplete (a call failed)" if opts.repeat > 1 and agg.get("n_incomplete") else "")
        )
        if opts.max_cost is not None or opts.max_calls is not None or stage.spend_cap_reached:
            console.print(f"LLM judge spend: {spend_line(agg)}", highlight=False, markup=False)
    if stage.spend_cap_reached and console is None:
        click.echo(f"goldeval: LLM judge: {spend_line(results['aggregate'])}", err=True)
