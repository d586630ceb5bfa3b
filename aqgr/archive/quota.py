"""A provider quota shared by every worker: token buckets kept in the archive database.

One `rate_buckets` row per quota ('provider:model:requests', ':tokens'). Taking from a bucket
is one transaction: the row is read with `SELECT ... FOR UPDATE` (PostgreSQL; on SQLite the
database is locked for the transaction), refilled for the time since its last update on the
database's clock, and debited when the call fits; otherwise the caller sleeps for as long as
the refill needs and tries again. Requests and tokens are taken together or not at all.
The bucket shape (burst, refill) is aqgr.llm.limits.Bucket: no 60-second window sees more
than the quota. This is the `RateLimiter` the archive hands to its LLMClient.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import update
from sqlmodel import Session, select

from aqgr.archive.store import RateBucketRow, Store
from aqgr.llm.limits import Bucket


class SharedQuota:
    """Requests and/or tokens per minute for one key (e.g. 'gemini.v1:gemini-2.5-flash')."""

    def __init__(
        self,
        store: Store,
        key: str,
        *,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.store, self.key, self._sleep = store, key, sleep
        self.buckets: dict[str, Bucket] = {}
        if requests_per_minute:
            self.buckets["requests"] = Bucket.per_minute(requests_per_minute)
        if tokens_per_minute:
            self.buckets["tokens"] = Bucket.per_minute(tokens_per_minute)
        self.waited_s = 0.0  # total time this process spent waiting for the quota

    def _row(self, s: Session, unit: str) -> RateBucketRow:
        """The bucket's row, locked; created full (with the configured shape) on first use."""
        key, bucket = f"{self.key}:{unit}", self.buckets[unit]
        row = s.exec(select(RateBucketRow).where(RateBucketRow.key == key).with_for_update()).first()
        if row is None:
            from sqlalchemy.dialects import postgresql, sqlite

            insert = (postgresql if self.store.dialect == "postgresql" else sqlite).insert
            values = dict(
                key=key,
                capacity=bucket.capacity,
                rate_per_s=bucket.rate_per_s,
                level=bucket.capacity,
                updated_at=self.store.clock(s),
            )
            s.exec(insert(RateBucketRow.__table__).values(**values).on_conflict_do_nothing())
            row = s.exec(select(RateBucketRow).where(RateBucketRow.key == key).with_for_update()).one()
        return row

    def acquire(self, requests: int, tokens: int) -> None:
        costs = {"requests": float(requests), "tokens": float(tokens)}
        while True:
            with self.store.locked() as s:
                rows = {unit: self._row(s, unit) for unit in self.buckets}
                now = max(
                    [self.store.clock(s)] + [r.updated_at for r in rows.values()]
                )  # read once the rows are locked
                taken: dict[str, float] = {}
                wait = 0.0
                for unit, bucket in self.buckets.items():
                    level, unit_wait = bucket.take(rows[unit].level, now - rows[unit].updated_at, costs[unit])
                    taken[unit] = level
                    wait = max(wait, unit_wait)
                if wait == 0.0:  # every bucket can pay: pay them all
                    for unit, level in taken.items():
                        s.exec(
                            update(RateBucketRow)
                            .where(RateBucketRow.key == f"{self.key}:{unit}")
                            .values(level=level, updated_at=now)
                        )
                    return
            self.waited_s += wait
            self._sleep(wait)

    def settle(self, tokens: int) -> None:
        if "tokens" not in self.buckets or tokens == 0:
            return
        with self.store.locked() as s:
            row = self._row(s, "tokens")
            now = max(self.store.clock(s), row.updated_at)
            level, _ = self.buckets["tokens"].take(row.level, now - row.updated_at, 0.0)
            s.exec(
                update(RateBucketRow).where(RateBucketRow.key == row.key).values(level=level - tokens, updated_at=now)
            )
