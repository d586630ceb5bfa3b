"""Reading an archive's judgments: title, parties, date, body paragraphs.

A judgment's first non-empty line is its title ("Appellant v Respondent"); its date is
the first full date ("26 September 1973") in the header lines; the header ends at the
line naming the author ("The Judgment was delivered by ...") or at the first numbered
paragraph, whichever comes first (AILA's layout; other archives fall back to
HEADER_LINES lines). Each later non-empty line is a paragraph.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from aqgr.foundation.errors import DatasetError

# How many leading lines may hold the header (title, court, date, case number, bench).
HEADER_LINES = 8

MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}
_DATE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(MONTHS) + r"),?\s+(\d{4})\b", re.I)
_VERSUS = re.compile(r"\s+(?:v|vs|versus)\.?\s+", re.I)
_AUTHOR = re.compile(r"delivered by|^\s*J\s*U\s*D\s*G\s*M\s*E\s*N\s*T\s*:?\s*$", re.I)
_NUMBERED = re.compile(r"^\s*1\s*[.)]\s")


@dataclass(frozen=True)
class Judgment:
    """One judgment of the archive, as the benchmark builder needs it."""

    doc_id: str
    title: str
    appellant: str
    respondent: str
    date: dt.date | None
    header: tuple[str, ...]
    paragraphs: tuple[str, ...]

    @property
    def year(self) -> int | None:
        return self.date.year if self.date else None


def parse_judgment(doc_id: str, text: str, *, header_only: bool = False) -> Judgment:
    """The judgment's title, parties, date, header and paragraphs; `header_only`: without
    the paragraphs (only the first HEADER_LINES non-empty lines are read)."""
    lines = (stripped for line in text.splitlines() if (stripped := line.strip()))
    lines = list(islice(lines, HEADER_LINES) if header_only else lines)
    if not lines:
        return Judgment(doc_id, "", "", "", None, (), ())
    title = lines[0]
    parts = _VERSUS.split(title, maxsplit=1)
    appellant, respondent = (parts[0], parts[1]) if len(parts) == 2 else (title, "")
    end = min(HEADER_LINES, len(lines))
    for i, line in enumerate(lines[1:HEADER_LINES], start=1):
        if _AUTHOR.search(line):
            end = i + 1
            break
        if _NUMBERED.match(line):
            end = i
            break
    header = tuple(lines[:end])
    return Judgment(
        doc_id,
        title,
        appellant.strip(),
        respondent.strip(),
        find_date(header),
        header,
        () if header_only else tuple(lines[end:]),
    )


def find_date(lines) -> dt.date | None:
    for line in lines[1:]:
        m = _DATE.search(line)
        if m:
            try:
                return dt.date(int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1)))
            except ValueError:
                continue
    return None


def read_archive(docs_dir: Path, doc_ids) -> dict[str, Judgment]:
    """Every judgment of the folder, parsed; an unreadable file raises DatasetError naming it."""
    found = {}
    for doc_id in doc_ids:
        path = Path(docs_dir) / f"{doc_id}.txt"
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise DatasetError(f"{path}: cannot read judgment {doc_id}: {exc}") from exc
        found[doc_id] = parse_judgment(doc_id, text)
    return found
