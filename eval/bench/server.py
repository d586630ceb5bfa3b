"""Load benchmark of `aqgr serve`: concurrent clients firing searches on loopback.

    python -m aqgr.eval.bench.server --url http://127.0.0.1:8765 --clients 8 --requests 50

Each client keeps one connection and sends `requests` POST /api/search in a row, with
facts taken in turn from the sample scenarios (or `--facts-file`, one scenario a line).
Prints a JSON report on stdout: requests, errors (by status), seconds, throughput
(requests/s) and latency p50/p95/max in milliseconds. Standard library only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from aqgr.foundation.paths import SAMPLE

FALLBACK_FACTS = (
    "An elderly shopkeeper was attacked with an axe by his neighbour during a dispute over a boundary wall. "
    "Before dying in the hospital he gave a statement to the treating doctor naming the neighbour as the attacker. "
    "There is no other eye witness and the prosecution relies only on this dying declaration to convict the accused of murder."
)


def sample_facts() -> list[str]:
    path = SAMPLE / "scenarios.json"
    if path.exists():
        return [s["facts"] for s in json.loads(path.read_text(encoding="utf-8"))]
    return [FALLBACK_FACTS]


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def run(
    url: str,
    *,
    clients: int = 8,
    requests: int = 50,
    facts: list[str] | None = None,
    k: int = 10,
    api_key: str | None = None,
    timeout: float = 60.0,
) -> dict:
    """Fire `clients` x `requests` searches at the server at `url`; returns the report."""
    facts = facts or sample_facts()
    parts = urlsplit(url)
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["X-API-Key"] = api_key
    latencies: list[float] = []
    errors: dict[str, int] = {}
    lock = threading.Lock()

    def client(number: int) -> None:
        conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
        try:
            for i in range(requests):
                body = json.dumps({"facts": facts[(number + i) % len(facts)], "k": k})
                started = time.perf_counter()
                try:
                    conn.request("POST", "/api/search", body=body, headers=headers)
                    response = conn.getresponse()
                    response.read()
                    status = str(response.status)
                except (OSError, http.client.HTTPException) as exc:
                    status = type(exc).__name__
                    conn.close()
                    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    if status == "200":
                        latencies.append(elapsed)
                    else:
                        errors[status] = errors.get(status, 0) + 1
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    total = clients * requests
    return {
        "url": url,
        "clients": clients,
        "requests": total,
        "ok": len(latencies),
        "errors": sum(errors.values()),
        "errors_by_status": errors,
        "seconds": round(seconds, 3),
        "throughput_rps": round(total / seconds, 2) if seconds else 0.0,
        "latency_ms": {
            "p50": round(_percentile(latencies, 0.50), 1),
            "p95": round(_percentile(latencies, 0.95), 1),
            "max": round(max(latencies, default=0.0), 1),
            "mean": round(statistics.fmean(latencies), 1) if latencies else 0.0,
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8765")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=50, help="requests per client")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--api-key")
    parser.add_argument("--facts-file", type=Path, help="one fact scenario per line (default: the sample scenarios)")
    args = parser.parse_args(argv)
    facts = (
        [line.strip() for line in args.facts_file.read_text(encoding="utf-8").splitlines() if line.strip()]
        if args.facts_file
        else None
    )
    report = run(args.url, clients=args.clients, requests=args.requests, facts=facts, k=args.k, api_key=args.api_key)
    print(json.dumps(report, indent=2))
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
