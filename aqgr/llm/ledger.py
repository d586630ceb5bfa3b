"""Token and cost ledger of one run: per stage, calls made, cache hits, retries, failures, tokens."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass


@dataclass
class StageUsage:
    calls: int = 0  # paid calls that returned a reply
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0  # calls that ended in an error after retries (or a safety block)
    truncated: int = 0  # replies cut at the output budget (each asked again larger, or failed)
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0  # billed as output (Gemini 2.5 thinking), not part of the reply text
    largest_prompt: int = 0  # the most prompt tokens of one call, as the provider counted them


class TokenLedger:
    """Thread-safe counters by stage ('summaries', 'questions', 'explanations', ...)."""

    def __init__(self, input_price_per_mtok: float | None = None, output_price_per_mtok: float | None = None):
        self._stages: dict[str, StageUsage] = {}
        self._lock = threading.Lock()
        self._prices = (input_price_per_mtok, output_price_per_mtok)

    def _stage(self, stage: str) -> StageUsage:
        return self._stages.setdefault(stage, StageUsage())

    def record_call(self, stage: str, input_tokens: int, output_tokens: int, thinking_tokens: int = 0) -> None:
        with self._lock:
            usage = self._stage(stage)
            usage.calls += 1
            usage.input_tokens += int(input_tokens or 0)
            usage.output_tokens += int(output_tokens or 0)
            usage.thinking_tokens += int(thinking_tokens or 0)
            usage.largest_prompt = max(usage.largest_prompt, int(input_tokens or 0))

    def record_truncation(self, stage: str) -> None:
        with self._lock:
            self._stage(stage).truncated += 1

    def record_cache_hit(self, stage: str) -> None:
        with self._lock:
            self._stage(stage).cache_hits += 1

    def record_retry(self, stage: str) -> None:
        with self._lock:
            self._stage(stage).retries += 1

    def record_failure(self, stage: str) -> None:
        with self._lock:
            self._stage(stage).failures += 1

    def snapshot(self) -> dict[str, dict]:
        """{stage: {calls, cache_hits, retries, failures, input_tokens, output_tokens[, cost]}}."""
        with self._lock:
            out = {stage: asdict(usage) for stage, usage in sorted(self._stages.items())}
        price_in, price_out = self._prices
        if price_in is not None and price_out is not None:
            for usage in out.values():
                usage["cost"] = round(
                    usage["input_tokens"] * price_in / 1e6
                    + (usage["output_tokens"] + usage["thinking_tokens"]) * price_out / 1e6,
                    6,
                )
        return out

    @staticmethod
    def difference(after: dict[str, dict], before: dict[str, dict]) -> dict[str, dict]:
        """What happened between two snapshots (stages with no activity left out)."""
        out = {}
        for stage, usage in after.items():
            old = before.get(stage, {})
            delta = {
                k: (v - old.get(k, 0)) if k != "largest_prompt" else (v if v != old.get(k, 0) else 0)
                for k, v in usage.items()
            }
            if any(delta.values()):
                out[stage] = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in delta.items()}
        return out

    def total_calls(self) -> int:
        with self._lock:
            return sum(u.calls for u in self._stages.values())
