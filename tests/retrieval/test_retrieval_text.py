"""Word pairs for the BM25 retrievers (retrieval/text.py with_pairs)."""

import pytest

from aqgr.retrieval.text import tokenizers, with_pairs


def test_with_pairs_adds_adjacent_pairs_that_never_collide_with_terms():
    terms = tokenizers.create("words.v1")("Anticipatory bail was refused")
    assert with_pairs(terms, 1) == terms
    paired = with_pairs(terms)
    assert paired[: len(terms)] == terms and paired[len(terms):] == ["anticipatori_bail", "bail_refus"]
    assert not any("_" in t for t in tokenizers.create("words.v1")("snake_case under_score"))
    assert with_pairs([], 2) == [] and with_pairs(["one"], 2) == ["one"]
    with pytest.raises(ValueError, match="ngrams"):
        with_pairs(terms, 3)
