"""Pinpoint citations: a quote's offsets and paragraph number in the judgment's own text."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from aqgr.pipeline.pinpoint import (
    JudgmentSource,
    ParagraphIndex,
    _Normalised,
    locate,
    numbered_lines,
    pin_hits,
    pinpoint,
    summary_pinpoints,
    where,
)
from aqgr.schemas.results import Evidence, Hit
from aqgr.schemas.summary import Provenance, StatuteRef, StructuredSummary

JUDGMENT = (
    "Ram Kumar v State of Haryana\n"
    "Supreme Court of India\n\n"
    "1.  The appellant was convicted under Section 302 of the Indian Penal Code\n"
    "for the murder of his neighbour.  The trial court relied on a dying declaration.\n"
    "2. The High Court affirmed the conviction. The learned counsel contended that the\n"
    "declaration was not made in a fit state of mind, and cited these points:\n"
    "(1) no doctor certified the state of mind;\n"
    "(2) the magistrate was not called.\n"
    "3. We are of the opinion that a dying declaration recorded by a magistrate\n"
    "can form the sole basis of conviction if it is true and voluntary.\n"
    "4. The appeal is dismissed.\n"
)


def _at(span, text=JUDGMENT):
    return text[span.start : span.end]


def test_an_exact_quote_gives_its_offsets_and_paragraph():
    quote = "The High Court affirmed the conviction."
    span = locate(quote, JUDGMENT)
    assert span.match == "exact" and _at(span) == quote and span.paragraph == 2


def test_a_quote_with_its_whitespace_normalised_is_found_across_line_breaks():
    quote = "The trial court relied on a dying declaration. 2. The High Court affirmed"
    assert locate(quote, JUDGMENT) is not None  # across a paragraph boundary, too
    quote = (
        "We are of the opinion that a dying declaration recorded by a magistrate can form the sole basis of conviction"
    )
    span = locate(quote, JUDGMENT)
    assert span.match == "whitespace" and " ".join(_at(span).split()) == quote and span.paragraph == 3
    assert _at(span).startswith("We are") and _at(span).endswith("conviction")


def test_case_and_quotation_marks_do_not_matter_in_the_third_step():
    text = "5. The Court said \u201cno man shall be a judge in his own cause\u201d and allowed it."
    span = locate('THE COURT SAID "NO MAN SHALL BE A JUDGE', text)
    assert span.match == "case" and _at(span, text) == "The Court said \u201cno man shall be a judge"
    assert span.paragraph is None  # one numbered paragraph is not a numbering


def test_a_paraphrase_around_a_verbatim_sentence_points_at_that_sentence():
    sentence = "We are of the opinion that a dying declaration recorded by a magistrate can form the sole basis of conviction if it is true and voluntary."
    quote = f"The Court reasoned in its own words as follows here. {sentence} This was the ratio of the case overall."
    span = locate(quote, JUDGMENT)
    assert span.match == "part" and " ".join(_at(span).split()) == sentence and span.paragraph == 3


def test_a_statute_principle_after_its_name_is_found_whole():
    principle = (
        "The appellant was convicted under Section 302 of the Indian Penal Code for the murder of his neighbour."
    )
    span = locate(f"Section 302 of the Indian Penal Code: {principle}", JUDGMENT)
    assert span.match == "part" and " ".join(_at(span).split()) == principle and span.paragraph == 1


def test_a_quote_not_in_the_judgment_is_not_located():
    assert locate("The appellant was acquitted of all charges by the Sessions Court.", JUDGMENT) is None
    assert locate("", JUDGMENT) is None
    pin = pinpoint("The appellant was acquitted of all charges by the Sessions Court.", JudgmentSource(JUDGMENT))
    assert pin.located is False and pin.start is None and pin.end is None and pin.paragraph is None
    assert pinpoint("The appeal is dismissed.", None).located is False  # no text in the archive
    assert where(pin) == "not found in the judgment"


def test_a_short_sentence_alone_does_not_locate_a_longer_quote():
    # "The appeal is dismissed." is in the text, but too short to stand for the whole quote
    assert locate("Nothing of this is in the judgment at all. The appeal is dismissed.", JUDGMENT) is None


def test_a_quote_aqgr_shortened_is_found_without_its_ellipsis():
    span = locate("The learned counsel contended that the declaration was not ...", JUDGMENT)
    assert (
        span is not None and " ".join(_at(span).split()) == "The learned counsel contended that the declaration was not"
    )


def test_paragraph_numbers_in_each_style():
    for marker in ("{}.", "({})", "{})"):
        body = "".join(f"{marker.format(n)} Paragraph number {n} of the judgment.\n" for n in range(1, 6))
        text = "Header line of the case\n" + body
        index = ParagraphIndex(text)
        assert index.numbered, marker
        assert index.at(text.index("number 4")) == 4
        assert index.at(0) is None  # the header comes before paragraph 1
        assert locate("Paragraph number 5 of the judgment.", text).paragraph == 5


def test_a_list_inside_a_paragraph_is_not_the_numbering():
    index = ParagraphIndex(JUDGMENT)
    assert [n for n, _ in index.marks] == [1, 2, 3, 4]
    assert index.at(JUDGMENT.index("the magistrate was not called")) == 2


def test_a_skipped_paragraph_number_keeps_the_numbering():
    text = "".join(f"{n}. Paragraph {n} text here.\n" for n in (1, 2, 3, 5, 6))
    assert [n for n, _ in ParagraphIndex(text).marks] == [1, 2, 3, 5, 6]


def test_an_unnumbered_judgment_gives_offsets_without_a_paragraph():
    text = "The appellant was convicted.\n\nThe appeal is dismissed with costs to the respondent State.\n"
    assert not ParagraphIndex(text).numbered
    span = locate("The appeal is dismissed with costs", text)
    assert (
        span.paragraph is None
        and where(pinpoint("The appeal is dismissed with costs", JudgmentSource(text)))
        == f"chars {span.start}-{span.end}"
    )


def test_numbered_lines_mark_where_each_paragraph_starts():
    lines = list(numbered_lines(JUDGMENT))
    assert [n for n, _ in lines if n is not None] == [1, 2, 3, 4]
    assert dict((n, line) for n, line in lines if n is not None)[3].startswith("3. We are of the opinion")


def _hit(**update) -> Hit:
    fields = dict(
        rank=1,
        judgment_id="J1",
        parties="A v. B",
        score=7,
        retrieval_score=1.0,
        legal_issue="whether a dying declaration alone can sustain a conviction",
        reason="We are of the opinion that a dying declaration recorded by a magistrate can form the sole basis of conviction",
        evidence=[
            Evidence(
                slot="reasoning",
                text="We are of the opinion that a dying declaration recorded by a magistrate can form the sole basis of conviction",
            ),
            Evidence(slot="issues", text="The trial court relied on a dying declaration."),
        ],
    )
    return Hit(**{**fields, **update})


def test_pin_hits_pins_issue_reason_and_every_evidence_reading_the_texts_once():
    calls = []

    def texts(ids):
        calls.append(list(ids))
        return {"J1": JUDGMENT}

    [hit] = pin_hits([_hit()], texts)
    assert calls == [["J1"]]
    assert hit.reason_at.located and hit.reason_at.paragraph == 3
    assert hit.legal_issue_at.located is False  # the model's own words: said, not guessed
    for e in hit.evidence:
        assert e.located and " ".join(JUDGMENT[e.start : e.end].split()) == e.text
    assert [e.paragraph for e in hit.evidence] == [3, 1]


def test_pin_hits_without_a_stored_text_says_not_located():
    [hit] = pin_hits([_hit(judgment_id="J2")], lambda ids: {})
    assert all(not e.located for e in hit.evidence) and hit.reason_at.located is False


def test_summary_pinpoints_name_each_slot_and_passage():
    summary = StructuredSummary(
        judgment_id="J1",
        provenance=Provenance(engine="extractive.v1", engine_version="1", source_sha256="0" * 64),
        facts="The appellant was convicted under Section 302 of the Indian Penal Code for the murder of his neighbour.\nThe High Court affirmed the conviction.",
        issues=["whether the declaration was made in a fit state of mind"],
        statutes=[StatuteRef(name="Section 302 IPC", principle="The trial court relied on a dying declaration.")],
        final_judgment="4. The appeal is dismissed.",
    )
    shown = summary_pinpoints(summary, JUDGMENT)
    by_slot = {(p.slot, p.paragraph) for p in shown.passages if p.located}
    assert shown.paragraphs_numbered
    assert {("facts", 1), ("facts", 2), ("statutes[0].principle", 1), ("final_judgment", 4)} <= by_slot
    assert [p.located for p in shown.passages if p.slot == "issues[0]"] == [False]  # not in the text as written


# -- the normalised text and its map back to raw offsets -----------------------------------
def _reference(text: str) -> tuple[str, list[int]]:
    """The normalisation as a plain loop over the non-space runs (the code before numpy)."""
    runs = [m.span() for m in re.finditer(r"\S+", text)]
    normalised = " ".join(text[start:end] for start, end in runs)
    raw = []
    for start, end in runs:
        raw.extend(range(start, end))
        if len(raw) < len(normalised):
            raw.append(end)  # the space after a run: the first character of the whitespace after it
    return normalised, raw


_SPACES = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_TEXTS = st.text(alphabet=st.sampled_from(_SPACES + "ab.'’é\u3001\u200b\ud800") | st.characters(), max_size=300)


@settings(max_examples=500, deadline=None)
@given(_TEXTS)
def test_every_normalised_character_maps_back_to_the_raw_character_it_came_from(text):
    normalised = _Normalised(text)
    want_text, want_raw = _reference(text)
    assert normalised.text == want_text
    assert [normalised.raw(i) for i in range(len(normalised.text))] == want_raw
    assert len(normalised._raw_of) == len(normalised.text)
    for i, c in enumerate(normalised.text):
        assert text[normalised.raw(i)] == c or (c == " " and text[normalised.raw(i)].isspace())


def test_no_code_point_above_the_table_is_whitespace():
    assert not any(chr(c).isspace() for c in range(0x3001, 0x110000))


def test_a_quote_across_unusual_whitespace_is_pinned_to_its_raw_span():
    text = (
        "1. Intro.\u3000\u3000\n2. The  accused\u2028was\xa0\xa0found in possession of the stolen goods\t\tat night.\n"
    )
    quote = "The accused was found in possession of the stolen goods at night."
    span = locate(quote, text)
    assert span is not None and span.paragraph == 2
    assert text[span.start : span.end].split() == quote.split()
