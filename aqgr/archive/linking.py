"""Keeping the archive's citation store up to date: what `aqgr index` does first (Archive.link_citations).

The store (`<home>/citations.sqlite`, retrieval/citations/store.py) follows the summaries:
judgments new to it, or whose summary was made again since the index recorded it, are linked,
those no longer summarised removed. Each update is one SQLite transaction (a large one commits
as it goes, and the next update completes it).

A store of another format, read by another treatment engine, or damaged, is not emptied in place:
a new one is made beside it (`.citations.sqlite.rebuild`), and moved over it by one rename when
complete (aqgr/foundation/sqlite_files.py `replace_file`). Until then the old one serves searches (a
model's treatments, paid for, among them); a run stopped part way (a full disk, kill -9) leaves the
new one to be completed by the next. A store that cannot be opened for a reason outside it (a full
disk, a read-only home, permissions) is no store to rebuild: it is left exactly as it is, and the
failure is a WriteError saying what the store holds now.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from aqgr.archive.health import is_corrupt
from aqgr.foundation.errors import IndexMismatchError, IndexUnavailableError, WriteError
from aqgr.foundation.sqlite_files import as_os_error, remove_file, replace_file

CITATIONS_FILE = "citations.sqlite"  # in the home, beside the index
REBUILD = ".rebuild"  # the suffix of the store made anew beside it (a hidden file: `.citations.sqlite.rebuild`)


def beside(path: Path) -> Path:
    """Where a store made anew to replace the one at `path` is made."""
    return path.with_name(f".{path.name}{REBUILD}")


def link_citations(
    path: Path,
    treatments,
    wanted: Mapping[str, str],
    *,
    indexed: Mapping[str, str],
    text_of: Callable[[str], str],
    texts_of: Callable[[list[str]], Iterable[tuple[str, str]]],
    progress=None,
    steps: list[str] | None = None,
):
    """Bring the store at `path` up to the summaries `wanted` (judgment id -> fingerprint) with the
    TreatmentEngine `treatments`; returns the CitationGraph (its snapshot kept for searches).
    `indexed`: the fingerprints the saved index recorded (a changed one is linked again); `text_of(id)`,
    `texts_of(ids)`: the judgments' texts. `steps` gets "citations" when the store's judgments changed.
    Raises WriteError for a full disk, a read-only home, a file that cannot be read."""
    steps = [] if steps is None else steps
    how = {"indexed": indexed, "text_of": text_of, "texts_of": texts_of, "progress": progress, "steps": steps}
    try:
        return _update(path, treatments, wanted, anew=False, **how)
    except sqlite3.DatabaseError as exc:  # damage found by the update itself: made anew, once
        if not is_corrupt(exc):
            raise write_error(exc, path) from None
        return _update(path, treatments, wanted, anew=True, **how)


def _update(path: Path, treatments, wanted, *, anew: bool, indexed, text_of, texts_of, progress, steps):
    from aqgr.retrieval.citations import CitationStore

    store = _writer(path, treatments, anew=anew)
    try:
        have = store.ids()
        changed = [d for d in wanted if d not in have or (d in indexed and indexed[d] != wanted[d])]
        gone = [d for d in have if d not in wanted]
        if gone:
            store.remove(gone, text_of=text_of, progress=progress)
        if changed or store.pending:  # pending: a large update killed part way, completed here
            store.add(texts_of(changed), text_of=text_of, progress=progress)
        if store.path == path:
            if changed or gone:
                steps.append("citations")
            # searches open the graph from its snapshot (retrieval/citations/snapshot.py)
            return store.keep_snapshot()
    except (sqlite3.Error, OSError) as exc:
        if is_corrupt(exc) and store.path == path:
            raise  # made anew by the caller
        raise write_error(exc, path, store) from None
    finally:
        store.close()
    try:  # made anew and complete: it takes the old one's place in one rename
        replace_file(store.path, path)
        steps.append("citations")
        store = CitationStore(path, treatments)
        try:
            return store.keep_snapshot()
        finally:
            store.close()
    except (sqlite3.Error, OSError, IndexUnavailableError) as exc:
        raise write_error(exc, path) from None


def _writer(path: Path, treatments, *, anew: bool = False):
    """The store at `path` opened for an update by `treatments`; when it is of another format, made by
    another engine or damaged (or `anew`), the one beside it that replaces it (one an earlier run left
    is completed, unless it too is refused). One that cannot be opened for a reason outside it raises
    WriteError, and is left exactly as it was."""
    from aqgr.retrieval.citations import CitationStore

    if not anew:
        try:
            return CitationStore(path, treatments)
        except IndexUnavailableError as exc:
            raise write_error(exc, path) from None
        except IndexMismatchError:
            pass
    new = beside(path)
    try:
        try:
            return CitationStore(new, treatments)
        except IndexMismatchError:  # a leftover of another engine, or damaged: started again
            remove_file(new)
            return CitationStore(new, treatments)
    except (IndexUnavailableError, OSError) as exc:
        raise write_error(exc, path, where=new) from None


def write_error(exc: BaseException, path: Path, store=None, *, where: Path | None = None) -> WriteError:
    """A full disk, a read-only home, an unreadable file met while updating the store at `path` (the
    open `store`, perhaps the one made beside it), as WriteError saying what the store holds now: as
    before, updated part way (a large update, completed by the next run), or unchanged while the one
    made beside it waits to be completed."""
    where = where or (store.path if store is not None else path)
    if isinstance(exc, IndexUnavailableError):
        code = {"disk_full": errno.ENOSPC, "read_only": errno.EROFS, "busy": errno.EBUSY}.get(exc.reason, errno.EIO)
        exc = OSError(code, exc.detail)
    elif not isinstance(exc, OSError) or isinstance(exc, sqlite3.Error):
        exc = as_os_error(exc, where)
    before = None
    if store is not None and store.path != path:
        before = (
            f"the citation store in use ({path}) is unchanged; the one being made beside it is completed by "
            "the next `aqgr index`"
        )
    elif store is not None and _pending(store):
        before = (
            "the citation store was updated part way (a large update commits as it goes) and searches use it "
            "as it is: the next `aqgr index` completes it"
        )
    return WriteError(str(where), exc, before=before)


def _pending(store) -> bool:
    """Whether a large update of the store stopped part way (committed pages, more to do)."""
    try:
        return bool(store.pending)
    except sqlite3.Error:
        return False
