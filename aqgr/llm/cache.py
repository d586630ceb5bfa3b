"""Model replies on disk, keyed by provider, model, prompt version and the request's input hash.

Rerunning a batch or an evaluation over the same inputs pays nothing and gets the same
replies (reproducible runs). Only successful replies are stored; a blocked or failed call
is asked again next time. Standard library only (sqlite3); safe to share between processes.
"""

from __future__ import annotations

import hashlib

from aqgr.foundation.sqlite_cache import SQLiteCache

from .base import LLMReply, LLMRequest

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    finish_reason TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
)
"""


def cache_key(provider: str, model: str, request: LLMRequest) -> str:
    parts = "\x1f".join((provider, model, request.prompt_version, request.input_hash()))
    return hashlib.sha256(parts.encode("utf-8")).hexdigest()


class ResponseCache(SQLiteCache):
    """Replies in SQLite (path ':memory:' for a throwaway cache)."""

    SCHEMA = _SCHEMA
    TABLE = "replies"

    def get(self, provider: str, model: str, request: LLMRequest) -> LLMReply | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, input_tokens, output_tokens, finish_reason, model FROM replies WHERE key = ?",
                (cache_key(provider, model, request),),
            ).fetchone()
        if row is None:
            return None
        return LLMReply(
            text=row[0], input_tokens=row[1], output_tokens=row[2], finish_reason=row[3], model=row[4], cached=True
        )

    def put(self, provider: str, model: str, request: LLMRequest, reply: LLMReply) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO replies (key, provider, model, prompt_version, text, input_tokens, output_tokens, finish_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    cache_key(provider, model, request),
                    provider,
                    model,
                    request.prompt_version,
                    reply.text,
                    reply.input_tokens,
                    reply.output_tokens,
                    reply.finish_reason,
                ),
            )
            self._db.commit()
