"""Readers turn a judgment file into text. One reader per file kind, chosen by extension.

Only plain text is read here; other formats plug in as more readers (same interface).
Every failure is a `ReadError` with a short reason: 'empty', 'binary', 'unreadable',
'unsupported', 'missing'.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

from aqgr.errors import ReadError

# Decoding order for .txt: BOM-marked encodings first, then strict UTF-8, then cp1252
# (the usual legacy encoding of Indian court text exports), then latin-1 (never fails).
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
_FALLBACKS = ("utf-8", "cp1252", "latin-1")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def looks_binary(data: bytes) -> bool:
    """True for data that is not text: NUL bytes, or many control characters."""
    sample = data[:8192]
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    return controls > max(8, len(sample) // 100)


def decode_text(data: bytes, path: str) -> str:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding, errors="replace")
    if looks_binary(data):
        raise ReadError(path, "binary", "the file is not text (NUL or control bytes); give a .txt, or a supported document format")
    for encoding in _FALLBACKS:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes every byte string")  # pragma: no cover


def normalise_text(text: str) -> str:
    """Unify newlines and drop trailing spaces; keep paragraph structure."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def read_txt(path: Path) -> tuple[str, str]:
    """(text, sha256 of the raw bytes) of a plain-text judgment."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ReadError(str(path), "missing", "the file no longer exists") from None
    except OSError as exc:
        raise ReadError(str(path), "unreadable", exc.strerror or str(exc)) from None
    text = normalise_text(decode_text(data, str(path)))
    if not text.strip():
        raise ReadError(str(path), "empty", "the file has no text")
    return text, sha256_bytes(data)


READERS: dict[str, Callable[[Path], tuple[str, str]]] = {".txt": read_txt, ".text": read_txt}


def supported_extensions() -> list[str]:
    return sorted(READERS)


def read_judgment(path: Path) -> tuple[str, str]:
    """(text, sha256) of a judgment file, by extension."""
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise ReadError(str(path), "unsupported", f"no reader for {path.suffix or 'files without extension'}; supported: {', '.join(supported_extensions())}")
    return reader(path)
