"""Texts as ~1,000-character windows, and the query vectors made of them.

MiniLM reads only its first 256 word pieces (about 1,200 characters), so a document is
embedded in pieces: each slot's text is split on word boundaries into windows of at most
`window_chars` characters, and adjacent short pieces (parties, case number, ...) are
packed together up to that size, so every slot is seen and no window mixes more text
than the model reads (`document_windows`). The dense retriever keeps the window vectors in
segments (retrieval/dense/store.py), where a document's score is the maximum similarity over
its windows.

A query is windowed the same way; its window vectors are mean-pooled and renormalised
(`embed_query`; `QueryVectors` memoises them for a search). Short texts embedded at build
time (`embed_sentences`, saved as `sentences.npz`) answer a query equal to one without a
model call. faiss is imported lazily (`_faiss`, for the store and the ANN kinds).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from aqgr.foundation.errors import MissingDependencyError

from ..spec import WINDOW_CHARS
from .cache import EmbeddingCache, embed_with_cache
from .embedders import MemoEmbedder

_SPACE = re.compile(r"\s+")


def _faiss():
    try:
        import faiss
    except ImportError:
        raise MissingDependencyError("faiss-cpu", "dense") from None
    return faiss


def split_windows(text: str, window_chars: int = WINDOW_CHARS) -> list[str]:
    """`text` as windows of at most `window_chars` characters, cut on whitespace.

    Whitespace runs become single spaces; a word longer than a window is cut hard.
    """
    if window_chars < 1:
        raise ValueError(f"window_chars must be positive, got {window_chars}")
    windows: list[str] = []
    current = ""
    for word in _SPACE.split(text.strip()):
        if not word:
            continue
        while len(word) > window_chars:
            if current:
                windows.append(current)
                current = ""
            windows.append(word[:window_chars])
            word = word[window_chars:]
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= window_chars:
            current = f"{current} {word}"
        else:
            windows.append(current)
            current = word
    if current:
        windows.append(current)
    return windows


def document_windows(texts: Mapping[str, str] | Sequence[str], window_chars: int = WINDOW_CHARS) -> list[str]:
    """Windows of a document given its slot texts: each slot windowed, short neighbours packed."""
    pieces = [
        w
        for text in (texts.values() if isinstance(texts, Mapping) else texts)
        for w in split_windows(text, window_chars)
    ]
    packed: list[str] = []
    for piece in pieces:
        if packed and len(packed[-1]) + 1 + len(piece) <= window_chars:
            packed[-1] = f"{packed[-1]}\n{piece}"
        else:
            packed.append(piece)
    return packed


def embed_query(query: str, embedder, window_chars: int = WINDOW_CHARS) -> np.ndarray | None:
    """One normalised query vector (mean of its window vectors), or None for an empty query."""
    windows = split_windows(query, window_chars)
    if not windows:
        return None
    mean = np.asarray(embedder.embed(windows), dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm).astype(np.float32) if norm > 0 else None


class QueryVectors:
    """Query-time vectors of one index: `embed_query` through a memo (the same facts are
    embedded for the question ranking and for every retrieval), plus vectors the index
    already holds (`known`, keyed by whitespace-normalised text), which cost no model call.
    The last VECTORS_KEPT texts' vectors are kept whole (read-only): a search asks for its
    facts' vector once per question and read, and windowing them again each time cost more
    than the look-ups of their windows."""

    VECTORS_KEPT = 256

    def __init__(self, embedder, window_chars: int = WINDOW_CHARS, known: Mapping[str, np.ndarray] | None = None):
        self._embedder = embedder
        self._window_chars = window_chars
        self._known = known if known is not None else {}  # a mapping; may be backed by a file, never copied
        self._memo: MemoEmbedder | None = None
        self._vectors: OrderedDict[str, np.ndarray | None] = OrderedDict()
        self._lock = threading.Lock()

    def _memoised(self) -> MemoEmbedder:
        if self._memo is None:
            self._memo = MemoEmbedder(self._embedder)
        return self._memo

    def one(self, text: str) -> np.ndarray | None:
        with self._lock:
            if text in self._vectors:
                self._vectors.move_to_end(text)
                return self._vectors[text]
        vector = self._known.get(" ".join(text.split()))
        if vector is None:
            vector = embed_query(text, self._memoised(), self._window_chars)
        return self._keep(text, vector)

    def _keep(self, text: str, vector: np.ndarray | None) -> np.ndarray | None:
        if vector is not None:
            vector = vector.view()
            vector.flags.writeable = False  # shared by every later caller
        with self._lock:
            self._vectors[text] = vector
            while len(self._vectors) > self.VECTORS_KEPT:
                self._vectors.popitem(last=False)
        return vector

    def calls(self, text: str) -> list[Callable[[], object]]:
        """The model calls that embed `text`'s windows, one window each, for a caller to run side
        by side (ONNX Runtime lets go of the interpreter lock; one window a call keeps each vector
        as `one` makes it): `one(text)` then finds every window memoised, or waits for those still
        being embedded. [] when the index holds the text's vector."""
        if " ".join(text.split()) in self._known:
            return []
        memo = self._memoised()
        return [partial(memo.embed, [window]) for window in split_windows(text, self._window_chars)]

    def many(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        """`one` of each text: the known ones looked up together (`known.get_many` where the
        mapping has it: one query of the store, not two a text), the windows of the others
        embedded in one model call."""
        with self._lock:
            asked = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        keys = {t: " ".join(t.split()) for t in asked}
        get_many = getattr(self._known, "get_many", None)
        found = (
            get_many(list(set(keys.values())))
            if get_many is not None
            else {k: self._known.get(k) for k in set(keys.values())}
        )
        todo = []
        for text in asked:
            if (vector := found.get(keys[text])) is not None:
                self._keep(text, vector)
            else:
                todo.append(text)
        windows = list(dict.fromkeys(w for t in todo for w in split_windows(t, self._window_chars)))
        if windows:
            self._memoised().embed(windows)  # fills the memo; `one` below finds every window there
        return [self.one(t) for t in texts]


def combine_vectors(base: np.ndarray | None, extra: np.ndarray | None, weight: float) -> np.ndarray | None:
    """normalise(base + weight * extra): a query vector leaning towards `extra` (a question)
    without embedding the combined text again (the facts' vector is memoised)."""
    if base is None or extra is None or weight == 0:
        return base if base is not None else extra
    mixed = np.asarray(base, dtype=np.float32) + np.float32(weight) * np.asarray(extra, dtype=np.float32)
    norm = float(np.linalg.norm(mixed))
    return (mixed / norm).astype(np.float32) if norm > 0 else None


class EmbedsQueries:
    """The query-embedding half of `protocol.Index`, once for both backends: each holds its
    queries' vectors in `self._queries` (a QueryVectors over its embedder and known sentences)."""

    _queries: QueryVectors

    def embed_query(self, text: str) -> np.ndarray | None:
        """A query's normalised vector (its windows embedded and mean-pooled); memoised."""
        return self._queries.one(text)

    def embedding_calls(self, text: str) -> list[Callable[[], object]]:
        """The model calls embedding `text`'s windows one each, to run side by side before
        `embed_query(text)` (`QueryVectors.calls`)."""
        return self._queries.calls(text)

    def embed_queries(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        """`embed_query` of each text, the windows of all texts embedded in one model call."""
        return self._queries.many(texts)

    @staticmethod
    def combined_vector(base: np.ndarray | None, extra: np.ndarray | None, weight: float) -> np.ndarray | None:
        """normalise(base + weight * extra) (`combine_vectors`)."""
        return combine_vectors(base, extra, weight)


def flatten_windows(doc_windows: Sequence[Sequence[str]]) -> tuple[list[str], np.ndarray]:
    """All windows in document order, and the document position of each."""
    texts = [w for windows in doc_windows for w in windows]
    window_doc = np.fromiter(
        (d for d, windows in enumerate(doc_windows) for _ in windows), dtype=np.int64, count=len(texts)
    )
    return texts, window_doc


# ------------------------------------------------------------------ pre-embedded sentences

SENTENCES_FILE = "sentences.npz"
Sentences = tuple[list[str], np.ndarray]  # (whitespace-normalised texts, their unit vectors)


def embed_sentences(
    embedder,
    sentences: Sequence[str],
    window_chars: int,
    cache: EmbeddingCache | None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Sentences | None, int]:
    """Short texts (one window each; longer ones skipped) embedded now, so that `QueryVectors`
    answers them without a model call. Returns (texts, vectors) or None, and how many were
    embedded by the model (the rest came from `cache`)."""
    unique = [t for t in dict.fromkeys(" ".join(t.split()) for t in sentences) if t and len(t) <= window_chars]
    if not unique:
        return None, 0
    vectors, n_embedded = embed_with_cache(embedder, unique, cache, progress=progress)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (unique, (vectors / np.where(norms > 0, norms, 1)).astype(np.float32)), n_embedded


def save_sentences(directory: Path, stored: Sentences) -> str:
    np.savez(Path(directory) / SENTENCES_FILE, texts=np.asarray(stored[0], dtype=str), vectors=stored[1])
    return SENTENCES_FILE


def load_sentences(directory: Path) -> Sentences:
    with np.load(Path(directory) / SENTENCES_FILE, allow_pickle=False) as data:
        return data["texts"].tolist(), np.asarray(data["vectors"], dtype=np.float32)
