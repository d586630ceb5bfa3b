"""DOCX and HTML judgments, through `unstructured` configured to run offline.

unstructured 0.27 loads spaCy's `en_core_web_sm` on first use and downloads it when
missing (fails offline), and pings a telemetry server on import unless DO_NOT_TRACK is
set (../shared/NOTES-ENV.md). So, lazily and only when a .docx or .html is read:
DO_NOT_TRACK=1 and UNSTRUCTURED_DISABLE_NOTICE=1 are set before the import, and its
`_get_nlp` is replaced by a blank English spaCy pipeline with a rule-based sentencizer
(no model, no download; used only for the element-type heuristics). Elements become
paragraphs, one per line, in document order.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path

from aqgr.foundation.errors import MissingDependencyError, ReadError
from aqgr.summarizer.readers.common import decode_text, read_bytes, require_text, sha256_bytes

INSTALL_EXTRA = "ingest"
_lock = threading.Lock()
# An OLE compound file: a password-protected .docx (Office encrypts into this container) or a legacy .doc.
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


@lru_cache(maxsize=1)
def _blank_nlp():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


@lru_cache(maxsize=1)
def _unstructured_offline():
    """Import unstructured with telemetry off and its spaCy model replaced; once per process."""
    with _lock:
        os.environ.setdefault("DO_NOT_TRACK", "1")
        os.environ.setdefault("SCARF_NO_ANALYTICS", "1")
        os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
        try:
            import unstructured.nlp.tokenize as tokenize
            from unstructured.partition.docx import partition_docx
            from unstructured.partition.html import partition_html
        except ImportError:
            raise MissingDependencyError("unstructured (needed for .docx and .html)", INSTALL_EXTRA) from None
        tokenize._get_nlp = _blank_nlp
        return partition_docx, partition_html


def _partitioners(path: Path):
    try:
        return _unstructured_offline()
    except MissingDependencyError as exc:
        raise ReadError(str(path), "missing_dependency", str(exc)) from None


def _join(elements) -> str:
    return "\n".join(text for e in elements if (text := (getattr(e, "text", "") or "").strip()))


def read_docx(path: Path) -> tuple[str, str]:
    data = read_bytes(path)
    if data.startswith(_OLE_MAGIC):
        raise ReadError(
            str(path),
            "encrypted",
            "an OLE container, not a .docx: a password-protected .docx (save an unprotected copy) or a legacy .doc (save as .docx)",
        )
    if not data.startswith(b"PK"):
        raise ReadError(
            str(path), "corrupt", "not a .docx (no ZIP signature): check the file, or give it its real extension"
        )
    partition_docx, _ = _partitioners(path)
    import io

    try:
        elements = partition_docx(file=io.BytesIO(data))
    except Exception as exc:  # python-docx / zipfile / lxml errors on a broken package
        raise ReadError(
            str(path),
            "corrupt",
            f"the .docx cannot be parsed ({type(exc).__name__}: {exc}); re-save it from a word processor",
        ) from None
    return require_text(_join(elements), path), sha256_bytes(data)


def read_html(path: Path) -> tuple[str, str]:
    data = read_bytes(path)
    markup = decode_text(data, str(path))  # 'binary' for junk
    _, partition_html = _partitioners(path)
    try:
        elements = partition_html(text=markup)
    except Exception as exc:
        raise ReadError(str(path), "corrupt", f"the HTML cannot be parsed ({type(exc).__name__}: {exc})") from None
    return require_text(_join(elements), path, "empty", "the page has no visible text"), sha256_bytes(data)
