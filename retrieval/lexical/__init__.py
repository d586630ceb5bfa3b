"""Lexical (BM25) engines: on-disk indexes of term lists, addressed by a caller-chosen integer `n`.

An engine indexes documents given as term lists (already tokenised: `words.v2` terms by default, plus word
pairs for full texts) under a stable integer `n` the caller chooses (the index registry's
document number), and answers a query's top k by BM25. Documents change in place: `add`
(replacing whatever document `n` was) and `delete` are buffered, `commit` makes them durable
and visible to searches. Every engine has the one interface `LexicalEngine`; registry
`lexical_engines` (versioned names):

  tantivy.v1  (default) tantivy, a Rust Lucene-class engine: segments on disk, memory-mapped,
              block-max WAND top-k; BM25 with k1 1.2, b 0.75 and Lucene idf only (fixed in
              tantivy; other parameters are refused). retrieval/lexical/tantivy.py
  matrix.v1   `retrieval.lexical.bm25.BM25Matrix` (a scipy weight matrix, any k1 / b / idf), rebuilt
              from the documents' terms at each commit: small indexes and parameter
              ablations; its scores equal BM25Matrix's exactly. retrieval/lexical/matrix.py

Scores: sum over the query's distinct terms t of w(t) * BM25(t, d), w(t) the query count of t
("raw") or 1 + ln(count) ("log"), as `BM25Matrix.scores` does. A search returns the documents
sharing at least one term with the query, best first; ties (equal scores) are ordered by a
stable hash of `n` (`tie_key`), never by `n` or insertion order, and the k-th place's ties are
resolved by that hash too. `only` / `skip` restrict a search inside the engine, so k results
come back however small `only` is.

A directory holds one index: `lexical.json` (format, engine, parameters) beside the engine's
files. One writer at a time (`IndexLockedError` for a second, in this process or another);
searches take no lock and may run from several threads at once; writes come from one thread.

Importing this module does not load tantivy (retrieval/lexical/tantivy.py imports it when an index is opened).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import operator
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from aqgr.foundation.errors import IndexMismatchError, NoIndexError
from aqgr.foundation.files import atomic_file
from aqgr.foundation.registry import Registry

from ..spec import BM25_B, BM25_EPSILON, BM25_IDF, BM25_K1, IDF_KINDS, QUERY_TF_KINDS
from ..types import order_by_score

MANIFEST = "lexical.json"
# Bumped when an engine's files change shape: an index of another format is refused (rebuild).
LEXICAL_FORMAT = 1
# The largest n (document numbers are unsigned 63-bit integers: numpy int64 and tantivy u64 both hold them).
MAX_N = 2**63 - 1

MATRIX_MODULE = "aqgr.retrieval.lexical.matrix"
TANTIVY_MODULE = "aqgr.retrieval.lexical.tantivy"
DEFAULT_LEXICAL = "tantivy.v1"


@runtime_checkable
class LexicalEngine(Protocol):
    """A BM25 index in one directory over term lists addressed by `n` (see the module docstring)."""

    name: ClassVar[str]

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
    ) -> "LexicalEngine":
        """A new empty index in `directory` (created; refused if it holds anything)."""
        ...

    @classmethod
    def open(cls, directory: Path | str) -> "LexicalEngine":
        """The index in `directory` (`NoIndexError` if none; `IndexMismatchError` if another engine's or format's)."""
        ...

    @property
    def params(self) -> dict:
        """k1, b, idf, query_tf, epsilon: what the scores depend on."""
        ...

    def add(self, n: int, terms: Sequence[str]) -> None:
        """Index document `n` (replacing the document `n` was); visible after `commit`."""
        ...

    def delete(self, ns: Iterable[int]) -> None:
        """Remove documents (unknown ones ignored); visible after `commit`."""
        ...

    def commit(self) -> None:
        """Make the buffered adds and deletes durable and visible to searches; releases the writer."""
        ...

    def search(
        self,
        query_terms: Sequence[str],
        k: int,
        *,
        only: Collection[int] | None = None,
        skip: Collection[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The top k (n, score) sharing a term with the query, best first; `only` / `skip`: which n may be returned."""
        ...

    def score(self, weights: Mapping[str, float], ns: Collection[int]) -> dict[int, float]:
        """sum over t of weights[t] * BM25(t, d) for each document d of `ns` holding at least one
        of the terms (the others are left out: they score 0); `weights` are any positive
        numbers, not only query counts. To re-score known documents for more query terms."""
        ...

    def doc_freq(self, term: str) -> int:
        """How many documents hold `term` (as the scores count them)."""
        ...

    def doc_freqs(self, terms: Sequence[str]) -> list[int]:
        """`doc_freq` of each of `terms`, in order (one look at the index for them all)."""
        ...

    def __len__(self) -> int:
        """Live (committed, not deleted) documents."""
        ...

    def disk_bytes(self) -> int:
        """Bytes of the index's files on disk."""
        ...

    def close(self) -> None:
        """Release files and the writer; uncommitted changes are dropped."""
        ...


lexical_engines: Registry[type[LexicalEngine]] = Registry("lexical engine", modules=(MATRIX_MODULE, TANTIVY_MODULE))


def create_lexical(directory: Path | str, engine: str = DEFAULT_LEXICAL, **params) -> LexicalEngine:
    """A new empty index of `engine` (a `lexical_engines` name) in `directory`; params as `LexicalEngine.create`."""
    return lexical_engines.get(engine).create(directory, **params)


def open_lexical(directory: Path | str) -> LexicalEngine:
    """The index in `directory`, opened with the engine that made it (named in its manifest)."""
    manifest = read_manifest(directory)
    return lexical_engines.get(manifest["engine"]).open(directory)


# ------------------------------------------------------------------ shared by the engines


def check_params(engine: str, *, k1: float, b: float, idf: str, query_tf: str, epsilon: float) -> dict:
    """The parameters as a manifest records them; ValueError naming the bad one."""
    if idf not in IDF_KINDS:
        raise ValueError(f"{engine}: unknown idf {idf!r}; choose one of {', '.join(IDF_KINDS)}")
    if query_tf not in QUERY_TF_KINDS:
        raise ValueError(f"{engine}: unknown query_tf {query_tf!r}; choose one of {', '.join(QUERY_TF_KINDS)}")
    if not (math.isfinite(k1) and k1 >= 0 and math.isfinite(b) and 0 <= b <= 1):
        raise ValueError(f"{engine}: BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
    return {"k1": float(k1), "b": float(b), "idf": idf, "query_tf": query_tf, "epsilon": float(epsilon)}


def check_n(n: int) -> int:
    """`n` as an int in 0..MAX_N (any integer type; a bool or a float is refused)."""
    try:
        value = None if isinstance(n, bool) else operator.index(n)
    except TypeError:
        value = None
    if value is None or not 0 <= value <= MAX_N:
        raise ValueError(f"a document number must be an integer from 0 to 2**63 - 1, got {n!r}")
    return value


# whitespace other than " " (str.split's and tantivy's); a printable text has none (str.isprintable:
# every separator but " " and every control character is unprintable), and is checked faster
_NOT_A_SPACE_WHITESPACE = re.compile(r"[^\S ]")


def joined_terms(terms: Sequence[str]) -> str:
    """The terms joined by spaces; ValueError if one is empty or holds whitespace (it would split).
    Checked by scans of the joined text in C (a full text's terms are tens of thousands)."""
    text = " ".join(terms)
    if terms and (
        not text
        or text.count(" ") != len(terms) - 1
        or "  " in text
        or text[:1] == " "
        or text[-1:] == " "
        or (not text.isprintable() and _NOT_A_SPACE_WHITESPACE.search(text) is not None)
    ):
        bad = next((t for t in terms if t.split() != [t]), "?")
        raise ValueError(f"a term must be a non-empty string without whitespace, got {bad!r}")
    return text


def query_weights(query_terms: Sequence[str], query_tf: str) -> dict[str, float]:
    """Each distinct query term's weight: its count ("raw") or 1 + ln(count) ("log"), as BM25Matrix.scores."""
    counts = Counter(query_terms)
    if query_tf == "log":
        return {t: 1.0 + math.log(c) for t, c in counts.items()}
    return {t: float(c) for t, c in counts.items()}


@functools.lru_cache(maxsize=1 << 18)  # a search ranks the same documents again and again
def tie_key(n: int) -> int:
    """The tie-break of equal scores: a stable hash of `n` (blake2b, 8 bytes, as an unsigned int);
    never `n` itself, which may follow insertion or file order."""
    return int.from_bytes(hashlib.blake2b(str(n).encode("ascii"), digest_size=8).digest(), "big")


def best(hits: Iterable[tuple[int, float]], k: int) -> list[tuple[int, float]]:
    """The first k of `hits` by -score, then `tie_key` (hits tied on both keep their order). Only
    hits tied on a score among the first k are given a tie key."""
    hits = list(hits)
    if k <= 0 or not hits:
        return []
    ns = np.fromiter(map(operator.itemgetter(0), hits), dtype=np.int64, count=len(hits))
    scores = np.fromiter(map(operator.itemgetter(1), hits), dtype=np.float64, count=len(hits))
    return best_of(ns, scores, k)


def best_of(ns: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """`best` of hits given as arrays: document numbers (int64) and their scores (float64)."""
    if k <= 0 or not len(ns):
        return []
    order = order_by_score(scores, k, lambda i: tie_key(int(ns[i])))
    return list(zip(ns[order].tolist(), scores[order].tolist()))


def as_ns(ns: Collection[int] | None) -> list[int] | None:
    """A collection of document numbers as a list of checked ints (None stays None); a numpy
    integer array is checked as a whole."""
    if isinstance(ns, np.ndarray) and ns.dtype.kind in "iu" and ns.ndim == 1:
        if len(ns) and (int(ns.min()) < 0 or int(ns.max()) > MAX_N):
            raise ValueError(
                f"a document number must be an integer from 0 to 2**63 - 1, got {int(ns.min())} .. {int(ns.max())}"
            )
        return ns.tolist()
    return None if ns is None else [check_n(n) for n in ns]


def new_directory(directory: Path | str) -> Path:
    """`directory`, created if absent; refused (FileExistsError) if it holds anything."""
    path = Path(directory)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise FileExistsError(
            f"{path} is not an empty directory: create a lexical index in a new or empty one, or open the index there"
        )
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_manifest(directory: Path | str, manifest: dict) -> None:
    """Write `lexical.json` atomically (a temporary file renamed into place)."""
    with atomic_file(Path(directory) / MANIFEST) as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


def read_manifest(directory: Path | str, engine: str | None = None) -> dict:
    """The manifest of the index in `directory`, checked to be of this format (and `engine`, if given)."""
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise NoIndexError(f"{directory} (no lexical index: {MANIFEST} is missing)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise IndexMismatchError(str(directory), [f"{MANIFEST} is unreadable ({exc})"]) from None
    differences = []
    if manifest.get("format") != LEXICAL_FORMAT:
        differences.append(f"lexical index format {manifest.get('format')!r}, not {LEXICAL_FORMAT}")
    if engine is not None and manifest.get("engine") != engine:
        differences.append(
            f"made by lexical engine {manifest.get('engine')!r}, opened as {engine!r} "
            f"(open it with aqgr.retrieval.lexical.open_lexical)"
        )
    if differences:
        raise IndexMismatchError(str(directory), differences)
    return manifest


def disk_bytes(directory: Path | str) -> int:
    """Bytes of the files under `directory`."""
    return sum(p.stat().st_size for p in Path(directory).rglob("*") if p.is_file())
