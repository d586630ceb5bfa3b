"""The real minilm-l6.v1 model on a handful of documents (loads in a few seconds)."""

from __future__ import annotations

import numpy as np
import pytest
from retrieval_samples import summary

from aqgr.retrieval.dense.embedders import embedders
from aqgr.retrieval.embedded.index import IndexSpec, SummaryIndex

FILLER = " ".join(
    f"Paragraph {i}: the assessing officer examined the books of account for the assessment year "
    f"and recorded the returns filed by the assessee under the revenue rules."
    for i in range(1, 21)
)  # about 3,000 characters: far beyond the model's 256 tokens
COLLISION = "At night the cargo vessel collided with a fishing trawler in the harbour and sank it."
PENSION = "The retired clerk claimed arrears of pension withheld by the department."


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers")
    return embedders.create("minilm-l6.v1")


def test_paraphrase_and_late_text_are_found(minilm, tmp_path):
    docs = [
        summary(
            "D1", facts="The husband and his parents tortured the young bride for dowry until she took her own life."
        ),
        summary("D2", facts="The company evaded excise duty on goods cleared from its factory."),
        summary("D3", facts="A tenant refused to vacate the shop after the lease expired."),
        summary("LONG-A", facts=f"{FILLER} {COLLISION}"),
        summary("LONG-B", facts=f"{FILLER} {PENSION}"),
    ]
    index = SummaryIndex.build(docs, IndexSpec(embedder="minilm-l6.v1"), embedder=minilm)
    assert index.manifest["embedder"]["fingerprint"].startswith("sha256:")

    paraphrase = "A married woman committed suicide after harassment by her in-laws over dowry demands."
    dense = [d.doc_id for d in index.retrieve(paraphrase, 5, retrievers=("dense",))["dense"]]
    assert dense[0] == "D1"

    # Both long documents read the same for their first 256 tokens: embedded whole, the
    # model cannot tell them apart; windowed, the closing sentence decides.
    whole = minilm.embed([docs[3].facts, docs[4].facts])
    assert float(whole[0] @ whole[1]) > 0.99
    query = "liability for a collision between two ships at sea"
    ranking = [d.doc_id for d in index.retrieve(query, 5, retrievers=("dense",))["dense"]]
    assert ranking.index("LONG-A") < ranking.index("LONG-B")
    scores = dict(index.retrieve(query, 5, retrievers=("dense",))["dense"])
    assert scores["LONG-A"] - scores["LONG-B"] > 0.1

    loaded = SummaryIndex.load(index.save(tmp_path / "idx"), expect=IndexSpec(embedder="minilm-l6.v1"))
    np.testing.assert_allclose(
        [d.score for d in loaded.retrieve(query, 5)["dense"]],
        [d.score for d in index.retrieve(query, 5)["dense"]],
        atol=1e-6,
    )
