"""The LLM judge (optional extra ``goldeval[llm]``): for the cases no rule can decide.

Parts: :mod:`~goldeval.judge.prompt` (the versioned doctrine and the fenced case prompt),
:mod:`~goldeval.judge.parse` (judge text → :class:`~goldeval.verdict.Verdict`), :mod:`~goldeval.judge.client`
(OpenAI-compatible endpoint, retries, time-outs), :mod:`~goldeval.judge.cache` (SQLite call cache) and
:mod:`~goldeval.judge.run` (routing, concurrency, repeats, accounting). Importing this package does not import
the ``openai`` library; building a client does.
"""

from __future__ import annotations

from goldeval.judge.cache import JudgeCache, cache_key
from goldeval.judge.client import CallResult, JudgeClient, JudgeConfig
from goldeval.judge.parse import parse_judge_output
from goldeval.judge.prompt import JUDGE_VERSION, SYSTEM_PROMPT, SYSTEM_PROMPT_SHA256, build_messages, build_user_prompt
from goldeval.judge.run import judge_cases, route, same_model

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
