"""Files replaced whole: a reader sees the old file or the new one, never half of one.

`atomic_file(path)` gives a temporary file beside `path`; when the `with` block ends cleanly it is
flushed, synced to disk and renamed over `path`. When anything fails (a full disk, an encoding
error, the caller's own exception) the temporary file is removed and `path` is left exactly as it
was. `write_atomic(path, data)` is the one-call form. Every place aqgr writes a file that something
else reads later (a manifest, the citation links, the statutes, a report, a run file) goes through
here, so that a crash or a full disk never leaves a truncated file where a good one was.
Standard library only.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def atomic_file(path: str | Path, mode: str = "w", *, permissions: int | None = None) -> Iterator[IO]:
    """A temporary sibling of `path` opened for writing (`mode` "w": text in UTF-8, "wb": bytes),
    renamed over `path` when the block ends without an exception. The new file gets `permissions`,
    else the old file's, else what a plain open() would give. The parent folder must exist."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(tmp, permissions if permissions is not None else mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_atomic(path: str | Path, data: str | bytes, *, permissions: int | None = None) -> None:
    """Replace the file at `path` with `data` (str as UTF-8), atomically (see `atomic_file`)."""
    with atomic_file(path, "wb" if isinstance(data, bytes) else "w", permissions=permissions) as stream:
        stream.write(data)


def mode_for(target: Path) -> int:
    """The permissions a replaced file keeps (an existing file's), else what a plain open() would give."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
