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

from goldeval.cli._types import COUNT, Finite

__all__ = ["LlmOptions", "llm_options", "run_llm_stage", "llm_config", "llm_cache_files"]


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
    max_cost: float | None = None
    max_calls: int | None = None

    @property
    def enabled(self) -> bool:
        return self.model is not None

    def run_config(self) -> dict[str, Any]:
        """The options that change verdicts, for the run key and record (empty when no LLM judge is used)."""
        if not self.enabled:
            return {}
        from goldeval.llm.prompt import JUDGE_VERSION, SYSTEM_PROMPT_SHA256

        return {"llm": {
            "model": self.model, "base_url": self.base_url, "temperature": self.temperature, "seed": self.seed,
            "repeat": self.repeat, "send": self.send, "judge_version": JUDGE_VERSION,
            "system_prompt_sha256": SYSTEM_PROMPT_SHA256, "dry_run": self.dry_run,
        }}


def llm_cache_files(opts: LlmOptions | None, *, always: bool = False) -> list[str]:
    """The judge cache's files (``$GOLDEVAL_HOME/judge_cache.db`` and its -wal/-shm/-journal) when this invocation
    uses it (an LLM judge with ``--llm-cache``, or *always*), for :func:`goldeval.io.outputs.check_outputs`."""
    if opts is None or not opts.cache or not (opts.enabled or always):
        return []
    from goldeval.llm.cache import default_cache_path
    from goldeval.io.outputs import sqlite_files

    return sqlite_files(default_cache_path())


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
        for name in exclude:
            kwargs[name] = defaults[name]
        opts = LlmOptions(
            model=kwargs.pop("llm"), base_url=kwargs.pop("llm_base_url"), max_concurrency=kwargs.pop("max_concurrency"),
            repeat=kwargs.pop("repeat"), dry_run=kwargs.pop("dry_run"), timeout=kwargs.pop("llm_timeout"),
            temperature=kwargs.pop("llm_temperature"), seed=kwargs.pop("llm_seed"), price_in=kwargs.pop("price_in"),
            price_out=kwargs.pop("price_out"), send=kwargs.pop("llm_send"), cache=kwargs.pop("llm_cache"),
            refresh=kwargs.pop("llm_refresh"), max_cost=kwargs.pop("max_cost"), max_calls=kwargs.pop("max_calls"),
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
        ("llm_cache", click.option("--llm-cache/--no-llm-cache", "llm_cache", default=True, show_default=True,
                     help="Reuse cached judge answers ($GOLDEVAL_HOME/judge_cache.db).")),
        ("llm_refresh", click.option("--llm-refresh", is_flag=True, help="Ask the judge again even where a cached answer exists (and replace it).")),
    ]
    for name, opt in reversed(options):
        if name not in exclude:
            wrapper = opt(wrapper)
    return wrapper


def llm_config(opts: LlmOptions, *, cost_cap: bool = True):
    """A :class:`goldeval.llm.JudgeConfig` from the options, ``GOLDEVAL_JUDGE_*`` and ``OPENAI_API_KEY``.

    ``cost_cap=False`` (``replay``, which takes no prices) leaves ``$GOLDEVAL_JUDGE_MAX_COST`` out; ``--max-calls``
    still applies.
    """
    import os

    from goldeval.llm import JudgeConfig

    env = dict(os.environ)
    if not cost_cap:
        env.pop("GOLDEVAL_JUDGE_MAX_COST", None)
    return JudgeConfig.from_env(
        env, model=opts.model or None, base_url=opts.base_url, max_concurrency=opts.max_concurrency, timeout=opts.timeout,
        temperature=opts.temperature, seed=opts.seed, price_in=opts.price_in, price_out=opts.price_out,
        max_cost=opts.max_cost if cost_cap else None, max_calls=opts.max_calls,
    )


def spend_line(agg: dict[str, Any]) -> str:
    """The spend and the cap in one line for a summary: ``$0.003600 spent (usage), 2 cases not sent: spend cap
    reached (--max-calls 3)``; rounding happens here only."""
    spend = agg.get("spend") or {}
    if spend.get("spent_usd") is None:
        text = f"{spend.get('calls', agg.get('n_http_calls', 0))} calls; spend unknown (no --price-in/--price-out)"
    else:
        basis = {"usage": "from the endpoint's usage", "estimate": "reserved estimate: no usage reported",
                 "usage and estimate": f"usage, plus the reserved estimate for {spend.get('calls_estimated')} call(s) "
                                       "without usage", "none": "no call made"}.get(spend.get("basis"), spend.get("basis"))
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


def agg_reached(results: dict[str, Any]) -> bool:
    """Whether the spend cap stopped calls in this LLM judge run."""
    return bool(((results.get("aggregate") or {}).get("spend") or {}).get("reached"))


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


def _read_checked(path: str) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Rows of a case or attempt file by id, and a failure record (``line``, ``id``, ``error``, ``file``) for every
    line that cannot be used (not JSON, not an object, no id, a repeated id): nothing is dropped silently."""
    import os

    from goldeval.io.reading import RowError, check_ids, read_rows

    name = os.path.basename(path)
    rows: dict[str, dict[str, Any]] = {}
    failures: list[dict[str, Any]] = []
    for item in check_ids(read_rows(path), file_name=name):
        if isinstance(item, RowError):
            failures.append({"line": item.line, "id": item.id, "error": item.error, "file": name})
        else:
            rows[str(item.data["id"])] = item.data
    return rows, failures


def _read_by_id(path: str) -> dict[str, dict[str, Any]]:
    from goldeval.io.reading import Row, read_rows

    out: dict[str, dict[str, Any]] = {}
    for item in read_rows(path):
        if isinstance(item, Row) and item.data.get("id") is not None:
            out.setdefault(str(item.data["id"]), item.data)
    return out


def run_llm_stage(rule_results: dict[str, Any], cases_path: str, attempts_path: str, opts: LlmOptions, *,
                  answer_config: Any = None, recorder: Any = None, console: Any = None) -> dict[str, Any] | None:
    """Send the cases of *rule_results* that the rules could not decide to the LLM judge and merge the verdicts.

    The materials come from the rule judge's ``llm_materials`` (``judge_file(..., keep_materials=True)``: the
    re-executed rows and the rule breakdown); with ``--llm-send all`` they are computed for every case
    (``goldeval.answers.judge.llm_materials(only_undecided=False)``). A case reused from the run store on resume has
    no materials there; it is rebuilt from the files (the attempt's reported rows). Cases already decided by the
    LLM in a resumed run are skipped. The merged per-case records are recorded again (the store keeps the last
    record of a case) and the recorder is finished with the merged results.

    Returns the merged results, or ``None`` after a ``--dry-run`` (the count is printed on stderr and kept in
    ``rule_results["llm_dry_run"]``, so that ``--out`` still writes what the run would do).
    Raises InputError (bad option, the judge model answered these cases) or JudgeError (endpoint refuses).
    """
    from goldeval.llm import JudgeCache, judge_cases
    from goldeval.llm.wiring import case_materials, from_answer_materials, merge_llm

    config = llm_config(opts)
    attempts = _read_by_id(attempts_path)
    if opts.send == "all":
        from goldeval.answers.judge import llm_materials

        raw_materials = llm_materials(cases_path, attempts_path, config=answer_config, only_undecided=False)
    else:
        raw_materials = rule_results.get("llm_materials") or []
    rule_results.pop("llm_materials", None)
    by_id = {str(r.get("id")): r for r in rule_results.get("per_example", [])}
    cases = None
    materials = []
    for m in raw_materials:
        cid = str(m.get("id"))
        rec = by_id.get(cid)
        if rec is None or ((rec.get("llm") is not None or rec.get("decided_by") == "llm") and not rec.get("capped")):
            continue  # not in this run, or already judged by the LLM (resumed run; one the spend cap left is judged now)
        model = (attempts.get(cid) or {}).get("model") or (attempts.get(cid) or {}).get("answer_model")
        if m.get("reused") or "golden" not in m:
            cases = cases if cases is not None else _read_by_id(cases_path)
            if cid in cases:
                materials.append(case_materials(cases[cid], attempts.get(cid), rec))
            continue
        materials.append(from_answer_materials(m, answer_model=model))
    cache = JudgeCache() if opts.cache else None
    try:
        results = judge_cases(
            materials, config=config, cache=cache, repeat=opts.repeat, dry_run=opts.dry_run, send=opts.send,
            refresh=opts.refresh,  # no recorder here: the merged records are recorded below; a re-run is free via the cache
        )
    finally:
        if cache is not None:
            cache.close()
    if opts.dry_run:
        click.echo(
            f"goldeval: dry run: {results['sent']} of {len(by_id)} cases go to the LLM judge {config.model!r}, "
            f"{results['calls']} calls ({opts.repeat} per case), {results['cached']} cached, "
            f"{results['http_calls']} would be sent{dry_run_cap_text(results)}.",
            err=True,
        )
        rule_results["llm_dry_run"] = results
        return None
    merged = merge_llm(rule_results, results)
    if recorder is not None:
        sent = {r["id"] for r in results["per_example"] if r.get("sent_to_llm")}
        for rec in merged["per_example"]:
            if rec.get("id") in sent:
                recorder.record(rec)
        recorder.finish(merged)
    agg = results["aggregate"]
    if console is not None:
        cost = "" if "cost_usd" in agg["undefined"] else f", ${agg['cost_usd']:.4f}"
        console.print(
            f"LLM judge {config.model}: {agg['n_sent']} cases sent, {agg['n_http_calls']} calls "
            f"({agg['n_cached']} cached, {agg['n_call_errors']} failed, {agg['n_unparseable']} unparseable), "
            f"{agg['prompt_tokens']}+{agg['completion_tokens']} tokens{cost}"
            + (f", {agg['n_flickering']} flickering of {agg['n_sent']}" if opts.repeat > 1 else "")
            + (f", {agg['n_incomplete']} incomplete (a call failed)" if opts.repeat > 1 and agg.get("n_incomplete") else "")
        )
        if opts.max_cost is not None or opts.max_calls is not None or agg_reached(results):
            console.print(f"LLM judge spend: {spend_line(agg)}", highlight=False, markup=False)
    if agg_reached(results) and console is None:
        click.echo(f"goldeval: LLM judge: {spend_line(results['aggregate'])}", err=True)
    return merged
