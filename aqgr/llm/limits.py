"""Provider quotas (requests and tokens per minute) as token buckets, and the client's seam for them.

`LLMClient(limiter=...)` asks the limiter before every attempt: `acquire(requests=1,
tokens=estimate)` blocks until the quota allows the call; after the reply, `settle(tokens)`
charges the difference between the tokens used and the estimate (it may run the bucket into
debt, which delays the next calls). An in-process limiter would only bound one process; the
one aqgr uses keeps its buckets in the archive database (aqgr/archive/quota.py), so every worker on
every machine draws from the same quota.

A bucket of `quota` units per minute holds at most `burst = max(1, quota / 60)` units (one
second's worth) and refills at `(quota - burst) / 60` per second, so no 60-second window ever
sees more than the quota (burst + 60 s of refill).
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

from .base import LLMRequest

CHARS_PER_TOKEN = 4  # a rough estimate before the call; settle() corrects it from the reply's usage


@runtime_checkable
class RateLimiter(Protocol):
    def acquire(self, requests: int, tokens: int) -> None:
        """Block until `requests` calls using about `tokens` tokens fit the quota, then take them."""
        ...

    def settle(self, tokens: int) -> None:
        """Charge `tokens` more (or fewer, when negative) than acquired."""
        ...


class Bucket(NamedTuple):
    capacity: float
    rate_per_s: float

    @classmethod
    def per_minute(cls, quota: float) -> "Bucket":
        burst = max(1.0, quota / 60.0)
        return cls(capacity=burst, rate_per_s=max(quota - burst, 1e-9) / 60.0)

    def take(self, level: float, elapsed_s: float, cost: float) -> tuple[float, float]:
        """(new level, seconds to wait): refill for `elapsed_s`, then pay `cost` when it fits (a cost
        above the capacity is paid from a full bucket). Wait > 0 means nothing was taken."""
        level = min(self.capacity, level + max(0.0, elapsed_s) * self.rate_per_s)
        need = min(cost, self.capacity)
        if level >= need:
            return level - cost, 0.0
        return level, (need - level) / self.rate_per_s


def estimate_tokens(request: LLMRequest) -> int:
    """Input tokens of a request, estimated from its length (the output is charged when known)."""
    return max(1, (len(request.prompt) + len(request.system or "")) // CHARS_PER_TOKEN)
