"""Statutes quoted word for word in judgments."""

from __future__ import annotations

import pytest

from aqgr.retrieval.quotes import QuoteFinder

STATUTES = {
    "S304B": "Where the death of a woman is caused by any burns or bodily injury or occurs otherwise than under normal "
    "circumstances within seven years of her marriage and it is shown that soon before her death she was "
    "subjected to cruelty or harassment by her husband, such death shall be called dowry death, and shall be "
    "punished with imprisonment of either description for a term which may extend to ten years.",
    "S498A": "Whoever, being the husband or the relative of the husband of a woman, subjects such woman to cruelty shall "
    "be punished with imprisonment of either description for a term which may extend to ten years.",
    "S379": "Whoever commits theft shall be punished with imprisonment of either description for a term which may extend "
    "to ten years.",
    "S420": "Whoever cheats and thereby dishonestly induces the person deceived shall be punished with imprisonment of "
    "either description for a term which may extend to ten years.",
}


def test_a_quotation_links_the_judgment_to_the_statute():
    finder = QuoteFinder(STATUTES)
    judgment = (
        "The High Court held that Section 304-B reads: 'where the death of a woman is caused by any burns or bodily "
        "injury or occurs otherwise than under normal circumstances within seven years of her marriage' and "
        "convicted the husband."
    )
    assert list(finder.quoted(judgment)) == ["S304B"]
    assert finder.links([("J1", judgment), ("J2", "A suit for possession of land.")]) == {"J1": ["S304B"]}


def test_boilerplate_and_a_few_shared_words_are_not_a_quotation():
    finder = QuoteFinder(STATUTES)
    # in all four statutes: boilerplate, evidence for none
    assert (
        finder.quoted(
            "He shall be punished with imprisonment of either description for a term which may extend to ten years."
        )
        == {}
    )
    # a phrase shorter than a shingle, and nine words in a row (two shingles of three), are not enough
    assert finder.quoted("The death of a woman was caused by burns.") == {}
    assert finder.quoted("soon before her death she was subjected to cruelty") == {}
    assert QuoteFinder(STATUTES, min_shingles=1).quoted("soon before her death she was subjected to cruelty") == {
        "S304B": 2
    }


def test_case_and_punctuation_do_not_hide_a_quotation():
    finder = QuoteFinder(STATUTES)
    shouted = "WHOEVER, being the HUSBAND or the relative of the husband of a woman, subjects such woman to CRUELTY"
    assert list(finder.quoted(shouted)) == ["S498A"]
    with pytest.raises(ValueError):
        QuoteFinder(STATUTES, shingle=1)
