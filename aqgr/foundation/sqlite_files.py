"""SQLite files as aqgr reads, diagnoses and replaces them: what an error says of the file, how to
open one on a read-only medium, and how a store made anew beside the old one takes its place.

* `reason_of(exc, path)`: what an sqlite3 error says of the file: 'damaged' (not a database, pages
  garbled: only this one calls for rebuilding it), 'disk_full', 'read_only', 'busy' (another
  process holds a lock) or 'unreadable' (cannot be opened: permissions, an I/O error). SQLite
  reports a full disk as 'disk I/O error' or 'unable to open database file' when it cannot grow
  its shared-memory file: on a disk with (almost) no space left those are 'disk_full'.
* `as_os_error(exc, path)`: the same as an OSError (ENOSPC, EROFS, EACCES, EBUSY, EIO), for the
  messages of `WriteError`.
* `read_uri(path)`: the URI that opens a file for reading. On a read-only folder (a read-only
  mount, a home without write permission) SQLite cannot make the -shm file a database in
  write-ahead-log mode needs, and every read fails with 'unable to open database file'; there
  nothing can write the file either (a read-only mount; a folder this user cannot write where no
  other connection has the file open), so it is opened `immutable` (no locks, no -shm).
* `replace_file(new, target)`: a finished SQLite file moved over `target` by one rename: a reader
  sees the old file or the new one, never a half-made one (the old -wal and -shm go first: SQLite
  would replay a stray -wal over the new file).

Standard library only.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from urllib.parse import quote

LOW_SPACE = 1 << 20  # bytes free under which an I/O error of SQLite is taken for a full disk
DAMAGED, DISK_FULL, READ_ONLY, BUSY, UNREADABLE = "damaged", "disk_full", "read_only", "busy", "unreadable"
_DAMAGE_WORDS = ("not a database", "malformed", "encrypted", "corrupt")
# primary result codes (https://sqlite.org/rescode.html)
_CORRUPT, _NOTADB, _FULL, _READONLY, _BUSY, _LOCKED, _CANTOPEN, _PERM, _IOERR = 11, 26, 13, 8, 5, 6, 14, 3, 10
_SURROUNDINGS_WORDS = ("unable to open", "i/o error", "readonly", "read-only", "permission", "no such file")
ERRNO = {DISK_FULL: errno.ENOSPC, READ_ONLY: errno.EROFS, BUSY: errno.EBUSY, UNREADABLE: errno.EIO}


def reason_of(exc: BaseException, path: str | Path | None = None) -> str:
    """What `exc` (an sqlite3 error, or an OSError) says of the SQLite file at `path` (see the module).
    An sqlite3 error of none of the kinds a file's surroundings cause (a missing table, a schema
    that is not aqgr's) is the file's own: 'damaged'."""
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return DISK_FULL
        if exc.errno == errno.EROFS:
            return READ_ONLY
        return _surroundings(path, read_only=exc.errno in (errno.EACCES, errno.EPERM))
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc).lower()
    if primary in (_CORRUPT, _NOTADB) or any(word in text for word in _DAMAGE_WORDS):
        return DAMAGED
    if primary == _FULL or "disk is full" in text or "no space left" in text:
        return DISK_FULL
    if primary in (_BUSY, _LOCKED) or "database is locked" in text:
        return BUSY
    if primary in (_READONLY, _PERM, _CANTOPEN, _IOERR) or (
        primary is None and any(word in text for word in _SURROUNDINGS_WORDS)
    ):
        return _surroundings(path, read_only=primary in (_READONLY, _PERM) or "readonly" in text)
    return DAMAGED


def _surroundings(path: str | Path | None, *, read_only: bool) -> str:
    if path is not None and disk_full(path):
        return DISK_FULL
    folder = Path(path).parent if path is not None else None
    if read_only or (folder is not None and folder.is_dir() and not folder_writable(folder)):
        return READ_ONLY
    return UNREADABLE


def as_os_error(exc: BaseException, path: str | Path) -> OSError:
    """`exc` as the OSError a full disk, a read-only folder or a failed read would have raised."""
    reason = reason_of(exc, path)
    return OSError(ERRNO.get(reason, errno.EIO), str(exc) or type(exc).__name__, str(path))


def disk_full(path: str | Path) -> bool:
    """Whether the disk holding `path` (or its nearest existing folder) has (almost) no space left."""
    where = Path(path)
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        return shutil.disk_usage(where).free < LOW_SPACE
    except OSError:
        return False


def folder_writable(folder: str | Path) -> bool:
    """Whether files can be made in `folder` (a read-only mount says no to root as well)."""
    return os.access(folder, os.W_OK)


def read_uri(path: str | Path) -> str:
    """The URI (pass `uri=True`) that opens the SQLite file at `path` read-only; immutable when its
    folder cannot be written, no write-ahead log waits to be read, and nothing can change the file
    while it is read: the medium is mounted read-only, or no connection has it open now (no -shm:
    another user who may write the folder would make one) (see the module)."""
    path = Path(path).absolute()
    uri = f"file:{quote(path.as_posix())}?mode=ro"
    log, shared = companions(path)
    if folder_writable(path.parent) or (log.exists() and log.stat().st_size):  # a log to read: the -shm way
        return uri
    if _mounted_read_only(path) or not shared.exists():
        uri += "&immutable=1"
    return uri


def _mounted_read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def companions(path: str | Path) -> tuple[Path, Path]:
    """The -wal and -shm files SQLite keeps beside a database in write-ahead-log mode."""
    path = Path(path)
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def remove_file(path: str | Path) -> None:
    """An SQLite file and its -wal and -shm, gone."""
    for leftover in (Path(path), *companions(path)):
        leftover.unlink(missing_ok=True)


def replace_file(new: str | Path, target: str | Path) -> None:
    """Move the SQLite file `new` (closed, its log checkpointed: no -wal left) over `target`."""
    new, target = Path(new), Path(target)
    for leftover in companions(new):
        if leftover.exists() and leftover.stat().st_size:
            raise RuntimeError(f"{new} still has a write-ahead log: close every connection to it first")
        leftover.unlink(missing_ok=True)
    for leftover in companions(target):
        leftover.unlink(missing_ok=True)
    os.replace(new, target)
    try:  # the rename itself made durable
        fd = os.open(target.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # a file system that cannot sync a folder
        pass
    finally:
        os.close(fd)
