"""The options of one LLM-judge stage (model, endpoint, cache, repeats, spend caps) and the client configuration
they make.

:class:`LlmOptions` is what ``goldeval judge --llm MODEL ...`` parses and what :func:`goldeval.evaluate` and the
Spark judge take; :func:`judge_config` turns it, with ``GOLDEVAL_JUDGE_*`` and ``OPENAI_API_KEY``, into the
:class:`~goldeval.llm.client.JudgeConfig` a :class:`~goldeval.llm.client.JudgeClient` is built from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from goldeval.io.outputs import sqlite_files
from goldeval.llm.cache import default_cache_path
from goldeval.llm.client import JudgeConfig, shown_url
from goldeval.llm.prompt import JUDGE_VERSION
from goldeval.llm.prompt import SYSTEM_PROMPT_SHA256

__all__ = ["LlmOptions", "cache_files", "judge_config"]


@dataclass(slots=True)
class LlmOptions:
    """The LLM-judge options of one run (``model=None``: no LLM judge).

    Attributes:
        model: Judge model name (``""``: ``$GOLDEVAL_JUDGE_MODEL``); ``None`` runs no LLM judge.
        base_url: OpenAI-compatible endpoint (default ``$GOLDEVAL_JUDGE_BASE_URL``, else OpenAI).
        max_concurrency: Calls in flight at once (default 8). repeat: Judge each case N times.
        dry_run: Count the calls and stop. timeout: Seconds per call. temperature, seed: Sampling.
        price_in, price_out: USD per million prompt / completion tokens. send: ``undecided`` or ``all``.
        cache: Reuse cached answers. refresh: Ask again where a cached answer exists.
        max_cost: Spend cap in USD. max_calls: Cap on HTTP calls.
        response_format: How the verdict schema is sent: ``auto``, ``json_schema``, ``json_object``, ``format`` or
            ``none`` (default ``$GOLDEVAL_JUDGE_RESPONSE_FORMAT``, else ``auto``; see
            :mod:`goldeval.llm.response_format`).
    """

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
    send: Literal["undecided", "all"] = "undecided"
    cache: bool = True
    refresh: bool = False
    max_cost: float | None = None
    max_calls: int | None = None
    response_format: str | None = None

    @property
    def enabled(self) -> bool:
        """Whether an LLM judge runs (a model was given)."""
        return self.model is not None

    def run_config(self) -> dict[str, Any]:
        """The options that change verdicts, for the run key and record (empty when no LLM judge is used)."""
        if not self.enabled:
            return {}

        llm: dict[str, Any] = {
            "model": self.model, "base_url": shown_url(self.base_url), "temperature": self.temperature, "seed": self.seed,
            "repeat": self.repeat, "send": self.send, "judge_version": JUDGE_VERSION,
            "system_prompt_sha256": SYSTEM_PROMPT_SHA256, "dry_run": self.dry_run,
        }
        if self.response_format is not None:  # absent when not given, so that a run started without it resumes
            llm["response_format"] = self.response_format
        return {"llm": llm}


def judge_config(opts: LlmOptions, *, cost_cap: bool = True, environ: Mapping[str, str] | None = None) -> Any:
    """A :class:`goldeval.llm.JudgeConfig` from *opts*, ``GOLDEVAL_JUDGE_*`` and ``OPENAI_API_KEY``.

    Args:
        opts: The stage's options.
        cost_cap: ``False`` (``replay``, which takes no prices) leaves ``$GOLDEVAL_JUDGE_MAX_COST`` out;
            ``max_calls`` still applies.
        environ: The environment to read (default ``os.environ``).

    Returns:
        The :class:`~goldeval.llm.client.JudgeConfig`.

    Raises:
        InputError: a bad value in the options or the environment (see ``JudgeConfig.from_env``).

    Example:
        >>> judge_config(LlmOptions(model="judge-m"), environ={}).model
        'judge-m'
    """

    env = dict(os.environ if environ is None else environ)
    if not cost_cap:
        env.pop("GOLDEVAL_JUDGE_MAX_COST", None)
    return JudgeConfig.from_env(
        env, model=opts.model or None, base_url=opts.base_url, max_concurrency=opts.max_concurrency, timeout=opts.timeout,
        temperature=opts.temperature, seed=opts.seed, price_in=opts.price_in, price_out=opts.price_out,
        max_cost=opts.max_cost if cost_cap else None, max_calls=opts.max_calls, response_format=opts.response_format,
    )


def cache_files(opts: LlmOptions | None, *, always: bool = False) -> list[str]:
    """The judge cache's files (``$GOLDEVAL_HOME/judge_cache.db`` and its -wal/-shm/-journal) when a run with *opts*
    uses it (an LLM judge with the cache on, or *always*), so that no output is written over them.

    Args:
        opts: The stage's options (``None``: no LLM judge). always: Count the cache as used whatever the model.

    Returns:
        The paths (empty when the cache is not used).
    """
    if opts is None or not opts.cache or not (opts.enabled or always):
        return []

    return sqlite_files(default_cache_path())
