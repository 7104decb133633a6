"""A small OpenAI-compatible chat-completions server for tests and benchmarks (loopback only, stdlib only).

It answers ``POST /v1/chat/completions`` (and ``/chat/completions``) like a hosted endpoint, so the real ``openai``
client talks real HTTP to it. What it answers is scripted:

* ``server.script`` — a list of :class:`Reply` consumed one per request, in arrival order; when it runs out,
  ``server.default`` (a callable ``request_json -> Reply``) answers.
* A :class:`Reply` gives the status, the completion text (wrapped in a chat-completion body with usage) or a raw
  body, extra headers (``Retry-After``), and a delay before answering (slow answers, time-outs).

``server.calls`` counts requests; ``server.requests`` keeps every request body (the prompts, as sent).
Use it as a context manager: ``with FakeOpenAI(latency=0.2) as srv: srv.base_url``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VERDICT_MATCH = '{"verdict": "match", "confidence": 9, "why": "Every golden row is present.", "gold_status": "verified"}'


@dataclass
class Reply:
    """One scripted answer. ``content`` becomes the assistant message; ``body`` (bytes) replaces the whole body."""

    content: str | None = VERDICT_MATCH
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: bytes | None = None
    prompt_tokens: int = 120
    completion_tokens: int = 30
    finish_reason: str = "stop"
    #: ``(n, seconds)``: the body is preceded by *n* blanks sent one at a time, *seconds* apart (a server that keeps
    #: the connection alive with whitespace while it works: every read is quick, the answer is not).
    trickle: tuple[int, float] | None = None


def completion_body(content: str | None, model: str, prompt_tokens: int = 120, completion_tokens: int = 30,
                    finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the listen backlog: 16+ clients connect at once


class FakeOpenAI:
    """The server; see the module docstring."""

    def __init__(self, *, latency: float = 0.0, default: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        self.latency = latency
        self.script: list[Reply] = []
        self.default = default or (lambda req: Reply())
        self.calls = 0
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def __enter__(self) -> FakeOpenAI:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = -1  # headers and body leave in one segment (no Nagle / delayed-ACK stall)
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # /v1/models, for clients that probe
                self._send(200, json.dumps({"object": "list", "data": []}).encode(), {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    req = json.loads(raw)
                except ValueError:
                    req = {"_unparseable": raw.decode("utf-8", "replace")}
                with server._lock:
                    server.calls += 1
                    server.requests.append(req)
                    reply = server.script.pop(0) if server.script else None
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if reply is None:
                        reply = server.default(req)
                    delay = server.latency + reply.delay
                    if delay:
                        time.sleep(delay)
                    if reply.body is not None:
                        body = reply.body
                    elif reply.status == 200:
                        body = json.dumps(completion_body(reply.content, req.get("model", "?"), reply.prompt_tokens, reply.completion_tokens, reply.finish_reason)).encode()
                    else:
                        body = json.dumps({"error": {"message": f"scripted {reply.status}", "type": "test", "code": None}}).encode()
                    self._send(reply.status, body, reply.headers, reply.trickle)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _send(self, status: int, body: bytes, headers: dict[str, str], trickle: tuple[int, float] | None = None) -> None:
                n, pause = trickle or (0, 0.0)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(n + len(body)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    for _ in range(n):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(pause)
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (time-out)
                    pass

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- helpers --------------------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def user_prompts(self) -> list[str]:
        """The user message of every request received, in arrival order."""
        return [m["content"] for r in self.requests for m in r.get("messages", []) if m.get("role") == "user"]
