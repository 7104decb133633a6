"""The LLM judge (optional extra ``goldeval[llm]``): for the cases no rule can decide.

Parts: :mod:`~goldeval.llm.prompt` (the versioned doctrine and the fenced case prompt),
:mod:`~goldeval.llm.parse` (judge text → :class:`~goldeval.verdict.Verdict`), :mod:`~goldeval.llm.client`
(OpenAI-compatible endpoint, retries, time-outs), :mod:`~goldeval.llm.response_format` (the verdict's JSON schema
and the forms an endpoint takes it in), :mod:`~goldeval.llm.cache` (SQLite call cache) and
:mod:`~goldeval.llm.run` (routing, concurrency, repeats, accounting). Importing this package does not import
the ``openai`` library; building a client does.

May import: the foundation modules (errors, verdict, paths). Never: another domain package, scoring's registry, an
engine, runs, report, pipeline, cli.
"""

from __future__ import annotations

from goldeval.llm.cache import JudgeCache, cache_key
from goldeval.llm.client import CallResult, JudgeClient, JudgeConfig
from goldeval.llm.parse import parse_judge_output
from goldeval.llm.prompt import (
    JUDGE_VERSION,
    SYSTEM_PROMPT,
    SYSTEM_PROMPT_SHA256,
    build_messages,
    build_user_prompt,
)
from goldeval.llm.run import judge_cases, route, same_model

__all__ = [
    "JUDGE_VERSION",
    "SYSTEM_PROMPT",
    "SYSTEM_PROMPT_SHA256",
    "CallResult",
    "JudgeCache",
    "JudgeClient",
    "JudgeConfig",
    "build_messages",
    "build_user_prompt",
    "cache_key",
    "judge_cases",
    "parse_judge_output",
    "route",
    "same_model",
]
