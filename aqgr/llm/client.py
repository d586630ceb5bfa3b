"""LLMClient: one provider behind retries, a concurrency limit, the response cache and the ledger.

* Retries: a retryable ProviderError (429, 5xx, timeout, dropped connection) is retried up
  to `max_retries` times, waiting `backoff_initial_s * 2**attempt` (at most `backoff_max_s`;
  a 429's Retry-After is honoured up to that bound). Anything else is raised at once.
* Concurrency: at most `concurrency` calls in flight per client (a semaphore).
* Quota: a `limiter` (aqgr.llm.limits.RateLimiter) is asked before every attempt, and told the
  tokens the reply really used; the archive passes one kept in its database (aqgr/quota.py),
  shared by every worker, when requests/tokens per minute are configured.
* Cache: an identical request (provider, model, prompt version, input hash) is answered
  from the cache and counted as a cache hit, not a call.
* Secrets: any message that leaves this module has the API key replaced by '***'.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable

from aqgr.errors import ProviderError

from .base import LLMReply, LLMRequest, Provider, providers, redact
from .cache import ResponseCache
from .config import ProviderConfig
from .ledger import TokenLedger
from .limits import RateLimiter, estimate_tokens


class LLMClient:
    def __init__(
        self,
        provider: Provider,
        *,
        config: ProviderConfig | None = None,
        cache: ResponseCache | None = None,
        ledger: TokenLedger | None = None,
        sleep: Callable[[float], None] = time.sleep,
        limiter: RateLimiter | None = None,
    ):
        self.provider = provider
        self.config = config or ProviderConfig(provider=provider.name, model=provider.model)
        self.cache = cache
        self.ledger = ledger or TokenLedger(self.config.input_price_per_mtok, self.config.output_price_per_mtok)
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(self.config.concurrency)
        self.limiter = limiter

    @classmethod
    def from_config(cls, config: ProviderConfig, *, cache_path: str | Path | None = None, **kwargs) -> "LLMClient":
        """The configured provider (SDK loaded lazily on its first call), with a cache file if given."""
        provider = providers.create(config.provider, config=config)
        cache = ResponseCache(cache_path) if (cache_path is not None and config.cache) else None
        return cls(provider, config=config, cache=cache, **kwargs)

    @property
    def label(self) -> str:
        """'provider:model', as recorded in provenance."""
        return f"{self.provider.name}:{self.provider.model}"

    def _backoff(self, attempt: int, error: ProviderError) -> float:
        wait = self.config.backoff_initial_s * (2**attempt)
        if error.retry_after is not None:
            wait = max(wait, error.retry_after)
        return min(wait, self.config.backoff_max_s)

    def complete(self, request: LLMRequest) -> LLMReply:
        name, model = self.provider.name, self.provider.model
        if self.cache is not None:
            hit = self.cache.get(name, model, request)
            if hit is not None:
                self.ledger.record_cache_hit(request.stage)
                return hit
        attempt = 0
        estimate = estimate_tokens(request) if self.limiter is not None else 0
        while True:
            if self.limiter is not None:
                self.limiter.acquire(1, estimate)  # a retry is a request too
            try:
                with self._slots:
                    reply = self.provider.generate(request, timeout_s=self.config.timeout_s)
            except ProviderError as exc:
                if exc.retryable and attempt < self.config.max_retries:
                    self.ledger.record_retry(request.stage)
                    self._sleep(self._backoff(attempt, exc))
                    attempt += 1
                    continue
                self.ledger.record_failure(request.stage)
                raise self._clean(exc) from None
            except Exception as exc:  # an SDK bug or an unexpected reply shape
                self.ledger.record_failure(request.stage)
                raise ProviderError(name, "provider_error", self._redact(f"{type(exc).__name__}: {exc}")) from None
            break
        if self.limiter is not None:
            self.limiter.settle(reply.input_tokens + reply.output_tokens - estimate)
        self.ledger.record_call(request.stage, reply.input_tokens, reply.output_tokens)
        if self.cache is not None:
            self.cache.put(name, model, request, reply)
        return reply

    def _redact(self, text: str) -> str:
        return redact(text, (self.config.secret(),))

    def _clean(self, exc: ProviderError) -> ProviderError:
        clean = self._redact(exc.detail)
        if clean == exc.detail:
            return exc
        copy = type(exc).__new__(type(exc))
        ProviderError.__init__(copy, exc.provider, exc.kind, clean, status=exc.status, retryable=exc.retryable, retry_after=exc.retry_after)
        return copy
