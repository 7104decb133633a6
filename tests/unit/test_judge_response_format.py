"""The verdict schema sent with every judge call, in each form an endpoint accepts, against the loopback server:
what each form puts in the request, how a refusal (a 400; a 500 naming the format) moves ``auto`` to the next form
without a retry or a wait and is remembered for the rest of the run (also across threads), why a 500 that does not
name the format is still retried, a forced form that is refused, and the form kept in the call record and the cache.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAI, Reply

from goldeval.errors import InputError, JudgeError
from goldeval.llm.cache import JudgeCache, cache_key
from goldeval.llm.client import JudgeClient, JudgeConfig
from goldeval.llm.parse import parse_judge_output
from goldeval.llm.response_format import VERDICT_SCHEMA, VERDICT_SCHEMA_SHA256, is_refusal, request_fields
from goldeval.llm.run import judge_cases

pytest.importorskip("openai")

MSGS = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
# What llama.cpp-style servers answer to a form they do not take: HTTP 500 with the form named in the body.
REFUSED_500 = b'{"error": {"code": 500, "message": "Unsupported response_format type: json_schema", "type": "server_error"}}'
# A server failure that says nothing about the format.
PLAIN_500 = b'{"error": {"code": 500, "message": "upstream model crashed", "type": "server_error"}}'
# An answer that follows the schema exactly (the shape a constrained endpoint returns).
SCHEMA_ANSWER = json.dumps({
    "verdict": "match", "confidence": 9, "why": "Both wards found with equal counts.",
    "column_pairing": [{"golden": "ward", "answer": "ward"}, {"golden": "n_admissions", "answer": "n"}],
    "gold_status": "verified", "gold_note": None,
})


@pytest.fixture
def server():
    with FakeOpenAI() as srv:
        yield srv


def client(srv: FakeOpenAI, **kw) -> JudgeClient:
    # backoff_base 5 s: a test that finishes at once shows that no backoff wait was taken.
    opts = dict(model="judge-model", base_url=srv.base_url, timeout=2.0, backoff_base=5.0, backoff_max=5.0)
    opts.update(kw)
    return JudgeClient(JudgeConfig(**opts))


def form_of(req: dict) -> str:
    """The form a request carried, read back from its JSON body."""
    rf = req.get("response_format")
    if rf is not None:
        return rf["type"]
    return "format" if "format" in req else "none"


# -- what each form sends ------------------------------------------------------------------------------------------

def test_auto_sends_openai_strict_json_schema_first(server):
    res = client(server).complete(MSGS)
    assert res.error is None and res.response_format == "json_schema" and res.refused_formats == [] and res.attempts == 1
    # OpenAI's structured-outputs shape: type json_schema, a name, strict true, the schema itself.
    assert server.requests[0]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "goldeval_verdict", "strict": True, "schema": VERDICT_SCHEMA}}
    assert "format" not in server.requests[0]


def test_forced_json_object_sends_llama_cpp_schema(server):
    res = client(server, response_format="json_object").complete(MSGS)
    assert res.response_format == "json_object"
    assert server.requests[0]["response_format"] == {"type": "json_object", "schema": VERDICT_SCHEMA}


def test_forced_format_sends_ollama_format_in_the_body(server):
    res = client(server, response_format="format").complete(MSGS)
    assert res.response_format == "format"
    req = server.requests[0]
    assert req["format"] == VERDICT_SCHEMA and "response_format" not in req


def test_none_sends_no_schema(server):
    res = client(server, response_format="none").complete(MSGS)
    assert res.response_format == "none" and res.text
    assert "response_format" not in server.requests[0] and "format" not in server.requests[0]


def test_the_schema_is_strict_mode_shaped():
    """OpenAI strict mode: every object closed and every property required (else the endpoint answers 400)."""
    def objects(node):
        if isinstance(node, dict):
            if node.get("type") == "object":
                yield node
            for v in node.values():
                yield from objects(v)
    found = list(objects(VERDICT_SCHEMA))
    assert len(found) == 2  # the verdict and one column pair
    for obj in found:
        assert obj["additionalProperties"] is False and sorted(obj["required"]) == sorted(obj["properties"])
    with pytest.raises(ValueError, match="got 'auto'"):
        request_fields("auto")
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(VERDICT_SCHEMA)
    validator = jsonschema.Draft202012Validator(VERDICT_SCHEMA)
    assert validator.is_valid(json.loads(SCHEMA_ANSWER))
    # The fake server's plain answer (the prompt's contract with column_pairing left out) is not schema-shaped.
    assert not validator.is_valid({"verdict": "match", "confidence": 9, "why": "w", "gold_status": "verified"})
    assert not validator.is_valid({**json.loads(SCHEMA_ANSWER), "confidence": 11})


# -- refusals ------------------------------------------------------------------------------------------------------

def test_auto_takes_the_next_form_after_a_400_and_remembers_it(server):
    server.script = [Reply(status=400)]
    c = client(server)
    res = c.complete(MSGS)
    assert res.error is None and res.text and res.response_format == "json_object"
    assert [form_of(r) for r in server.requests] == ["json_schema", "json_object"]
    assert res.attempts == 2 and res.waits == [0.0]  # refused, not retried: no backoff wait
    assert [(r["form"], r["status"]) for r in res.refused_formats] == [("json_schema", 400)]
    # The rest of the run starts with the form that was answered: one request, no second refusal.
    res2 = c.complete(MSGS)
    assert res2.response_format == "json_object" and res2.refused_formats == [] and res2.attempts == 1
    assert form_of(server.requests[-1]) == "json_object" and server.calls == 3 and c.response_format == "json_object"


def test_auto_takes_the_next_form_after_a_500_that_names_the_format(server):
    server.script = [Reply(status=500, body=REFUSED_500)]
    res = client(server).complete(MSGS)
    assert res.error is None and res.response_format == "json_object" and res.waits == [0.0]
    assert [form_of(r) for r in server.requests] == ["json_schema", "json_object"]
    assert res.refused_formats[0]["status"] == 500 and "response_format" in res.refused_formats[0]["message"]


def test_a_500_that_does_not_name_the_format_is_retried_with_the_same_form(server):
    server.script = [Reply(status=500, body=PLAIN_500), Reply()]
    c = client(server, backoff_base=0.01, backoff_max=0.02)
    res = c.complete(MSGS)
    assert res.error is None and res.attempts == 2 and res.refused_formats == []
    assert [form_of(r) for r in server.requests] == ["json_schema", "json_schema"]
    assert res.waits[0] > 0  # a retry after a backoff, as for any 5xx
    assert c.response_format == "json_schema"


def test_auto_walks_every_form_down_to_none(server):
    server.script = [Reply(status=400), Reply(status=500, body=REFUSED_500), Reply(status=400)]
    c = client(server)
    res = c.complete(MSGS)
    assert res.error is None and res.response_format == "none" and res.attempts == 4
    assert [form_of(r) for r in server.requests] == ["json_schema", "json_object", "format", "none"]
    assert [r["form"] for r in res.refused_formats] == ["json_schema", "json_object", "format"]
    assert c.response_format == "none"


def test_a_400_on_every_form_is_the_calls_own_failure_and_teaches_nothing(server):
    # A prompt the endpoint rejects whatever the form (too long, say): four attempts, the 400 reported as today,
    # and the next call starts with json_schema again (no form was answered, so none was learnt).
    server.default = lambda req: Reply(status=400)
    c = client(server)
    res = c.complete(MSGS)
    assert res.text is None and res.attempts == 4 and "HTTP 400" in res.error and "not retried" in res.error
    assert c.response_format == "json_schema"


def test_a_400_naming_another_parameter_still_stops_the_run(server):
    body = b'{"error": {"message": "Unsupported parameter: \'max_tokens\' is not supported with this model."}}'
    server.script = [Reply(status=400, body=body)]
    with pytest.raises(JudgeError, match="rejects a parameter goldeval sends"):
        client(server).complete(MSGS)
    assert server.calls == 1


def test_a_forced_form_that_is_refused_raises(server):
    server.script = [Reply(status=500, body=REFUSED_500)]
    with pytest.raises(JudgeError, match=r"refuses --response-format json_schema \(HTTP 500.*use --response-format auto"):
        client(server, response_format="json_schema").complete(MSGS)
    assert server.calls == 1


def test_a_forced_form_and_a_400_that_does_not_name_it_is_a_per_call_failure(server):
    server.script = [Reply(status=400)]
    res = client(server, response_format="json_object").complete(MSGS)
    assert res.text is None and server.calls == 1 and "HTTP 400" in res.error and res.refused_formats == []


def test_is_refusal_both_ways():
    assert is_refusal(400, "bad request", forced=False) and not is_refusal(400, "bad request", forced=True)
    assert is_refusal(400, "invalid json_schema: strict requires additionalProperties", forced=True)
    assert is_refusal(500, "Failed to parse grammar", forced=False)
    assert not is_refusal(500, "upstream model crashed", forced=False)
    assert not is_refusal(503, "response_format overloaded", forced=False)  # only a 500 can refuse a form
    assert not is_refusal(400, "Unsupported parameter: 'max_tokens'", forced=False)
    # pydantic-validated servers (llama-cpp-python's) answer 422 to a response_format type they do not know
    assert is_refusal(422, "Input should be 'text' or 'json_object' [type=literal_error] loc: response_format.type", forced=True)


def test_learning_is_shared_by_the_runs_threads(server):
    # An endpoint that refuses json_schema on every call. 8 threads start at once; each call may meet the refusal
    # at most once, and once any call has been answered under json_object every call after it starts there.
    lock = threading.Lock()
    seen: list[str] = []

    def default(req):
        with lock:
            seen.append(form_of(req))
        return Reply(status=500, body=REFUSED_500) if form_of(req) == "json_schema" else Reply(delay=0.02)

    server.default = default
    c = client(server)
    with ThreadPoolExecutor(8) as pool:
        first = list(pool.map(lambda _: c.complete(MSGS), range(8)))
    assert all(r.error is None and r.response_format == "json_object" for r in first)
    assert seen.count("json_schema") <= 8 and seen.count("json_object") == 8
    before = len(seen)
    with ThreadPoolExecutor(8) as pool:
        later = list(pool.map(lambda _: c.complete(MSGS), range(16)))
    assert seen[before:] == ["json_object"] * 16 and all(r.attempts == 1 for r in later)


# -- records, cache, parser, options -------------------------------------------------------------------------------

GOLDEN = {"kind": "value", "columns": ["ward", "n_admissions"], "rows": [["Cardiology", 12], ["Oncology", 7]]}
UNDECIDED = {"verdict": "needs_human", "confidence": None, "needs_human": True, "why": "grain ambiguous", "decided_by": "rule"}


def case(i: int) -> dict:
    return {"id": f"c{i}", "question": "Admissions per ward in March?", "golden": GOLDEN, "columns": ["ward", "n"],
            "rows": [["Cardiology", 12], ["Oncology", 7]], "rule": UNDECIDED}


def test_the_form_is_recorded_per_call_and_in_the_cache(server, tmp_path):
    server.script = [Reply(status=500, body=REFUSED_500)]
    server.default = lambda req: Reply(content=SCHEMA_ANSWER)
    cache = JudgeCache(tmp_path / "cache.db")
    config = JudgeConfig(model="judge-model", base_url=server.base_url, timeout=2.0, max_concurrency=1)
    first = judge_cases([case(1), case(2)], config=config, cache=cache)
    calls = [r["llm"]["calls"][0] for r in first["per_example"]]
    assert [c["response_format"] for c in calls] == ["json_object", "json_object"]
    assert [[x["form"] for x in c["response_format_refused"]] for c in calls] == [["json_schema"], []]
    assert server.calls == 3 and first["judge"]["response_format"] == "auto"
    assert [r["verdict"] for r in first["per_example"]] == ["match", "match"]
    assert first["per_example"][0]["column_pairing"] == {"ward": "ward", "n_admissions": "n"}
    rows = sqlite3.connect(tmp_path / "cache.db").execute("SELECT response_format FROM judge_calls").fetchall()
    assert rows == [("json_object",), ("json_object",)]
    again = judge_cases([case(1), case(2)], config=config, cache=cache)
    assert server.calls == 3  # the cache hit
    assert [r["llm"]["calls"][0]["response_format"] for r in again["per_example"]] == ["json_object", "json_object"]


def test_cache_keys_without_a_schema_are_unchanged_and_all_schema_forms_share_one():
    # The parameters a judge that sends no schema has always had: the keys of an existing cache still hit.
    plain = {"model": "m", "base_url": None, "temperature": 0.0, "seed": None, "max_tokens": 1024}
    assert JudgeConfig(model="m", response_format="none").answer_params() == plain
    keyed = {f: cache_key(case(1), JudgeConfig(model="m", response_format=f).answer_params())
             for f in ("auto", "json_schema", "json_object", "format", "none")}
    assert keyed["none"] == cache_key(case(1), plain)
    assert len({keyed[f] for f in ("auto", "json_schema", "json_object", "format")}) == 1
    assert keyed["auto"] != keyed["none"]
    assert JudgeConfig(model="m").answer_params()["verdict_schema_sha256"] == VERDICT_SCHEMA_SHA256


def test_a_cache_written_before_the_form_was_recorded_opens_and_reads(tmp_path):
    # A file at schema version 1: today's file with the response_format column taken out again.
    path = tmp_path / "old.db"
    JudgeCache(path).close()
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE judge_calls DROP COLUMN response_format")
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO judge_calls VALUES ('k', 0, 'v', 's', NULL, 'm', '{}', 'c1', 0, 'u', 'r', 1, 2, 0.1, 'stop', 'm')")
    db.commit()
    db.close()
    with JudgeCache(path) as cache:
        assert cache.get("k")["response"] == "r" and cache.get("k")["response_format"] is None
        cache.put("k2", case_id="c2", sample=0, params={"model": "m"}, rubric_sha256=None, user_prompt="u",
                  response="r2", response_format="json_schema")
        assert cache.get("k2")["response_format"] == "json_schema"


def test_the_parser_reads_the_schemas_pairing_list_and_refuses_a_bad_one():
    v = parse_judge_output(SCHEMA_ANSWER)
    assert (v.verdict, v.confidence, v.column_pairing) == ("match", 9, {"ward": "ward", "n_admissions": "n"})
    bad = parse_judge_output('{"verdict": "match", "confidence": 9, "why": "ok", "column_pairing": ["ward"]}')
    assert bad.verdict == "match" and bad.column_pairing == {} and "golden" in bad.details["column_pairing_ignored"]


def test_a_bad_response_format_is_refused_with_the_option_named():
    with pytest.raises(InputError, match=r"response_format \(--response-format or \$GOLDEVAL_JUDGE_RESPONSE_FORMAT\).*got 'grammar'"):
        JudgeConfig(model="m", response_format="grammar")
    assert JudgeConfig.from_env({"GOLDEVAL_JUDGE_MODEL": "m", "GOLDEVAL_JUDGE_RESPONSE_FORMAT": "json_object"}).response_format == "json_object"


def test_cli_response_format_reaches_the_request(server, tmp_path, monkeypatch):
    from goldeval.cli import main

    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "a1", "question": "Admissions per ward?", "golden": GOLDEN}) + "\n")
    attempts = tmp_path / "attempts.jsonl"
    attempts.write_text(json.dumps({"id": "a1", "columns": ["ward", "n"], "rows": [["Cardiology", 12], ["Oncology", 7]]}) + "\n")
    common = ["llm-judge", str(cases), str(attempts), "--llm", "judge-model", "--base-url", server.base_url, "--no-store",
              "--no-llm-cache", "--out", "-", "-q"]
    res = CliRunner().invoke(main, [*common, "--response-format", "format"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert form_of(server.requests[-1]) == "format"
    assert json.loads(res.stdout)["per_example"][0]["llm"]["calls"][0]["response_format"] == "format"
    res = CliRunner().invoke(main, [*common, "--response-format", "grammar"], catch_exceptions=False)
    assert res.exit_code == 2 and "grammar" in res.output
