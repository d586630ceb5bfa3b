"""Reporter citations are found where a plain scan of each pattern finds them: the year-led
patterns are tried only where a year begins (normalize._year_led_matches), and that must be
an optimisation, never a change in what is found."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from aqgr.retrieval.citations import links as L
from aqgr.retrieval.citations import normalize as N

PIECES = [
    "(1994) 3 SCC 112",
    "[1994]",
    "19941995",
    "1994 Indlaw SC 10131991",
    "AIR 1990 SC 12",
    "A.I.R.(1990) SC 1",
    "192019 SCR 5",
    "(2001) Supp SCC 4",
    "2001 Cri LJ 5",
    "(1999) Crl.L.J. 88",
    "JT 1999 (3) SC 44",
    "((1994",
    "([2019] 2 SCR 7",
    "x1994 SCC 1",
    "(20201) 2 SCC 3",
    "1887",
    "2099 S.C.R. 1",
    " ",
    "(",
    "[",
    ")",
    "v.",
    "SC",
    "2020",
]


def scanned(text: str) -> list[tuple[str, int, int]]:
    """(reporter, start, end) of every match of every pattern, by a plain scan of the text."""
    return sorted((reporter, m.start(), m.end()) for reporter, p in N._PATTERNS for m in re.finditer(p, text))


def found(text: str) -> list[tuple[str, int, int]]:
    return [(c.reporter, c.start, c.end) for c in N.citations(text)]


def resolved(matches: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Overlaps resolved as `citations` does: first, then longest."""
    kept: list[tuple[str, int, int]] = []
    for m in sorted(matches, key=lambda m: (m[1], -(m[2] - m[1]))):
        if not kept or m[1] >= kept[-1][2]:
            kept.append(m)
    return kept


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=14).map("".join))
def test_citations_are_what_a_plain_scan_finds(text):
    assert found(text) == resolved(scanned(text))


def test_overlapping_years_and_brackets():
    text = "see (20201) 2 SCC 3 and 192019 SCR 5, [1994] 3 SCC 112 ((1994) 1 SCR 9 and 1994 Indlaw SC 10131991 AIR"
    assert found(text) == resolved(scanned(text))
    assert {c.key for c in N.citations(text)} >= {
        "scr:1920:19:5",
        "scc:1994:3:112",
        "scr:1994:1:9",
        "indlaw:1994:sc:1013",
    }


# -- phrase expansion: one scan for the six states, the others only where they can match -----


def expanded_by_plain_scans(text: str) -> str:
    """`normalize.expand` as plain sequential substitutions, every pattern over every text."""
    for a, b, name in N._STATES:
        text = re.sub(rf"{a}(?<=\b{a})\.?\s?{b}\b\.?", f" {name} ", text)
    for pattern, repl, _, _ in N._PHRASES:
        text = pattern.sub(repl, text)
    return text


PHRASE_PIECES = [
    "U.P.",
    "UP",
    "M. P",
    "A.P",
    "H.P.",
    "T.N.",
    "TN",
    "W.B.",
    "W B",
    "U.N.",
    "UB",
    "xU.P",
    "U.PM.P.",
    "J&K",
    "j & k",
    "UOI",
    "U.o.I.",
    "uoı",
    "UOİ",
    "N.C.T.",
    "nct",
    "M/s.",
    "m/s",
    "&",
    "'s",
    "Ram's",
    "(IV)",
    "( ii )",
    "(V)",
    " ",
    ".",
    "v",
    "State",
    "Uttar",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PHRASE_PIECES), min_size=1, max_size=12).map("".join))
def test_phrases_expand_as_plain_scans_expand_them(text):
    assert N.expand(text) == expanded_by_plain_scans(text)


def test_state_and_phrase_abbreviations_in_a_title():
    assert N.party_key("State Of U.P. & Ors") == ("state", "uttar", "pradesh")
    assert N.expand("U.O.I. v. M/s. T.N. Traders (II)").split() == "Union of India v. Tamil Nadu Traders NoII".split()
    assert N.expand("U.N. Traders v. UOı").split() == "U.N. Traders v. Union of India".split()  # re.I reads "ı" as "I"


# A title pass looks a marker's words up by each (appellant, respondent) word count filed under its
# key (links.Forms), not by comparing every form: the candidates must be those of the plain comparison.
WORDS = ["singh", "state", "of", "punjab", "ram", "union", "india", "kumar"]


class _Listed(L.TitleForms):
    judgments: dict = {}

    def __init__(self, entries):
        self._entries = entries

    def entries(self, key):
        return [e for e in self._entries if (e[1][-1], e[2][0]) == key]


def plain_candidates(entries, left, right) -> dict[str, tuple[int, int]]:
    """TitleForms.candidates as it once was: every form under the key compared with the marker's words."""
    hits: dict[str, tuple[int, int]] = {}
    for doc_id, a, r in entries:
        if (
            (a[-1], r[0]) == (left[-1].word, right[0].word)
            and len(a) <= len(left)
            and len(r) <= len(right)
            and tuple(t.word for t in left[-len(a) :]) == a
            and tuple(t.word for t in right[: len(r)]) == r
        ):
            hits[doc_id] = max(hits.get(doc_id, (0, 0)), (len(a), len(r)), key=lambda n: (sum(n), n[1]))
    return hits


_party = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(tuple)


@given(
    st.lists(st.tuples(st.sampled_from(["D1", "D2", "D3", "D4"]), _party, _party), max_size=30),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
)
@settings(max_examples=400, deadline=None)
def test_title_candidates_are_what_comparing_every_form_finds(entries, before, after):
    left = [N.Token(w, True, 0, 0) for w in before]
    right = [N.Token(w, True, 0, 0) for w in after]
    assert _Listed(entries).candidates(left, right) == plain_candidates(entries, left, right)
