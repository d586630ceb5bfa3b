"""Long judgments: overlapping chunks on paragraph boundaries, and a per-judgment FAISS index of them.

Chunks are about `chunk_chars` characters (the study: 20,000) and consecutive chunks
overlap by `overlap` of a chunk (the study: 50%, i.e. 10,000 characters). A chunk always
starts and ends on a paragraph boundary; a paragraph longer than a chunk is cut into
chunk-sized pieces on whitespace first.

The chunk index (`DenseIndex`) reuses the dense retriever's windows (retrieval/dense/windows.py):
each chunk is embedded in ~1,000-character windows (MiniLM reads only ~256 tokens), the windows
go into one FAISS inner-product index, and a chunk's score is its best window's. retrieval and
faiss are imported when an index is built, not at import.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from aqgr.retrieval.dense.cache import EmbeddingCache

CHUNK_CHARS = 20_000  # the study's chunk size
CHUNK_OVERLAP = 0.5  # the study's 50% overlap
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class Chunk:
    number: int  # 0-based position in reading order
    start: int  # character offsets in the judgment text
    end: int
    text: str


def paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of every paragraph: blank-line separated, else line separated."""
    breaks = _PARAGRAPH_BREAK if _PARAGRAPH_BREAK.search(text) else re.compile(r"\n")
    spans, start = [], 0
    for match in breaks.finditer(text):
        if text[start : match.start()].strip():
            spans.append((start, match.start()))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def _pieces(text: str, chunk_chars: int) -> list[tuple[int, int]]:
    """Paragraph spans, with any paragraph longer than a chunk cut on whitespace."""
    out = []
    for start, end in paragraphs(text):
        while end - start > chunk_chars:
            cut = text.rfind(" ", start + chunk_chars // 2, start + chunk_chars)
            cut = cut if cut > start else start + chunk_chars
            out.append((start, cut))
            start = cut
        out.append((start, end))
    return out


def split_chunks(text: str, *, chunk_chars: int = CHUNK_CHARS, overlap: float = CHUNK_OVERLAP) -> list[Chunk]:
    """Chunks of at most `chunk_chars` characters on paragraph boundaries, each starting about
    `(1 - overlap) * chunk_chars` characters after the previous one."""
    if chunk_chars < 1 or not 0 <= overlap < 1:
        raise ValueError(f"need chunk_chars >= 1 and 0 <= overlap < 1, got {chunk_chars}, {overlap}")
    pieces = _pieces(text, chunk_chars)
    if not pieces:
        return []
    step = max(1, int(chunk_chars * (1 - overlap)))
    chunks: list[Chunk] = []
    first = 0
    while True:
        last = first
        while last + 1 < len(pieces) and pieces[last + 1][1] - pieces[first][0] <= chunk_chars:
            last += 1
        start, end = pieces[first][0], pieces[last][1]
        chunks.append(Chunk(len(chunks), start, end, text[start:end]))
        if last == len(pieces) - 1:
            return chunks
        # next chunk: the first paragraph at or after start + step (always moving forward)
        target = start + step
        nxt = next((i for i in range(first + 1, last + 1) if pieces[i][0] >= target), last + 1)
        first = nxt


class DenseIndex:
    """Window vectors in FAISS plus the window -> document map; documents by position (here: the
    chunks of one judgment). A document's score is its best window's."""

    def __init__(self, index, window_doc: np.ndarray, n_docs: int):
        if index.ntotal != len(window_doc):
            raise ValueError(f"FAISS index has {index.ntotal} vectors but {len(window_doc)} windows are mapped")
        self.index = index
        self.window_doc = np.asarray(window_doc, dtype=np.int64)
        self.n_docs = n_docs

    @property
    def dim(self) -> int:
        return self.index.d

    @classmethod
    def from_vectors(cls, vectors: np.ndarray, window_doc: np.ndarray, n_docs: int, dim: int) -> "DenseIndex":
        """A FAISS inner-product index over already-embedded, normalised window vectors."""
        from aqgr.retrieval.dense.windows import _faiss

        index = _faiss().IndexFlatIP(dim)
        if len(vectors):
            index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        return cls(index, window_doc, n_docs)

    @classmethod
    def build(
        cls,
        doc_windows: Sequence[Sequence[str]],
        embedder,
        *,
        cache: EmbeddingCache | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple["DenseIndex", int]:
        """Embed (through the cache) and index every window; also returns how many were embedded."""
        from aqgr.retrieval.dense.cache import embed_with_cache
        from aqgr.retrieval.dense.windows import flatten_windows

        texts, window_doc = flatten_windows(doc_windows)
        vectors, n_embedded = embed_with_cache(embedder, texts, cache, progress=progress)
        return cls.from_vectors(vectors, window_doc, len(doc_windows), embedder.dim), n_embedded

    def scores(self, query_vector: np.ndarray | None) -> np.ndarray:
        """Max window similarity per document (float64); -inf for documents without windows."""
        out = np.full(self.n_docs, -np.inf)
        if query_vector is None or self.index.ntotal == 0:
            return out
        q = np.ascontiguousarray(query_vector, dtype=np.float32).reshape(1, -1)
        sims, ids = self.index.search(q, self.index.ntotal)
        keep = ids[0] >= 0
        np.maximum.at(out, self.window_doc[ids[0][keep]], sims[0][keep].astype(np.float64))
        return out

    def save(self, directory: Path, stem: str = "dense") -> list[str]:
        from aqgr.retrieval.dense.windows import _faiss

        index_name, map_name = f"{stem}.faiss", f"{stem}.windows.npz"
        _faiss().write_index(self.index, str(Path(directory) / index_name))
        np.savez(Path(directory) / map_name, window_doc=self.window_doc, n_docs=np.int64(self.n_docs))
        return [index_name, map_name]

    @classmethod
    def load(cls, directory: Path, stem: str = "dense") -> "DenseIndex":
        from aqgr.retrieval.dense.windows import _faiss

        index = _faiss().read_index(str(Path(directory) / f"{stem}.faiss"))
        with np.load(Path(directory) / f"{stem}.windows.npz", allow_pickle=False) as data:
            return cls(index, data["window_doc"], int(data["n_docs"]))


class ChunkIndex:
    """The chunks of one judgment in FAISS, embedded in windows; `top(query, k)` -> chunks."""

    def __init__(self, chunks: Sequence[Chunk], embedder, *, window_chars: int = 1000):
        from aqgr.retrieval.dense.windows import split_windows

        self.chunks = list(chunks)
        self.embedder = embedder
        self.window_chars = window_chars
        doc_windows = [split_windows(c.text, window_chars) for c in self.chunks]
        self.dense, _ = DenseIndex.build(doc_windows, embedder)

    def top(self, query: str, k: int) -> list[Chunk]:
        """The `k` chunks most similar to `query`, in reading order (ties: earlier chunk first)."""
        from aqgr.retrieval.dense.windows import embed_query

        scores = self.dense.scores(embed_query(query, self.embedder, self.window_chars))
        ranked = sorted(range(len(self.chunks)), key=lambda i: (-scores[i], i))[:k]
        return [self.chunks[i] for i in sorted(ranked)]
