"""The BM25 tokenizers and word pairs (retrieval/text.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aqgr.retrieval.text import tokenizers, with_pairs


def test_with_pairs_adds_adjacent_pairs_that_never_collide_with_terms():
    terms = tokenizers.create("words.v1")("Anticipatory bail was refused")
    assert with_pairs(terms, 1) == terms
    paired = with_pairs(terms)
    assert paired[: len(terms)] == terms and paired[len(terms) :] == ["anticipatori_bail", "bail_refus"]
    assert not any("_" in t for t in tokenizers.create("words.v1")("snake_case under_score"))
    assert with_pairs([], 2) == [] and with_pairs(["one"], 2) == ["one"]
    with pytest.raises(ValueError, match="ngrams"):
        with_pairs(terms, 3)


SAMPLE = (
    "The accused's cross-examination under Section 304-B (and 304B) didn't shake the "
    "O'Brien\u2019s witness in 2019-20; \u216b \ufb01nal caf\u00e9 orders of the Court, the courts and a court."
)
EXPECTED = [
    "accus",
    "cross",
    "examin",
    "section",
    "304b",
    "304b",
    "shake",
    "obrien",
    "wit",
    "2019",
    "20",
    "xii",
    "final",
    "caf\u00e9",
    "order",
    "court",
    "court",
    "court",
]


@pytest.mark.parametrize("name", ["words.v1", "words.v2"])
def test_tokens_of_a_sentence_with_every_rule(name):
    tokenize = tokenizers.create(name)
    assert tokenize.name == name
    assert tokenize(SAMPLE) == EXPECTED
    assert tokenize(SAMPLE) == EXPECTED  # the second pass is served from the memo: same tokens
    assert tokenize.words("Didn't cross-examination 304-B") == ["didnt", "cross", "examination", "304b"]
    assert tokenize("") == [] and tokenize("the a of") == []


def test_the_memo_is_bounded_and_its_clearing_changes_nothing(monkeypatch):
    from aqgr.retrieval.text import WordTokenizer

    monkeypatch.setattr(WordTokenizer, "MEMO_WORDS", 5)
    tokenize = tokenizers.create("words.v2")
    for _ in range(3):
        assert tokenize(SAMPLE) == EXPECTED
        assert len(tokenize._memo) <= 5


# Where the stemmers part (docs/experiments/2026-12-06-stemmer.md): words.v1's nltk Porter2 keeps an
# -ize/-ate that Snowball 2.2 removes; Snowball 3 (PyStemmer 3), which words.v2 must not pick up,
# stems the last three otherwise ("add", "evening", "internal").
STEMS = {
    "realization": ("realize", "realiz"),
    "irrationality": ("irrate", "irrat"),
    "adding": ("ad", "ad"),
    "evening": ("even", "even"),
    "internal": ("intern", "intern"),
}


@pytest.mark.parametrize("word", sorted(STEMS))
def test_words_v2_stems_as_snowball_2_2_where_it_parts_from_words_v1(word):
    assert [tokenizers.create(name)(word) for name in ("words.v1", "words.v2")] == [[stem] for stem in STEMS[word]]


def test_words_v2_does_not_import_nltk():
    """nltk's import is 1.5-2.7 s of a first search; words.v2 stems without it."""
    import subprocess
    import sys

    code = (
        "import sys; from aqgr.retrieval.text import tokenizers; "
        "assert tokenizers.create('words.v2')('Murdered husbands') == ['murder', 'husband']; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'nltk'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@given(
    st.text(
        alphabet=st.sampled_from(
            list("aZq9-' _.,;()\n") + ["\u2019", "\u00e9", "\uff21", "\u00df", "\u0130", "\ufb01"]
        ),
        max_size=80,
    )
)
@settings(max_examples=500, deadline=None)
def test_ascii_text_takes_a_faster_path_to_the_same_raw_words(text):
    """ASCII text is matched by an ASCII pattern without NFKC (a build's full texts are mostly ASCII):
    the raw words must be those of the Unicode path, for ASCII and non-ASCII text alike."""
    import unicodedata

    from aqgr.retrieval.text import _TOKEN, WordTokenizer

    assert WordTokenizer._matches(text) == _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())
