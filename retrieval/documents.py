"""Structured summaries -> field-based retrieval documents.

Retrieval is field-based (SPEC.md, stage 2): a document is the text of a chosen set of
slots of one summary. Each slot becomes one text: lists are joined by newlines; statutes
and precedents read "name: principle application"; parties read
"appellants v. respondents".

`summary_fingerprint` names the summary an index holds for a judgment, so an update can
tell new, changed and unchanged judgments apart without comparing their slots.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC
from typing import TYPE_CHECKING

from aqgr.foundation.errors import UnknownNameError
from aqgr.schemas.summary import SummarySlots

if TYPE_CHECKING:
    from aqgr.schemas.summary import StructuredSummary

# Every slot usable for retrieval (date, bench and disposed_in_favour_of carry nothing a
# legal question would match on).
SLOT_NAMES: tuple[str, ...] = (
    "parties",
    "case_number",
    "court",
    "judgment_kind",
    "facts",
    "arguments",
    "issues",
    "reasoning",
    "final_judgment",
    "statutes",
    "precedents",
    "new_principles",
    "subjects",
)

# The study's retrieval slots (SPEC.md, stage 2) plus the new principles; precedents are
# off by default: the study found indexing them scored lower on the FIRE gold standard.
DEFAULT_SLOTS: tuple[str, ...] = ("parties", "case_number", "facts", "issues", "reasoning", "new_principles")

# The slots that carry legal meaning (the issue's direction for dense retrieval): the lexical
# retrievers already match the facts and parties word for word. `IndexSpec.dense_slots`
# can restrict the dense retriever to them; it is not the default (None: every indexed
# slot). Citation benchmark, aqgr before precedents referred: 0.1454 -> 0.1459 MAP, better on 212
# queries, worse on 134 (p = 0.003): a tie by MAP, and on the Milvus backend it pushed the
# backends' agreement outside its tolerance (AILA study subset AP 0.047 apart, one
# judgment of one query; docs/experiments/2026-11-30-dense-retriever-text.md).
DENSE_SLOTS: tuple[str, ...] = ("issues", "reasoning", "new_principles")


def _lines(items: Iterable[str]) -> str:
    return "\n".join(s.strip() for s in items if s and s.strip())


def _ref(name: str, *rest: str) -> str:
    tail = " ".join(s.strip() for s in rest if s and s.strip())
    return f"{name.strip()}: {tail}" if tail else name.strip()


_SLOT_TEXT: dict[str, Callable[[SummarySlots], str]] = {
    "parties": lambda s: " v. ".join(
        side for side in (", ".join(s.parties.appellants), ", ".join(s.parties.respondents)) if side
    ),
    "case_number": lambda s: s.case_number or "",
    "court": lambda s: s.court or "",
    "judgment_kind": lambda s: s.judgment_kind or "",
    "facts": lambda s: s.facts,
    "arguments": lambda s: _lines([*s.arguments.appellants, *s.arguments.respondents]),
    "issues": lambda s: _lines(s.issues),
    "reasoning": lambda s: s.reasoning,
    "final_judgment": lambda s: s.final_judgment,
    "statutes": lambda s: _lines(_ref(r.name, r.principle, r.application) for r in s.statutes),
    "precedents": lambda s: _lines(_ref(r.name, r.principle, r.application) for r in s.precedents),
    "new_principles": lambda s: _lines(_ref(p.principle, p.application) for p in s.new_principles),
    "subjects": lambda s: _lines(s.subjects),
}


def check_slots(slots: Iterable[str]) -> tuple[str, ...]:
    """The slots as a tuple, or UnknownNameError listing the valid slot names."""
    if isinstance(slots, str):
        raise TypeError(f"slots must be a sequence of slot names, not the string {slots!r}")
    out = tuple(slots)
    for slot in out:
        if slot not in _SLOT_TEXT:
            raise UnknownNameError("slot", slot, list(SLOT_NAMES))
    if not out:
        raise ValueError(f"at least one slot is needed; valid slots: {', '.join(SLOT_NAMES)}")
    if len(set(out)) != len(out):
        raise ValueError(f"slot listed twice in {out!r}")
    return out


def slot_texts(summary: SummarySlots, slots: Iterable[str] = DEFAULT_SLOTS) -> dict[str, str]:
    """Text of each requested slot, in the order asked (empty slots give '')."""
    return {slot: _SLOT_TEXT[slot](summary).strip() for slot in check_slots(slots)}


def dense_texts(texts: Mapping[str, str], dense_slots: Iterable[str] | None = None) -> dict[str, str]:
    """The slot texts the dense retriever embeds: those of `dense_slots` (None: every slot)
    among `texts`; a document with no text in them is embedded whole, so that every
    document keeps a vector."""
    if dense_slots is None:
        return dict(texts)
    chosen = {slot: texts[slot] for slot in dense_slots if texts.get(slot)}
    return chosen or dict(texts)


def document_text(summary: SummarySlots, slots: Iterable[str] = DEFAULT_SLOTS) -> str:
    """The retrieval document: non-empty slot texts joined by blank lines."""
    return "\n\n".join(text for text in slot_texts(summary, slots).values() if text)


def fingerprint_of(engine: str, engine_version: str, source_sha256: str, created_at) -> str:
    """What identifies a stored summary (see `summary_fingerprint`), from its parts: the store
    computes it from its columns without parsing the summaries."""
    created = created_at.astimezone(UTC).replace(tzinfo=None) if created_at.tzinfo else created_at
    key = f"{engine}|{engine_version}|{source_sha256}|{created.isoformat(timespec='microseconds')}"
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def summary_fingerprint(summary: StructuredSummary) -> str:
    """What identifies an indexed summary: its engine, engine version, source text hash and
    creation time (a summary made again, or imported in place of another, differs)."""
    p = summary.provenance
    return fingerprint_of(p.engine, p.engine_version, p.source_sha256, p.created_at)


# -- the texts a search embeds that an index can embed ahead -------------------------------------

_NUMBERING = re.compile(r"^\(?(?:\d{1,3}|[ivx]{1,5}|[a-h])[.)]\s+", re.IGNORECASE)
_LEAD_IN = re.compile(r"^[^.?;]{0,120}?\b(?=whether\b)", re.IGNORECASE)
QUESTION_MAX_CHARS = 400


def question_form(issue: str) -> str:
    """An issue sentence as the offline question generator asks it: numbering and lead-in
    dropped ("The question that arises is whether X" -> "Whether X?"), capitalised, at most
    QUESTION_MAX_CHARS characters, ending in "?"."""
    text = _NUMBERING.sub("", re.sub(r"\s+", " ", issue).strip()).strip(" ;:,.-")
    lead = _LEAD_IN.match(text)
    if lead:
        text = text[lead.end() :]
    if len(text) > QUESTION_MAX_CHARS:
        text = text[:QUESTION_MAX_CHARS].rsplit(" ", 1)[0] + " ..."
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    return text if text.endswith(("?", "...")) else text + "?"


def query_sentences(issues: Iterable[str]) -> tuple[str, ...]:
    """The short texts of a judgment that a search embeds, whitespace-normalised, once each: its
    issue sentences (the question ranking compares the facts with them) and their question forms
    (the questions a search retrieves with). An index embeds them when it adds the judgment, so a
    search finds their vectors instead of running the model."""
    texts = (" ".join(t.split()) for issue in issues for t in (issue, question_form(issue)))
    return tuple(dict.fromkeys(t for t in texts if t))
