"""Readers: PDF (text layer), DOCX and HTML through offline unstructured; bad files get clear reasons."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aqgr.foundation.errors import ReadError
from aqgr.summarizer.readers import READERS, read_judgment, supported_extensions
from tests.aqgr.docgen import encrypted_pdf_bytes, html_text, pdf_bytes, scanned_pdf_bytes, write_docx
from tests.aqgr.helpers import JUDGMENTS

A1 = JUDGMENTS["A1"]


def _reason(path: Path) -> str:
    with pytest.raises(ReadError) as caught:
        read_judgment(path)
    assert str(path) in str(caught.value)
    return caught.value.reason


def test_registry_lists_every_format():
    assert supported_extensions() == [".docx", ".htm", ".html", ".pdf", ".text", ".txt"]
    assert set(READERS) == set(supported_extensions())


def test_pdf_text_layer_is_read(tmp_path):
    path = tmp_path / "A1.pdf"
    path.write_bytes(pdf_bytes(A1))
    text, sha = read_judgment(path)
    assert text.startswith("Ram Kumar v State of Punjab")
    assert "dying declaration" in text and "Criminal Appeal No. 12 of 1997" in text
    assert len(sha) == 64


def test_docx_and_html_are_read_offline(tmp_path):
    docx = write_docx(tmp_path / "A2.docx", JUDGMENTS["A2"])
    text, _ = read_judgment(docx)
    assert text.splitlines()[0] == "Sunita Devi v Union of India" and "audi alteram partem" in text
    html = tmp_path / "A3.html"
    html.write_text(html_text(JUDGMENTS["A3"]), encoding="utf-8")
    text, _ = read_judgment(html)
    assert (
        text.startswith("Mohan Lal v State of Rajasthan") or "Mohan Lal v State of Rajasthan" in text.splitlines()[:3]
    )
    assert "tracking" not in text and "p{margin" not in text  # scripts and styles are not judgment text
    assert "dying declaration recorded by a doctor" in text


def test_unstructured_is_configured_offline(tmp_path):
    """In a fresh process: no spaCy model download, no telemetry, and unstructured loads only when needed."""
    code = (
        "import os, sys, socket\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse\n"
        "from pathlib import Path\n"
        "from aqgr.summarizer.readers import read_judgment\n"
        "assert 'unstructured' not in sys.modules\n"
        f"text, _ = read_judgment(Path({str(tmp_path / 'x.html')!r}))\n"
        "assert 'unstructured' in sys.modules and os.environ['DO_NOT_TRACK'] == '1'\n"
        "import unstructured.nlp.tokenize as t\n"
        "assert t._get_nlp().pipe_names == ['sentencizer']\n"
        "print(text)\n"
    )
    (tmp_path / "x.html").write_text("<p>The appeal is dismissed. No order as to costs.</p>", encoding="utf-8")
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("DO_NOT_TRACK", "SCARF_NO_ANALYTICS")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "The appeal is dismissed." in out.stdout


@pytest.mark.parametrize(
    "name, content, reason",
    [
        ("zero.pdf", b"", "empty"),
        ("zero.docx", b"", "empty"),
        ("zero.html", b"", "empty"),
        ("junk.pdf", bytes(range(256)) * 20, "corrupt"),
        ("truncated.pdf", b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog", "corrupt"),
        ("junk.docx", b"PK\x03\x04 not really a zip" * 10, "corrupt"),
        ("text.docx", b"just text, not a document", "corrupt"),
        ("legacy.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500), "encrypted"),
        ("junk.html", b"\x00\x01\x02\x03" * 100, "binary"),
        ("scripts.html", b"<html><head><script>var a = 1;</script></head><body> </body></html>", "empty"),
    ],
)
def test_bad_files_get_a_reason(tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_bytes(content)
    assert _reason(path) == reason


def test_encrypted_and_scanned_pdfs_are_reported_as_such(tmp_path):
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(encrypted_pdf_bytes(A1))
    assert _reason(locked) == "encrypted"
    scanned = tmp_path / "scan.pdf"
    scanned.write_bytes(scanned_pdf_bytes(3))
    with pytest.raises(ReadError) as caught:
        read_judgment(scanned)
    assert caught.value.reason == "no_text_layer" and "3 page(s)" in str(caught.value) and "OCR" in str(caught.value)


def test_missing_and_unsupported(tmp_path):
    assert _reason(tmp_path / "gone.pdf") == "missing"
    (tmp_path / "x.rtf").write_text("{\\rtf1 hello}")
    assert _reason(tmp_path / "x.rtf") == "unsupported"


def test_missing_unstructured_says_how_to_install(tmp_path, monkeypatch):
    import aqgr.summarizer.readers.office as office

    office._unstructured_offline.cache_clear()
    monkeypatch.setitem(sys.modules, "unstructured.nlp.tokenize", None)
    path = write_docx(tmp_path / "a.docx", A1)
    try:
        with pytest.raises(ReadError) as caught:
            read_judgment(path)
    finally:
        office._unstructured_offline.cache_clear()
    assert caught.value.reason == "missing_dependency" and "pip install 'aqgr[ingest]'" in str(caught.value)
