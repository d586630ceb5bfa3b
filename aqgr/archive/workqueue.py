"""The work ledger: many `aqgr summarize` workers, on any number of machines, share one batch.

Every run registers the files it is given (`register`, idempotent: one `work_items` row per
source file and engine) and then claims work from the ledger until it is drained:

* claim: `SELECT ... ORDER BY source_path LIMIT n FOR UPDATE SKIP LOCKED` over pending items
  and claims whose lease expired; the claim records the worker (name, host, pid, a token per
  run), a lease expiry on the database's clock and one more attempt. Concurrent claimers skip
  each other's locked rows instead of waiting, so no item is handed out twice.
* finish: the summary (or the failure) is written and the item marked done (or failed) in ONE
  transaction, conditional on the claim still being ours; a worker whose lease expired and was
  taken over rolls back (`LeaseLostError`), so an item is done once.
* heartbeat: a thread renews the leases of the items a worker holds every third of the lease,
  so a long item keeps its claim; a killed worker stops renewing and its items are claimed
  again after expiry. Claims of a dead process on this host are taken over at once on start
  (a rerun after kill -9 does not wait). An item whose claims expired `max_attempts` times is
  marked failed ('abandoned').
* a worker stops when nothing is claimable and no other live claim could still come back.

PostgreSQL rows are locked with FOR UPDATE SKIP LOCKED; SQLite has no row locks (nor SKIP
LOCKED): each claim locks the whole database (BEGIN IMMEDIATE), correct for the processes of
one machine. A registered item that is done stays done, unless its file changed (size, mtime),
the engine version changed, or the run says --force; a failed one is tried again.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from sqlalchemy import and_, func, or_, update
from sqlmodel import Session, select

from aqgr.archive.store import FailureRow, Store, WorkerRow, WorkRow
from aqgr.foundation.errors import LeaseLostError

DEFAULT_LEASE_S = (
    300.0  # 5 minutes: far above an extractive item (ms) and a model call with retries (< 1 min); renewed while held
)
DEFAULT_MAX_ATTEMPTS = (
    3  # claims that outlive their lease before an item is marked failed (a file that kills its worker)
)
_CHUNK = 500  # rows per registration statement


@dataclass(frozen=True)
class Worker:
    """Who claims: a name chosen by the user (default host:pid), where, and a token unique to this run."""

    name: str
    host: str
    pid: int
    token: str

    @classmethod
    def here(cls, name: str | None = None) -> "Worker":
        host, pid = socket.gethostname(), os.getpid()
        return cls(name=name or f"{host}:{pid}", host=host, pid=pid, token=uuid.uuid4().hex)


class Claim(NamedTuple):
    source_path: str
    judgment_id: str
    force: bool
    attempts: int


def fingerprint(path: str, engine_version: str) -> str:
    """What makes a done item pending again when it changes: size, mtime, engine and schema version."""
    from aqgr.schemas.summary import SCHEMA_VERSION

    try:
        st = os.stat(path)
    except OSError:
        return f"missing:{engine_version}:{SCHEMA_VERSION}"
    return f"{st.st_size}:{st.st_mtime_ns}:{engine_version}:{SCHEMA_VERSION}"


def finish(store: Store, session: Session, engine: str, source_path: str, token: str, status: str) -> None:
    """Mark a claimed item done/failed inside the caller's transaction; LeaseLostError if it is no longer ours."""
    now = store.clock(session)
    result = session.exec(
        update(WorkRow)
        .where(
            WorkRow.engine == engine,
            WorkRow.source_path == source_path,
            WorkRow.claim_token == token,
            WorkRow.status == "claimed",
        )
        .values(status=status, claim_token=None, lease_expires_at=None, force=False, updated_at=now)
    )
    if result.rowcount != 1:
        raise LeaseLostError(source_path)


def _pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


class WorkQueue:
    """The ledger of one engine's batch, seen by one worker."""

    def __init__(
        self,
        store: Store,
        engine: str,
        worker: Worker,
        *,
        lease_s: float = DEFAULT_LEASE_S,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    ):
        if lease_s <= 0:
            from aqgr.foundation.errors import ConfigError

            raise ConfigError(f"the lease must be positive, not {lease_s} seconds")
        self.store, self.engine, self.worker = store, engine, worker
        self.lease_s, self.max_attempts = float(lease_s), max_attempts
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    # -- registration --------------------------------------------------------------
    def register(self, items: Iterable[tuple[str, str, str]], *, force: bool = False) -> list[tuple[str, str]]:
        """Add (source path, judgment id, fingerprint) items; idempotent. A failed item, a changed
        one and (with `force`) a done one become pending again. Returns the (path, id) of the
        items that are done already (unchanged)."""
        from sqlalchemy.dialects import postgresql, sqlite

        insert = (postgresql if self.store.dialect == "postgresql" else sqlite).insert
        items = sorted(items)  # rows are locked in path order everywhere: no deadlock between workers
        done: list[tuple[str, str]] = []
        for start in range(0, len(items), _CHUNK):
            chunk = items[start : start + _CHUNK]
            with self.store.locked() as s:
                now = self.store.clock(s)
                rows = [
                    dict(
                        engine=self.engine,
                        source_path=p,
                        judgment_id=j,
                        fingerprint=f,
                        status="pending",
                        force=force,
                        attempts=0,
                        updated_at=now,
                    )
                    for p, j, f in chunk
                ]
                statement = insert(WorkRow.__table__).values(rows)
                old, new = WorkRow.__table__.c, statement.excluded
                reopen = or_(
                    old.status == "failed",
                    and_(old.status == "done", or_(old.fingerprint != new.fingerprint, new.force)),
                )
                s.exec(
                    statement.on_conflict_do_update(
                        index_elements=["engine", "source_path"],
                        set_=dict(
                            judgment_id=new.judgment_id,
                            fingerprint=new.fingerprint,
                            status="pending",
                            force=new.force,
                            attempts=0,
                            claim_token=None,
                            lease_expires_at=None,
                            updated_at=new.updated_at,
                        ),
                        where=reopen,
                    )
                )
                found = s.exec(
                    select(WorkRow.source_path, WorkRow.judgment_id).where(
                        WorkRow.engine == self.engine,
                        WorkRow.status == "done",
                        WorkRow.source_path.in_([p for p, _, _ in chunk]),
                    )
                ).all()
            done.extend((p, j) for p, j in found)
        return done

    # -- this worker ------------------------------------------------------------------
    def start(self) -> None:
        """Record this worker, take over the claims of dead processes on this host, start the heartbeat."""
        with self.store.locked() as s:
            now = self.store.clock(s)
            s.add(
                WorkerRow(
                    token=self.worker.token,
                    name=self.worker.name,
                    host=self.worker.host,
                    pid=self.worker.pid,
                    engine=self.engine,
                    lease_s=self.lease_s,
                    started_at=now,
                    heartbeat_at=now,
                )
            )
            local = s.exec(
                select(WorkRow.source_path, WorkRow.claimed_pid)
                .where(
                    WorkRow.engine == self.engine, WorkRow.status == "claimed", WorkRow.claimed_host == self.worker.host
                )
                .with_for_update(skip_locked=True)
            ).all()
            dead = [path for path, pid in local if pid != self.worker.pid and not _pid_alive(pid)]
            for start in range(0, len(dead), _CHUNK):
                s.exec(
                    update(WorkRow)
                    .where(WorkRow.engine == self.engine, WorkRow.source_path.in_(dead[start : start + _CHUNK]))
                    .values(lease_expires_at=0.0)
                )
        self._stop.clear()
        self._beat = threading.Thread(target=self._heartbeat, name="aqgr-heartbeat", daemon=True)
        self._beat.start()

    def stop(self) -> None:
        """Stop the heartbeat, put back what this worker still holds (pending again), sign off."""
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=5)
        try:
            with self.store.locked() as s:
                now = self.store.clock(s)
                self._held(s, status="pending", claim_token=None, lease_expires_at=None, updated_at=now)
                s.exec(
                    update(WorkerRow)
                    .where(WorkerRow.token == self.worker.token)
                    .values(finished_at=now, heartbeat_at=now)
                )
        except Exception:  # the database is gone: the leases expire on their own
            pass

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            try:
                self.renew()
            except Exception:  # a passing database error: try again next beat; the lease covers two misses
                pass

    def renew(self) -> int:
        """Extend the lease of every item this worker holds; how many."""
        with self.store.locked() as s:
            now = self.store.clock(s)
            held = self._held(s, lease_expires_at=now + self.lease_s)
            s.exec(update(WorkerRow).where(WorkerRow.token == self.worker.token).values(heartbeat_at=now))
        return held

    def _held(self, s: Session, **values) -> int:
        """Update the items this worker holds (locked in path order first); how many."""
        paths = list(
            s.exec(
                select(WorkRow.source_path)
                .where(WorkRow.claim_token == self.worker.token, WorkRow.status == "claimed")
                .order_by(WorkRow.source_path)
                .with_for_update()
            ).all()
        )
        for start in range(0, len(paths), _CHUNK):
            s.exec(
                update(WorkRow)
                .where(
                    WorkRow.engine == self.engine,
                    WorkRow.source_path.in_(paths[start : start + _CHUNK]),
                    WorkRow.claim_token == self.worker.token,
                )
                .values(**values)
            )
        return len(paths)

    def claim(self, n: int) -> list[Claim]:
        """Up to `n` items: pending ones, or claims whose lease expired (with attempts left)."""
        if n <= 0:
            return []
        w = self.worker
        with self.store.locked() as s:
            now = self.store.clock(s)
            self._abandon(s, now)
            claimable = or_(
                WorkRow.status == "pending",
                and_(WorkRow.status == "claimed", WorkRow.lease_expires_at < now, WorkRow.attempts < self.max_attempts),
            )
            paths = s.exec(
                select(WorkRow.source_path)
                .where(WorkRow.engine == self.engine, claimable)
                .order_by(WorkRow.source_path)
                .limit(n)
                .with_for_update(skip_locked=True)
            ).all()
            if not paths:
                return []
            rows = s.exec(
                update(WorkRow)
                .where(WorkRow.engine == self.engine, WorkRow.source_path.in_(list(paths)))
                .values(
                    status="claimed",
                    attempts=WorkRow.attempts + 1,
                    claim_token=w.token,
                    claimed_by=w.name,
                    claimed_host=w.host,
                    claimed_pid=w.pid,
                    lease_expires_at=now + self.lease_s,
                    updated_at=now,
                )
                .returning(WorkRow.source_path, WorkRow.judgment_id, WorkRow.force, WorkRow.attempts)
            ).all()
        return sorted(Claim(*row) for row in rows)

    def _abandon(self, s: Session, now: float) -> None:
        """Expired claims with no attempt left: failed, with the reason recorded like any failure."""
        stale = s.exec(
            select(WorkRow.source_path, WorkRow.judgment_id, WorkRow.attempts)
            .where(
                WorkRow.engine == self.engine,
                WorkRow.status == "claimed",
                WorkRow.lease_expires_at < now,
                WorkRow.attempts >= self.max_attempts,
            )
            .with_for_update(skip_locked=True)
        ).all()
        for path, judgment_id, attempts in stale:
            s.exec(
                update(WorkRow)
                .where(WorkRow.engine == self.engine, WorkRow.source_path == path)
                .values(status="failed", claim_token=None, lease_expires_at=None, updated_at=now)
            )
            message = f"claimed {attempts} times by workers that stopped before finishing it (killed, out of memory?); `aqgr summarize --retry-failed` tries again"
            self.store._upsert(
                s,
                FailureRow(
                    source_path=path,
                    engine=self.engine,
                    judgment_id=judgment_id,
                    stage="summarize",
                    reason="abandoned",
                    message=message,
                ),
            )

    def outstanding(self) -> tuple[int, float]:
        """(items other workers hold that may still come back to the queue, seconds until the first lease expires)."""
        with self.store.session() as s:
            now = self.store.clock(s)
            count, first = s.exec(
                select(func.count(), func.min(WorkRow.lease_expires_at)).where(
                    WorkRow.engine == self.engine, WorkRow.status == "claimed", WorkRow.claim_token != self.worker.token
                )
            ).one()
        return int(count), max(0.0, (first or now) - now)


def ledger_status(store: Store) -> dict:
    """Per engine: items pending/claimed/done/failed and expired leases; the active workers."""
    with store.session() as s:
        now = store.clock(s)
        counts = s.exec(
            select(WorkRow.engine, WorkRow.status, func.count()).group_by(WorkRow.engine, WorkRow.status)
        ).all()
        expired = dict(
            s.exec(
                select(WorkRow.engine, func.count())
                .where(WorkRow.status == "claimed", WorkRow.lease_expires_at < now)
                .group_by(WorkRow.engine)
            ).all()
        )
        held = dict(
            s.exec(
                select(WorkRow.claim_token, func.count())
                .where(WorkRow.status == "claimed")
                .group_by(WorkRow.claim_token)
            ).all()
        )
        workers = s.exec(select(WorkerRow).where(WorkerRow.finished_at.is_(None)).order_by(WorkerRow.started_at)).all()
    by_engine: dict[str, dict[str, int]] = {}
    for engine, status, n in counts:
        by_engine.setdefault(engine, {k: 0 for k in ("pending", "claimed", "done", "failed")})[status] = n
    for engine, n in expired.items():
        by_engine[engine]["expired_leases"] = n
    for entry in by_engine.values():
        entry.setdefault("expired_leases", 0)
    active = [
        {
            "name": w.name,
            "host": w.host,
            "pid": w.pid,
            "engine": w.engine,
            "claimed": held.get(w.token, 0),
            "heartbeat_s_ago": round(now - w.heartbeat_at, 1),
            "lease_s": w.lease_s,
        }
        for w in workers
        if w.heartbeat_at + w.lease_s >= now
    ]
    return {"items": by_engine, "active_workers": active}
