"""`matrix.v1`: today's `BM25Matrix` (scipy weights, any k1 / b / idf) behind `LexicalEngine`.

The engine keeps every live document's terms (as ids into a vocabulary) and rebuilds the whole
weight matrix from them at each commit, so its scores equal `BM25Matrix.build` over the live
documents exactly (float64; documents as columns in ascending n, which changes no value).
Rebuilding costs a full build per commit: meant for small indexes and for the evaluation's
parameter ablations (k1, b, okapi idf), which tantivy.v1 cannot score.

Files, one generation per commit: `lexical.json` names the current `g<generation>/`, which
holds `matrix.npz` + `matrix.vocab.json` (`BM25Matrix.save`) and `docs.npz` (ns, lengths and
the documents' term ids into the matrix's terms). A commit writes a new generation, then
replaces the manifest (atomic), then removes the old one: a crash leaves the last commit.
`open` loads only the matrix; the documents are read on the first write. The writer lock is
`fcntl.flock` on `.writer.lock`, held from the first add or delete to commit or close; taking it
rereads a generation another writer committed meanwhile. Other processes see a commit when they
open the index again. scipy (bm25.py) is imported when an index is created or opened, not when the
engine registers: looking an engine up (every search does) loads neither.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, NamedTuple

import numpy as np

from aqgr.foundation.errors import IndexLockedError, IndexMismatchError

from ..spec import BM25_B, BM25_EPSILON, BM25_IDF, BM25_K1
from . import (
    LEXICAL_FORMAT,
    as_ns,
    check_n,
    check_params,
    disk_bytes,
    joined_terms,
    lexical_engines,
    new_directory,
    read_manifest,
    tie_key,
    write_manifest,
)

if TYPE_CHECKING:
    from .bm25 import BM25Matrix

NAME = "matrix.v1"
LOCK_FILE = ".writer.lock"


class _Snapshot(NamedTuple):
    """What a search reads, swapped whole at commit: the matrix, column -> n (ascending), tie keys."""

    matrix: BM25Matrix
    ns: np.ndarray
    keys: np.ndarray


def _snapshot(matrix: BM25Matrix, ns: np.ndarray) -> _Snapshot:
    keys = np.fromiter((tie_key(int(n)) for n in ns), dtype=np.uint64, count=len(ns))
    return _Snapshot(matrix, ns, keys)


def _columns(ns: np.ndarray, wanted: list[int]) -> np.ndarray:
    """The columns of those of `wanted` the index holds (`ns` sorted ascending)."""
    arr = np.asarray(wanted, dtype=np.int64)
    cols = np.searchsorted(ns, arr)
    inside = cols < len(ns)
    cols, arr = cols[inside], arr[inside]
    return cols[ns[cols] == arr]


@lexical_engines.register(NAME)
class MatrixEngine:
    """`matrix.v1` (see the module docstring)."""

    name: ClassVar[str] = NAME

    def __init__(self, directory: Path, manifest: dict):
        self.directory = Path(directory)
        self._params = {key: manifest[key] for key in ("k1", "b", "idf", "query_tf", "epsilon")}
        self._generation = manifest["generation"]
        self._snap = self._load_snapshot(self._generation)
        self._write_lock = threading.Lock()
        self._lock_file = None  # the open .writer.lock while writing
        self._docs: dict[int, np.ndarray] | None = None  # committed documents' term ids (while writing)
        self._vocab: dict[str, int] | None = None
        self._pending: dict[int, np.ndarray | None] = {}  # n -> term ids, or None: delete

    # ------------------------------------------------------------------ create / open

    @classmethod
    def create(
        cls,
        directory: Path | str,
        *,
        k1: float = BM25_K1,
        b: float = BM25_B,
        idf: str = BM25_IDF,
        query_tf: str = "raw",
        epsilon: float = BM25_EPSILON,
    ) -> "MatrixEngine":
        from .bm25 import BM25Matrix

        params = check_params(NAME, k1=k1, b=b, idf=idf, query_tf=query_tf, epsilon=epsilon)
        path = new_directory(directory)
        matrix = BM25Matrix.from_term_ids(
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            [],
            k1=params["k1"],
            b=params["b"],
            epsilon=params["epsilon"],
            idf_kind=idf,
            query_tf=query_tf,
        )
        manifest = {"format": LEXICAL_FORMAT, "engine": NAME, **params, "generation": 0}
        _write_generation(path, 0, matrix, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32))
        write_manifest(path, manifest)
        return cls(path, manifest)

    @classmethod
    def open(cls, directory: Path | str) -> "MatrixEngine":
        manifest = read_manifest(directory, NAME)
        try:
            return cls(Path(directory), manifest)
        except (OSError, ValueError, KeyError) as exc:
            raise IndexMismatchError(str(directory), [f"its matrix files cannot be read ({exc})"]) from None

    def _load_snapshot(self, generation: int) -> _Snapshot:
        from .bm25 import BM25Matrix

        where = self.directory / _generation_dir(generation)
        matrix = BM25Matrix.load(where, "matrix")
        with np.load(where / "docs.npz") as docs:
            ns = docs["ns"]
        return _snapshot(matrix, ns)

    @property
    def params(self) -> dict:
        return dict(self._params)

    # ------------------------------------------------------------------ writing

    def _begin_write(self) -> None:
        """Take the writer lock (once per commit), and the committed documents' terms."""
        if self._lock_file is not None:
            return
        import fcntl

        handle = open(self.directory / LOCK_FILE, "a+b")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise IndexLockedError(str(self.directory)) from None
        self._lock_file = handle
        try:
            generation = read_manifest(self.directory, NAME)["generation"]
            if generation != self._generation:  # another writer committed since this was loaded
                self._snap, self._generation, self._docs = self._load_snapshot(generation), generation, None
            if self._docs is None:
                self._docs, self._vocab = self._load_docs()
        except BaseException:
            self._end_write()
            raise

    def _load_docs(self) -> tuple[dict[int, np.ndarray], dict[str, int]]:
        with np.load(self.directory / _generation_dir(self._generation) / "docs.npz") as saved:
            ns, lengths, flat = saved["ns"], saved["lengths"], saved["flat"]
        parts = np.split(flat, np.cumsum(lengths)[:-1]) if len(ns) else []
        return dict(zip(ns.tolist(), parts)), dict(self._snap.matrix.vocab)

    def _end_write(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()  # closing releases the flock
            self._lock_file = None

    def add(self, n: int, terms: Sequence[str]) -> None:
        n = check_n(n)
        joined_terms(terms)
        with self._write_lock:
            self._begin_write()
            vocab = self._vocab
            self._pending[n] = np.fromiter(
                (vocab.setdefault(t, len(vocab)) for t in terms), dtype=np.int32, count=len(terms)
            )

    def delete(self, ns: Iterable[int]) -> None:
        ns = as_ns(list(ns))
        with self._write_lock:
            self._begin_write()
            for n in ns:
                self._pending[n] = None

    def commit(self) -> None:
        with self._write_lock:
            if self._lock_file is None:
                return
            try:
                self._commit()
            finally:
                self._end_write()

    def _commit(self) -> None:
        from .bm25 import BM25Matrix

        docs = self._docs
        for n, ids in self._pending.items():
            if ids is None:
                docs.pop(n, None)
            else:
                docs[n] = ids
        self._pending = {}
        ns = np.array(sorted(docs), dtype=np.int64)
        arrays = [docs[n] for n in ns.tolist()]
        lengths = np.fromiter((len(a) for a in arrays), dtype=np.int64, count=len(arrays))
        flat = np.concatenate(arrays) if arrays else np.zeros(0, np.int32)
        del arrays
        p = self._params
        matrix = BM25Matrix.from_term_ids(
            flat,
            lengths,
            list(self._vocab),
            k1=p["k1"],
            b=p["b"],
            epsilon=p["epsilon"],
            idf_kind=p["idf"],
            query_tf=p["query_tf"],
        )
        # The documents' ids renumbered to the matrix's rows (terms only deleted documents had are gone).
        remap = np.full(len(self._vocab), -1, dtype=np.int32)
        vocab = self._vocab
        for term, row in matrix.vocab.items():
            remap[vocab[term]] = row
        flat = remap[flat]
        generation = self._generation + 1
        _write_generation(self.directory, generation, matrix, ns, lengths, flat)
        write_manifest(self.directory, {"format": LEXICAL_FORMAT, "engine": NAME, **p, "generation": generation})
        for old in self.directory.glob("g[0-9]*"):
            if old.name != _generation_dir(generation):
                shutil.rmtree(old, ignore_errors=True)
        self._generation = generation
        self._snap = _snapshot(matrix, ns)
        self._docs = dict(zip(ns.tolist(), np.split(flat, np.cumsum(lengths)[:-1]) if len(ns) else []))
        self._vocab = dict(matrix.vocab)

    # ------------------------------------------------------------------ reading

    def search(
        self,
        query_terms: Sequence[str],
        k: int,
        *,
        only: Collection[int] | None = None,
        skip: Collection[int] | None = None,
    ) -> list[tuple[int, float]]:
        snap = self._snap  # one commit's state throughout, whatever a concurrent commit does
        if k <= 0 or not len(snap.ns):
            return []
        scores, keep = snap.matrix.scores_and_matches(list(query_terms))
        if only is not None:
            allowed = np.zeros(len(snap.ns), dtype=bool)
            allowed[_columns(snap.ns, as_ns(only))] = True
            keep &= allowed
        if skip is not None:
            keep[_columns(snap.ns, as_ns(skip))] = False
        cols = np.flatnonzero(keep)
        chosen = scores[cols]
        if len(cols) > k:  # the k best, with every document tied with the k-th (resolved by tie key below)
            kth = np.partition(chosen, len(chosen) - k)[len(chosen) - k]
            cols, chosen = cols[chosen >= kth], chosen[chosen >= kth]
        order = np.lexsort((snap.keys[cols], -chosen))[:k]
        return [(int(snap.ns[c]), float(s)) for c, s in zip(cols[order], chosen[order])]

    def score(self, weights: Mapping[str, float], ns: Collection[int]) -> dict[int, float]:
        snap = self._snap
        if not weights or not len(snap.ns):
            return {}
        scores, held = snap.matrix.weighted_scores(weights)
        cols = _columns(snap.ns, as_ns(ns))
        cols = cols[held[cols]]
        return dict(zip(snap.ns[cols].tolist(), scores[cols].tolist()))

    def doc_freq(self, term: str) -> int:
        return self.doc_freqs([term])[0]

    def doc_freqs(self, terms: Sequence[str]) -> list[int]:
        matrix = self._snap.matrix
        rows = [matrix.vocab.get(t) for t in terms]
        return [0 if row is None else int(matrix.df[row]) for row in rows]

    def __len__(self) -> int:
        return len(self._snap.ns)

    def disk_bytes(self) -> int:
        return disk_bytes(self.directory)

    def close(self) -> None:
        with self._write_lock:
            self._pending = {}
            self._docs = self._vocab = None
            self._end_write()

    def __enter__(self) -> "MatrixEngine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def matrix_files(directory: Path | str) -> Path:
    """The folder of the index's last commit: `matrix.npz` + `matrix.vocab.json` (`BM25Matrix.load(folder,
    "matrix")`) and `docs.npz` (ns: column -> n); for tools that read the matrix itself."""
    return Path(directory) / _generation_dir(read_manifest(directory, NAME)["generation"])


def _generation_dir(generation: int) -> str:
    return f"g{generation:06d}"


def _write_generation(
    directory: Path, generation: int, matrix: BM25Matrix, ns: np.ndarray, lengths: np.ndarray, flat: np.ndarray
) -> None:
    """Write one commit's files into a temporary folder, renamed to `g<generation>` when complete."""
    final = directory / _generation_dir(generation)
    tmp = directory / f".{final.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    matrix.save(tmp, "matrix")
    np.savez(tmp / "docs.npz", ns=ns, lengths=lengths, flat=flat.astype(np.int32, copy=False))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
