"""Readers turn a judgment file into text. One reader per file kind, chosen by extension.

    text, sha256 = read_judgment(Path("C12.pdf"))

| extension | reader | library |
| --- | --- | --- |
| .txt, .text | `text.read_txt` | stdlib (BOM, UTF-8, cp1252, latin-1) |
| .pdf | `pdf.read_pdf` | pdfminer.six `extract_text` (a text layer; no OCR) |
| .docx | `office.read_docx` | unstructured `partition_docx`, offline (`pip install 'aqgr[ingest]'`) |
| .html, .htm | `office.read_html` | unstructured `partition_html`, offline (same extra) |

The sha256 is of the file's raw bytes (what "unchanged" means in a batch). Every failure
is a `ReadError(path, reason, detail)`; the reasons: 'missing', 'unreadable', 'empty',
'binary', 'unsupported', 'corrupt' (not a valid file of its kind), 'encrypted'
(password-protected), 'no_text_layer' (a scanned PDF: OCR it first), 'missing_dependency'
(the message names the pip command). A file that yields no text is always an error,
never an empty judgment.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aqgr.foundation.errors import ReadError
from aqgr.summarizer.readers.common import decode_text, looks_binary, normalise_text, sha256_bytes
from aqgr.summarizer.readers.office import read_docx, read_html
from aqgr.summarizer.readers.pdf import read_pdf
from aqgr.summarizer.readers.text import read_txt

Reader = Callable[[Path], tuple[str, str]]

READERS: dict[str, Reader] = {
    ".txt": read_txt,
    ".text": read_txt,
    ".pdf": read_pdf,
    ".docx": read_docx,
    ".html": read_html,
    ".htm": read_html,
}

__all__ = [
    "READERS",
    "Reader",
    "read_judgment",
    "supported_extensions",
    "sha256_bytes",
    "looks_binary",
    "decode_text",
    "normalise_text",
    "read_txt",
]


def supported_extensions() -> list[str]:
    return sorted(READERS)


def read_judgment(path: Path) -> tuple[str, str]:
    """(text, sha256) of a judgment file, by extension."""
    path = Path(path)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise ReadError(
            str(path),
            "unsupported",
            f"no reader for {path.suffix or 'files without extension'}; supported: {', '.join(supported_extensions())}",
        )
    return reader(path)
