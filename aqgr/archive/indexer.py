"""Keeping an archive's index up to date: what `aqgr index` (Archive.build_index) does.

The index follows the store. Each summary has a fingerprint (retrieval/documents.py
`summary_fingerprint`: engine, version, source hash, creation time) that the store computes
from its columns and the index records per document; `update_index` compares the two and
hands the index only the difference: new and changed summaries (a changed one replaces its
old entry) and judgments no longer summarised (removed). So adding a day's judgments to a
large archive costs the day's judgments, not the archive. A full build happens when there is
no index yet, when it was built differently (another spec, backend or format, or made by an
older aqgr: refused by `load_index`), or when asked (`rebuild=True`, `aqgr index --rebuild`).

One writer at a time: `IndexLock` (an exclusive lock on `<home>/index.lock`, released by the
operating system if the process dies) is held for the whole update; a second `aqgr index` is
refused at once with IndexBusyError. Searches never take it.

Crash safety is the index's own (retrieval/embedded/index.py: generations committed by the manifest):
a first build killed midway leaves a smaller usable index that the next run completes; a
rebuild is made beside the old index and swapped in, so the old one serves until then; the
leftovers of a killed rebuild or save (`.index.rebuild-*`, `.index.tmp-*`, `.index.old-*`)
are removed by the next writer.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

from aqgr.archive.store import Store
from aqgr.foundation.errors import EmptyArchiveError, IndexBusyError, IndexMismatchError, NoIndexError
from aqgr.retrieval.embedded.index import MANIFEST, clean_leftovers, leftovers  # noqa: F401 (clean_leftovers re-exported)
from aqgr.retrieval.spec import IndexSpec

Progress = Callable[[str, int, int], None]
LOCK_FILE = "index.lock"


class IndexLock:
    """An exclusive, non-blocking lock on `<home>/index.lock` for as long as the `with` lasts."""

    def __init__(self, home: Path):
        self.path = Path(home) / LOCK_FILE
        self._fd: int | None = None

    def __enter__(self) -> "IndexLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read_holder(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise IndexBusyError(str(self.path.parent), holder) from None
            raise
        try:  # who holds it, for the message of a second writer: not needed to hold it (a full disk)
            os.ftruncate(fd, 0)
            os.write(fd, f"pid {os.getpid()}\n".encode())
        except OSError:
            pass
        self._fd = fd
        return self

    @staticmethod
    def held(home: Path) -> bool:
        """Whether a writer (`aqgr index`, here or in another process) holds the lock now. Asked
        without writing anything: a read-only home can be asked too."""
        try:
            fd = os.open(Path(home) / LOCK_FILE, os.O_RDONLY)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _read_holder(fd: int) -> str | None:
    try:
        text = os.pread(fd, 64, 0).decode("utf-8", "replace").strip()
    except OSError:
        return None
    return text or None


_INDEX_PARTS = {"docs.sqlite", "docs.sqlite-wal", "docs.sqlite-shm", "bm25", "dense", "fulltext"}


def _made_by_aqgr(index_dir: Path) -> bool:
    """Whether a folder without a manifest holds only what an embedded index writes (its documents
    file among them): a folder of the user's is never removed."""
    names = {p.name for p in index_dir.iterdir()}
    return "docs.sqlite" in names and all(
        n in _INDEX_PARTS or n.startswith(".manifest.json.tmp-") or n.endswith(".lock") for n in names
    )


def update_index(
    store: Store,
    engine: str,
    index_dir: Path,
    *,
    spec: IndexSpec,
    backend: str,
    uri: str | None,
    cache,
    progress: Progress | None,
    rebuild: bool,
    text_of: Callable[[str], str | None],
    wanted: Mapping[str, str] | None = None,
):
    """Bring the index at `index_dir` up to the store's summaries by `engine` (see the module);
    returns (the index, {"mode": "update" | "build" | "rebuild", "added", "replaced", "removed"}).
    `wanted`: the store's summary fingerprints by `engine`, when the caller has just read them.
    The caller holds IndexLock."""
    from aqgr.retrieval.backends import build_index, canonical, load_index, recorded_backend

    if wanted is None:
        wanted = store.summary_fingerprints(engine)
    if not wanted:
        raise EmptyArchiveError("index")
    store.add_checksums()  # summaries stored before checksums get theirs (`aqgr check` counts those without)
    clean_leftovers(index_dir)
    if index_dir.is_dir() and not (index_dir / MANIFEST).exists() and _made_by_aqgr(index_dir):
        # the manifest is gone (deleted, or a disk that lost it): without it no generation can be read;
        # the folder is the archive's own index, so it goes and the index is built again in place
        doomed = index_dir.parent / f".{index_dir.name}.tmp-{uuid.uuid4().hex[:12]}"
        os.replace(index_dir, doomed)
        shutil.rmtree(doomed, ignore_errors=True)
    backend = canonical(backend)
    current, why = None, "build"
    if index_dir.exists():
        why = "rebuild"
        if not rebuild:
            try:
                if recorded_backend(index_dir) == backend:
                    current = load_index(index_dir, expect=spec)
            except (NoIndexError, IndexMismatchError):
                current = None
    if current is not None and getattr(current, "uri", uri) != uri and uri is not None:
        current = None  # the same backend somewhere else: a new index there
    if current is not None:
        have = current.fingerprints()
        added = [d for d, fp in wanted.items() if have.get(d) != fp]
        removed = [d for d in have if d not in wanted]
        counts = (
            current.update(
                store.iter_summary_models(engine, ids=added),
                removed,
                cache=cache,
                progress=progress,
                full_texts=text_of,
                total=len(added),
            )
            if (added or removed)
            else {"added": 0, "replaced": 0, "removed": 0}
        )
        current.save(index_dir)
        return current, {"mode": "update", **counts}
    summaries = store.iter_summary_models(engine)
    in_place = not index_dir.exists()
    target = index_dir if in_place else index_dir.parent / f".{index_dir.name}.rebuild-{uuid.uuid4().hex[:12]}"
    try:
        index = build_index(
            summaries,
            spec,
            backend=backend,
            uri=uri,
            cache=cache,
            progress=progress,
            full_texts=text_of,
            directory=target,
            total=len(wanted),
        )
    except BaseException:
        if not in_place:  # the old index stays as it was; the half-made new one goes
            shutil.rmtree(target, ignore_errors=True)
        raise
    if index.location == str(target) and not in_place:
        index.save(index_dir, move=True)  # the rebuild swapped in for the old index, atomically
    else:
        index.save(index_dir)  # built in place: nothing to do; milvus: its manifest written
    return index, {"mode": why, "added": len(index), "replaced": 0, "removed": 0}
