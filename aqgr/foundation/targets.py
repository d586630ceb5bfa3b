"""Where a command writes a file the user named (`aqgr export --out`): a regular file, replaced atomically.

A path the user gives may already be something other than a file: a symbolic link (to
/dev/stdout, to someone else's file), a FIFO a reader waits on, a device, a folder. Writing
a temporary file beside it and renaming it over the path would silently replace that thing
(the FIFO's reader gets nothing, the link is gone); opening it and writing would follow it
wherever it points. Neither is what a user asking for "an export file" means, so such a
path is refused with a `ConfigError` that says what it is, unless the caller passes
`force=True` (`--force`): then the file is written through the path (the link is followed,
the FIFO or device receives the lines), not atomically. A regular file, or a path not yet
there, is written to a temporary file in the same folder, flushed to disk and renamed into
place: a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO

from aqgr.foundation.errors import ConfigError, WriteError
from aqgr.foundation.files import atomic_file

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def kind_of(path: Path) -> str | None:
    """What is at `path` when it is not a regular file ('a symbolic link', 'a FIFO (named pipe)', ...);
    None for a regular file or nothing at all. Links are not followed."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return None


def write_file(path: str | Path, write: Callable[[IO[str]], int], *, force: bool = False, flag: str = "--force") -> int:
    """Call `write(stream)` to fill the file at `path` and return what it returns.

    A regular file or a new path: written atomically (temporary file beside it, fsync, rename;
    the old file's permissions kept). Anything else is refused (ConfigError naming it and `flag`)
    unless `force`, when it is written through (a link followed, a FIFO or device written to);
    a folder is always refused. OSError becomes WriteError; a failed write leaves no temporary file."""
    target = Path(path)
    kind = kind_of(target)
    if kind == "a folder" or (kind == "a symbolic link" and force and target.is_dir()):
        raise ConfigError(
            f"{target} is a folder: give the path of a file to write (or --format json-dir to write one file per judgment into a folder)"
        )
    if kind is not None:
        if not force:
            raise ConfigError(
                f"{target} is {kind}, not a regular file: nothing was written. Give another path, or pass {flag} to write through it"
            )
        try:
            with open(target, "w", encoding="utf-8") as stream:
                return write(stream)
        except OSError as exc:
            raise WriteError(str(target), exc) from None
    return _atomic(target, write)


def _atomic(target: Path, write: Callable[[IO[str]], int]) -> int:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(target) as stream:
            return write(stream)
    except OSError as exc:
        raise WriteError(str(target), exc) from None


def check_folder(path: str | Path, *, force: bool = False, flag: str = "--force") -> Path:
    """`path` as a folder to write into: a folder, or a path not yet there (created). A regular file,
    FIFO or device is refused (ConfigError); a symbolic link is refused unless `force` and it leads to
    a folder."""
    folder = Path(path)
    kind = kind_of(folder)
    if kind == "a symbolic link" and not (force and folder.is_dir()):
        raise ConfigError(
            f"{folder} is a symbolic link"
            + ("" if folder.is_dir() else ", not to a folder")
            + ": nothing was written. Give another folder"
            + (f", or pass {flag} to write into the folder it leads to" if folder.is_dir() else "")
        )
    if kind not in (None, "a folder", "a symbolic link") or (kind is None and folder.exists()):
        raise ConfigError(
            f"{folder} is {kind or 'a file'}, not a folder: nothing was written. Give a folder (it is created when missing)"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(str(folder), exc) from None
    return folder
