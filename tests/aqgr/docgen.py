"""Tiny document generators for tests and benchmarks: PDFs written by hand, DOCX via python-docx.

No binary fixtures are committed: every PDF/DOCX/HTML a test needs is made here.
"""

from __future__ import annotations

import textwrap
import zlib
from pathlib import Path


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF file from its numbered objects (1-based, in order), with a correct xref table."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _escape(line: str) -> bytes:
    raw = line.encode("cp1252", errors="replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    packed = zlib.compress(data)
    return b"<< /Length %d /Filter /FlateDecode %s>>\nstream\n" % (len(packed), extra) + packed + b"\nendstream"


def pdf_bytes(text: str, *, width: int = 95, lines_per_page: int = 60) -> bytes:
    """A text PDF (Helvetica, WinAnsi) whose text layer holds `text`, wrapped, paragraphs kept."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines.extend(textwrap.wrap(paragraph, width) or [""])
    pages = [lines[i : i + lines_per_page] for i in range(0, max(len(lines), 1), lines_per_page)]
    n = len(pages)
    # 1 catalog, 2 pages, 3 font, then per page: page object, content stream
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(n))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for i, page in enumerate(pages):
        content = (
            b"BT /F1 10 Tf 12 TL 40 800 Td\n" + b"".join(b"(" + _escape(line) + b") Tj T*\n" for line in page) + b"ET"
        )
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>"
            % (5 + 2 * i)
        )
        objects.append(_stream(content))
    return _pdf(objects)


def scanned_pdf_bytes(pages: int = 2) -> bytes:
    """A PDF whose pages only paint an image (what a scanner makes): no text layer."""
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(pages))
    image = _stream(
        bytes(range(256)) * 64,
        b"/Type /XObject /Subtype /Image /Width 128 /Height 128 /ColorSpace /DeviceGray /BitsPerComponent 8 ",
    )
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages), image]
    for i in range(pages):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Im1 3 0 R >> >> /Contents %d 0 R >>"
            % (5 + 2 * i)
        )
        objects.append(_stream(b"q 500 0 0 700 40 70 cm /Im1 Do Q"))
    return _pdf(objects)


def encrypted_pdf_bytes(text: str, password: str = "secret") -> bytes:
    """A text PDF protected by a user password (pypdf, RC4-128: no extra crypto package needed)."""
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(text))))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def write_docx(path: Path, text: str, *, title: str | None = None) -> Path:
    import docx

    document = docx.Document()
    if title:
        document.add_heading(title, level=1)
    for paragraph in text.split("\n"):
        if paragraph.strip():
            document.add_paragraph(paragraph)
    document.save(str(path))
    return path


def html_text(text: str, *, title: str = "Judgment") -> str:
    from html import escape

    body = "\n".join(f"<p>{escape(p)}</p>" for p in text.split("\n") if p.strip())
    return f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title><style>p{{margin:0}}</style><script>var tracking = 1;</script></head><body><nav>Home | Judgments</nav><main>{body}</main></body></html>"
