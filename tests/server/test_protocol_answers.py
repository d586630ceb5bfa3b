"""What uvicorn answers itself is in the API's error shape too: a request that is not valid HTTP
(400) and the connection cap (503); at the cap an idle connection is closed to make room, so one
client holding idle sockets does not lock everyone else out."""

from __future__ import annotations

import json
import socket
import time

import pytest

from aqgr.interfaces.server import ServeConfig, create_app
from aqgr.interfaces.server.limits import uvicorn_options
from tests.server.conftest import LiveServer
from tests.server.test_limits import _read_all, _request

CAP = 6


@pytest.fixture(scope="module")
def capped(sample_archive):
    config = ServeConfig(read_timeout_seconds=30, max_connections=CAP, reload_check_seconds=0)
    options = {k: v for k, v in uvicorn_options(config).items() if k != "server_header"}
    with LiveServer(create_app(archive=sample_archive, config=config), **options) as server:
        yield server


def _body(answer: bytes) -> dict:
    return json.loads(answer.split(b"\r\n\r\n", 1)[1])


def test_a_request_that_is_not_http_gets_400_as_json(capped):
    with socket.create_connection(("127.0.0.1", capped.port), timeout=10) as sock:
        sock.sendall(b"GARBAGE \x00\x01 NOT-HTTP\r\n\r\n")
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 400") and b"application/json" in answer, answer[:300]
    found = _body(answer)
    assert found["error"] == "invalid_http" and found["detail"]


def test_the_connection_cap_answers_503_as_json(capped):
    busy = []
    try:
        for _ in range(CAP):  # connections with a request begun (not idle): they hold their places
            sock = socket.create_connection(("127.0.0.1", capped.port), timeout=10)
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            busy.append(sock)
        time.sleep(0.2)
        status, headers, body = _request(capped, "GET", "/api/health")
        assert status == 503 and headers["content-type"].startswith("application/json")
        assert body["error"] == "too_many_connections" and "retry" in body["detail"] and headers.get("retry-after")
    finally:
        for sock in busy:
            sock.close()


def test_idle_sockets_of_one_client_do_not_lock_others_out(capped):
    idle = [
        socket.create_connection(("127.0.0.1", capped.port), timeout=10) for _ in range(CAP * 2)
    ]  # opened, nothing sent
    try:
        time.sleep(0.2)
        started = time.monotonic()
        assert _request(capped, "GET", "/api/health")[0] == 200  # at once, not after the 30 s read deadline
        assert time.monotonic() - started < 10
    finally:
        for sock in idle:
            sock.close()
