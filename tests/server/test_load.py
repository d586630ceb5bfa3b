"""`aqgr serve` under concurrent load and failures, on loopback (bounded: a few seconds)."""

from __future__ import annotations

import http.client
import json
import socket
import threading

from aqgr import Archive
from aqgr.eval.bench import server as bench


def _get(server, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def test_concurrent_searches_have_no_errors(live_server):
    report = bench.run(live_server.url, clients=8, requests=4, k=5)
    assert report["requests"] == 32 and report["errors"] == 0, report["errors_by_status"]
    assert report["latency_ms"]["p50"] > 0 and report["throughput_rps"] > 0


def test_searches_during_an_index_rebuild_keep_working(live_server, sample_archive):
    results: dict = {}
    rebuild = threading.Thread(
        target=lambda: results.setdefault(
            "manifest", Archive(settings=sample_archive.settings).build_index(rebuild=True)
        )
    )
    reloads = live_server.app.state.service.reloads
    rebuild.start()
    reports = [bench.run(live_server.url, clients=4, requests=2, k=3)]
    while rebuild.is_alive():  # search all through the rebuild and the swap
        reports.append(bench.run(live_server.url, clients=4, requests=2, k=3))
    rebuild.join()
    assert results["manifest"]["n_docs"] == 17
    assert sum(r["errors"] for r in reports) == 0, [r["errors_by_status"] for r in reports]
    assert bench.run(live_server.url, clients=1, requests=1)["errors"] == 0  # and after the swap
    assert live_server.app.state.service.reloads == reloads + 1


def test_server_survives_clients_that_disconnect_mid_request(live_server, scenarios):
    body = json.dumps({"facts": scenarios[0]["facts"]}).encode()
    for payload in (
        b"POST /api/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        % len(body)
        + body,  # gone before the answer
        b"POST /api/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
        + body[:100],  # body cut short
        b"POST /api/sea",  # request line cut short
    ):
        with socket.create_connection(("127.0.0.1", live_server.port), timeout=5) as sock:
            sock.sendall(payload)
    assert _get(live_server, "/api/health") == 200
    assert bench.run(live_server.url, clients=2, requests=2)["errors"] == 0
