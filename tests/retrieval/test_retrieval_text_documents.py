"""The BM25 tokenizer and slot -> document text."""

from __future__ import annotations

import pytest
from retrieval_samples import CORPUS, summary

from aqgr.foundation.errors import UnknownNameError
from aqgr.retrieval.documents import DEFAULT_SLOTS, SLOT_NAMES, document_text, slot_texts
from aqgr.retrieval.text import tokenizers
from aqgr.schemas.summary import SummarySlots


def test_words_v1_section_numbers_stopwords_stems():
    tok = tokenizers.create("words.v1")
    assert tok("Section 304-B and 304B of the IPC") == ["section", "304b", "304b", "ipc"]
    assert tok("S.302 r/w 34") == ["302", "34"]
    assert tok("the accused's convictions were upheld") == ["accus", "convict", "upheld"]
    assert tok("Cross-Examination") == ["cross", "examin"]
    assert tok("2019-20") == ["2019", "20"]
    assert tok("") == []
    assert tok("Dowry DEATH") == tokenizers.create("words.v1")("dowry death")


def test_unknown_tokenizer_lists_known():
    with pytest.raises(UnknownNameError, match="words.v1"):
        tokenizers.create("words.v0")


def test_slot_names_and_defaults():
    assert "precedents" in SLOT_NAMES and "precedents" not in DEFAULT_SLOTS
    assert set(DEFAULT_SLOTS) <= set(SLOT_NAMES)
    assert set(SLOT_NAMES) >= set(SummarySlots.model_fields) - {"date", "bench", "disposed_in_favour_of"}


def test_slot_texts_formats():
    texts = slot_texts(CORPUS[0], ("parties", "issues", "statutes", "precedents", "court"))
    assert list(texts) == ["parties", "issues", "statutes", "precedents", "court"]
    assert texts["parties"] == "Ram Singh v. State of Punjab"
    assert texts["statutes"] == "Section 304B IPC: dowry death conviction upheld"
    assert texts["precedents"] == "Kans Raj v. State of Punjab: soon before death"
    assert texts["court"] == ""
    s = summary("X", issues=["first issue", "second issue"])
    assert slot_texts(s, ["issues"]) == {"issues": "first issue\nsecond issue"}


def test_document_text_skips_empty_slots():
    s = summary("X", facts="Some facts.", reasoning="Some reasoning.")
    assert document_text(s, ("parties", "facts", "reasoning")) == "Some facts.\n\nSome reasoning."


def test_unknown_slot_lists_valid_ones():
    with pytest.raises(UnknownNameError) as err:
        slot_texts(CORPUS[0], ["facts", "headnote"])
    assert "headnote" in str(err.value) and "new_principles" in str(err.value)
    with pytest.raises(TypeError):
        slot_texts(CORPUS[0], "facts")
