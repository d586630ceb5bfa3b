"""Paragraph and sentence splitting for legal text, aware of legal abbreviations.

Court judgments are full of periods that do not end a sentence: `v.`, `No. 117`,
`Sec. 302`, `Art. 14`, `A. Alagiriswami, J.`, `i.e.`, `Cr.P.C.`, numbered paragraphs
(`12.  The appellant ...`). The splitter is regex-and-rules only (no model, no data
download), linear in the length of the text, and deterministic.

Public functions return strings; the `*_spans` variants return `(start, end)` offsets
into the text given, so callers can cut verbatim passages out of the source.
"""

from __future__ import annotations

import re

__all__ = ["split_paragraphs", "split_sentences", "paragraph_spans", "sentence_spans"]

# Tokens (lower-cased, without their final period) after which a period never ends a
# sentence: they are always followed by a name, a number or a citation.
_NEVER_FINAL = frozenset(
    """
    v vs no nos s ss sec secs art arts j jj cj ltd co pvt dr mr mrs ms smt shri sri sh
    viz cl cls para paras p pp hon govt corpn ors anr m/s u/s u/ss r/w st rs vol supp ch
    cf ibid ex exh sub sub-s sub-sec sub-cl subs mad bom cal ker guj raj ori pat del cri
    crl cr air scc scr prof gen col capt lt sr jr messrs illus explan expln approx nr
    """.split()
)
# Dotted abbreviations and acronyms (i.e., e.g., Cr.P.C., I.P.C., U.P.): a period after
# them ends a sentence only when the next word is a usual sentence opener.
_DOTTED = re.compile(r"^(?:[A-Za-z]{1,3}\.)+[A-Za-z]{1,3}$")
_SOFT_FINAL = frozenset({"etc"})
_OPENERS = frozenset(
    """
    The This That These Those There Then Thus Hence Therefore However Accordingly According
    He She It They We I In On As At After Before When Where While If Since Such Having
    Further Furthermore Moreover So But Now Even Our His Her Their Its Both All Each Again
    Similarly Here Learned Admittedly A An Apart Also Although Though Once Counsel
    """.split()
)

# A candidate boundary: terminal punctuation (plus closing quotes/brackets), then
# whitespace, then something that can open a sentence.
_BOUNDARY = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9])")
_NEXT_WORD = re.compile(r"\s+[\"'\u201c\u2018(\[]?([A-Za-z0-9]+)")
_LEADING_PUNCT = "([{\"'\u201c\u2018"

# A line that opens a new paragraph: "12.", "(3)", "(iv)", "IV.", "a)", bullets.
_PARA_MARKER = re.compile(r"\s*(?:\d{1,3}[.)]|\(\d{1,3}\)|\([a-z]{1,4}\)|[ivxIVX]{1,5}[.)]|[a-z][.)]|[-\u2022*])\s")
_LINE_END_FINAL = ".:;?!\"'\u201d\u2019)"


def _is_boundary(text: str, start: int, match: re.Match[str]) -> bool:
    """Whether the punctuation matched at `match` ends a sentence that began at `start`."""
    punct = match.group(0)
    if not punct.startswith(".") or len(punct.rstrip("\"'\u201d\u2019)]")) > 1:
        return True  # '!', '?', or an ellipsis
    dot = match.start()
    word_start = (
        max(start - 1, text.rfind(" ", start, dot), text.rfind("\n", start, dot), text.rfind("\t", start, dot)) + 1
    )
    word = text[word_start:dot].lstrip(_LEADING_PUNCT)
    if not word:
        return True
    lower = word.lower()
    if len(word) == 1 and word.isalpha():
        return False  # an initial: "A. Alagiriswami"
    if lower in _NEVER_FINAL:
        return False
    if word.isdigit() and len(word) <= 3 and not text[start:word_start].strip(_LEADING_PUNCT + " \t"):
        return False  # a paragraph number: "12.  The appellant ..."
    if lower in _SOFT_FINAL or _DOTTED.match(word):
        following = _NEXT_WORD.match(text, match.end())
        return bool(following) and following.group(1) in _OPENERS
    return True


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of text[start:end], paragraph by paragraph."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    for p_start, p_end in paragraph_spans(text, start, end):
        s_start = p_start
        for match in _BOUNDARY.finditer(text, p_start, p_end):
            if match.end() <= s_start or not _is_boundary(text, s_start, match):
                continue
            spans.append((s_start, match.end()))
            s_start = match.end()
            while s_start < p_end and text[s_start].isspace():
                s_start += 1
        if s_start < p_end:
            spans.append((s_start, p_end))
    return spans


def paragraph_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) offsets of the paragraphs of text[start:end].

    A paragraph ends at a blank line, before a line that opens with a paragraph marker
    ("12.", "(iv)", a bullet), and after a line that ends with terminal punctuation;
    other line breaks (hard-wrapped text) are joined into one paragraph.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    p_start = p_end = -1
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        line_end = end if nl < 0 else nl
        line = text[pos:line_end]
        stripped = line.strip()
        if not stripped:
            if p_start >= 0:
                spans.append((p_start, p_end))
                p_start = -1
        else:
            l_start = pos + (len(line) - len(line.lstrip()))
            l_end = pos + len(line.rstrip())
            opens = _PARA_MARKER.match(line) is not None
            if p_start >= 0 and (opens or text[p_end - 1] in _LINE_END_FINAL):
                spans.append((p_start, p_end))
                p_start = -1
            if p_start < 0:
                p_start = l_start
            p_end = l_end
        pos = line_end + 1
    if p_start >= 0:
        spans.append((p_start, p_end))
    return spans


def _normalise(text: str) -> str:
    return " ".join(text.split())


def split_paragraphs(text: str) -> list[str]:
    """The paragraphs of `text`, each with its whitespace normalised (hard wraps joined)."""
    return [_normalise(text[a:b]) for a, b in paragraph_spans(text)]


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, each with its whitespace normalised.

    A sentence never spans two paragraphs. Periods after legal abbreviations (v., No.,
    Sec., Art., J., Ltd., Dr., Smt., i.e., viz., cl., pp., Cr.P.C., ...), initials and
    paragraph numbers do not end a sentence.
    """
    return [_normalise(text[a:b]) for a, b in sentence_spans(text)]
