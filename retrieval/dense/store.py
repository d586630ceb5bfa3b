"""Window vectors of documents addressed by a stable integer n, in immutable segment files.

Documents are numbered n by the caller (never reused: a replaced judgment gets a new n and
its old n is dead). A segment holds whole documents' window vectors, is written once and
never modified; the store is the set of segments the caller names (its manifest). A
document's score is its best window's inner product with the query (vectors are normalised:
cosine), as in `dense.DenseIndex`.

Segment kinds (chosen by size, `ANN_MIN_WINDOWS`):
* exact: the float32 vectors alone, memory-mapped and searched by faiss's exhaustive inner
  product, the kernel of `DenseIndex`'s IndexFlatIP, so its scores equal `DenseIndex.scores`;
* ANN (`ann_kinds`, default `ivf-sq8.v1`, retrieval/dense/ann.py): the float32 vectors on disk
  plus an ANN index (memory-mapped by faiss) that searches 8-bit codes; a document scores its
  best window among those the index returns, by the index's estimate (within ~1e-3).
`only` scores each named document from all its float32 windows: exact. An ANN segment holding
more than `ANN_NAMED_MAX_DOCS` (and 4 k) of them instead searches its ANN index with the other
windows masked out: the admitted documents it proposes, as an unfiltered search proposes them.

Files of segment NAME (all in one directory, named `dense-NNNNNN`): NAME.vectors.npy (float32
(m, dim), rows grouped by n ascending), NAME.n.npy (int64 (m,), the n of each row),
NAME.ann.faiss (ANN kinds only), NAME.json (kind and counts). An ANN segment's float32 rows
are read with plain reads (for `only` and compaction), never kept mapped: a search process
holds the ANN codes it scans, the exact segments and its own buffers
(docs/experiments/2026-12-01-dense-ann.md measures it).

Crash safety: every file is written under a temporary name, fsynced, then renamed; nothing
existing is modified. A segment exists for the store only once the caller names it (after
committing its manifest), so files of a write that never returned are ignored; `orphans()`
lists them (and segments compacted away) for the caller to delete after its commit.
Deterministic: the same calls on the same directory give the same names and the same files.
faiss is imported lazily.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path

import numpy as np

from aqgr.foundation.errors import IndexMismatchError, WriteError

from .ann import DEFAULT_ANN_KIND, ann_kinds
from .windows import _faiss

# Below this many windows a segment is exact, from it on ANN: where the two cost the same.
# Measured at k=1000 documents, one thread, CPU time per search (docs/experiments/
# 2026-12-01-dense-ann.md): exact 6.8 ms at 1e5 windows, 11.8 ms at 2e5, 53 ms at 1e6;
# IVF-SQ8 at its nprobe 8.4 / 8.2 / 16.4 ms (recall@1000 0.994 / 0.98 / 0.97). The lines cross
# near 1.3e5; up to 1.5e5 windows (~45,000 judgments) search stays exact for ~1.1x the time.
ANN_MIN_WINDOWS = 150_000
# needs_compaction(): more small segments than this (each search scans every one) ...
MAX_SMALL_SEGMENTS = 8
# ... or more windows outside the largest segment than this (searched exactly: ~3.5 ms) ...
MAX_SMALL_WINDOWS = 50_000
# ... or more dead windows than this fraction (searched, gathered and skipped for nothing).
MAX_DEAD_FRACTION = 0.2
# A search first fetches the best k x FETCH_PER_DOC windows, then doubles that depth until they
# hold k documents and the k-th document's score is above the last window fetched: the result
# is the same at any depth, a deeper first fetch only costs more (a larger heap: at 1e6
# windows IVF-SQ8 at nprobe 128 took 18.6 ms for 4,000 windows, 14.8 for 2,000). The best
# windows of different documents rarely coincide (4,000 windows held ~3,960 documents).
FETCH_PER_DOC = 2
# AILA summaries have 2-5 windows (3.3 on average): a block of GATHER_ROWS rows holds about
# GATHER_ROWS / WINDOWS_PER_DOC documents.
WINDOWS_PER_DOC = 4
# A filtered search scores the admitted documents of an ANN segment exactly from their rows
# while they are few (at most this many, or 4 k); past that it searches the ANN index with the
# other windows masked out (a faiss IDSelectorBitmap): reading thousands of documents' rows from
# disk costs more than the ANN search, whose cost the mask barely changes.
ANN_NAMED_MAX_DOCS = 2_000
# Rows copied per block when documents are scored directly (about 100 MB at 384 dimensions).
GATHER_ROWS = 65_536
FORMAT = 1
PREFIX = "dense-"
_NAME = re.compile(r"dense-(\d{6})")


class DenseStore:
    """Window vectors of documents by n, over the named segments of `directory`.

    `ann_min_windows` and `ann_kind` choose the kind of new segments (`add_segment`,
    `compact`); `effort` overrides the ANN kind's declared search effort (nprobe, efSearch:
    for measuring). Segments already written keep their kind."""

    def __init__(
        self,
        directory: str | Path,
        dim: int,
        segments: Iterable[str] = (),
        *,
        ann_min_windows: int = ANN_MIN_WINDOWS,
        ann_kind: str = DEFAULT_ANN_KIND,
        effort: int | None = None,
    ):
        self.directory = Path(directory)
        self.dim = int(dim)
        self.ann_min_windows = int(ann_min_windows)
        self.ann_kind = ann_kinds.create(ann_kind)
        self.effort = effort
        self._lock = threading.Lock()
        self._segments: tuple[_Segment, ...] = tuple(self._open(name) for name in dict.fromkeys(segments))

    def close(self) -> None:
        """Let go of the segments' memory-mapped files (a search after this finds no windows)."""
        with self._lock:
            self._segments = ()

    # ------------------------------------------------------------------ what is open

    @property
    def segments(self) -> list[str]:
        """Names of the open segments, oldest first: what the caller records in its manifest."""
        return [seg.name for seg in self._segments]

    @property
    def n_windows(self) -> int:
        return sum(seg.m for seg in self._segments)

    @property
    def n_documents(self) -> int:
        return sum(len(seg.doc_n) for seg in self._segments)

    def files(self) -> list[str]:
        """File names (in `directory`) of every open segment."""
        return [f for seg in self._segments for f in seg.files]

    def disk_bytes(self) -> int:
        return sum((self.directory / f).stat().st_size for f in self.files())

    def orphans(self) -> list[str]:
        """Files in `directory` that look like this store's but belong to no open segment:
        leftovers of a write that never returned, segments compacted away. Delete them only
        after the manifest naming `segments` is committed."""
        keep = set(self.files())
        return sorted(p.name for p in self.directory.glob(f"{PREFIX}*") if _NAME.match(p.name) and p.name not in keep)

    def kinds(self) -> dict[str, str]:
        """The kind of each open segment ('exact' or an ANN kind's name)."""
        return {seg.name: seg.kind for seg in self._segments}

    # ------------------------------------------------------------------ writing

    def add_segment(self, vectors: np.ndarray, window_n: np.ndarray) -> str:
        """Write the windows of new documents as one new segment and open it; returns its name.

        `vectors`: float32 (m, dim), normalised (an array, a memory map or a `RowFile`: read in blocks);
        `window_n`: int64 (m,), the document of each row. Every window of a document comes in
        one call, and an n already in the store is refused (n are never reused). The kind
        follows the size: exact below `ann_min_windows` windows, else the ANN kind."""
        window_n = np.asarray(window_n, dtype=np.int64)
        if vectors.ndim != 2 or vectors.shape != (len(window_n), self.dim):
            raise ValueError(f"vectors of shape {vectors.shape} for {len(window_n)} windows of dimension {self.dim}")
        if not len(window_n):
            raise ValueError("no windows to add: a segment holds at least one document")
        if window_n.min() < 0:
            raise ValueError("document numbers n must be non-negative")
        order = np.argsort(window_n, kind="stable")
        doc_n = np.unique(window_n)
        for seg in self._segments:
            clash = doc_n[np.isin(doc_n, seg.doc_n, assume_unique=True)]
            if len(clash):
                raise ValueError(
                    f"documents {clash[:5].tolist()} are already in segment {seg.name}: "
                    "a new version of a document needs a new n"
                )
        in_order = bool(np.all(order == np.arange(len(order))))
        blocks = (
            np.asarray(vectors[a : a + GATHER_ROWS] if in_order else vectors[order[a : a + GATHER_ROWS]])
            for a in range(0, len(order), GATHER_ROWS)
        )
        seg = self._write(blocks, window_n[order])
        with self._lock:
            self._segments = (*self._segments, seg)
        return seg.name

    def compact(self, live: Callable[[np.ndarray], np.ndarray]) -> list[str]:
        """Merge every open segment into one new segment of the live documents; returns the new
        segments' names (none when nothing is live) and opens them in place of the old ones.

        `live(n)`: a boolean mask over an int64 array of n. The kind follows the live windows'
        number (exact or ANN, trained afresh with a fixed seed). The old segments' files are
        left for the caller to delete once its manifest names the new ones (`orphans()`)."""
        segs = self._segments
        live_docs = [np.flatnonzero(np.asarray(live(np.asarray(seg.doc_n)), dtype=bool)) for seg in segs]
        total = sum(int(seg.doc_len[docs].sum()) for seg, docs in zip(segs, live_docs))
        new: tuple[_Segment, ...] = ()
        if total:
            # Every live document once, by n ascending: which segment, which position there.
            owner = np.concatenate([np.full(len(docs), i) for i, docs in enumerate(live_docs)])
            where = np.concatenate(live_docs)
            doc_n = np.concatenate([seg.doc_n[docs] for seg, docs in zip(segs, live_docs)])
            order = np.argsort(doc_n, kind="stable")
            owner, where, doc_n = owner[order], where[order], doc_n[order]
            lengths = np.concatenate([seg.doc_len[docs] for seg, docs in zip(segs, live_docs)])[order]
            new = (self._write(_merged_blocks(segs, owner, where, lengths, self.dim), np.repeat(doc_n, lengths)),)
        with self._lock:
            self._segments = new
        return [seg.name for seg in new]

    def needs_compaction(self, live: Callable[[np.ndarray], np.ndarray] | None = None) -> bool:
        """Whether `compact` is due: too many small segments or small windows outside the
        largest segment, an exact largest segment grown past `ann_min_windows`, or (with
        `live`) more than MAX_DEAD_FRACTION of the windows dead."""
        if not self._segments:
            return False
        largest = max(self._segments, key=lambda seg: seg.m)
        small = [seg for seg in self._segments if seg is not largest]
        if len(small) > MAX_SMALL_SEGMENTS or sum(seg.m for seg in small) > MAX_SMALL_WINDOWS:
            return True
        if largest.kind == "exact" and self.n_windows >= self.ann_min_windows:
            return True
        if live is not None:
            dead = sum(
                int(seg.doc_len[~np.asarray(live(np.asarray(seg.doc_n)), dtype=bool)].sum()) for seg in self._segments
            )
            return dead > MAX_DEAD_FRACTION * self.n_windows
        return False

    # ------------------------------------------------------------------ searching

    def search(
        self,
        vector: np.ndarray | None,
        k: int,
        *,
        only: Collection[int] | None = None,
        skip: Collection[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The top `k` documents by their best window's inner product with `vector`, as (n, score)
        best first (ties: a stable hash of n, never n's order).

        `only`: score just these documents, each exactly from its windows (however few match);
        `skip`: documents never returned (how dead n are hidden). Either may be any collection of
        ints; a sorted int64 array without repeats costs least (used as it is). Exact segments return the exact top k; ANN ones
        the documents their index proposes (recall measured in the experiment report), scored
        exactly."""
        if vector is None or k <= 0 or not self._segments:
            return []
        q = np.ascontiguousarray(vector, dtype=np.float32).reshape(1, -1)
        if q.shape[1] != self.dim:
            raise ValueError(f"query vector of dimension {q.shape[1]}, the store holds {self.dim}")
        skip_n = _n_array(skip) if skip is not None else None
        found = []
        if only is not None:
            wanted = _n_array(only)
            if skip_n is not None:
                wanted = wanted[~_member(wanted, skip_n)]
            for seg in self._segments:
                docs = seg.positions(wanted)
                if seg.ann is not None and len(docs) > max(ANN_NAMED_MAX_DOCS, 4 * k):
                    found.append(seg.top(q, k, None, self.effort, admitted=docs))
                else:
                    found.append((seg.doc_n[docs], seg.score_docs(q, docs)))
        else:
            for seg in self._segments:
                found.append(seg.top(q, k, skip_n, self.effort))
        n = np.concatenate([f[0] for f in found]).astype(np.int64)
        scores = np.concatenate([f[1] for f in found]).astype(np.float64)
        order = np.lexsort((_mix(n), -scores))[:k]
        return [(int(a), float(b)) for a, b in zip(n[order], scores[order])]

    # ------------------------------------------------------------------ files

    def _next_name(self) -> str:
        used = [int(m.group(1)) for p in self.directory.glob(f"{PREFIX}*") if (m := _NAME.match(p.name))]
        used += [int(_NAME.match(seg.name).group(1)) for seg in self._segments]
        return f"{PREFIX}{max(used, default=0) + 1:06d}"

    def _write(self, blocks: Iterable[np.ndarray], window_n: np.ndarray) -> "_Segment":
        """Write rows (from `blocks`, grouped by `window_n` ascending) as a new segment, kind by size."""
        self.directory.mkdir(parents=True, exist_ok=True)
        name, m = self._next_name(), len(window_n)
        kind = self.ann_kind.name if m >= self.ann_min_windows else "exact"
        final = {"vectors": f"{name}.vectors.npy", "n": f"{name}.n.npy", "meta": f"{name}.json"}
        if kind != "exact":
            final["ann"] = f"{name}.ann.faiss"
        tmp = {key: self.directory / f"{f}.tmp" for key, f in final.items()}
        try:
            with open(tmp["vectors"], "wb") as fh:  # plain writes: no page of it stays mapped here
                np.lib.format.write_array_header_1_0(
                    fh, {"descr": "<f4", "fortran_order": False, "shape": (m, self.dim)}
                )
                at = 0
                for block in blocks:
                    block = np.ascontiguousarray(block, dtype="<f4")
                    if block.ndim != 2 or block.shape[1] != self.dim or not np.all(np.isfinite(block)):
                        raise ValueError(f"window vectors must be finite, of dimension {self.dim}")
                    fh.write(memoryview(block).cast("B"))
                    at += len(block)
            if at != m:
                raise ValueError(f"{at} vectors for {m} windows")
            with open(tmp["n"], "wb") as fh:
                np.save(fh, np.ascontiguousarray(window_n, dtype=np.int64))
            meta = {
                "format": FORMAT,
                "kind": kind,
                "dim": self.dim,
                "n_windows": m,
                "n_documents": int(np.count_nonzero(np.diff(window_n)) + 1),
                "files": sorted(final.values()),
            }
            if kind != "exact":
                index, meta["ann"] = self.ann_kind.build(RowFile(tmp["vectors"]))
                _faiss().write_index(index, str(tmp["ann"]))
                del index
            tmp["meta"].write_text(json.dumps(meta, indent=1, sort_keys=True))
            for path in tmp.values():
                _fsync(path)
            for key in sorted(tmp, key=lambda key: key == "meta"):  # the meta file last
                os.replace(tmp[key], self.directory / final[key])
            _fsync(self.directory)
        except OSError as exc:
            _remove(tmp.values())
            raise WriteError(str(self.directory / name), exc) from exc
        except BaseException:
            _remove(tmp.values())
            raise
        return self._open(name)

    def _open(self, name: str) -> "_Segment":
        if not _NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a dense segment name (dense-NNNNNN)")
        where = str(self.directory)
        try:
            meta = json.loads((self.directory / f"{name}.json").read_text())
            path = self.directory / f"{name}.vectors.npy"
            # Exact segments are scanned whole: memory-mapped. ANN segments' vectors are read only
            # for `only` and compaction, by plain reads, so that no page of them stays mapped here.
            vectors = np.load(path, mmap_mode="r") if meta.get("kind") == "exact" else RowFile(path)
            window_n = np.load(self.directory / f"{name}.n.npy", mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise IndexMismatchError(where, [f"dense segment {name} cannot be read ({exc})"]) from None
        problems = []
        if meta.get("format") != FORMAT:
            problems.append(f"dense segment {name} has format {meta.get('format')}, this version reads {FORMAT}")
        if vectors.shape != (meta.get("n_windows"), self.dim) or vectors.dtype != np.float32:
            problems.append(
                f"dense segment {name} holds {vectors.dtype} vectors of shape {vectors.shape}, "
                f"expected {meta.get('n_windows')} x {self.dim} float32"
            )
        if window_n.shape != (vectors.shape[0],):
            problems.append(f"dense segment {name} maps {window_n.shape[0]} windows for {vectors.shape[0]} vectors")
        if problems:
            raise IndexMismatchError(where, problems)
        ann = kind = None
        if meta["kind"] != "exact":
            kind = ann_kinds.create(meta["kind"])  # an unknown kind lists the known ones
            try:
                ann = _faiss().read_index(str(self.directory / f"{name}.ann.faiss"), kind.io_flags())
            except RuntimeError as exc:
                raise IndexMismatchError(
                    where, [f"dense segment {name}: its ANN index cannot be read ({exc})"]
                ) from None
        return _Segment(name, meta, vectors, window_n, ann, kind)


class _Segment:
    """One open segment: memory-mapped rows grouped by n, the documents' row ranges, an ANN index."""

    def __init__(self, name: str, meta: dict, vectors: np.ndarray, window_n: np.ndarray, ann, ann_kind):
        self.name, self.kind, self.files = name, meta["kind"], list(meta["files"])
        self.ann_params = meta.get("ann", {})
        self.vectors, self.window_n, self.ann, self.ann_kind = vectors, window_n, ann, ann_kind
        self.m = len(window_n)
        n = np.asarray(window_n)
        if self.m and np.any(n[1:] < n[:-1]):
            raise IndexMismatchError(name, [f"dense segment {name}: rows are not grouped by document"])
        starts = np.concatenate([[0], np.flatnonzero(n[1:] != n[:-1]) + 1]) if self.m else np.zeros(0, np.int64)
        self.doc_n = n[starts] if self.m else np.zeros(0, np.int64)
        self.doc_start = starts.astype(np.int64)
        self.doc_len = np.diff(np.append(self.doc_start, self.m)).astype(np.int64)

    def positions(self, n: np.ndarray) -> np.ndarray:
        """Positions (in `doc_n`) of those of the documents `n` held here."""
        idx = np.searchsorted(self.doc_n, n)
        inside = idx < len(self.doc_n)
        idx, n = idx[inside], n[inside]
        return idx[self.doc_n[idx] == n]

    def rows(self, docs: np.ndarray) -> np.ndarray:
        """Row numbers of the windows of documents at positions `docs`, document by document."""
        return _ranges(self.doc_start[docs], self.doc_len[docs])

    def score_docs(self, q: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """Best-window inner product of each document at positions `docs`, from its float32 rows."""
        if not len(docs):
            return np.zeros(0, dtype=np.float32)
        out = np.empty(len(docs), dtype=np.float32)
        faiss, step = _faiss(), max(1, GATHER_ROWS // WINDOWS_PER_DOC)
        for a in range(0, len(docs), step):
            part = docs[a : a + step]
            block = np.ascontiguousarray(self.vectors[self.rows(part)])
            sims = np.empty(len(block), dtype=np.float32)
            faiss.fvec_inner_products_ny(
                faiss.swig_ptr(sims), faiss.swig_ptr(q[0]), faiss.swig_ptr(block), q.shape[1], len(block)
            )
            out[a : a + len(part)] = np.maximum.reduceat(sims, np.cumsum(self.doc_len[part]) - self.doc_len[part])
        return out

    def top(
        self, q: np.ndarray, k: int, skip: np.ndarray | None, effort: int | None, admitted: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(n, score) of at least the top `k` documents not in `skip` (all of them if fewer);
        `admitted` (ANN segments): only the documents at these positions, masked in the ANN search."""
        if self.ann is None:
            return self._exact_top(q, k, skip)
        if admitted is None:
            return self._ann_top(q, k, skip, self.ann_kind, effort)
        rows = np.zeros(self.m, dtype=bool)
        rows[self.rows(admitted)] = True
        bits = np.packbits(rows, bitorder="little")  # kept alive here: the selector points into it
        faiss = _faiss()
        return self._ann_top(q, k, skip, self.ann_kind, effort, faiss.IDSelectorBitmap(self.m, faiss.swig_ptr(bits)))

    def _exact_top(self, q, k, skip):
        faiss = _faiss()
        depth = min(self.m, k * FETCH_PER_DOC)
        while True:
            sims, rows = faiss.knn(q, self.vectors, depth, faiss.METRIC_INNER_PRODUCT)
            n, first = np.unique(
                np.asarray(self.window_n[rows[0]]), return_index=True
            )  # first: the best fetched window
            scores = sims[0][first]
            if skip is not None:
                keep = ~_member(n, skip)
                n, scores = n[keep], scores[keep]
            if depth == self.m:
                return n, scores
            # Exact once k documents are found and no unfetched window can tie the k-th.
            if len(n) >= k and sims[0][-1] < np.partition(scores, len(scores) - k)[len(scores) - k]:
                return n, scores
            depth = min(self.m, depth * 2)

    def _ann_top(self, q, k, skip, ann_kind, effort, sel=None):
        """The ANN's documents: each scored by its best window among those the index returned,
        by the index's own estimate (8-bit codes: within ~1e-3 of the exact inner product).
        Rescoring from the float32 rows would read them at random, which keeps them resident:
        measured at 1e6 windows, it raised recall@1000 by 0.004 for 1.6x the time."""
        depth, scale = min(self.m, k * FETCH_PER_DOC), 1
        while True:
            sims, rows = ann_kind.search(self.ann, q, depth, scale, effort, sel)
            found = rows[0] >= 0
            n, first = np.unique(np.asarray(self.window_n[rows[0][found]]), return_index=True)  # best first
            scores = sims[0][found][first]
            if skip is not None:
                keep = ~_member(n, skip)
                n, scores = n[keep], scores[keep]
            if len(n) >= k or found.sum() == self.m:
                return n, scores
            widen = ann_kind.can_widen(self.ann, scale, effort)
            if widen and (found.sum() < depth or depth == self.m):
                scale *= 2  # the probed part of the index is exhausted: probe more
            elif depth < self.m:
                depth = min(self.m, depth * 2)
            else:
                return n, scores


class RowFile:
    """The rows of a float32 .npy matrix, read with plain reads (pread) rather than a memory map,
    so that reading them leaves no page mapped in the process (a memory map's faults map 64 KB
    around each row read, which a random access pattern turns into the whole file)."""

    ndim = 2

    def __init__(self, path: Path):
        self.path = Path(path)
        with open(self.path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(fh)
            self.offset = fh.tell()
        if fortran or len(shape) != 2:
            raise ValueError(f"{self.path.name}: not a C-ordered matrix")
        self.shape, self.dtype = tuple(shape), dtype
        self.row_bytes = shape[1] * dtype.itemsize

    @classmethod
    def headerless(cls, path: Path, dim: int) -> "RowFile":
        """The rows of a file of float32 rows of `dim` written back to back, without a header (a
        writer's spool, whose row count is known only at its end)."""
        self = cls.__new__(cls)
        self.path, self.offset, self.dtype = Path(path), 0, np.dtype("<f4")
        self.row_bytes = dim * self.dtype.itemsize
        size = self.path.stat().st_size
        if size % self.row_bytes:
            raise ValueError(f"{self.path.name}: {size} bytes is not a whole number of rows of {dim} float32")
        self.shape = (size // self.row_bytes, dim)
        return self

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows) -> np.ndarray:
        """Rows by a slice (one read) or an array of row numbers (one read per run of consecutive rows)."""
        if isinstance(rows, slice):
            start, stop, step = rows.indices(self.shape[0])
            if step != 1:
                raise ValueError("row slices must be contiguous")
            rows = np.arange(start, stop)
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((len(rows), self.shape[1]), dtype=self.dtype)
        if not len(rows):
            return out
        breaks = np.flatnonzero(np.diff(rows) != 1) + 1
        starts, ends = np.concatenate([[0], breaks]), np.concatenate([breaks, [len(rows)]])
        view = memoryview(out).cast("B")
        fd = os.open(self.path, os.O_RDONLY)
        try:
            for a, b in zip(starts.tolist(), ends.tolist()):
                want, at = (b - a) * self.row_bytes, self.offset + int(rows[a]) * self.row_bytes
                got = os.preadv(fd, [view[a * self.row_bytes : b * self.row_bytes]], at)
                if got != want:
                    raise OSError(f"{self.path}: short read ({got} of {want} bytes)")
        finally:
            os.close(fd)
        return out


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The integers of the ranges [start, start + length), range after range."""
    return np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))


def _merged_blocks(segs, owner: np.ndarray, where: np.ndarray, lengths: np.ndarray, dim: int):
    """Rows of the documents (segment `owner`, position `where`) in the order given, in blocks."""
    step = max(1, GATHER_ROWS // WINDOWS_PER_DOC)
    for a in range(0, len(owner), step):
        own, pos, lens = owner[a : a + step], where[a : a + step], lengths[a : a + step]
        block = np.empty((int(lens.sum()), dim), dtype=np.float32)
        at = np.cumsum(lens) - lens
        for i in np.unique(own):
            mine = own == i
            block[_ranges(at[mine], lens[mine])] = segs[i].vectors[segs[i].rows(pos[mine])]
        yield block


def _n_array(values: Collection[int] | np.ndarray) -> np.ndarray:
    """`values` as a sorted int64 array without repeats (an array already so is used as it is)."""
    if isinstance(values, np.ndarray):
        values = values.astype(np.int64, copy=False).ravel()
        return values if len(values) < 2 or bool(np.all(values[1:] > values[:-1])) else np.unique(values)
    return np.unique(np.fromiter(values, dtype=np.int64, count=len(values)))


def _member(n: np.ndarray, sorted_n: np.ndarray) -> np.ndarray:
    """Mask of the `n` found in `sorted_n` (binary search: cheap when `sorted_n` is large)."""
    if not len(sorted_n):
        return np.zeros(len(n), dtype=bool)
    idx = np.searchsorted(sorted_n, n).clip(max=len(sorted_n) - 1)
    return sorted_n[idx] == n


def _mix(n: np.ndarray) -> np.ndarray:
    """A stable hash of each n (splitmix64), the tie-break: order-free, the same in every process."""
    z = n.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(paths: Sequence[Path] | Iterable[Path]) -> None:
    for path in paths:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
