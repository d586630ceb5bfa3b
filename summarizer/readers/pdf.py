"""PDF judgments: the text layer, through pdfminer.six's `extract_text`. No OCR.

Court PDFs are mostly born-digital; a scanned PDF has pages but no text layer and is
reported as 'no_text_layer' (OCR it first, e.g. with ocrmypdf). A password-protected PDF
is 'encrypted'; a PDF that opens without a password (owner restrictions only) is read.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

from aqgr.foundation.errors import MissingDependencyError, ReadError
from aqgr.summarizer.readers.common import read_bytes, require_text, sha256_bytes

INSTALL_EXTRA = "ingest"  # pdfminer.six is a core dependency; the extra repeats it for old installs


def _pdfminer():
    try:
        from pdfminer import high_level, pdfdocument, pdfpage, pdfparser
    except ImportError:
        raise MissingDependencyError("pdfminer.six (needed for .pdf)", INSTALL_EXTRA) from None
    return high_level, pdfdocument, pdfpage, pdfparser


def _page_count(data: bytes) -> int:
    _, pdfdocument, pdfpage, pdfparser = _pdfminer()
    document = pdfdocument.PDFDocument(pdfparser.PDFParser(io.BytesIO(data)))
    return sum(1 for _ in pdfpage.PDFPage.create_pages(document))


def read_pdf(path: Path) -> tuple[str, str]:
    """(text, sha256 of the raw bytes) of a PDF with a text layer."""
    data = read_bytes(path)
    if b"%PDF-" not in data[:1024]:
        raise ReadError(
            str(path), "corrupt", "not a PDF (no %PDF- header): check the file, or give it its real extension"
        )
    try:
        high_level, pdfdocument, _, _ = _pdfminer()
    except MissingDependencyError as exc:
        raise ReadError(str(path), "missing_dependency", str(exc)) from None
    logging.getLogger("pdfminer").setLevel(logging.ERROR)  # its per-object warnings are noise in a batch
    try:
        text = high_level.extract_text(io.BytesIO(data))
        pages = None if any(ch.isalnum() for ch in text) else _page_count(data)
    except pdfdocument.PDFEncryptionError:  # PDFPasswordIncorrect, PDFTextExtractionNotAllowed, unknown handler
        raise ReadError(
            str(path), "encrypted", "the PDF is password-protected: save an unprotected copy and retry"
        ) from None
    except Exception as exc:  # pdfminer raises many kinds (PDFSyntaxError, KeyError, TypeError...) on broken files
        raise ReadError(
            str(path), "corrupt", f"the PDF cannot be parsed ({type(exc).__name__}: {exc}); repair or re-export it"
        ) from None
    if pages == 0:
        raise ReadError(str(path), "corrupt", "the PDF has no pages")
    detail = f"{pages} page(s) but no text layer (a scanned PDF?): run OCR on it (e.g. ocrmypdf) and retry"
    return require_text(text, path, "no_text_layer", detail), sha256_bytes(data)
