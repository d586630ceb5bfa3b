"""A judgment file met again under another name: one judgment, never a second.

Ids come from file names (`--id-from stem` by default), so renaming C12.txt to C12_final.txt
would otherwise store the same judgment twice, under two ids that both come back as hits. A
batch asks `stored_as` before summarising a file whose id is not stored yet: the file's bytes
(their sha256, stored with each judgment) are looked up among the stored judgments.

- The same bytes are stored under another id whose file is gone (nothing readable at the stored
  path any more): a rename. The judgment keeps its id (bookmarks, citations and index entries use
  it) and records the new path.
- The same bytes are stored under another id whose file is still there: a duplicate (two files of
  one judgment). Nothing is stored; the batch reports the stored id.
- The same bytes are stored from this very path under another id (a renamed file met again, or
  another `--id-from`): 'stored', the file is that judgment, under its stored id.

Two workers may meet two copies of a new judgment at once, each before the other stored it: the
write of a new judgment runs `guard` in its transaction (SQLite: the database is locked for it;
PostgreSQL: an advisory lock on the bytes' digest), which refuses it when the bytes were stored
meanwhile from a file still in place, and the batch reports the copy as a duplicate.

Several stored judgments with these bytes (an archive from before this rule) are taken in the
order they were added: the first still in place makes a duplicate, else the first gone is moved.
A stored path that now holds other bytes is not a rename: that file still claims the id (it is
summarised again when met, as a changed judgment), so moving the id to the new name would leave
it no id to be stored under; the new file is then a judgment of its own, and nothing is lost.
A file whose id is already stored keeps the old rules (changed bytes: summarised again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import text
from sqlmodel import Session, select

from aqgr.archive.store import JudgmentRow, Store
from aqgr.foundation.paths import file_sha256


@dataclass(frozen=True)
class StoredAs:
    """How a file's bytes are already stored: `kind` 'stored' (from this path), 'renamed' or
    'duplicate', the stored judgment's id and the path it was stored from."""

    kind: str
    judgment_id: str
    stored_path: str


def _state(path: str, sha256: str) -> str:
    """'same' (still a file with these bytes), 'other' (a file with other bytes) or 'gone'."""
    try:
        return "same" if file_sha256(path) == sha256 else "other"
    except OSError:  # gone, a folder now, unreadable
        return "gone"


def stored_as(store: Store, path: str, sha256: str) -> StoredAs | None:
    """Whether the file at `path` (bytes `sha256`) is a stored judgment under another id: renamed
    (its stored file is gone) or duplicate (its stored file is still there); None when it is new."""
    rows = sorted(store.judgments_with_sha(sha256), key=lambda row: row[2])  # the order they were added
    if not rows:
        return None
    for judgment_id, source, _ in rows:
        if source == path:
            return StoredAs("stored", judgment_id, source)
    states = [(judgment_id, source, _state(source, sha256)) for judgment_id, source, _ in rows]
    for judgment_id, source, state in states:
        if state == "same":
            return StoredAs("duplicate", judgment_id, source)
    for judgment_id, source, state in states:
        if state == "gone":
            return StoredAs("renamed", judgment_id, source)
    return None


class StoredMeanwhile(Exception):
    """Raised inside a new judgment's write (rolling it back) when another worker stored the same
    bytes first; the batch catches it and reports a duplicate. Never reaches a user."""

    def __init__(self, stored: StoredAs):
        super().__init__(f"{stored.stored_path} was stored as {stored.judgment_id} meanwhile")
        self.stored = stored


def guard(store: Store, judgment_id: str, path: str, sha256: str) -> Callable[[Session], None]:
    """What a new judgment's write runs in its transaction: StoredMeanwhile when these bytes are now
    stored under another id from a file still in place (see the module's docstring)."""

    def check(session: Session) -> None:
        if (
            store.dialect == "postgresql"
        ):  # writers of the same bytes wait for each other; the later sees the first's commit
            session.exec(text("SELECT pg_advisory_xact_lock(:key)").bindparams(key=int(sha256[:15], 16)))
        rows = session.exec(
            select(JudgmentRow.id, JudgmentRow.source_path, JudgmentRow.added_at).where(
                JudgmentRow.sha256 == sha256, JudgmentRow.id != judgment_id
            )
        ).all()
        for other, source, _ in sorted(rows, key=lambda row: row[2]):
            if source == path or _state(source, sha256) == "same":
                raise StoredMeanwhile(StoredAs("duplicate", other, source))

    return check
