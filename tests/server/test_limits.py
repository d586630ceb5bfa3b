"""Server limits: allowed hosts (DNS rebinding), body size, body-read timeout, concurrent searches."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
import time

import pytest

from aqgr.interfaces.server import ServeConfig, create_app
from aqgr.interfaces.server.limits import Busy, SearchGate, allowed_hosts, host_name, uvicorn_options
from tests.server.conftest import LiveServer, TestClient

FACTS = (
    "An elderly shopkeeper was attacked with an axe by his neighbour during a dispute over a boundary wall. "
    "Before dying in the hospital he gave a statement to the treating doctor naming the neighbour"
)


# -- allowed hosts ---------------------------------------------------------------------------------
def test_host_names_are_parsed_like_a_browser_sends_them():
    assert (
        host_name("127.0.0.1:8765") == "127.0.0.1" and host_name("[::1]:8765") == "::1" and host_name("[::1]") == "::1"
    )
    assert (
        host_name("LocalHost.") == "localhost"
        and host_name("evil.example:80") == "evil.example"
        and host_name("") == ""
    )
    assert allowed_hosts(ServeConfig()) == {"127.0.0.1", "localhost", "::1"}
    assert "10.0.0.5" in allowed_hosts(ServeConfig(host="10.0.0.5", api_key="k"))
    assert socket.gethostname().lower() in allowed_hosts(ServeConfig(host="0.0.0.0", api_key="k"))
    assert "aqgr.firm.local" in allowed_hosts(ServeConfig(allowed_hosts=("AQGR.firm.local",)))
    assert allowed_hosts(ServeConfig(allowed_hosts=("*",))) is None


def test_a_foreign_host_header_is_refused(sample_archive):
    with TestClient(create_app(archive=sample_archive), raise_server_exceptions=False) as client:
        for host in ("evil.example", "127.0.0.1.evil.example", "localhost.evil.example:8765", ""):
            refused = client.get("/api/judgments/SC001/text", headers={"Host": host})
            assert refused.status_code == 400, host
            assert refused.json()["error"] == "host_not_allowed" and "--allowed-host" in refused.json()["detail"]
            assert "Harbans" not in refused.text
            assert client.get("/", headers={"Host": host}).status_code == 400  # the page too
        for host in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765", "LOCALHOST"):
            assert client.get("/api/judgments/SC001/text", headers={"Host": host}).status_code == 200, host
    config = ServeConfig(allowed_hosts=("aqgr.firm.local",))
    with TestClient(create_app(archive=sample_archive, config=config)) as client:
        assert client.get("/api/health", headers={"Host": "aqgr.firm.local:8765"}).status_code == 200
        assert client.get("/api/health", headers={"Host": "evil.example"}).status_code == 400
    with TestClient(create_app(archive=sample_archive, config=ServeConfig(allowed_hosts=("*",)))) as client:
        assert client.get("/api/health", headers={"Host": "anything.example"}).status_code == 200


# -- body size, read timeout, concurrent searches on a live server ------------------------------------
@pytest.fixture(scope="module")
def limited(sample_archive):
    config = ServeConfig(
        read_timeout_seconds=0.5,
        max_searches=1,
        max_waiting_searches=1,
        search_wait_seconds=0.5,
        max_body_bytes=2_000,
        reload_check_seconds=0,
    )
    options = {k: v for k, v in uvicorn_options(config).items() if k != "server_header"}
    with LiveServer(create_app(archive=sample_archive, config=config), **options) as server:
        yield server


def _request(server, method: str, path: str, body: dict | None = None, timeout: float = 30) -> tuple[int, dict, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        conn.request(
            method,
            path,
            body=json.dumps(body) if body is not None else None,
            headers={"Content-Type": "application/json"},
        )
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(response.read() or b"null")
    finally:
        conn.close()


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except (TimeoutError, ConnectionResetError):
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize(
    "partial",
    [
        b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",  # headers trickling
        b'POST /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"facts": "',  # body trickling
    ],
)
def test_slow_clients_get_408_and_are_disconnected(limited, partial):
    slow = []
    for _ in range(30):  # a crowd of slow clients
        sock = socket.create_connection(("127.0.0.1", limited.port), timeout=5)
        sock.sendall(partial)
        slow.append(sock)
    started = time.monotonic()
    assert _request(limited, "GET", "/api/health")[0] == 200  # others are still served
    for sock in slow:
        sock.sendall(b"x")  # one byte more: not enough
    answers = [_read_all(sock) for sock in slow]
    assert time.monotonic() - started < 5
    for answer in answers:
        assert answer.startswith(b"HTTP/1.1 408") and b"request_timeout" in answer, answer[:200]
    for sock in slow:
        sock.close()


def test_a_body_over_the_limit_is_413_even_when_streamed(limited):
    with socket.create_connection(("127.0.0.1", limited.port), timeout=5) as sock:
        sock.sendall(
            b"POST /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b'{"facts": "' + b"a" * 3000 + b'"}'
        sock.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(chunk), chunk))
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 413") and b"body_too_large" in answer


def test_searches_beyond_the_slots_and_queue_get_503_with_retry_after(limited, sample_archive):
    service = limited.app.state.service
    release = threading.Event()
    real = service.searcher

    def held():
        release.wait(10)
        return real()

    service.searcher = held
    results: list = []
    try:
        threads = [
            threading.Thread(
                target=lambda: results.append(_request(limited, "POST", "/api/search", {"facts": FACTS, "k": 2}))
            )
            for _ in range(4)
        ]
        for t in threads:
            t.start()
            time.sleep(0.05)
        time.sleep(0.8)  # the queued one waits 0.5 s for a slot, then gives up
        release.set()
        for t in threads:
            t.join(20)
    finally:
        service.searcher = real
    statuses = sorted(status for status, _, _ in results)
    assert statuses[0] == 200 and statuses.count(503) >= 2, statuses
    for status, headers, body in results:
        if status == 503:
            assert body["error"] == "busy" and int(headers["retry-after"]) >= 1 and "retry" in body["detail"]
    assert _request(limited, "POST", "/api/search", {"facts": FACTS, "k": 2})[0] == 200  # free again
    assert limited.app.state.search_gate.queued == 0


def test_the_gate_waits_then_refuses():
    gate = SearchGate(running=1, waiting=1, wait_seconds=0.2)

    async def scenario():
        hold = asyncio.Event()

        async def first():
            return await gate.run(lambda: time.sleep(0.5) or "first")

        task = asyncio.create_task(first())
        await asyncio.sleep(0.05)
        with pytest.raises(Busy):  # waited 0.2 s for the slot
            await gate.run(lambda: "second")
        queued = asyncio.create_task(gate.run(lambda: "third"))
        await asyncio.sleep(0.01)
        with pytest.raises(Busy, match="waiting"):  # the queue (1) is full: refused at once
            await gate.run(lambda: "fourth")
        hold.set()
        assert await task == "first"
        with pytest.raises(Busy):
            await queued
        assert await gate.run(lambda: "fifth") == "fifth"

    asyncio.run(scenario())
