"""What every reader shares: raw bytes with clear errors, decoding, normalisation, the digest.

Every failure is a `ReadError` with a short reason; the reasons of all readers are listed
in `summarizer.readers` (module docstring).
"""

from __future__ import annotations

import errno
import hashlib
from pathlib import Path

from aqgr.foundation.errors import ReadError

# Decoding order for text: BOM-marked encodings first, then strict UTF-8, then cp1252
# (the usual legacy encoding of Indian court text exports), then latin-1 (never fails).
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
_FALLBACKS = ("utf-8", "cp1252", "latin-1")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_bytes(path: Path) -> bytes:
    """The file's bytes; 'missing', 'unreadable' or 'empty' (zero bytes) otherwise."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ReadError(str(path), "missing", "the file no longer exists (moved or deleted during the run?)") from None
    except IsADirectoryError:
        raise ReadError(str(path), "unreadable", "a directory, not a file") from None
    except OSError as exc:
        hint = "check its permissions" if exc.errno in (errno.EACCES, errno.EPERM) else "check the file and the disk"
        raise ReadError(str(path), "unreadable", f"{exc.strerror or exc}; {hint}") from None
    if not data:
        raise ReadError(str(path), "empty", "the file is empty (0 bytes)")
    return data


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
        raise ReadError(
            path, "binary", "the file is not text (NUL or control bytes); give a .txt, or a supported document format"
        )
    for encoding in _FALLBACKS:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes every byte string")  # pragma: no cover


def normalise_text(text: str) -> str:
    """Unify newlines, drop NULs (PostgreSQL text refuses them) and trailing spaces; keep paragraphs."""
    text = (
        text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ").replace("\x00", "").replace("\x0c", "\n")
    )
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def require_text(text: str, path: Path, reason: str = "empty", detail: str = "the file has no text") -> str:
    """The normalised text, or a ReadError when nothing readable is left (never a silent empty judgment)."""
    text = normalise_text(text)
    if not any(ch.isalnum() for ch in text):
        raise ReadError(str(path), reason, detail)
    return text
