"""The judge's connection to an OpenAI-compatible chat-completions endpoint (hosted, vLLM, llama.cpp, Ollama).

Requests go through the ``openai`` client library (optional extra: ``pip install 'goldeval[llm]'``), imported only
when a client is built, so ``import goldeval`` never loads it. The library's own retries are switched off
(``max_retries=0``) and goldeval retries itself, so that every attempt, every wait and the reason for it are
recorded per call:

* 429 and 5xx, 408 and 409 (and a dropped connection) are retried up to ``max_retries`` times with exponential backoff
  (``backoff_base · 2^k``, capped at ``backoff_max``, with up to 25 % jitter downwards), except that a
  ``Retry-After`` / ``retry-after-ms`` header, in seconds or as an HTTP date, is honoured as given; a server asking
  for more than ``max_retry_after`` seconds is not retried.
* A call that exceeds ``timeout`` seconds (per attempt) is not retried by default (``timeout_retries=0``): a judge
  that does not answer in time yields a ``needs_human`` verdict and the run goes on.
* 401 / 403 (the key) and 404 (the model or URL) are configuration errors that would fail every call: they raise
  :class:`~goldeval.errors.JudgeError` at once. So does a connection that still fails after the retries when no
  request has ever reached the endpoint (a wrong ``--base-url`` or a server that is not running): otherwise every
  case would wait out its retries and come back ``needs_human``. Once the endpoint has answered, a dropped
  connection is a per-call failure. Any other failure is returned in :class:`CallResult` ``.error``;
  a per-call failure never raises.
* Every call sends the verdict's JSON schema in the form ``response_format`` names
  (:mod:`goldeval.llm.response_format`). Under ``auto`` a refusal of the form (a 400 or 422, or a 500 whose body names
  the format or schema) is not retried: the same call is sent at once with the next form, and once a later form
  is answered every call of this client starts with it (the client is shared by the run's threads). A forced form
  that is refused raises :class:`~goldeval.errors.JudgeError`: every call would be refused the same way.

Configuration comes from keyword options, else ``GOLDEVAL_JUDGE_*`` variables, else defaults; the key from the
provider's own variable ``OPENAI_API_KEY`` (a local server on loopback needs none).
"""

from __future__ import annotations

import email.utils
import ipaddress
import math
import os
import random
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

from goldeval.errors import InputError, JudgeError, shorten
from goldeval.llm.budget import CAP_REACHED, SpendMeter, check_cap
from goldeval.llm.response_format import RESPONSE_FORMATS, VERDICT_SCHEMA_SHA256, forms_to_try, is_refusal, request_fields

__all__ = ["JudgeConfig", "CallResult", "JudgeClient", "parse_retry_after", "shown_url", "token_count"]

_ENV = {
    "model": "GOLDEVAL_JUDGE_MODEL",
    "base_url": "GOLDEVAL_JUDGE_BASE_URL",
    "temperature": "GOLDEVAL_JUDGE_TEMPERATURE",
    "seed": "GOLDEVAL_JUDGE_SEED",
    "timeout": "GOLDEVAL_JUDGE_TIMEOUT",
    "max_retries": "GOLDEVAL_JUDGE_MAX_RETRIES",
    "max_concurrency": "GOLDEVAL_JUDGE_MAX_CONCURRENCY",
    "max_tokens": "GOLDEVAL_JUDGE_MAX_TOKENS",
    "price_in": "GOLDEVAL_JUDGE_PRICE_IN",
    "price_out": "GOLDEVAL_JUDGE_PRICE_OUT",
    "max_cost": "GOLDEVAL_JUDGE_MAX_COST",
    "max_calls": "GOLDEVAL_JUDGE_MAX_CALLS",
    "response_format": "GOLDEVAL_JUDGE_RESPONSE_FORMAT",
}
#: The command-line option that sets each field (for error messages).
_OPTION = {
    "timeout": "--llm-timeout", "temperature": "--llm-temperature", "seed": "--llm-seed",
    "max_concurrency": "--max-concurrency", "price_in": "--price-in", "price_out": "--price-out",
    "response_format": "--response-format",
}
_TYPES = {
    "temperature": float, "seed": int, "timeout": float, "max_retries": int, "max_concurrency": int,
    "max_tokens": int, "price_in": float, "price_out": float, "max_cost": float, "max_calls": int,
}


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """How to reach and call the judge.

    Attributes:
        model: Model id sent to the endpoint (``gpt-4o-mini``, ``qwen2.5:14b``…). Required.
        base_url: Endpoint root ending in ``/v1`` (``http://127.0.0.1:8000/v1``); ``None`` = OpenAI's hosted API.
        temperature: Sampling temperature, default 0.
        seed: Sampling seed sent to the endpoint (``None`` = not sent).
        max_tokens: Completion-token cap per call (``None`` = not sent; ``0`` in options or the variable = ``None``).
        timeout: Seconds per attempt, as a whole (connect, send, and the answer however slowly it comes). Default 60.
        max_retries: Retries after the first attempt on 429 / 5xx / a dropped connection. Default 4.
        timeout_retries: Retries after a timed-out attempt. Default 0.
        backoff_base, backoff_max: Exponential backoff in seconds (base · 2^k, capped). Defaults 0.5, 30.
        max_retry_after: The longest ``Retry-After`` honoured, seconds (longer: give up). Default 120.
        max_concurrency: Calls in flight at once. Default 8.
        price_in, price_out: USD per million prompt / completion tokens, for cost; ``None`` = cost not computed.
        max_cost: Spend cap in USD for one run (``None`` = none); needs both prices and ``max_tokens`` unless
            ``max_calls`` is given (see :mod:`goldeval.llm.budget`).
        max_calls: Cap on HTTP attempts for one run, retries and repeats included (``None`` = none).
        response_format: How the verdict's JSON schema is sent (:mod:`goldeval.llm.response_format`): ``auto``
            (default: OpenAI's ``json_schema``, then llama.cpp's ``json_object`` + ``schema``, then Ollama's
            ``format``, then none, learnt from the endpoint's first refusal), one of those forced, or ``none``.
        api_key: Secret; not part of ``repr`` or any record.
    """

    model: str
    base_url: str | None = None
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int | None = 1024
    timeout: float = 60.0
    max_retries: int = 4
    timeout_retries: int = 0
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    max_retry_after: float = 120.0
    max_concurrency: int = 8
    price_in: float | None = None
    price_out: float | None = None
    max_cost: float | None = None
    max_calls: int | None = None
    response_format: str = "auto"
    api_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise InputError(
                f"judge model: expected a model id, got {shorten(self.model)}. "
                "Pass --llm MODEL or set GOLDEVAL_JUDGE_MODEL."
            )
        checks = [
            ("timeout", self.timeout > 0 and math.isfinite(self.timeout), "a finite number of seconds > 0"),
            ("max_tokens", self.max_tokens is None or (isinstance(self.max_tokens, int) and self.max_tokens >= 1),
             "an integer ≥ 1 (0 in the variable: not sent)"),
            ("timeout_retries", isinstance(self.timeout_retries, int) and self.timeout_retries >= 0, "an integer ≥ 0"),
            ("max_concurrency", isinstance(self.max_concurrency, int) and self.max_concurrency >= 1, "an integer ≥ 1"),
            ("max_retries", isinstance(self.max_retries, int) and self.max_retries >= 0, "an integer ≥ 0"),
            ("temperature", 0 <= self.temperature <= 2, "a number in [0, 2]"),
            ("price_in", self.price_in is None or self.price_in >= 0, "a price ≥ 0 (USD per million tokens)"),
            ("price_out", self.price_out is None or self.price_out >= 0, "a price ≥ 0 (USD per million tokens)"),
            ("response_format", self.response_format in RESPONSE_FORMATS, "one of " + ", ".join(RESPONSE_FORMATS)),
        ]
        for name, ok, want in checks:
            if not ok:
                where = [w for w in (_OPTION.get(name), f"${_ENV[name]}" if name in _ENV else None) if w]
                var = f" ({' or '.join(where)})" if where else ""
                raise InputError(f"judge option {name}{var}: expected {want}, got {shorten(getattr(self, name))}. Fix the value.")

        why = check_cap(max_cost=self.max_cost, max_calls=self.max_calls, price_in=self.price_in,
                        price_out=self.price_out, max_tokens=self.max_tokens)
        if why:
            raise InputError(why)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **options: Any) -> JudgeConfig:
        """A config from *options* (``None`` values ignored), else ``GOLDEVAL_JUDGE_*`` variables, else defaults.

        Raises:
            InputError: a variable holds no number where one is needed, or no model is given anywhere.
        """
        variables: Mapping[str, str] = os.environ if env is None else env
        values: dict[str, Any] = {}
        for name, var in _ENV.items():
            if options.get(name) is not None:
                values[name] = options[name]
            elif variables.get(var) not in (None, ""):
                raw = variables[var]
                try:
                    values[name] = _TYPES.get(name, str)(raw)
                except ValueError:
                    raise InputError(f"${var}: expected {_TYPES[name].__name__}, got {raw!r}. Fix or unset the variable.") from None
        for name, val in options.items():
            if name not in _ENV and val is not None:
                values[name] = val
        if values.get("max_tokens") == 0:  # 0 = do not send max_tokens (models that refuse the parameter)
            values["max_tokens"] = None
        if "api_key" not in values and variables.get("OPENAI_API_KEY"):
            values["api_key"] = variables["OPENAI_API_KEY"]
        if not values.get("model"):
            raise InputError("judge model: none given. Pass --llm MODEL or set GOLDEVAL_JUDGE_MODEL.")
        return cls(**values)

    def answer_params(self) -> dict[str, Any]:
        """The parameters that change what the judge answers (part of the cache key and of every record).

        A call that sends the verdict schema is drawn under that constraint, so the schema's hash is a parameter;
        with ``response_format="none"`` the request is the unconstrained one and the parameters (and cache keys)
        are those of a judge that sends no schema. Which schema form carried it is not a parameter: the forms
        ask one endpoint for the same constraint, and under ``auto`` the form is only known once a call is made
        (it is recorded per call instead).
        """
        params: dict[str, Any] = {
            "model": self.model,
            "base_url": shown_url(self.base_url),  # never a password written in the URL (the cache, every record)
            "temperature": float(self.temperature),  # 0 and 0.0 are one setting (and one cache key)
            "seed": self.seed,
            "max_tokens": self.max_tokens,
        }
        if self.response_format != "none":
            params["verdict_schema_sha256"] = VERDICT_SCHEMA_SHA256
        return params

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        """USD for one call, or ``None`` when no price is configured or the endpoint reported no usage (a count
        that is not a whole number ≥ 0, as :func:`token_count` reads it, is none: a cache entry holds what was stored)."""
        prompt_tokens, completion_tokens = token_count(prompt_tokens), token_count(completion_tokens)
        if self.price_in is None or self.price_out is None or prompt_tokens is None or completion_tokens is None:
            return None
        return (prompt_tokens * self.price_in + completion_tokens * self.price_out) / 1_000_000


@dataclass(slots=True)
class CallResult:
    """One judge call (all its attempts).

    Attributes:
        text: The completion text (``None`` when the call failed).
        error: Why the call failed (timeout, retries exhausted, malformed response…), else ``None``.
        status: The last HTTP status seen (``None`` on a time-out or dropped connection).
        attempts: HTTP requests made (1 + retries).
        waits: Seconds slept before each retry, in order (Retry-After or backoff).
        latency_s: Wall time of the whole call, retries and waits included.
        prompt_tokens, completion_tokens: As reported by the endpoint (``None`` when not reported).
        finish_reason: ``stop``, ``length`` (truncated)… as reported.
        response_model: The model id the endpoint says answered.
        capped: An attempt was refused by the spend cap (the call stopped there; ``attempts`` were made before).
        spend_usd: What the attempts made cost: reported usage at the prices, else each attempt's reserved
            estimate (``None`` without a budget or prices).
        spend_estimated: Attempts whose spend is the reserved estimate (no usage reported).
        response_format: The form of the last attempt (``json_schema``, ``json_object``, ``format`` or ``none``):
            for an answered call, the form the answer was given under.
        refused_formats: The forms the endpoint refused during this call, in order, each
            ``{"form", "status", "message"}`` (the refusal attempts count in ``attempts``).
    """

    text: str | None = None
    error: str | None = None
    status: int | None = None
    attempts: int = 0
    waits: list[float] = field(default_factory=list)
    latency_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    response_model: str | None = None
    capped: bool = False
    spend_usd: float | None = None
    spend_estimated: int = 0
    response_format: str | None = None
    refused_formats: list[dict[str, Any]] = field(default_factory=list)


#: Statuses below 500 that are retried: 408 Request Timeout (a proxy gave up), 409 Conflict (a lock on the provider's
#: side), 429 Too Many Requests; the same set the ``openai`` client retries by default.
_RETRIED = (408, 409, 429)

_UNSUPPORTED = re.compile(r"unsupported (parameter|value)|not supported|unrecognized request argument", re.I)


def parse_retry_after(headers: Any, *, now: float | None = None) -> float | None:
    """Seconds a server asks us to wait: ``retry-after-ms``, else ``Retry-After`` in seconds or as an HTTP date.

    Returns ``None`` when neither header is present or readable; negative waits read as 0.
    Source: RFC 9110 §10.2.3 (Retry-After: delay-seconds / HTTP-date); ``retry-after-ms`` as OpenAI sends it.
    """
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            val = float(ms) / 1000
            if math.isfinite(val):
                return max(0.0, val)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if ra is None:
        return None
    try:
        val = float(ra)
        return max(0.0, val) if math.isfinite(val) else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


# query parameters that carry a credential (Azure's ``api-key``, a gateway's ``key`` / ``token``, a signed URL's ``sig``)
_SECRET_PARAM = re.compile(r"(?i).*(key|token|secret|password|passwd|sig|signature|auth|credential).*")


def shown_url(url: str | None) -> str | None:
    """*url* as it may be shown, recorded and hashed: without the password of its user part
    (``https://ci:s3cret@gw/v1`` → ``https://ci@gw/v1``) and with the value of a query parameter that carries a
    credential (``api-key``, ``key``, ``token``, ``sig``…) replaced by ``***``; ``None`` stays ``None``.

    The endpoint is still reached with the URL as given; this is what a results file, the run store, the judge
    cache and a message hold, so that a secret written in ``--base-url`` reaches none of them. A password does not
    change what the judge answers, so a run key and a cache key are the same without it.

    Example:
        >>> shown_url("https://ci:s3cret@gw.example/v1?api-key=abc&region=eu")
        'https://ci@gw.example/v1?api-key=***&region=eu'
        >>> shown_url("http://127.0.0.1:8000/v1")
        'http://127.0.0.1:8000/v1'
    """
    if not url:
        return url
    try:
        parts = urlparse(url)
        netloc = parts.netloc
        if "@" in netloc:
            user, _, host = netloc.rpartition("@")
            netloc = f"{user.partition(':')[0]}@{host}" if user.partition(":")[0] else host
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(_SECRET_PARAM.fullmatch(k) for k, _ in pairs):
                query = urlencode([(k, "***" if _SECRET_PARAM.fullmatch(k) else v) for k, v in pairs], safe="*")
        if netloc == parts.netloc and query == parts.query:
            return url
        return urlunparse(parts._replace(netloc=netloc, query=query))
    except ValueError:
        return "(an unreadable URL)"


def _is_local(base_url: str | None) -> bool:
    """True for a server on this machine or a private network (``localhost``, 127.0.0.1, 10.x, 192.168.x…)."""
    if not base_url:
        return False
    host = urlparse(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback or ipaddress.ip_address(host).is_private
    except ValueError:
        return False


class JudgeClient:
    """Sends chat completions with goldeval's retry policy; thread-safe (one shared HTTP connection pool).

    Args:
        config: See :class:`JudgeConfig`.
        sleep: Injected for tests; defaults to :func:`time.sleep`.

    Raises:
        JudgeError: the ``openai`` package is not installed, or no key is available for a non-local endpoint.
    """

    def __init__(self, config: JudgeConfig, *, sleep: Any = time.sleep) -> None:
        self.config = config
        self._sleep = sleep
        self._client: Any = None
        self._lock = threading.Lock()
        self._rng = random.Random()
        self._reached = False  # has any request reached the endpoint (any HTTP answer)?
        self._forms = forms_to_try(config.response_format)
        self._form_at = 0  # index in self._forms of the first form not refused yet (moves forward only)

    def _openai(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    import openai  # optional heavy dependency: openai (extra llm)
                except ImportError:
                    raise JudgeError(
                        "LLM judge: the 'openai' client library is not installed. Install the extra: "
                        "pip install 'goldeval[llm]'."
                    ) from None
                key = self.config.api_key
                if not key:
                    if not _is_local(self.config.base_url):
                        raise JudgeError(
                            f"LLM judge: no API key for {shown_url(self.config.base_url) or 'the hosted OpenAI API'}. "
                            "Set OPENAI_API_KEY (or point --base-url at a local server, which needs none)."
                        )
                    key = "not-needed-for-a-local-server"
                self._client = openai.OpenAI(
                    api_key=key, base_url=self.config.base_url, timeout=self.config.timeout, max_retries=0
                )
            return self._client

    def check_ready(self) -> None:
        """Raise JudgeError now, before any run is recorded, when no call could be made: the ``openai`` library is
        missing, or there is no API key for a non-local endpoint. Sends nothing."""
        self._openai()

    @property
    def response_format(self) -> str:
        """The form the next call starts with: under ``auto``, the first form the endpoint has not refused."""
        with self._lock:
            return self._forms[self._form_at]

    def _learn(self, at: int) -> None:
        """Calls from now on start at form *at*: an earlier form was refused and this one was answered."""
        with self._lock:
            self._form_at = max(self._form_at, at)

    def close(self) -> None:
        """Close the HTTP connection pool (the client can be used again: a new pool is opened on the next call)."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def _backoff(self, retry: int) -> float:
        c = self.config
        return min(c.backoff_base * 2**retry, c.backoff_max) * (1 - 0.25 * self._rng.random())

    def complete(self, messages: list[dict[str, str]], *, budget: SpendMeter | None = None) -> CallResult:
        """One judge call with retries. Per-call failures come back in ``.error``; config failures raise.

        With *budget* every attempt (the first and each retry) is reserved before it is made and settled after
        (:class:`goldeval.llm.budget.SpendMeter`); an attempt the cap refuses is not made, and the call comes back
        with ``capped=True`` and ``error="spend cap reached"``.

        Raises:
            JudgeError: 401/403 (key refused) or 404 (no such model or URL), or no connection at all before the
                endpoint ever answered: every call would fail the same way.
        """
        client = self._openai()  # raises JudgeError when the openai library is missing
        import openai  # optional heavy dependency: openai (extra llm)
        c = self.config
        kwargs: dict[str, Any] = {"model": c.model, "messages": messages, "temperature": c.temperature}
        if c.seed is not None:
            kwargs["seed"] = c.seed
        if c.max_tokens is not None:
            kwargs["max_tokens"] = c.max_tokens
        forced = c.response_format != "auto"
        with self._lock:
            start = at = self._form_at
        out = CallResult(response_format=self._forms[at])
        request = {**kwargs, **request_fields(self._forms[at])}
        chars = sum(len(str(m.get("content") or "")) for m in messages)
        t0 = time.perf_counter()
        retries = timeouts = 0
        while True:
            wait: float | None = None
            reservation = None
            if budget is not None:
                reservation = budget.reserve(chars)
                if reservation is None:  # the cap is reached: this attempt (first or retry) is not made
                    out.capped = True
                    out.error = CAP_REACHED + (f" (after {out.attempts} attempts)" if out.attempts else "")
                    break
            out.attempts += 1
            try:
                try:
                    resp = _create_within(client, request, c.timeout)
                except (openai.APITimeoutError, _Overdue):
                    out.status = None
                    timeouts += 1
                    if timeouts > c.timeout_retries:
                        out.error = f"timed out after {c.timeout:g} s (attempt {out.attempts})"
                        break
                    wait = 0.0
                except openai.APIStatusError as exc:
                    out.status = exc.status_code
                    self._reached = True
                    if exc.status_code in (401, 403):
                        raise JudgeError(
                            f"LLM judge at {shown_url(c.base_url) or 'api.openai.com'}: HTTP {exc.status_code}, the key was refused "
                            f"({shorten(exc.message, 120)}). Check OPENAI_API_KEY."
                        ) from None
                    if exc.status_code == 404:
                        raise JudgeError(
                            f"LLM judge at {shown_url(c.base_url) or 'api.openai.com'}: HTTP 404 for model {c.model!r} "
                            f"({shorten(exc.message, 120)}). Check --llm and --base-url (it should end in /v1)."
                        ) from None
                    form = self._forms[at]
                    if form != "none" and is_refusal(exc.status_code, _error_text(exc), forced=forced):
                        # the endpoint refuses this way of sending the schema: not a failure of the call
                        out.refused_formats.append({"form": form, "status": exc.status_code, "message": shorten(exc.message, 200)})
                        if forced:
                            raise JudgeError(
                                f"LLM judge at {shown_url(c.base_url) or 'api.openai.com'}: the endpoint refuses --response-format {form} "
                                f"(HTTP {exc.status_code}: {shorten(exc.message, 200)}). Every call would fail the same way: "
                                "use --response-format auto (it finds the form the endpoint takes) or none."
                            ) from None
                        at += 1  # auto: the next form ("none", the last, is never refused)
                        request = {**kwargs, **request_fields(self._forms[at])}
                        out.response_format = self._forms[at]
                    else:
                        if exc.status_code == 400 and _UNSUPPORTED.search(str(exc.message)):
                            raise JudgeError(
                                f"LLM judge at {shown_url(c.base_url) or 'api.openai.com'}: model {c.model!r} rejects a parameter goldeval "
                                f"sends ({shorten(exc.message, 200)}). Every call would fail the same way: choose another judge "
                                "model, or change --llm-temperature / GOLDEVAL_JUDGE_MAX_TOKENS (0 = not sent)."
                            ) from None
                        if not (exc.status_code in _RETRIED or exc.status_code >= 500):
                            out.error = f"HTTP {exc.status_code}: {shorten(exc.message, 200)} (not retried)"
                            break
                        if retries >= c.max_retries:
                            out.error = f"HTTP {exc.status_code} after {out.attempts} attempts (retries exhausted)"
                            break
                        asked = parse_retry_after(exc.response.headers)
                        if asked is not None and asked > c.max_retry_after:
                            out.error = f"HTTP {exc.status_code}: the server asks to wait {asked:g} s (> {c.max_retry_after:g} s); not retried"
                            break
                        wait = asked if asked is not None else self._backoff(retries)
                        retries += 1
                except openai.APIConnectionError as exc:
                    out.status = None
                    if retries >= c.max_retries:
                        if not self._reached:
                            raise JudgeError(
                                f"LLM judge at {shown_url(c.base_url) or 'api.openai.com'}: cannot connect ({shorten(str(exc.__cause__ or exc), 120)}) "
                                f"after {out.attempts} attempts, and no call has reached it yet. Check --base-url / "
                                "GOLDEVAL_JUDGE_BASE_URL and that the server is running."
                            ) from None
                        out.error = f"connection failed after {out.attempts} attempts: {shorten(str(exc), 120)}"
                        break
                    wait = self._backoff(retries)
                    retries += 1
                except (openai.APIError, ValueError) as exc:  # a 200 whose body is not JSON / not a chat completion
                    out.status = 200
                    self._reached = True
                    out.error = f"malformed response from the endpoint: {type(exc).__name__}: {shorten(str(exc), 200)}"
                    break
                else:
                    out.status = 200
                    self._reached = True
                    if at > start:  # an earlier form was refused and this one answered: later calls start here
                        self._learn(at)
                    if not hasattr(resp, "choices"):
                        out.error = f"malformed response from the endpoint (not a chat completion): {shorten(resp, 200)}"
                        break
                    _read_completion(resp, out)
                    break
            finally:
                if reservation is not None:
                    assert budget is not None
                    usd, basis = budget.settle(reservation, out.prompt_tokens, out.completion_tokens)
                    if usd is not None:
                        out.spend_usd = (out.spend_usd or 0.0) + usd
                        if basis == "estimate":
                            out.spend_estimated += 1
            if wait:
                out.waits.append(wait)
                self._sleep(wait)
            else:
                out.waits.append(0.0)
        out.latency_s = time.perf_counter() - t0
        return out


class _Overdue(Exception):
    """An attempt that did not finish within the time-out as a whole (every read was quick, the answer was not)."""


def _create_within(client: Any, request: dict[str, Any], seconds: float) -> Any:
    """``client.chat.completions.create(**request)`` bounded as a whole by *seconds*.

    The HTTP library's time-out bounds the connection and each read, not the answer: a server that sends a blank
    every few seconds while it works (as some gateways do to keep a connection alive) holds a call for as long as
    it likes. The request runs on a daemon thread; past *seconds* the attempt raises :class:`_Overdue` (a time-out)
    and the thread is abandoned (its answer, if one ever comes, is dropped; it never holds the process). An
    exception of the request is raised here, as if the call had been made on this thread.
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["response"] = client.chat.completions.create(**request)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="goldeval-judge-attempt", daemon=True).start()
    if not done.wait(seconds):
        raise _Overdue()
    if "error" in box:
        raise box["error"]
    return box["response"]


def _error_text(exc: Any) -> str:
    """An HTTP error's message and body, where a refusal of the response format would name it."""
    return f"{exc.message} {exc.body!r}"


def _content_text(content: Any) -> str | None:
    """The text of a message's content: a string, or the text parts of a list of content parts
    (``[{"type": "text", "text": ...}]``, which some gateways answer with) joined; ``None`` when it holds no text."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = []
    for part in content:
        kind, text = (part.get("type"), part.get("text")) if isinstance(part, dict) else (getattr(part, "type", None), getattr(part, "text", None))
        if kind == "text" and isinstance(text, str):
            texts.append(text)
    return "".join(texts) if texts else None


def _as_text(value: Any) -> str | None:
    """A reported label (model id, finish reason) as text: the openai client does not check a response's types, and
    the cache and the store keep text."""
    return value if value is None or isinstance(value, str) else str(value)


def _read_completion(resp: Any, out: CallResult) -> None:
    try:
        choice = resp.choices[0]
        msg = choice.message
        content = msg.content
        if content is None and getattr(msg, "refusal", None):
            content = msg.refusal
        text = "" if content is None else _content_text(content)
        if text is None:
            out.error = f"malformed response from the endpoint (the message content is not text: {shorten(content, 120)})"
        else:
            out.text = text
        out.finish_reason = _as_text(choice.finish_reason)
    except (IndexError, AttributeError, TypeError) as exc:
        out.error = f"malformed response from the endpoint (no choices[0].message): {type(exc).__name__}"
    usage = getattr(resp, "usage", None)
    if usage is not None:
        out.prompt_tokens = token_count(getattr(usage, "prompt_tokens", None))
        out.completion_tokens = token_count(getattr(usage, "completion_tokens", None))
    out.response_model = _as_text(getattr(resp, "model", None))


def token_count(value: Any) -> int | None:
    """A token count as the endpoint reported it, when it is one: a whole number ≥ 0 (``30`` or ``30.0``), else
    ``None`` (not reported).

    The ``openai`` client does not check a response's types, so usage holds whatever the server sent: a string
    (``"120"``) would reach the cost arithmetic and raise, and a negative count would make a call's spend negative
    and let the spend cap admit calls past it. Such a call is billed its reserved worst case instead, as a call
    that reported no usage (:mod:`goldeval.llm.budget`).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value >= 0 else None
