"""Citations between judgments of one archive, and the precedents a ranking refers to."""

from __future__ import annotations

import pytest

from aqgr.retrieval.citations import CitationGraph


def _judgment(title: str, date: str, body: str) -> str:
    return f"{title}\nSupreme Court of India\n\n{date}\nThe Judgment was delivered by : A. Judge, J.\n1. {body}\n"


TEXTS = {
    "OLD": _judgment("Ram Kumar v State of Punjab", "12 March 1998", "A dying declaration may found a conviction."),
    "MID": _judgment(
        "Sunita Devi v Union of India",
        "3 April 2001",
        "The appellant relied on Ram Kumar v. State of Punjab, 1998 Indlaw SC 101, on dying declarations.",
    ),
    "NEW": _judgment(
        "Mohan Lal v State of Rajasthan",
        "9 July 2004",
        "In Ram Kumar v. State of Punjab, 1998 Indlaw SC 101 and in Sunita Devi v. Union of India "
        "this Court held so. A later case, Hari Prasad v. Commissioner of Excise, is not before us.",
    ),
    "LATER": _judgment("Hari Prasad v Commissioner of Excise", "5 May 2010", "Nothing cited here."),
}


def test_citations_are_found_by_title_and_only_to_older_judgments():
    graph = CitationGraph.from_texts(TEXTS.items())
    assert graph.pairs() == [("MID", "OLD"), ("NEW", "MID"), ("NEW", "OLD")]  # NEW cannot cite the newer LATER
    assert len(graph) == 3


def test_a_precedent_gets_the_mean_of_its_citing_judgments_reciprocal_ranks():
    graph = CitationGraph([("A", "P"), ("B", "P"), ("C", "P"), ("A", "Q"), ("Z", "R")])
    referred = graph.referred(["A", "X", "B", "P", "Q"], depth=10)
    # P: cited by A (rank 1) and B (rank 3); C cites it too but is not ranked: (1 + 1/3) / 3
    assert referred["P"].votes == pytest.approx((1 + 1 / 3) / 3)
    assert referred["P"].cited_by == ("A", "B")
    assert referred["Q"].votes == pytest.approx(1.0)  # its only citing judgment ranks first
    assert "R" not in referred  # Z is not in the ranking
    # only the first `depth` judgments vote
    assert graph.referred(["A", "X", "B"], depth=2)["P"].cited_by == ("A",)


def test_cosine_and_sum_keep_more_of_a_much_cited_judgments_votes():
    graph = CitationGraph([("A", "P"), ("B", "P"), ("C", "P"), ("A", "Q")])
    ranking = ["A", "X", "B", "P", "Q"]
    # P: 1 + 1/3 from A and B; three judgments cite it. Q: 1 from A, its only citing judgment.
    cosine = graph.referred(ranking, depth=10, norm="cosine")
    assert cosine["P"].votes == pytest.approx((1 + 1 / 3) / 3**0.5) and cosine["Q"].votes == pytest.approx(1.0)
    summed = graph.referred(ranking, depth=10, norm="sum")
    assert (
        summed["P"].votes == pytest.approx(1 + 1 / 3) and summed["P"].votes > summed["Q"].votes
    )  # the much-cited one leads
    assert graph.referred(ranking, depth=10)["P"].votes < graph.referred(ranking, depth=10)["Q"].votes
    with pytest.raises(ValueError, match="mean, cosine, sum"):
        graph.referred(ranking, depth=10, norm="median")


def test_excluded_judgments_neither_vote_nor_count_as_citing():
    graph = CitationGraph([("A", "P"), ("B", "P")])
    referred = graph.referred(["B", "A"], depth=10, exclude={"B"})
    # A moves up to rank 1; P's citing judgments are now A alone
    assert referred["P"].votes == pytest.approx(1.0) and referred["P"].cited_by == ("A",)
    assert graph.referred(["A"], depth=10, exclude={"P"}) == {}


def test_renumbering_the_judgments_changes_no_vote():
    pairs = [("A", "P"), ("B", "P"), ("C", "P"), ("A", "Q")]
    ranking = ["A", "X", "B", "P", "Q"]
    rename = {"A": "Z9", "B": "C1", "C": "M5", "P": "A0", "Q": "B2", "X": "Q7"}
    before = CitationGraph(pairs).referred(ranking, depth=10)
    after = CitationGraph([(rename[a], rename[b]) for a, b in pairs]).referred([rename[d] for d in ranking], depth=10)
    assert {rename[k]: v.votes for k, v in before.items()} == {k: v.votes for k, v in after.items()}


def test_each_link_keeps_its_first_mention_in_whole_words():
    texts = {
        **TEXTS,
        "LONG": _judgment(
            "Kamla Bai v State of Kerala",
            "1 June 2005",
            "The learned counsel for the appellants, appearing with great diligence and at some length, submitted "
            "that the principle in Ram Kumar v. State of Punjab, 1998 Indlaw SC 101, governs the matter before us.",
        ),
    }
    graph = CitationGraph.from_texts(texts.items())
    mention = graph.mentions[("NEW", "OLD")]
    assert mention.how in ("title", "citation") and "Ram Kumar v. State of Punjab" in mention.text
    assert "Sunita Devi" not in graph.mentions[("MID", "OLD")].text  # MID's own words, not NEW's
    for (citing, _), found in graph.mentions.items():  # whole words: none cut at either edge
        assert f" {found.text} " in " " + " ".join(texts[citing].split()) + " "


def _referred_by_loop(pairs, ranking, depth, exclude, norm):
    """The definition in the module, as a plain loop over the ranking."""
    cites, cited_by = {}, {}
    for a, b in set(pairs):
        if a != b:
            cites.setdefault(a, set()).add(b)
            cited_by.setdefault(b, set()).add(a)
    votes, by, rank = {}, {}, 0
    for doc_id in ranking:
        if doc_id in exclude:
            continue
        rank += 1
        if rank > depth:
            break
        for cited in cites.get(doc_id, ()):
            if cited not in exclude:
                votes[cited] = votes.get(cited, 0.0) + 1.0 / rank
                by.setdefault(cited, []).append(doc_id)
    out = {}
    for cited, v in votes.items():
        n = len(cited_by[cited] - exclude)
        out[cited] = (v / (n if norm == "mean" else n**0.5 if norm == "cosine" else 1), tuple(by[cited]))
    return out


@pytest.mark.parametrize("seed", range(30))
def test_referred_is_the_plain_loop_over_the_ranking(seed):
    import random

    rng = random.Random(seed)
    ids = [f"J{rng.randrange(10**6)}" for _ in range(rng.randint(1, 40))]
    pairs = [(rng.choice(ids), rng.choice(ids)) for _ in range(rng.randint(0, 120))]
    outside = [f"X{i}" for i in range(5)]  # ranked, excluded, but in no citation
    ranking = rng.sample(ids + outside, rng.randint(0, len(ids) + 5))
    exclude = set(rng.sample(ids + outside, rng.randint(0, 4)))
    graph = CitationGraph(pairs)
    for norm in ("mean", "cosine", "sum"):
        for depth in (0, 1, 3, 1000):
            found = {
                k: (r.votes, r.cited_by)
                for k, r in graph.referred(ranking, depth=depth, exclude=exclude, norm=norm).items()
            }
            assert found == _referred_by_loop(pairs, ranking, depth, exclude, norm)
