"""The manifest both index backends write and check: `manifest.json` beside a saved index.

A manifest records how an index was made: the format and summary-schema versions, the spec
(`IndexSpec.describe()`), the embedder's name, fingerprint and dimension, the summarizer of its
summaries, and the sha256 of each immutable file. Loading compares it with what this aqgr reads
and what the caller expects (`compare`, `check_files`, `manifest_embedder`) and refuses an
index built differently, naming every difference (IndexMismatchError, raised by the backend).
Written atomically and synced (`write_manifest`). Shared by retrieval/embedded/index.py and
retrieval/milvus.py; imports nothing heavy.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from aqgr.foundation.errors import IndexMismatchError, NoIndexError, UnknownNameError
from aqgr.foundation.files import atomic_file
from aqgr.foundation.paths import file_sha256
from aqgr.schemas.summary import SCHEMA_VERSION, StructuredSummary

from .dense.embedders import Embedder, embedders
from .spec import IndexSpec, profile_for

MANIFEST = "manifest.json"
T = TypeVar("T")


def write_manifest(path: Path, body: dict) -> None:
    """Write `body` as JSON to `path` atomically, then sync the folder so that the rename is on
    disk too (a manifest commits an index's generation)."""
    with atomic_file(path) as stream:
        json.dump(body, stream, ensure_ascii=False, indent=1)
    try:
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:  # a filesystem that cannot fsync a folder
        pass


def read_manifest(path: Path, version: int, parse: Callable[[dict], T]) -> tuple[dict, T]:
    """The manifest of the index saved in `path` and what `parse` reads of it; IndexMismatchError
    naming the format version when it is another, else saying it is unreadable; NoIndexError when
    there is none."""
    if not (path / MANIFEST).is_file():
        raise NoIndexError(str(path))
    manifest = None
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        return manifest, parse(manifest)
    except Exception as exc:  # unreadable, missing keys, unknown slot names, an older format ...
        if isinstance(manifest, dict) and manifest.get("format_version") != version:
            found = manifest.get("format_version")
            raise IndexMismatchError(
                str(path), [f"index format version {found!r}, this aqgr reads {version!r}"]
            ) from None
        raise IndexMismatchError(str(path), [f"manifest.json is unreadable ({type(exc).__name__}: {exc})"]) from None


def summarizer_of(summaries: Sequence[StructuredSummary]) -> str | None:
    """The engine that wrote `summaries` (their provenance), or None when several did."""
    engines = {s.provenance.engine for s in summaries}
    return engines.pop() if len(engines) == 1 else None


def resolve_embedder(spec: IndexSpec, embedder: Embedder | None) -> Embedder:
    """The embedder `spec` names (made here), or `embedder` when it is that one."""
    if embedder is None:
        return embedders.create(spec.embedder)
    if embedder.name != spec.embedder:
        raise ValueError(f"embedder {embedder.name!r} given but the spec names {spec.embedder!r}")
    return embedder


def compare(manifest: dict, spec: IndexSpec, expect: IndexSpec | None, version: int) -> list[str]:
    """The differences between a saved index (its manifest and `spec`) and what this aqgr reads
    (format `version`, the summary schema) and the caller expects (`expect`); [] when none."""
    diffs = []
    if manifest.get("format_version") != version:
        diffs.append(f"index format version {manifest.get('format_version')!r}, this aqgr reads {version!r}")
    if manifest.get("schema_version") != SCHEMA_VERSION:
        diffs.append(f"summary schema version {manifest.get('schema_version')!r}, current is {SCHEMA_VERSION!r}")
    if expect is not None:
        have, want = spec.describe(), expect.describe()
        for key in want:
            if have[key] != want[key]:
                diffs.append(f"{key} {have[key]!r}, expected {want[key]!r}")
    return diffs


def check_files(path: Path, manifest: dict, *, digests: bool = True) -> list[str]:
    """The manifest's immutable files against the disk: present, and (with `digests`, as
    `aqgr check` asks) unchanged; without, only their presence (a load stays fast at any size)."""
    diffs = []
    recorded = manifest.get("sha256")
    if not isinstance(recorded, dict):
        return ["manifest lists no file checksums"]
    for name, digest in sorted(recorded.items()):
        if not (path / name).is_file():
            diffs.append(f"file {name} is missing")
        elif digests and file_sha256(path / name) != digest:
            diffs.append(f"file {name} changed since the index was saved")
    return diffs


def manifest_embedder(manifest: dict, spec: IndexSpec, embedder: Embedder | None) -> tuple[Embedder | None, str | None]:
    """The embedder to query with, and a difference if it is not the one the index was built with."""
    try:
        embedder = resolve_embedder(spec, embedder)
    except (UnknownNameError, ValueError) as exc:
        return None, f"embedder not available here ({exc})"
    recorded = manifest.get("embedder", {})
    if recorded.get("fingerprint") != embedder.fingerprint:
        return embedder, (
            f"embedder {spec.embedder!r} fingerprint {recorded.get('fingerprint')!r}, "
            f"the installed one is {embedder.fingerprint!r}"
        )
    if recorded.get("dim") != embedder.dim:
        return embedder, f"embedding dimension {recorded.get('dim')!r}, the embedder gives {embedder.dim}"
    return embedder, None


class SavedManifest:
    """What both backends answer from their manifest (`self._manifest`): a copy of it, and the
    search profile it records (retrieval/spec.py; an index built before profiles takes the one
    of its size)."""

    _manifest: dict

    @property
    def manifest(self) -> dict:
        """A copy of the manifest: spec, embedder, doc ids, timings."""
        return json.loads(json.dumps(self._manifest))

    @property
    def profile(self) -> str:
        """The search profile recorded at build, else the one of the index's size (retrieval/spec.py)."""
        return self._manifest.get("search_profile") or profile_for(len(self))
