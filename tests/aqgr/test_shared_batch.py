"""The work ledger: workers sharing one batch through the database, leases, kill -9 recovery.

Every test runs on SQLite (the ledger with whole-database locks) and on PostgreSQL (FOR UPDATE
SKIP LOCKED) through the `database_url` fixture."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
from sqlmodel import select
from typer.testing import CliRunner

from aqgr import Archive
from aqgr.archive.store import Store, WorkRow
from aqgr.archive.workqueue import Worker, WorkQueue, finish, ledger_status
from aqgr.foundation.errors import LeaseLostError
from aqgr.interfaces.cli import app
from tests.aqgr.helpers import write_judgments
from tests.aqgr.test_batch_runs import many_judgments

ROOT = Path(__file__).resolve().parents[2]


def _rows(store: Store) -> dict[str, WorkRow]:
    with store.session() as s:
        return {Path(r.source_path).stem: r for r in s.exec(select(WorkRow)).all()}


def test_claims_leases_and_takeover(database_url, home):
    home.mkdir(parents=True, exist_ok=True)
    store = Store(database_url)
    a = WorkQueue(store, "e.v1", Worker.here("a"), lease_s=0.5)
    b = WorkQueue(store, "e.v1", Worker.here("b"), lease_s=30)
    items = [(f"/x/J{i}.txt", f"J{i}", "fp1") for i in range(3)]
    assert a.register(items) == [] and b.register(items) == []  # idempotent
    first = a.claim(2)
    assert [c.judgment_id for c in first] == ["J0", "J1"]
    assert [c.judgment_id for c in b.claim(5)] == ["J2"]  # held claims are skipped
    assert b.claim(5) == [] and b.outstanding()[0] == 2
    with store.locked() as s:
        finish(store, s, "e.v1", "/x/J0.txt", a.worker.token, "done")
    time.sleep(0.6)  # a's lease on J1 expires (no heartbeat: a never started one)
    taken = b.claim(5)
    assert [(c.judgment_id, c.attempts) for c in taken] == [("J1", 2)]
    with pytest.raises(LeaseLostError):  # a finishes too late: its result is rolled back
        with store.locked() as s:
            finish(store, s, "e.v1", "/x/J1.txt", a.worker.token, "done")
    rows = _rows(store)
    assert rows["J1"].status == "claimed" and rows["J1"].claimed_by == "b"
    status = ledger_status(store)["items"]["e.v1"]
    assert status["done"] == 1 and status["claimed"] == 2
    # registering again: done stays done unless changed; a changed file is pending again
    assert a.register(items) == [("/x/J0.txt", "J0")]
    assert a.register([("/x/J0.txt", "J0", "fp2")]) == [] and _rows(store)["J0"].status == "pending"


def test_expired_claims_are_abandoned_after_max_attempts(database_url, home):
    home.mkdir(parents=True, exist_ok=True)
    store = Store(database_url)
    queue = WorkQueue(store, "e.v1", Worker.here("w"), lease_s=0.05, max_attempts=2)
    queue.register([("/x/K.txt", "K", "fp")])
    for _ in range(2):
        assert len(queue.claim(1)) == 1
        time.sleep(0.1)
    assert queue.claim(1) == []
    assert _rows(store)["K"].status == "failed"
    assert [f.reason for f in store.failures("e.v1")] == ["abandoned"]


def test_shared_batch_in_process_and_status(database_url, home, tmp_path):
    folder = write_judgments(tmp_path / "in")
    (folder / "broken.txt").write_bytes(b"\x00\x01" * 50)
    archive = Archive(home)
    claimed = []
    report = archive.summarize([folder], ledger=True, worker_id="solo", workers=2, on_claim=claimed.append)
    assert sorted(report.summarised) == ["A1", "A2", "A3", "A4"] and [f.reason for f in report.failed] == ["binary"]
    assert report.worker == "solo" and len(claimed) == 5
    rows = _rows(archive._store)
    assert {k: r.status for k, r in rows.items()} == {
        "A1": "done",
        "A2": "done",
        "A3": "done",
        "A4": "done",
        "broken": "failed",
    }
    assert all(r.claimed_by == "solo" and r.claim_token is None for r in rows.values())
    again = archive.summarize([folder], ledger=True)
    assert sorted(again.unchanged) == ["A1", "A2", "A3", "A4"] and [f.reason for f in again.failed] == ["binary"]
    status = json.loads(CliRunner().invoke(app, ["status", "--home", str(home)]).stdout)["work_ledger"]
    assert status["items"]["extractive.v1"] == {"pending": 0, "claimed": 0, "done": 4, "failed": 1, "expired_leases": 0}
    assert status["active_workers"] == []


# -- several worker processes, some killed -------------------------------------------
DRIVER = """
import json, os, sys, time
from aqgr import Archive
from aqgr.summarizer.extractive.engine import ExtractiveSummarizer

home, folder, name, log_path, lease, victim, gate = sys.argv[1:8]
while victim != "victim" and not os.path.exists(gate):  # survivors start once the victims are at work
    time.sleep(0.01)
real, done = ExtractiveSummarizer.summarize, []
def slow(self, judgment):
    time.sleep(0.1)  # an item takes a while
    if victim == "victim" and len(done) >= 3:
        time.sleep(120)  # a victim hangs on its 4th item, holding the claim, until it is killed
    done.append(1)
    return real(self, judgment)
ExtractiveSummarizer.summarize = slow

log = open(log_path, "a", buffering=1)
def note(event, path, extra=""):
    log.write(json.dumps([event, path, time.time(), extra]) + "\\n")
    log.flush()
report = Archive(home).summarize([folder], ledger=True, worker_id=name, lease_seconds=float(lease),
                                 on_claim=lambda item: note("claim", item.path),
                                 on_result=lambda outcome: note("result", outcome.path, outcome.status))
note("end", "", json.dumps({"summarised": len(report.summarised), "lost": len(report.lost_leases), "aborted": report.aborted}))
"""


def _events(log: Path) -> list[list]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []


def test_workers_killed_mid_run_lose_only_their_leases(database_url, home, tmp_path):
    total, lease, n_workers, killed = 120, 2.0, 4, ("w0", "w1")
    folder = many_judgments(tmp_path / "in", total, paragraphs=5)
    home.mkdir(parents=True, exist_ok=True)
    Store(database_url)  # tables created once
    driver = tmp_path / "worker.py"
    driver.write_text(DRIVER)
    logs = {f"w{i}": tmp_path / f"w{i}.log" for i in range(n_workers)}
    # Survivors wait at a gate until every victim has finished three items and hangs on its fourth,
    # holding the claim: on a loaded machine a slow victim could otherwise find the survivors done
    # with everything before its third item, and end on its own.
    gate = tmp_path / "go"
    procs = {
        name: subprocess.Popen(
            [
                sys.executable,
                str(driver),
                str(home),
                str(folder),
                name,
                str(log),
                str(lease),
                "victim" if name in killed else "survivor",
                str(gate),
            ],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, log in logs.items()
    }
    deadline, kill_times = time.monotonic() + 60, {}
    while len(kill_times) < len(killed):  # kill each victim well into its work, holding a claimed item
        if not gate.exists() and all(sum(e[0] == "result" for e in _events(logs[name])) >= 3 for name in killed):
            gate.touch()
        # ... and only once the survivors are at work too (one starting after a kill would take
        # over the dead worker's claims at once, not after its lease)
        survivors_working = all(
            any(e[0] == "claim" for e in _events(logs[name])) for name in logs if name not in killed
        )
        for name in set(killed) - set(kill_times) if survivors_working else ():
            events = _events(logs[name])
            if sum(e[0] == "result" for e in events) >= 3 and events[-1][0] == "claim":
                procs[name].send_signal(signal.SIGKILL)
                kill_times[name] = time.time()
        assert all(p.poll() is None for n, p in procs.items() if n not in kill_times), {
            n: p.stderr.read()[-2000:] for n, p in procs.items() if p.poll() is not None
        }
        assert time.monotonic() < deadline
        time.sleep(0.005)
    gate.touch()
    for name, proc in procs.items():
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == (-signal.SIGKILL if name in killed else 0), err[-2000:]

    store = Store(database_url)
    rows = _rows(store)
    assert len(rows) == total and {r.status for r in rows.values()} == {"done"}
    assert store.count_judgments() == total and store.count_summaries() == {("extractive.v1", "1.0"): total}
    claims, results = defaultdict(list), defaultdict(list)
    for name, log in logs.items():
        for event, path, at, extra in _events(log):
            if event == "claim":
                claims[Path(path).stem].append((at, name))
            elif event == "result" and extra == "summarised":
                results[Path(path).stem].append(name)
    assert set(claims) == set(rows)  # every item was claimed, none lost
    assert all(len(names) == 1 for names in results.values())  # summarised (and logged) at most once
    twice = {k: sorted(v) for k, v in claims.items() if len(v) > 1}
    # double claims only after a killed worker's lease expired: one item per victim (one in flight each)
    assert 1 <= len(twice) <= len(killed)
    for stem, entries in twice.items():
        (first_at, first_by), (again_at, again_by) = entries
        assert len(entries) == 2 and first_by in killed and again_by not in killed
        assert (
            again_at - kill_times[first_by] >= lease * 2 / 3 - 0.2
        )  # the lease was renewed at most lease/3 before the kill
        assert rows[stem].attempts == 2 and rows[stem].claimed_by == again_by
    assert all(r.attempts == 1 for k, r in rows.items() if k not in twice)
    ends = [json.loads(e[3]) for name in logs if name not in killed for e in _events(logs[name]) if e[0] == "end"]
    assert len(ends) == n_workers - len(killed) and all(e["lost"] == 0 and e["aborted"] is None for e in ends)
    print(
        f"\n{total} items, {n_workers} workers, {len(killed)} killed: {len(twice)} re-claimed after lease expiry, summaries {total}, done {total}"
    )
