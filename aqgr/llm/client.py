"""LLMClient: one provider behind retries, a concurrency limit, the response cache and the ledger.

* Retries: a retryable ProviderError (408, 429, 5xx, timeout, dropped connection) is retried up
  to `max_retries` times, waiting a jittered `backoff_initial_s * 2**attempt` (at most
  `backoff_max_s`); a server's retry delay (Retry-After, Gemini's RetryInfo) is waited in full,
  up to `MAX_RETRY_AFTER_S`. Any other error (other 4xx, auth, an unknown model) is raised at once.
* Budgets: `budget(stage)` is how many prompt and reply tokens one call may take (aqgr/llm/budget.py);
  every prompt is counted (the model's tokenizer where the provider has one, else an estimate)
  and refused before sending when it cannot fit the window (`context_overflow`).
* Truncation: a reply that stopped at the output budget is never returned, cached or sent again
  as it was: the call is repeated once with a larger reply budget where the window and the
  configured cap allow, else it fails as `truncated`. A reply whose server reports far fewer
  prompt tokens than were sent (a server that silently cut the prompt to its window) fails as
  `input_truncated`.
* Concurrency: at most `concurrency` calls in flight per client (a semaphore).
* Quota: a `limiter` (aqgr.llm.limits.RateLimiter) is asked before every attempt, and told the
  tokens the reply really used; the archive passes one kept in its database (aqgr/archive/quota.py),
  shared by every worker, when requests/tokens per minute are configured.
* Cache: an identical request (provider, model, prompt version, input hash) is answered
  from the cache and counted as a cache hit, not a call. `complete(..., store=False)` leaves
  the reply out of the cache until the caller has checked it (`remember`): failed, invalid and
  truncated replies are never cached, so `--retry-failed` asks the model again.
* Secrets: any message that leaves this module has the API key replaced by '***'.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from aqgr.foundation.errors import ProviderError

from .base import LLMReply, LLMRequest, Provider, providers, redact
from .budget import UNKNOWN_WINDOW, Budget, stage_budget, template_reserve
from .cache import ResponseCache
from .config import ProviderConfig
from .deadline import task_left
from .ledger import TokenLedger
from .limits import RateLimiter, estimate_tokens

MAX_RETRY_AFTER_S = 300.0  # a server asking for a longer wait fails the call instead of stalling the batch
ESTIMATE_CHARS_PER_TOKEN = 3.5  # budget checks without a tokenizer: errs towards more tokens than ~4 of English
INPUT_CUT_RATIO = 0.5  # a server that reports fewer than this share of the prompt tokens sent has cut the prompt
MAX_GROWTHS = 2
MIN_CALL_S = 0.05  # a task with less time left than this makes no more calls  # a cut reply is asked again with a doubled budget at most this often


def client_from_environment(engine: str) -> "LLMClient":
    """The client of the provider the environment configures (AQGR_PROVIDER, ...), for a model-backed
    engine built outside an archive (an archive passes its own); ConfigError naming `engine` when none is."""
    from aqgr.foundation.errors import ConfigError

    config = ProviderConfig.resolve()
    if not config.configured:
        raise ConfigError(f"the {engine} needs a model provider: set AQGR_PROVIDER or pass --provider")
    return LLMClient.from_config(config)


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
        jitter: Callable[[], float] = random.random,
    ):
        self.provider = provider
        self.config = config or ProviderConfig(provider=provider.name, model=provider.model)
        self.cache = cache
        self.ledger = ledger or TokenLedger(self.config.input_price_per_mtok, self.config.output_price_per_mtok)
        self._sleep = sleep
        self._jitter = jitter
        self._slots = threading.BoundedSemaphore(self.config.concurrency)
        self.limiter = limiter
        self._window: int | None = None

    @classmethod
    def from_config(cls, config: ProviderConfig, *, cache_path: str | Path | None = None, **kwargs) -> "LLMClient":
        """The configured provider (SDK loaded lazily on its first call), with a cache file if given.
        Configuration a provider can check without a call (a missing key, a model file) raises ConfigError here."""
        provider = providers.create(config.provider, config=config)
        check = getattr(provider, "check", None)
        if callable(check):
            check()
        cache = ResponseCache(cache_path) if (cache_path is not None and config.cache) else None
        return cls(provider, config=config, cache=cache, **kwargs)

    @property
    def label(self) -> str:
        """'provider:model', as recorded in provenance."""
        return f"{self.provider.name}:{self.provider.model}"

    # -- budgets -------------------------------------------------------------
    def context_window(self) -> int:
        """The model's window in tokens: what the provider reads from the model or documents for it
        (`context_window()`, which honours the configured one), else the configured one, else the
        provider's `default_window`, else UNKNOWN_WINDOW."""
        if self._window is None:
            read = getattr(self.provider, "context_window", None)
            found = read() if callable(read) else None
            self._window = int(
                found or self.config.context_window or getattr(self.provider, "default_window", None) or UNKNOWN_WINDOW
            )
        return self._window

    def budget(self, stage: str) -> Budget:
        """How many prompt and reply tokens one call of `stage` may take (ConfigError when nothing fits)."""
        exact = callable(getattr(self.provider, "count_tokens", None))
        return stage_budget(
            self.context_window(),
            stage,
            max_input_tokens=self.config.max_input_tokens,
            max_output_tokens=self.config.max_output_tokens,
            exact_counts=exact,
        )

    def count_tokens(self, text: str) -> int:
        """Tokens of `text`: the model's tokenizer where the provider has one, else a cautious estimate."""
        count = getattr(self.provider, "count_tokens", None)
        if callable(count):
            return int(count(text))
        return math.ceil(len(text) / ESTIMATE_CHARS_PER_TOKEN)

    def prompt_tokens(self, request: LLMRequest) -> int:
        return self.count_tokens(request.prompt) + (self.count_tokens(request.system) if request.system else 0)

    def _check_fits(self, request: LLMRequest, prompt_tokens: int) -> None:
        window = self.context_window()
        if prompt_tokens + request.max_output_tokens + template_reserve(window) > window:
            raise ProviderError(
                self.provider.name,
                "context_overflow",
                f"a {request.stage} prompt of {prompt_tokens:,} tokens and a {request.max_output_tokens:,}-token reply do not fit "
                f"the model's {window:,}-token window; lower --max-input-tokens, or raise --context-window if the model allows it",
            )

    def _grown(self, request: LLMRequest, reply: LLMReply, prompt_tokens: int) -> LLMRequest | None:
        """The same request with a doubled reply budget, where the window and the ceiling allow; else None."""
        window = self.context_window()
        ceiling = request.output_ceiling or self.config.max_output_tokens or window
        room = window - max(prompt_tokens, reply.input_tokens) - template_reserve(window)
        grown = min(2 * request.max_output_tokens, ceiling, room)
        return replace(request, max_output_tokens=grown) if grown > request.max_output_tokens else None

    # -- calls -----------------------------------------------------------------
    def _backoff(self, attempt: int, error: ProviderError) -> float:
        """Full jitter over an exponential bound (spreads workers that failed together); a server's
        own retry delay is waited in full."""
        bound = min(self.config.backoff_initial_s * (2**attempt), self.config.backoff_max_s)
        wait = bound * (0.5 + 0.5 * self._jitter())
        if error.retry_after is not None:
            wait = max(wait, error.retry_after)
        return wait

    def complete(self, request: LLMRequest, *, store: bool = True) -> LLMReply:
        """One reply to `request` (from the cache when an identical request was answered before).
        `store=False`: the reply is not cached until `remember(request, reply)` (after the caller checked it)."""
        name, model = self.provider.name, self.provider.model
        if self.cache is not None:
            hit = self.cache.get(name, model, request)
            if hit is not None:
                self.ledger.record_cache_hit(request.stage)
                return hit
        prompt_tokens = self.prompt_tokens(request)
        try:
            self._check_fits(request, prompt_tokens)
        except ProviderError:
            self.ledger.record_failure(request.stage)
            raise
        asked, attempt, growths = request, 0, 0
        estimate = estimate_tokens(request) if self.limiter is not None else 0
        while True:
            if self.limiter is not None:
                self.limiter.acquire(1, estimate)  # a retry is a request too
            try:
                timeout_s = self._call_timeout(request)
                with self._slots:
                    reply = self.provider.generate(asked, timeout_s=timeout_s)
            except ProviderError as exc:
                if exc.retryable and attempt < self.config.max_retries and (exc.retry_after or 0) <= MAX_RETRY_AFTER_S:
                    wait = self._backoff(attempt, exc)
                    left = None if getattr(self.provider, "paces_itself", False) else task_left(self.config)
                    if (
                        left is None or left[0] > wait + MIN_CALL_S
                    ):  # a retry that could not finish in the task's time is not made
                        self.ledger.record_retry(request.stage)
                        self._sleep(wait)
                        attempt += 1
                        continue
                self.ledger.record_failure(request.stage)
                raise self._clean(exc) from None
            except Exception as exc:  # an SDK bug or an unexpected reply shape
                self.ledger.record_failure(request.stage)
                raise ProviderError(name, "provider_error", self._redact(f"{type(exc).__name__}: {exc}")) from None
            if self.limiter is not None:
                self.limiter.settle(reply.input_tokens + reply.output_tokens + reply.thinking_tokens - estimate)
            self.ledger.record_call(request.stage, reply.input_tokens, reply.output_tokens, reply.thinking_tokens)
            if reply.truncated:
                self.ledger.record_truncation(request.stage)
                grown = self._grown(asked, reply, prompt_tokens) if growths < MAX_GROWTHS else None
                if grown is None:
                    self.ledger.record_failure(request.stage)
                    raise ProviderError(
                        name,
                        "truncated",
                        f"the {request.stage} reply stopped at its budget of {asked.max_output_tokens:,} output tokens "
                        f"(finish reason {reply.finish_reason}); raise --max-output-tokens (or the window, --context-window) to allow more",
                    )
                asked, growths = grown, growths + 1
                continue
            self._check_input_kept(request, reply, prompt_tokens)
            break
        if store:
            self.remember(request, reply)
        return reply

    def _call_timeout(self, request: LLMRequest) -> float:
        """The time one attempt may take: the configured per-call timeout, within what is left of the
        current task (a judgment, a search: aqgr/llm/deadline.py); ProviderError 'timeout' when that
        is spent."""
        left = task_left(self.config)
        if left is None or getattr(
            self.provider, "paces_itself", False
        ):  # an in-process model: its own deadline (llamacpp.Pace)
            return self.config.timeout_s
        seconds, given, what = left
        if seconds < MIN_CALL_S:
            raise ProviderError(
                self.provider.name,
                "timeout",
                f"the {what}'s model calls took its whole {given:g} s (its deadline: raise "
                f"AQGR_{what.upper()}_TIMEOUT_S on a slow server or machine); this {request.stage} call was not made",
            )
        return min(self.config.timeout_s, seconds)

    def _check_input_kept(self, request: LLMRequest, reply: LLMReply, prompt_tokens: int) -> None:
        if not getattr(self.provider, "may_cut_prompts", False):  # only servers whose window aqgr cannot know
            return
        if reply.input_tokens and prompt_tokens >= 1000 and reply.input_tokens < INPUT_CUT_RATIO * prompt_tokens:
            self.ledger.record_failure(request.stage)
            raise ProviderError(
                self.provider.name,
                "input_truncated",
                f"the server read {reply.input_tokens:,} prompt tokens of about {prompt_tokens:,} sent: it cut the prompt to its "
                "context window; set --context-window (AQGR_CONTEXT_WINDOW) to the server's window (Ollama: raise num_ctx)",
            )

    def remember(self, request: LLMRequest, reply: LLMReply) -> None:
        """Cache a reply the caller has accepted (a cache hit or a truncated reply is not stored)."""
        if self.cache is not None and not reply.cached and not reply.truncated:
            self.cache.put(self.provider.name, self.provider.model, request, reply)

    def _redact(self, text: str) -> str:
        return redact(text, (self.config.secret(),))

    def _clean(self, exc: ProviderError) -> ProviderError:
        clean = self._redact(exc.detail)
        if clean == exc.detail:
            return exc
        copy = type(exc).__new__(type(exc))
        ProviderError.__init__(
            copy, exc.provider, exc.kind, clean, status=exc.status, retryable=exc.retryable, retry_after=exc.retry_after
        )
        return copy
