"""The judge client against a loopback OpenAI-compatible server: retries, Retry-After, time-outs, bad bodies, config."""

from __future__ import annotations

import time

import pytest
from fake_openai_server import FakeOpenAI, Reply

from goldeval.errors import InputError, JudgeError
from goldeval.llm.client import JudgeClient, JudgeConfig, parse_retry_after, shown_url
from goldeval.llm.options import LlmOptions

pytest.importorskip("openai")

MSGS = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


@pytest.fixture
def server():
    with FakeOpenAI() as srv:
        yield srv


def client(srv: FakeOpenAI, **kw) -> JudgeClient:
    opts = dict(model="judge-model", base_url=srv.base_url, timeout=2.0, backoff_base=0.01, backoff_max=0.05)
    opts.update(kw)
    return JudgeClient(JudgeConfig(**opts))


def test_plain_call_reports_text_usage_and_sends_parameters(server):
    res = client(server, seed=7, temperature=0.0).complete(MSGS)
    assert res.error is None and res.status == 200 and res.attempts == 1
    assert res.text.startswith('{"verdict": "match"')
    assert (res.prompt_tokens, res.completion_tokens) == (120, 30)
    req = server.requests[0]
    assert (req["model"], req["temperature"], req["seed"], req["messages"]) == ("judge-model", 0.0, 7, MSGS)


def test_429_twice_then_a_verdict(server):
    server.script = [Reply(status=429), Reply(status=429), Reply()]
    res = client(server).complete(MSGS)
    assert res.error is None and res.text and res.attempts == 3 and server.calls == 3
    assert len(res.waits) == 2


def test_retry_after_is_honoured(server):
    # Retry-After: 0.3 s is far longer than the backoff (≤ 0.05 s), so a wait ≥ 0.3 s shows the header was read.
    server.script = [Reply(status=429, headers={"Retry-After": "0.3"}), Reply()]
    t0 = time.perf_counter()
    res = client(server).complete(MSGS)
    assert res.text and res.waits == [0.3] and time.perf_counter() - t0 >= 0.3


def test_retry_after_ms_is_preferred(server):
    server.script = [Reply(status=503, headers={"retry-after-ms": "120", "Retry-After": "5"}), Reply()]
    res = client(server).complete(MSGS)
    assert res.text and res.waits == [0.12]


def test_500_is_retried_until_the_budget_is_spent(server):
    server.script = [Reply(status=500)] * 4
    res = client(server, max_retries=3).complete(MSGS)
    assert res.text is None and res.attempts == 4 and server.calls == 4
    assert "HTTP 500 after 4 attempts" in res.error


def test_backoff_grows_exponentially(server):
    server.script = [Reply(status=502)] * 3 + [Reply()]
    res = client(server, backoff_base=0.01, backoff_max=10).complete(MSGS)
    # base·2^k with up to 25 % jitter downwards: 0.0075–0.01, 0.015–0.02, 0.03–0.04.
    lo_hi = [(0.0075, 0.01), (0.015, 0.02), (0.03, 0.04)]
    assert all(lo <= w <= hi for w, (lo, hi) in zip(res.waits, lo_hi, strict=True))


def test_a_too_long_retry_after_is_not_waited_for(server):
    server.script = [Reply(status=429, headers={"Retry-After": "3600"})]
    res = client(server, max_retry_after=60).complete(MSGS)
    assert res.text is None and server.calls == 1 and "asks to wait 3600 s" in res.error


def test_400_is_not_retried(server):
    # Without a schema a 400 is the call's own failure; with one (auto, the default) a 400 refuses the schema's form
    # first: see test_auto_takes_the_next_form_after_a_400 in test_judge_response_format.py.
    server.script = [Reply(status=400)]
    res = client(server, response_format="none").complete(MSGS)
    assert res.text is None and server.calls == 1 and "HTTP 400" in res.error and "not retried" in res.error


def test_timeout_returns_an_error_without_raising(server):
    server.script = [Reply(delay=1.5)]
    t0 = time.perf_counter()
    res = client(server, timeout=0.3).complete(MSGS)
    assert res.text is None and "timed out after 0.3 s" in res.error and res.attempts == 1
    assert time.perf_counter() - t0 < 1.2


@pytest.mark.parametrize("body", [b'{"choices": [{"mess', b"<html>bad gateway</html>", b'{"foo": 1}'])
def test_malformed_body_is_an_error_not_a_crash(server, body):
    server.script = [Reply(body=body)]
    res = client(server).complete(MSGS)
    assert res.text is None and "malformed response" in res.error and server.calls == 1


@pytest.mark.parametrize("status, words", [(401, "key was refused"), (403, "key was refused"), (404, "HTTP 404 for model")])
def test_key_and_model_errors_stop_the_run(server, status, words):
    server.script = [Reply(status=status)]
    with pytest.raises(JudgeError, match=words):
        client(server).complete(MSGS)


def test_refusal_field_is_read_when_content_is_empty(server):
    import json

    from fake_openai_server import completion_body

    body = completion_body(None, "judge-model")
    body["choices"][0]["message"]["refusal"] = "I can't help with that."
    server.script = [Reply(body=json.dumps(body).encode())]
    res = client(server).complete(MSGS)
    assert res.text == "I can't help with that." and res.error is None


def test_no_key_for_a_hosted_endpoint_is_a_judge_error():
    with pytest.raises(JudgeError, match="OPENAI_API_KEY"):
        JudgeClient(JudgeConfig(model="gpt-4o-mini", base_url="https://api.example.com/v1")).complete(MSGS)


def test_config_from_env_options_win():
    env = {"GOLDEVAL_JUDGE_MODEL": "env-model", "GOLDEVAL_JUDGE_BASE_URL": "http://127.0.0.1:9/v1",
           "GOLDEVAL_JUDGE_SEED": "3", "GOLDEVAL_JUDGE_TEMPERATURE": "0.2", "OPENAI_API_KEY": "sk-test"}
    cfg = JudgeConfig.from_env(env)
    assert (cfg.model, cfg.base_url, cfg.seed, cfg.temperature, cfg.api_key) == ("env-model", "http://127.0.0.1:9/v1", 3, 0.2, "sk-test")
    cfg = JudgeConfig.from_env(env, model="opt-model", seed=None, temperature=0.0)
    assert (cfg.model, cfg.seed, cfg.temperature) == ("opt-model", 3, 0.0)
    assert "sk-test" not in repr(cfg)


def test_config_errors_name_the_fix():
    with pytest.raises(InputError, match="--llm MODEL or set GOLDEVAL_JUDGE_MODEL"):
        JudgeConfig.from_env({})
    with pytest.raises(InputError, match=r"\$GOLDEVAL_JUDGE_SEED: expected int, got 'x'"):
        JudgeConfig.from_env({"GOLDEVAL_JUDGE_MODEL": "m", "GOLDEVAL_JUDGE_SEED": "x"})
    with pytest.raises(InputError, match=r"max_concurrency \(--max-concurrency or \$GOLDEVAL_JUDGE_MAX_CONCURRENCY\): expected an integer ≥ 1"):
        JudgeConfig(model="m", max_concurrency=0)
    # Found in breakfix: a negative max_tokens was sent on every call (each one a 400, every case needs_human, exit
    # 0), and an infinite timeout never timed out. Both are refused up front, naming where the value came from.
    with pytest.raises(InputError, match=r"max_tokens \(\$GOLDEVAL_JUDGE_MAX_TOKENS\): expected an integer ≥ 1 .* got -5"):
        JudgeConfig.from_env({"GOLDEVAL_JUDGE_MODEL": "m", "GOLDEVAL_JUDGE_MAX_TOKENS": "-5"})
    with pytest.raises(InputError, match=r"timeout \(--llm-timeout or \$GOLDEVAL_JUDGE_TIMEOUT\): expected a finite"):
        JudgeConfig.from_env({"GOLDEVAL_JUDGE_MODEL": "m", "GOLDEVAL_JUDGE_TIMEOUT": "inf"})
    assert JudgeConfig.from_env({"GOLDEVAL_JUDGE_MODEL": "m", "GOLDEVAL_JUDGE_MAX_TOKENS": "0"}).max_tokens is None


def test_cost_uses_prices_per_million_tokens():
    # 1,000 prompt tokens at $2.50/M + 200 completion tokens at $10/M = 0.0025 + 0.002 = 0.0045 USD.
    cfg = JudgeConfig(model="m", price_in=2.5, price_out=10.0)
    assert cfg.cost(1000, 200) == pytest.approx(0.0045)
    assert JudgeConfig(model="m").cost(1000, 200) is None


def test_parse_retry_after_forms():
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    # An HTTP date 30 s after "now" (RFC 9110 §10.2.3 example format).
    now = 1_445_412_450.0  # Wed, 21 Oct 2015 07:27:30 GMT
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=now) == pytest.approx(30.0)
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_missing_openai_library_is_a_judge_error_naming_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "openai", None)  # import openai → ImportError
    with pytest.raises(JudgeError, match=r"pip install 'goldeval\[llm\]'"):
        JudgeClient(JudgeConfig(model="m", base_url="http://127.0.0.1:9/v1")).complete(MSGS)


def test_a_rejected_parameter_stops_the_run(server):
    body = b'{"error": {"message": "Unsupported parameter: \'max_tokens\' is not supported with this model.", "type": "invalid_request_error"}}'
    server.script = [Reply(status=400, body=body)]
    with pytest.raises(JudgeError, match="rejects a parameter goldeval sends"):
        client(server).complete(MSGS)
    assert JudgeConfig.from_env({"GOLDEVAL_JUDGE_MODEL": "m", "GOLDEVAL_JUDGE_MAX_TOKENS": "0"}).max_tokens is None
    client(server, max_tokens=None).complete(MSGS)
    assert "max_tokens" not in server.requests[-1]


def _dead_url() -> str:
    import socket

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_no_server_at_the_base_url_stops_the_run():
    # Connection refused on every attempt and nothing has ever answered: a wrong --base-url or a server that is
    # not running. Every case would wait out its retries (0.5+1+2+4 s by default) and come back needs_human with
    # exit 0; instead the first call raises once its retries are spent (1 + 2 retries = 3 attempts here).
    c = JudgeClient(JudgeConfig(model="judge-model", base_url=_dead_url(), timeout=2.0, max_retries=2,
                                backoff_base=0.001, backoff_max=0.001))
    with pytest.raises(JudgeError, match=r"cannot connect .* after 3 attempts, and no call has reached it yet\. Check --base-url"):
        c.complete(MSGS)


def test_a_dropped_connection_after_the_endpoint_answered_is_a_per_call_error():
    with FakeOpenAI() as srv:
        c = client(srv, max_retries=1)
        assert c.complete(MSGS).text is not None
        c.close()  # drop the pooled keep-alive connection; the server then goes away
    res = c.complete(MSGS)
    assert res.text is None and res.error.startswith("connection failed after 2 attempts")


@pytest.mark.parametrize("status", [408, 409])
def test_408_and_409_are_retried_like_the_openai_client_does(server, status):
    # A proxy's 408 or the provider's 409 is transient (the openai client retries both by default); before, one
    # such answer made the case needs_human. Scripted: status, then a verdict -> 2 attempts, the verdict's text.
    server.script = [Reply(status=status), Reply()]
    res = client(server).complete(MSGS)
    assert res.error is None and res.attempts == 2 and server.calls == 2 and '"verdict": "match"' in res.text


def test_retry_after_as_an_http_date_over_real_http(server):
    # RFC 9110 §10.2.3: Retry-After may be an HTTP-date. The date is 30 s ahead in whole seconds (the format has no
    # fraction: up to 1 s lost), read after a round trip (well under 4 s even on a loaded machine), so the wait is
    # in (25, 30]; the backoff it replaces would be ≤ 0.5 s. The sleep is injected so the test does not wait.
    import email.utils

    slept: list[float] = []
    server.script = [Reply(status=429, headers={"Retry-After": email.utils.formatdate(time.time() + 30, usegmt=True)}), Reply()]
    c = JudgeClient(JudgeConfig(model="judge-model", base_url=server.base_url, timeout=2.0), sleep=slept.append)
    res = c.complete(MSGS)
    assert res.text and res.attempts == 2 and len(slept) == 1 and 25.0 < slept[0] <= 30.0 and res.waits == slept


def test_timeout_bounds_the_whole_answer_not_each_read(server):
    # The README: "--llm-timeout bounds each call". The server sends its headers, then keeps the connection alive
    # with a blank every 0.1 s for 3 s before the answer: every read is quick, so a per-read time-out of 0.5 s never
    # fired and the call took 3 s. The attempt is bounded as a whole: a time-out after 0.5 s, not retried (the
    # default timeout_retries=0), well before the 3 s the server would take.
    server.script = [Reply(trickle=(30, 0.1))]
    t0 = time.perf_counter()
    res = client(server, timeout=0.5).complete(MSGS)
    took = time.perf_counter() - t0
    assert res.text is None and "timed out after 0.5 s" in res.error and res.attempts == 1
    assert took < 1.5, took
    # the same server answering within the time-out is answered
    server.script = [Reply(trickle=(2, 0.05))]
    res = client(server, timeout=2.0).complete(MSGS)
    assert res.error is None and '"verdict": "match"' in res.text


@pytest.mark.parametrize(("given", "shown"), [
    # a password in the user part goes, the user stays (RFC 3986 userinfo is user[:password])
    ("https://ci:s3cret@gw.example/v1", "https://ci@gw.example/v1"),
    ("https://:s3cret@gw.example/v1", "https://gw.example/v1"),
    # a credential in the query (Azure's api-key, a gateway's key or token) is masked; other parameters stay
    ("https://gw.example/v1?api-key=abc&region=eu", "https://gw.example/v1?api-key=***&region=eu"),
    ("https://gw.example/v1?token=abc", "https://gw.example/v1?token=***"),
    # healthy: a URL without a secret is unchanged, byte for byte (run keys and cache keys stay the same)
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ("https://ci@gw.example/v1?region=eu", "https://ci@gw.example/v1?region=eu"),
    (None, None),
])
def test_shown_url_holds_no_secret(given, shown):
    assert shown_url(given) == shown


def test_answer_params_hold_the_base_url_without_its_password():
    # answer_params are in the judge cache key and in every record: the password of --base-url must not be
    cfg = JudgeConfig(model="m", base_url="https://ci:s3cret@gw.example/v1")
    assert cfg.answer_params()["base_url"] == "https://ci@gw.example/v1"
    assert "s3cret" not in repr(LlmOptions(model="m", base_url="https://ci:s3cret@gw.example/v1").run_config())
