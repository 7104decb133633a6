"""Structured output for the LLM judge: the verdict's JSON schema, and the forms endpoints accept it in.

Endpoints that constrain decoding to a schema spell the request differently:

* ``json_schema`` — OpenAI's structured outputs (also vLLM, SGLang, recent llama.cpp and Ollama's ``/v1``):
  ``response_format = {"type": "json_schema", "json_schema": {"name": ..., "strict": true, "schema": ...}}``;
* ``json_object`` — llama.cpp's server and ``llama-cpp-python``: ``response_format = {"type": "json_object",
  "schema": ...}``;
* ``format`` — Ollama's own parameter: ``"format": <schema object>`` in the request body;
* ``none`` — no constraint; the answer is read by the forgiving parser (:mod:`goldeval.llm.parse`) alone.

With ``auto`` the judge client sends the forms in that order and learns which one the endpoint takes from its first
refusal (:func:`is_refusal`): an HTTP 400 (or 422, what servers built on FastAPI/pydantic such as
``llama-cpp-python``'s answer to a value their request model does not allow), or a 500 whose body names the
response format or the schema, refuses the form; it is not retried, the next form is sent, and the run keeps to the form that was answered. A 500 that names
neither is a server failure and is retried as any 5xx. Whatever form was used, the answer still goes through the
forgiving parser: a schema only makes a readable answer likelier.

The schema is the output contract of the system prompt (:data:`goldeval.llm.prompt.SYSTEM_PROMPT`, "Output") in the
shape OpenAI's strict mode accepts: every object closed (``additionalProperties: false``) with every property
required, so ``column_pairing`` is a list of ``{"golden", "answer"}`` pairs rather than an open map (the parser reads
both shapes), at most :data:`MAX_PAIRS` of them.

Source: OpenAI "Structured outputs" (``response_format`` json_schema, strict); llama.cpp ``tools/server`` README
(``response_format`` json_object with ``schema``); Ollama API docs ("Structured outputs", ``format``).
"""

from __future__ import annotations

import re
from typing import Any

from goldeval.llm.prompt import canonical_json, sha256_text

__all__ = [
    "RESPONSE_FORMATS",
    "MAX_PAIRS",
    "SCHEMA_FORMS",
    "VERDICT_SCHEMA",
    "VERDICT_SCHEMA_NAME",
    "VERDICT_SCHEMA_SHA256",
    "forms_to_try",
    "is_refusal",
    "names_format",
    "request_fields",
]

#: The values of ``--response-format`` / ``JudgeConfig.response_format``.
RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "format", "none")

#: The forms that carry the schema, in the order ``auto`` tries them (then ``none``).
SCHEMA_FORMS = ("json_schema", "json_object", "format")

#: The name OpenAI's ``json_schema`` form requires (letters, digits, ``_`` and ``-``).
VERDICT_SCHEMA_NAME = "goldeval_verdict"

#: The most column pairs an answer may list. Without a bound a small model can repeat one pair until max_tokens
#: (SmolLM2-135M did, 1,024 tokens of the same pair); a golden with more columns than this gets its first pairs only
#: (the pairing is reported, the verdict does not depend on it).
MAX_PAIRS = 16

#: The verdict object as a JSON schema (draft 2020-12 subset that OpenAI strict mode, llama.cpp's grammar
#: converter and Ollama all accept).
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["match", "near_match", "no_match", "needs_human"]},
        "confidence": {"type": "integer", "minimum": 1, "maximum": 10},
        "why": {"type": "string"},
        "column_pairing": {
            "type": "array",
            "maxItems": MAX_PAIRS,
            "items": {
                "type": "object",
                "properties": {"golden": {"type": "string"}, "answer": {"type": ["string", "null"]}},
                "required": ["golden", "answer"],
                "additionalProperties": False,
            },
        },
        "gold_status": {"type": "string", "enum": ["verified", "verified_benign", "suspect", "verified_wrong"]},
        "gold_note": {"type": ["string", "null"]},
    },
    "required": ["verdict", "confidence", "why", "column_pairing", "gold_status", "gold_note"],
    "additionalProperties": False,
}

#: sha256 of the canonical JSON of :data:`VERDICT_SCHEMA`: part of the cache key of every call that sends it.
VERDICT_SCHEMA_SHA256 = sha256_text(canonical_json(VERDICT_SCHEMA))

# What a refusal of the form says about itself: "response_format", "json_schema", "schema", "grammar" (llama.cpp
# turns the schema into a grammar), or the bare word "format" (Ollama's parameter).
_NAMES_FORMAT = re.compile(r"response[_ ]?format|json[_ ]?schema|\bschema\b|\bgrammar\b|\bformat\b", re.IGNORECASE)
# A 400 that names a rejected parameter ("Unsupported parameter: 'max_tokens'"); when it does not name the format
# it is about that other parameter, which no change of form can fix.
_REJECTED_PARAMETER = re.compile(r"unsupported (parameter|value)|not supported|unrecognized request argument", re.IGNORECASE)


def request_fields(form: str) -> dict[str, Any]:
    """The keyword arguments that add *form* to an ``openai`` ``chat.completions.create`` call.

    Args:
        form: One of :data:`SCHEMA_FORMS` or ``"none"``.

    Returns:
        ``{"response_format": {...}}`` for ``json_schema`` / ``json_object``, ``{"extra_body": {"format": schema}}``
        for ``format`` (the client merges ``extra_body`` into the request's JSON), ``{}`` for ``none``.

    Raises:
        ValueError: *form* is ``auto`` or unknown (the client resolves ``auto`` to forms first).

    Example:
        >>> request_fields("json_object")["response_format"]["type"]
        'json_object'
        >>> request_fields("none")
        {}
    """
    if form == "json_schema":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": VERDICT_SCHEMA_NAME, "strict": True, "schema": VERDICT_SCHEMA}}}
    if form == "json_object":
        return {"response_format": {"type": "json_object", "schema": VERDICT_SCHEMA}}
    if form == "format":
        return {"extra_body": {"format": VERDICT_SCHEMA}}
    if form == "none":
        return {}
    raise ValueError(f"response format: expected one of {', '.join(SCHEMA_FORMS)}, none; got {form!r}")


def forms_to_try(mode: str) -> tuple[str, ...]:
    """The forms a call may send under *mode*, in order: ``auto`` → every schema form then ``none``; a forced form
    → that form alone.

    Raises:
        ValueError: *mode* is not one of :data:`RESPONSE_FORMATS`.

    Example:
        >>> forms_to_try("auto")
        ('json_schema', 'json_object', 'format', 'none')
        >>> forms_to_try("json_object")
        ('json_object',)
    """
    if mode == "auto":
        return (*SCHEMA_FORMS, "none")
    if mode in RESPONSE_FORMATS:
        return (mode,)
    raise ValueError(f"response format: expected one of {', '.join(RESPONSE_FORMATS)}; got {mode!r}")


def names_format(text: str) -> bool:
    """Whether an error text names the response format or the schema (``response_format``, ``json_schema``,
    ``schema``, ``grammar``, ``format``).

    Example:
        >>> names_format("Unsupported response_format type json_schema")
        True
        >>> names_format("Internal Server Error")
        False
    """
    return bool(_NAMES_FORMAT.search(text or ""))


def is_refusal(status: int, text: str, *, forced: bool) -> bool:
    """Whether an HTTP error answering a call that sent a schema form refuses that form.

    Args:
        status: The HTTP status.
        text: The error's message and body.
        forced: ``True`` when the user forced the form (``--response-format json_schema``): then only an error that
            names the format refuses it; any other 400 is the call's own failure, as without a schema.

    Returns:
        With ``auto`` (*forced* ``False``): a 400 or 422 (unless it names another rejected parameter, which fails
        every call whatever the form), or a 500 that names the format. Forced: a 400, 422 or 500 that names the
        format.

    Example:
        >>> is_refusal(500, "response_format type json_schema is not supported", forced=False)
        True
        >>> is_refusal(500, "CUDA out of memory", forced=False)
        False
    """
    named = names_format(text)
    if status in (400, 422):
        return named or (not forced and not _REJECTED_PARAMETER.search(text or ""))
    return status == 500 and named
