"""ANN index kinds for large dense segments (retrieval/dense/store.py), registered by versioned name.

An ANN index only proposes windows: the store scores each proposed document exactly from its
float32 windows. A kind builds its faiss index over a segment's (memory-mapped) vectors and
searches it for `depth` windows; `scale` (1, 2, 4, ...) widens the search when the probed
part is exhausted before enough documents are found.

* `ivf-sq8.v1` (default, and the one kind a saved index uses): IndexIVFScalarQuantizer, 8-bit
  codes (384 bytes a window), spherical k-means over a seeded sample, inverted lists
  memory-mapped (faiss IO_FLAG_MMAP).

HNSW (IndexHNSWFlat / IndexHNSWSQ) was measured against it and not chosen (slower at depth
1000, larger, non-deterministic multi-threaded build, no removal;
docs/experiments/2026-12-01-dense-ann.md has the figures and the reasons): those kinds live in
the benchmark that compares them (eval/bench/dense.py), which registers them here for its runs.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from aqgr.foundation.registry import Registry

from .windows import _faiss

DEFAULT_ANN_KIND = "ivf-sq8.v1"

# IVF: 2^round(log2(sqrt(m))) lists (at most m / 39) (256 at 1e5 windows, 1024 at 1e6, 2048 at 3e6): lists of
# ~sqrt(m) windows, so that training stays ~1 min at 3e6 windows on two cores.
# nprobe: lists probed per search. Measured recall@1000 documents against exact (MiniLM-like
# windows, docs/experiments/2026-12-01-dense-ann.md) and CPU time per search (one thread, a
# busy machine): 0.98 at 2e5 windows (512 lists, 8 ms), 0.97 at 1e6 (1024, 16 ms), 0.94 at 3e6
# (2048, 24 ms); 256 gives 0.99 / 0.99 / 0.98 for 12 / 27 / 41 ms. A case search runs ~12
# retrievals: 128 keeps them near 300 ms of one core at 3e6 windows (`effort` asks for more).
IVF_NPROBE = 128
IVF_TRAIN_PER_LIST = 64  # k-means sample: 64 windows a list ...
IVF_MIN_PER_LIST = 39  # ... and never fewer lists than 39 windows each (faiss's minimum; it warns below)
IVF_NITER = 20
SEED = 1234  # k-means and sample seed: the same vectors give the same index
ADD_ROWS = 65_536  # rows added per faiss call when building (bounded memory over a memory map)


class AnnKind(Protocol):
    name: str

    def build(self, vectors: np.ndarray) -> tuple[object, dict]:
        """A faiss index over `vectors` (rows = ids), and the parameters to record."""
        ...

    def search(
        self, index, q: np.ndarray, depth: int, scale: int, effort: int | None, sel=None
    ) -> tuple[np.ndarray, np.ndarray]:
        """faiss (distances, ids) of about the `depth` best windows; ids -1 where none; `sel`, a
        faiss IDSelector: only the windows it selects."""
        ...

    def can_widen(self, index, scale: int, effort: int | None) -> bool: ...

    def io_flags(self) -> int: ...


ann_kinds: Registry[AnnKind] = Registry("dense ANN kind")


def sample_rows(vectors, size: int, seed: int) -> np.ndarray:
    """A seeded sample of rows (sorted: read forward). `vectors`: anything sliced by rows."""
    if size >= len(vectors):
        return np.ascontiguousarray(vectors[0 : len(vectors)], dtype=np.float32)
    rows = np.sort(np.random.default_rng(seed).choice(len(vectors), size=size, replace=False))
    return np.ascontiguousarray(vectors[rows], dtype=np.float32)


def add_rows(index, vectors: np.ndarray) -> None:
    for a in range(0, len(vectors), ADD_ROWS):
        index.add(np.ascontiguousarray(vectors[a : a + ADD_ROWS], dtype=np.float32))


class IvfSq8:
    name = "ivf-sq8.v1"

    def __init__(self, nprobe: int = IVF_NPROBE):
        self.nprobe = nprobe

    @staticmethod
    def nlist(m: int) -> int:
        return max(1, min(2 ** round(math.log2(math.sqrt(max(m, 1)))), m // IVF_MIN_PER_LIST))

    def build(self, vectors):
        faiss = _faiss()
        m, dim = vectors.shape
        nlist = self.nlist(m)
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFScalarQuantizer(
            quantizer, dim, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
        index.cp.seed, index.cp.niter, index.cp.spherical = SEED, IVF_NITER, True
        sample = sample_rows(vectors, nlist * IVF_TRAIN_PER_LIST, SEED)
        index.train(sample)
        del sample
        add_rows(index, vectors)
        return index, {
            "nlist": nlist,
            "train_rows": min(m, nlist * IVF_TRAIN_PER_LIST),
            "seed": SEED,
            "niter": IVF_NITER,
        }

    def _nprobe(self, index, scale, effort):
        return min(index.nlist, (effort or self.nprobe) * scale)

    def search(self, index, q, depth, scale, effort, sel=None):
        params = _faiss().SearchParametersIVF(nprobe=self._nprobe(index, scale, effort))
        if sel is not None:
            params.sel = sel
        return index.search(q, depth, params=params)

    def can_widen(self, index, scale, effort):
        return self._nprobe(index, scale, effort) < index.nlist

    def io_flags(self):
        return _faiss().IO_FLAG_MMAP  # inverted lists memory-mapped (read-only), not read


@ann_kinds.register("ivf-sq8.v1")
def _ivf_sq8(nprobe: int = IVF_NPROBE) -> AnnKind:
    return IvfSq8(nprobe)
