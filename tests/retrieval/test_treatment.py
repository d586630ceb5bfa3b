"""How a citing judgment treats a cited one: the phrases, their target, negation, bad text,
the labelled AILA fixture, and the citation store keeping treatments as judgments come and go."""

from __future__ import annotations

import pytest

from aqgr.retrieval.citations import CitationGraph, CitationStore
from aqgr.retrieval.citations.treatment import LABELS, PhraseTreatments, create, readable, treatment_engines

ENGINE = PhraseTreatments()


def label(sentence: str, anchor: str = " v. ", nth: int = 0) -> str:
    at = -1
    for _ in range(nth + 1):
        at = sentence.index(anchor, at + 1)
    return ENGINE.label(sentence, at, at + len(anchor))[0]


@pytest.mark.parametrize(
    "sentence, nth, expected",
    [
        (
            "The decision in Ram v. Shyam, AIR 1970 SC 1, was overruled by this Court in Gopal v. State, AIR 1980 SC 2.",
            0,
            "overruled",
        ),
        (
            "The decision in Ram v. Shyam, AIR 1970 SC 1, was overruled by this Court in Gopal v. State, AIR 1980 SC 2.",
            1,
            "referred",
        ),
        ("In Gopal v. State, AIR 1980 SC 2, this Court overruled Ram v. Shyam, AIR 1970 SC 1.", 1, "overruled"),
        ("In Gopal v. State, AIR 1980 SC 2, this Court overruled Ram v. Shyam, AIR 1970 SC 1.", 0, "referred"),
        (
            "We hold that Ram v. Shyam, AIR 1970 SC 1 was decided per incuriam and does not lay down the correct law.",
            0,
            "overruled",
        ),
        (
            "Therefore, the judgment in Ram v. Shyam, AIR 1970 SC 1 must be held to be not correctly decided.",
            0,
            "overruled",
        ),
        ("The decision in Ram v. Shyam, AIR 1970 SC 1 is clearly distinguishable on facts.", 0, "distinguished"),
        ("With respect, we are unable to agree with the view taken in Ram v. Shyam, AIR 1970 SC 1.", 0, "doubted"),
        ("The correctness of Ram v. Shyam, AIR 1970 SC 1 requires reconsideration by a larger Bench.", 0, "doubted"),
        ("This Court followed Ram v. Shyam, AIR 1970 SC 1 in several cases.", 0, "followed"),
        ("The principle in Ram v. Shyam, AIR 1970 SC 1 was approved in Gopal v. State.", 0, "approved"),
        (
            "In Ram v. Shyam, AIR 1970 SC 1, this Court held that a dying declaration needs no corroboration.",
            0,
            "referred",
        ),
        (
            "Both these decisions were considered by a larger Bench in Ram v. Shyam, AIR 1970 SC 1 and were overruled.",
            0,
            "referred",
        ),
    ],
)
def test_a_phrase_labels_the_case_it_points_at(sentence, nth, expected):
    assert label(sentence, nth=nth) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "Ram v. Shyam, AIR 1970 SC 1 was not overruled in Gopal v. State.",
        "Ram v. Shyam, AIR 1970 SC 1 has never been overruled.",
        "We are unable to agree that Ram v. Shyam, AIR 1970 SC 1 was overruled by the later decision.",
        "Learned counsel submitted that Ram v. Shyam, AIR 1970 SC 1 was rendered per incuriam.",
        "The decision in Ram v. Shyam, AIR 1970 SC 1 is binding on us till it is overruled by a larger Bench.",
        "Whether Ram v. Shyam, AIR 1970 SC 1 was overruled in Gopal v. State?",
        "The contention that Ram v. Shyam, AIR 1970 SC 1 is per incuriam cannot be accepted.",
        "The doctrine of prospective overruling was applied in Ram v. Shyam, AIR 1970 SC 1 to save past transactions.",
    ],
)
def test_a_negated_suspended_or_argued_overruling_is_no_overruling(sentence):
    assert label(sentence) != "overruled"


@pytest.mark.parametrize(
    "sentence",
    [
        "राम बनाम श्याम, AIR 1970 SC 1 के निर्णय को बड़ी पीठ ने overruled कर दिया था।",
        "Tqhw xzrt v. Plmk, AIR 1970 SC 1 wzs ovrrld bcs thrwz qprst vwxz overruled.",
        "\ufffd\ufffd\ufffd v. \ufffd\ufffd AIR 1970 SC 1 \ufffd\ufffd overruled \ufffd",
    ],
)
def test_a_sentence_in_another_language_or_garbled_is_referred(sentence):
    assert not readable(sentence)
    assert label(sentence, "AIR 1970 SC 1") == "referred"


def test_classify_quotes_the_sentence_with_its_offsets_in_the_text():
    text = "1. The facts are these. The decision in Ram v. Shyam, AIR 1970 SC 1 was overruled in Gopal v. State. 3. Appeal allowed."
    at = text.index(" v. ")
    found = create("phrases.v1").classify(text, at, at + 4)
    assert found.label == "overruled" and text[found.start : found.end] == found.sentence
    assert found.sentence.startswith("The decision in Ram") and found.sentence.endswith("Gopal v. State.")
    assert "phrases.v1" in treatment_engines.names()


def test_the_labelled_aila_fixture_meets_the_precision_goal():
    """458 mentions of AILA judgments, labelled by reading (tests/retrieval/fixtures): a false
    "overruled" or "distinguished" flag is the costly error."""
    from aqgr.eval.bench.treatment import run

    report = run()
    assert report["mentions"] >= 200
    classes = report["classes"]
    assert all(classes[name]["support"] >= 20 for name in LABELS if name != "referred")
    for name in ("overruled", "distinguished"):
        assert classes[name]["predicted"] >= 10 and classes[name]["precision"] >= 0.9, classes[name]
    assert classes["referred"]["recall"] >= 0.95  # a link without a signal is not given one


OLD = """Ram Kumar v State of Punjab
Supreme Court of India

12 March 1998
The Judgment was delivered by : K. Singh, J.
1. A dying declaration can be the sole basis of conviction.
"""
OTHER = """Sunita Devi v Union of India
Supreme Court of India

3 April 2001
The Judgment was delivered by : A. Rao, J.
1. The pension rules bind the department.
"""
NEW = """Gopal Singh v State of Haryana
Supreme Court of India

20 January 2015
The Judgment was delivered by : K. Rao, J.
1. The facts are not in dispute.
2. We hold that Ram Kumar v. State of Punjab does not lay down the correct law, and it is overruled.
3. The decision in Sunita Devi v. Union of India is clearly distinguishable on facts.
"""


def test_the_store_keeps_treatments_as_judgments_come_and_go(tmp_path):
    texts = {"OLD": OLD, "OTHER": OTHER}
    with CitationStore(tmp_path / "citations.sqlite") as store:
        store.add(texts.items(), text_of=texts.__getitem__)
        assert store.graph().treated_by("OLD") == []
        texts["NEW"] = NEW  # a later judgment overrules OLD: only NEW is added
        store.add([("NEW", NEW)], text_of=texts.__getitem__)
        graph = store.graph()
        [(citing, treatment)] = graph.treated_by("OLD")
        assert citing == "NEW" and treatment.label == "overruled"
        assert (
            NEW[treatment.start : treatment.end] == treatment.sentence
            and "does not lay down the correct law" in treatment.sentence
        )
        assert graph.mentions[("NEW", "OTHER")].treatment.label == "distinguished"
        assert graph.treated_by("OTHER") == []  # distinguished is no warning
        assert graph.treated_by("OTHER", ("distinguished",))[0][0] == "NEW"
        assert dict(graph.mentions) == dict(CitationGraph.from_texts(texts.items()).mentions)  # as a full pass finds
        store.remove(["NEW"], text_of=texts.__getitem__)
        assert store.graph().treated_by("OLD") == []


def test_a_store_made_before_links_kept_a_dissent_is_read_and_updated(tmp_path):
    """A citation store of the same format made before the `dissent` column: read with no
    disagreement recorded; its next update adds the column, nothing relinked for it."""
    import sqlite3

    path = tmp_path / "citations.sqlite"
    texts = {"OLD": OLD, "OTHER": OTHER, "NEW": NEW}
    with CitationStore(path) as store:
        store.add(texts.items(), text_of=texts.__getitem__)
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE links DROP COLUMN dissent")
    with CitationStore(path) as store:
        [(citing, treatment)] = store.graph().treated_by("OLD")
        assert (citing, treatment.label, treatment.dissent) == ("NEW", "overruled", "")
        assert store.graph().mentions[("NEW", "OTHER")].treatment.dissent == ""
        store.add([], text_of=texts.__getitem__)
    with sqlite3.connect(path) as db:
        assert "dissent" in {row[1] for row in db.execute("PRAGMA table_info(links)")}
    with CitationStore(path) as store:
        assert store.graph().treated_by("OLD")[0][1].label == "overruled"
