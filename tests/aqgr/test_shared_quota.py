"""A provider quota shared through the database: several processes stay within it together.

Runs on SQLite and PostgreSQL (the `database_url` fixture), with the scripted `fake.v1` provider."""

from __future__ import annotations

import multiprocessing
import time

from aqgr import Archive
from aqgr.archive.quota import SharedQuota
from aqgr.archive.store import Store
from aqgr.llm.base import LLMRequest
from aqgr.llm.client import LLMClient
from aqgr.llm.fake import FakeProvider
from aqgr.llm.limits import Bucket

RPM, CALLS, PROCESSES = 600, 15, 3


def test_bucket_never_exceeds_the_quota_in_a_minute():
    bucket = Bucket.per_minute(15)  # e.g. a free tier: 15 requests per minute
    assert bucket.capacity == 1 and bucket.capacity + 60 * bucket.rate_per_s == 15
    level, wait = bucket.take(1.0, 0.0, 1)
    assert (level, wait) == (0.0, 0.0)
    level, wait = bucket.take(level, 1.0, 1)
    assert wait > 0 and abs(wait - (1 - 14 / 60) / (14 / 60)) < 1e-9
    assert Bucket.per_minute(600).take(0.0, 0.0, 5000)[1] > 0  # a cost above the burst waits for a full bucket


def _caller(url: str, barrier, out) -> None:
    stamps: list[float] = []

    def responder(request):
        stamps.append(time.time())
        return "ok"

    quota = SharedQuota(Store(url, create=False), "fake.v1:scripted", requests_per_minute=RPM)
    client = LLMClient(FakeProvider(responder=responder), limiter=quota)
    barrier.wait()
    for i in range(CALLS):
        client.complete(LLMRequest(prompt=f"call {i}", stage="summaries", prompt_version="t"))
    out.put(stamps)


def test_processes_share_one_request_quota(database_url, home):
    home.mkdir(parents=True, exist_ok=True)
    Store(database_url)
    context = multiprocessing.get_context("spawn")
    barrier, out = context.Barrier(PROCESSES), context.Queue()
    procs = [context.Process(target=_caller, args=(database_url, barrier, out)) for _ in range(PROCESSES)]
    for p in procs:
        p.start()
    stamps = sorted(t for _ in procs for t in out.get(timeout=60))
    for p in procs:
        p.join(30)
    assert [p.exitcode for p in procs] == [0] * PROCESSES and len(stamps) == CALLS * PROCESSES
    bucket = Bucket.per_minute(RPM)
    for window in (0.5, 1.0, 2.0):  # at most burst + refill in any window (1 call of slack for timing)
        most = max(sum(1 for t in stamps[i:] if t < start + window) for i, start in enumerate(stamps))
        assert most <= bucket.capacity + bucket.rate_per_s * window + 1, (window, most)
    spread = stamps[-1] - stamps[0]
    assert spread >= (len(stamps) - bucket.capacity) / bucket.rate_per_s * 0.9  # the quota held them back
    print(
        f"\n{len(stamps)} calls from {PROCESSES} processes under {RPM}/min: {spread:.2f}s; after the burst of {bucket.capacity:g}, {(len(stamps) - bucket.capacity) / spread * 60:.0f}/min"
    )


def test_token_quota_charges_the_real_usage(database_url, home):
    home.mkdir(parents=True, exist_ok=True)
    quota = SharedQuota(Store(database_url), "p:m", tokens_per_minute=6000)  # burst 100 tokens, ~98/s
    quota.acquire(1, 60)
    quota.acquire(1, 40)
    assert quota.waited_s == 0
    quota.settle(50)  # the replies used 50 tokens more than estimated: the bucket is in debt
    quota.acquire(1, 10)
    assert 0.4 < quota.waited_s < 1.2


def test_archive_client_uses_the_shared_quota(database_url, home, monkeypatch):
    monkeypatch.setenv("AQGR_PROVIDER", "fake.v1")
    monkeypatch.setenv("AQGR_REQUESTS_PER_MINUTE", "120")
    client = Archive(home)._llm_client()
    assert isinstance(client.limiter, SharedQuota) and client.limiter.key == "fake.v1:scripted"
    monkeypatch.delenv("AQGR_REQUESTS_PER_MINUTE")
    assert Archive(home)._llm_client().limiter is None
