"""Index backends behind one interface, chosen by name; a saved index names its own backend.

* `embedded.v1` (default): retrieval/embedded/index.py SummaryIndex (the index directory, updated
  in place: docs.sqlite, a lexical engine's BM25 index per BM25 retriever (tantivy.v1 by
  default), segments of dense window vectors, a faiss ANN index beside the large ones; one
  process, one machine).
* `milvus.v1`: retrieval/milvus.py MilvusIndex (a Milvus collection at a URI; the index
  directory keeps the manifest, the document frequencies, the documents' fingerprints and
  the pre-embedded sentences). Needs `aqgr[milvus]`.

`embedded` and `milvus` are aliases of the current versions (what `aqgr index --backend`
takes). Both classes offer `build(summaries, spec, ...)`, `save(dir)`, `load(dir, expect=)`
and the reading side the Searcher uses, retrieval/protocol.py `Index` (one contract test
suite, tests/retrieval/test_index_contract.py, runs against both). Each class says what its
build needs: `needs_uri` (where a server keeps the index) and `takes_full_texts` (the
judgments' full texts, for the optional "fulltext" retriever).

`load_index(directory)` reads the manifest's `backend` (absent: an embedded index written
before backends existed) and opens the index with the backend that wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from aqgr.foundation.errors import IndexMismatchError, NoIndexError
from aqgr.foundation.registry import Registry

from .spec import IndexSpec, Progress, check_profile, profile_for

MANIFEST = "manifest.json"

DEFAULT_BACKEND = "embedded.v1"
ALIASES = {"embedded": "embedded.v1", "milvus": "milvus.v1"}

# name -> the index class (a factory with no arguments returning the class).
backends: Registry[type] = Registry("index backend")


@backends.register("embedded.v1")
def _embedded() -> type:
    from .embedded.index import SummaryIndex

    return SummaryIndex


@backends.register("milvus.v1")
def _milvus() -> type:
    from .milvus import MilvusIndex

    return MilvusIndex


def backend_class(name: str) -> type:
    """The index class of a backend name or alias (UnknownNameError lists the known names)."""
    return backends.create(ALIASES.get(name, name))


def canonical(name: str) -> str:
    name = ALIASES.get(name, name)
    backends.get(name)  # raises for an unknown name
    return name


def build_index(
    summaries: Iterable,
    spec: IndexSpec | None = None,
    *,
    backend: str = DEFAULT_BACKEND,
    uri: str | None = None,
    cache=None,
    progress: Progress | None = None,
    full_texts: Callable[[str], str | None] | None = None,
    directory: str | Path | None = None,
    total: int | None = None,
    profile: str | None = None,
):
    """Build an index with `backend`; `uri` is where a server backend keeps it (required for milvus).

    `full_texts` (judgment id -> its text, read one by one) feeds a backend's full-text
    retriever (only a backend that takes them reads it); `directory` is where a backend that
    keeps its index in a directory builds it (default: a temporary one); `total`: how many
    summaries come, for progress and for the search profile the manifest records (`profile`,
    else spec.py `profile_for(total)`; with neither, the index's size decides at search time)."""
    if profile is None and total is not None:
        profile = profile_for(total)
    if profile is not None:
        check_profile(profile)
    name = canonical(backend)
    cls = backend_class(name)
    if not cls.needs_uri and uri is not None:
        raise ValueError(f"the {name} backend keeps its index in the archive's index directory: drop --uri")
    if cls.needs_uri and not uri:
        raise ValueError(
            f"backend {name} needs a URI: a Milvus server (http://127.0.0.1:19530) or a milvus-lite path (.db)"
        )
    if cls.needs_uri:
        return cls.build(list(summaries), spec, cache=cache, progress=progress, uri=uri, profile=profile)
    extra = {"full_texts": full_texts} if (full_texts is not None and cls.takes_full_texts) else {}
    return cls.build(
        summaries, spec, cache=cache, progress=progress, directory=directory, total=total, profile=profile, **extra
    )


def recorded_backend(directory: str | Path) -> str:
    """The backend named in a saved index's manifest (embedded.v1 when it names none)."""
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise NoIndexError(str(directory))
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: not JSON, not UTF-8
        raise IndexMismatchError(str(directory), [f"manifest.json is unreadable ({exc})"]) from None
    if not isinstance(manifest, dict):
        raise IndexMismatchError(str(directory), ["manifest.json is not a JSON object"])
    return manifest.get("backend", DEFAULT_BACKEND)


def load_index(directory: str | Path, expect: IndexSpec | None = None, **kwargs):
    """Open a saved index with the backend that wrote it."""
    return backend_class(recorded_backend(directory)).load(directory, expect=expect, **kwargs)


def indexed_ids(directory: str | Path) -> list[str] | None:
    """The judgment ids of the index saved in `directory` (None without one, or when it cannot be
    read: `load_index` says why), without loading the index itself."""
    try:
        name = recorded_backend(directory)
        manifest = json.loads((Path(directory) / MANIFEST).read_text(encoding="utf-8"))
        if isinstance(manifest.get("doc_ids"), list):
            return [str(d) for d in manifest["doc_ids"]]
        return backend_class(name).saved_ids(directory)
    except Exception:  # no index, an older or damaged one
        return None


def indexed_fingerprints(directory: str | Path) -> dict[str, str]:
    """judgment id -> summary fingerprint recorded by the index saved in `directory` ({} without
    one, or when it cannot be read), without loading the index itself."""
    try:
        return backend_class(recorded_backend(directory)).saved_fingerprints(directory)
    except Exception:  # no index, an older or damaged one
        return {}
