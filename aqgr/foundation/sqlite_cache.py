"""`SQLiteCache`: one SQLite file of cached results, shared by threads and processes.

The caches of model replies (aqgr/llm/cache.py) and of embedding vectors (the dense room's
cache) open their file the same way: the parent folder made, one connection shared by the
process's threads behind a lock, write-ahead logging so that readers go on while another process
writes, and the table made if it is missing. Path ':memory:' gives a throwaway cache.
Standard library only.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Self


class SQLiteCache:
    """The file, the connection and its lock; subclasses hold the queries. A context manager."""

    SCHEMA: str = ""  # the CREATE TABLE IF NOT EXISTS statement of the subclass
    TABLE: str = ""  # the table `len()` counts

    def __init__(self, path: str | Path):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        if self.path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(self.SCHEMA)
        self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute(f"SELECT COUNT(*) FROM {self.TABLE}").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
