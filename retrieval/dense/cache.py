"""An SQLite cache of embedding vectors keyed by (embedder fingerprint, sha256 of the text).

Rebuilding an index over unchanged summaries embeds nothing: every window's vector is
found here. The fingerprint changes when the model's weights change, so a stale vector is
never served. Standard library only (sqlite3); one file, safe to share between processes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np

from aqgr.foundation.sqlite_cache import SQLiteCache

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    fingerprint TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (fingerprint, text_sha256)
) WITHOUT ROWID
"""
_CHUNK = 500  # keys per SELECT (SQLite's variable limit is 999 on old builds)


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache(SQLiteCache):
    """Vectors on disk (or in memory with path=':memory:'). Use as a context manager or close()."""

    SCHEMA = _SCHEMA
    TABLE = "vectors"

    def get_many(self, fingerprint: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached float32 vector of each text, or None where there is none."""
        keys = [text_sha256(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), _CHUNK):
                chunk = unique[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT text_sha256, dim, vector FROM vectors WHERE fingerprint = ? AND text_sha256 IN ({marks})",
                    [fingerprint, *chunk],
                )
                for key, dim, blob in rows:
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if vec.shape == (dim,):
                        found[key] = vec.copy()
        return [found.get(k) for k in keys]

    def put_many(self, fingerprint: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per text (rows of `vectors`), replacing what was there."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ValueError(f"{len(texts)} texts but vectors of shape {vectors.shape}")
        rows = [
            (fingerprint, text_sha256(t), int(v.shape[0]), np.ascontiguousarray(v).tobytes())
            for t, v in zip(texts, vectors)
        ]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
            self._db.commit()


def embed_with_cache(
    embedder,
    texts: Sequence[str],
    cache: EmbeddingCache | None = None,
    *,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, int]:
    """Vectors for `texts` (float32, one row each) and how many texts were actually embedded.

    Cached vectors are reused; identical texts are embedded once; new vectors are cached
    after each batch (committed: a build killed midway keeps what it embedded). The texts to
    embed go shortest first (`embedder.text_lengths` where it has one, else characters), so
    each batch pads to about its own length: on AILA summary windows a third fewer padded
    word pieces than in document order.
    `progress(done, total)` is called after each batch: `done` of the `total = len(texts)`
    vectors are known (cached ones count from the start).
    """
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    cached = cache.get_many(embedder.fingerprint, texts) if cache is not None else [None] * len(texts)
    todo: dict[str, list[int]] = {}
    for i, (text, vec) in enumerate(zip(texts, cached)):
        if vec is not None and vec.shape == (embedder.dim,):
            out[i] = vec
        else:
            todo.setdefault(text, []).append(i)
    pending = _by_length(embedder, list(todo))
    done = len(texts) - sum(len(rows) for rows in todo.values())
    if progress is not None:
        progress(done, len(texts))
    for start in range(0, len(pending), batch_size):
        batch = pending[start : start + batch_size]
        vectors = np.asarray(embedder.embed(batch), dtype=np.float32)
        for text, vec in zip(batch, vectors):
            out[todo[text]] = vec
        if cache is not None:
            cache.put_many(embedder.fingerprint, batch, vectors)
        done += sum(len(todo[text]) for text in batch)
        if progress is not None:
            progress(done, len(texts))
    return out, len(pending)


def _by_length(embedder, texts: list[str]) -> list[str]:
    """`texts` shortest first by what the embedder reads (ties: the given order)."""
    measure = getattr(embedder, "text_lengths", None)
    lengths = list(measure(texts)) if measure is not None and texts else [len(t) for t in texts]
    return [texts[i] for i in sorted(range(len(texts)), key=lambda i: lengths[i])]
