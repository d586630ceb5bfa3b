"""Fake model servers on 127.0.0.1 speaking the real wire formats (started by the tests)."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Step:
    """One scripted HTTP answer."""

    def __init__(
        self, body: Any, status: int = 200, delay: float = 0.0, headers: dict | None = None, drip: float = 0.0
    ):
        """`drip`: the whole answer, status line and headers included, is sent one byte every `drip`
        seconds (a server that is slow but never silent for long: each socket read gets a byte)."""
        self.body, self.status, self.delay, self.headers, self.drip = body, status, delay, headers or {}, drip


def gemini_text(
    text: str,
    *,
    finish: str | int = "STOP",
    prompt_tokens: int = 100,
    output_tokens: int = 20,
    thoughts_tokens: int = 0,
) -> dict:
    """A generateContent reply; `finish` as the API spells it (a name, or a number as the legacy SDK's
    `enum-encoding=int` requests get); `thoughts_tokens`: a thinking model's thoughtsTokenCount (in the total)."""
    usage = {
        "promptTokenCount": prompt_tokens,
        "candidatesTokenCount": output_tokens,
        "totalTokenCount": prompt_tokens + output_tokens + thoughts_tokens,
    }
    if thoughts_tokens:
        usage["thoughtsTokenCount"] = thoughts_tokens
    return {
        "candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": finish, "index": 0}],
        "usageMetadata": usage,
        "modelVersion": "gemini-fake-001",
    }


def gemini_error(code: int, status: str, message: str, *, retry_delay: str | None = None) -> dict:
    """A Google API error body; `retry_delay` ("7s") adds the google.rpc.RetryInfo detail a 429 carries."""
    error = {"code": code, "message": message, "status": status}
    if retry_delay is not None:
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"quotaMetric": "generate_content_free_tier_requests"}],
            },
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay},
        ]
    return {"error": error}


def openai_text(
    text: str,
    *,
    finish: str = "stop",
    prompt_tokens: int | None = None,
    output_tokens: int = 20,
    refusal: str | None = None,
) -> dict:
    """A chat completion; `prompt_tokens=None`: the server counts the request's messages (4 characters a token),
    as a real server reports what it read."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "local-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text, "refusal": refusal}, "finish_reason": finish}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": (prompt_tokens or 0) + output_tokens,
        },
    }


def _counted(body: Any, request: Any) -> Any:
    """An OpenAI reply whose usage leaves prompt_tokens open, with the request's size filled in."""
    usage = body.get("usage") if isinstance(body, dict) else None
    if isinstance(usage, dict) and usage.get("prompt_tokens", 0) is None and isinstance(request, dict):
        chars = sum(len(str(m.get("content") or "")) for m in request.get("messages") or [])
        usage = {**usage, "prompt_tokens": chars // 4, "total_tokens": chars // 4 + usage.get("completion_tokens", 0)}
        return {**body, "usage": usage}
    return body


class FakeModelServer:
    """Answers POSTs from a script (then `default`), records every request; GET /v1beta/models/<m> describes a model."""

    def __init__(self, default: Step | None = None, respond: Callable[[Any], Step] | None = None):
        """`respond(body)`: the answer to a POST once the script has run out, computed from its JSON body."""
        self.script: deque[Step] = deque()
        self.default = default
        self.respond = respond
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, step: Step) -> None:
                if step.delay:
                    time.sleep(step.delay)
                payload = json.dumps(step.body).encode()
                if step.drip:
                    head = (
                        f"HTTP/1.1 {step.status} OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
                        "Connection: close\r\n\r\n"
                    ).encode()
                    try:
                        for i in range(len(head + payload)):
                            self.wfile.write((head + payload)[i : i + 1])
                            self.wfile.flush()
                            time.sleep(step.drip)
                    except (BrokenPipeError, ConnectionResetError, OSError):
                        pass
                    self.close_connection = True
                    return
                try:
                    self.send_response(step.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in step.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):
                server.requests.append(
                    {"method": "GET", "path": self.path, "headers": dict(self.headers), "body": None}
                )
                name = self.path.split("?")[0].rsplit("/", 1)[-1]
                self._send(
                    Step(
                        {
                            "name": f"models/{name}",
                            "displayName": name,
                            "inputTokenLimit": 30720,
                            "outputTokenLimit": 2048,
                            "supportedGenerationMethods": ["generateContent"],
                        }
                    )
                )

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                server.requests.append(
                    {"method": "POST", "path": self.path, "headers": dict(self.headers), "body": body}
                )
                step = (
                    server.script.popleft()
                    if server.script
                    else server.respond(body)
                    if server.respond
                    else server.default
                )
                if step is None:
                    step = Step(
                        {"error": {"code": 500, "message": "script exhausted", "status": "INTERNAL"}}, status=500
                    )
                self._send(Step(_counted(step.body, body), step.status, step.delay, step.headers, step.drip))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def add(self, *steps: Step) -> "FakeModelServer":
        self.script.extend(steps)
        return self

    def posts(self) -> list[dict]:
        return [r for r in self.requests if r["method"] == "POST"]

    def __enter__(self) -> "FakeModelServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
