"""Plain-text judgments (.txt, .text)."""

from __future__ import annotations

from pathlib import Path

from aqgr.summarizer.readers.common import decode_text, read_bytes, require_text, sha256_bytes


def read_txt(path: Path) -> tuple[str, str]:
    """(text, sha256 of the raw bytes) of a plain-text judgment."""
    data = read_bytes(path)
    return require_text(decode_text(data, str(path)), path), sha256_bytes(data)
