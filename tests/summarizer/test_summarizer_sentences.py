"""split_sentences / split_paragraphs on legal abbreviations."""

from __future__ import annotations

import pytest

from aqgr.summarizer.sentences import sentence_spans, split_paragraphs, split_sentences


@pytest.mark.parametrize(
    "text",
    [
        "The appellant relied on Maneka Gandhi v. Union of India, (1978) 1 SCC 248.",
        "He was convicted u/s. 302 and Sec. 34 of the Code.",
        "Art. 14 and Arts. 19 and 21 were invoked in W.P. No. 117 and Nos. 4 to 6.",
        "The judgment of A. N. Ray, C.J. and of Krishna Iyer, J. was followed.",
        "See also pp. 12-14 and para. 7, i.e. the operative part, viz. cl. (b), etc. of the order.",
        "M/s. Ramchand Pvt. Ltd. and Dr. Rao, Mr. Shah, Mrs. Iyer and Smt. Devi appeared.",
        "The order under s. 482 Cr.P.C. and ss. 3 and 4 was stayed by Shri Lal, JJ. of the Bench.",
    ],
)
def test_abbreviations_do_not_end_a_sentence(text):
    assert split_sentences(text) == [text]


def test_sentences_split_at_real_ends():
    text = (
        "12.  The appellant was convicted u/s. 302 I.P.C. The High Court affirmed it. "
        "Was that right? We think not! The State of U.P. and M/s. X Ltd. were parties."
    )
    assert split_sentences(text) == [
        "12. The appellant was convicted u/s. 302 I.P.C.",
        "The High Court affirmed it.",
        "Was that right?",
        "We think not!",
        "The State of U.P. and M/s. X Ltd. were parties.",
    ]


def test_a_sentence_never_spans_paragraphs():
    assert split_sentences("Appeal dismissed.\nNo order as to costs") == ["Appeal dismissed.", "No order as to costs"]


def test_paragraphs_join_hard_wraps_and_split_at_markers():
    text = "1. The facts are\nthese, in short.\n2. The appellant\nwas arrested.\n\nA new block\nhere"
    assert split_paragraphs(text) == [
        "1. The facts are these, in short.",
        "2. The appellant was arrested.",
        "A new block here",
    ]


def test_spans_are_offsets_into_the_text():
    text = "First one. Second one.\n\nThird one."
    assert [text[a:b] for a, b in sentence_spans(text)] == ["First one.", "Second one.", "Third one."]


def test_empty_text():
    assert split_sentences("") == [] and split_paragraphs("  \n\n ") == []
