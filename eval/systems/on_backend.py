"""Index backends for the evaluation's summary-based systems: `<system>@<backend>`.

A pipeline system name may end in `@<backend>` (`aqgr-no-fulltext@milvus`): the same
configuration, summaries and IndexSpec, served by another index backend
(`retrieval.backends`: `embedded` = `embedded.v1`, the default; `milvus` = `milvus.v1`).
So one `python -m aqgr.eval --systems aqgr-no-fulltext,aqgr-no-fulltext@milvus` run lists
both backends side by side, and the report adds their agreement (`eval.stats.agreement`).

What a backend lacks is refused, never dropped silently: a configuration that names a
retriever the backend does not have (Milvus has no `fulltext`, BM25 over the judgments'
full texts) is a ConfigError at construction, naming the configurations that fit.

Milvus indexes are cached like the embedded ones: the collection lives at the Milvus URI
(default: a milvus-lite folder `milvus.db` in the archive home, inside the eval cache; or
`--milvus-uri http://host:19530`), and a local directory beside the embedded index
(`<home>/indexes/<spec hash>.milvus-<uri hash>`) holds its manifest (URI, collection,
spec, document ids). A rerun loads it; a changed corpus, spec or a missing collection is
rebuilt (the replaced collection is dropped). The window vectors come from the archive's
embedding cache, which the embedded build filled: nothing is embedded twice.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aqgr.foundation.errors import ConfigError, IndexMismatchError, MissingDependencyError, NoIndexError

SEPARATOR = "@"
DEFAULT_BACKEND = "embedded.v1"
# The short name a system name carries (aqgr@milvus), per backend.
SHORT: dict[str, str] = {"embedded.v1": "embedded", "milvus.v1": "milvus"}
MILVUS_LITE_DIR = "milvus.db"  # milvus-lite keeps a local URI as a folder of this name

_LOADED: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def split_name(name: str) -> tuple[str, str | None]:
    """`aqgr@milvus` -> ("aqgr", "milvus"); a name without a suffix -> (name, None)."""
    base, sep, backend = name.partition(SEPARATOR)
    if sep and (not base or not backend):
        raise ConfigError(f"system name {name!r}: write <system>{SEPARATOR}<backend>, e.g. aqgr-no-fulltext@milvus")
    return base, (backend if sep else None)


def resolve(backend: str | None) -> str:
    """The canonical backend name of a name or alias (None: the default)."""
    if backend is None:
        return DEFAULT_BACKEND
    from aqgr.retrieval.backends import ALIASES

    name = ALIASES.get(backend, backend)
    if name not in SHORT:
        known = ", ".join(f"{alias} ({full})" for alias, full in ALIASES.items())
        raise ConfigError(f"unknown index backend {backend!r}; known backends: {known}")
    return name


def system_name(base: str, backend: str) -> str:
    """What a system on `backend` is called: the base name for the default, else base@short."""
    return base if backend == DEFAULT_BACKEND else f"{base}{SEPARATOR}{SHORT[backend]}"


def served(backend: str) -> tuple[str, ...]:
    """The retrievers a backend's index can have (its class's `serves`)."""
    from aqgr.retrieval.backends import backend_class

    return backend_class(backend).serves


def check(name: str, retrievers: tuple[str, ...], backend: str, fitting: Callable[[], list[str]]) -> None:
    """Refuse a configuration naming a retriever `backend` lacks; `fitting()` lists those that fit."""
    missing = [r for r in retrievers if r not in served(backend)]
    if missing:
        raise ConfigError(
            f"system {name!r}: the {backend} backend has no {', '.join(repr(m) for m in missing)} retriever "
            f"(it serves {', '.join(served(backend))}) but the configuration names it; comparing it would "
            f"compare different things. Configurations that fit: {', '.join(fitting())}"
        )
    if backend == "milvus.v1":
        import importlib.util

        if importlib.util.find_spec("pymilvus") is None:
            raise MissingDependencyError("pymilvus", "milvus")


def notes(spec, backend: str) -> list[str]:
    """What `backend` computes otherwise than `spec` says (stated in the system's config)."""
    if backend == "milvus.v1":
        return ["BM25 statistics: Milvus counts rows (one per dense window), not documents, in N, df and avgdl"]
    return []


def default_uri(home: Path) -> str:
    return str(Path(home) / MILVUS_LITE_DIR)


def index_dir(base: Path, uri: str) -> Path:
    """Where the manifest of a Milvus index at `uri` is kept, beside the embedded index `base`."""
    from aqgr.retrieval.milvus import normalise_uri

    tag = hashlib.sha256(normalise_uri(uri).encode()).hexdigest()[:8]
    return base.with_name(f"{base.name}.milvus-{tag}")


def milvus_index(directory: Path, spec, uri: str, doc_ids, build: Callable[[], Any]):
    """The Milvus index recorded in `directory` if it holds exactly `doc_ids` under `spec`
    at `uri`; else `build()` (a new collection), recorded there (the old one dropped)."""
    from aqgr.retrieval.milvus import MilvusIndex, normalise_uri

    key = ("milvus", str(directory))
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
    try:
        index = MilvusIndex.load(directory, expect=spec)
        if set(index.doc_ids) != set(doc_ids) or index.uri != normalise_uri(uri):
            index = None
    except (NoIndexError, IndexMismatchError):
        index = None
    if index is None:
        index = build()
        index.save(directory)
    with _LOCK:
        _LOADED[key] = index
    return index


def milvus_case_index(archive, spec, directory: Path, uri: str, progress=None):
    """`archive`'s summaries under `spec` in Milvus at `uri` (window vectors from the home's cache)."""
    from aqgr.retrieval.dense.cache import EmbeddingCache
    from aqgr.retrieval.milvus import MilvusIndex

    summaries = archive.summaries()

    def build():
        with EmbeddingCache(archive.settings.cache_dir / "embeddings.sqlite") as cache:
            return MilvusIndex.build(summaries, spec, uri=uri, cache=cache, progress=progress)

    return milvus_index(directory, spec, uri, [s.judgment_id for s in summaries], build)


def milvus_text_index(
    doc_ids, texts: dict[str, dict[str, str]], spec, directory: Path, uri: str, cache_path: Path, progress=None
):
    """Plain-text documents (statutes) under `spec` in Milvus at `uri` (embeddings cached at `cache_path`)."""
    from aqgr.retrieval.dense.cache import EmbeddingCache
    from aqgr.retrieval.milvus import MilvusIndex

    def build():
        with EmbeddingCache(cache_path) as cache:
            return MilvusIndex.from_texts(list(doc_ids), texts, spec, uri=uri, cache=cache, progress=progress)

    return milvus_index(directory, spec, uri, doc_ids, build)
