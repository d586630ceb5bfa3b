"""The pinpoint check shared by the sample-archive test and the AILA one: the judgment's text at a
piece of evidence's offsets is the quote (or, for a part match, a part of it), and a paragraph
given is one the judgment numbers at or before that place."""

from __future__ import annotations

import re

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"})


def _plain(text: str, *, fold: bool) -> str:
    text = " ".join(text.split())
    return text.translate(_QUOTES).lower() if fold else text


def pinpoint_problem(text: str, quote: str, pin) -> str | None:
    """Why `pin` (an Evidence or Pinpoint) does not hold for `quote` in `text`; None when it does."""
    if not pin.located:
        return None if pin.start is None and pin.end is None and pin.paragraph is None else "unlocated but with offsets"
    if not 0 <= pin.start < pin.end <= len(text):
        return f"offsets {pin.start}-{pin.end} outside the text"
    quote = quote.strip().removesuffix(" ...")
    found = text[pin.start : pin.end]
    holds = {
        "exact": found == quote,
        "whitespace": _plain(found, fold=False) == _plain(quote, fold=False),
        "case": _plain(found, fold=True) == _plain(quote, fold=True),
        "part": len(found.split()) >= 6 and _plain(found, fold=True) in _plain(quote, fold=True),
    }.get(pin.match, False)
    if not holds:
        return f"{pin.match}: text at {pin.start}-{pin.end} is {found[:80]!r}, quote {quote[:80]!r}"
    if pin.paragraph is not None:
        marker = rf"(?m)^[ \t]*(?:{pin.paragraph}[.)]|\({pin.paragraph}\))\s"
        if not re.search(marker, text[: pin.start + len(str(pin.paragraph)) + 3]):
            return f"paragraph {pin.paragraph} is not numbered before offset {pin.start}"
    return None


def hit_problems(text: str | None, hit) -> list[str]:
    """Every pinpoint of a search hit (issue, reason, evidence) that does not hold."""
    pins = [(hit.legal_issue, hit.legal_issue_at), (hit.reason, hit.reason_at)] + [(e.text, e) for e in hit.evidence]
    problems = []
    for quote, pin in pins:
        if pin is None:
            problems.append(f"{hit.judgment_id}: not pinned")
        elif text is None and pin.located:
            problems.append(f"{hit.judgment_id}: located without a text")
        elif text is not None and (problem := pinpoint_problem(text, quote, pin)):
            problems.append(f"{hit.judgment_id}: {problem}")
    return problems
