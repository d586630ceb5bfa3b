"""The llama-index adapter returns fused nodes from the index."""

from __future__ import annotations

from aqgr.retrieval.fusion import reciprocal_rank_fusion


def test_adapter_returns_nodes(index):
    from llama_index.core.schema import NodeWithScore

    from aqgr.retrieval.llama import SummaryIndexRetriever

    query = "dowry death of the wife"
    nodes = SummaryIndexRetriever(index, k=3).retrieve(query)
    assert len(nodes) == 3 and all(isinstance(n, NodeWithScore) for n in nodes)
    expected = reciprocal_rank_fusion(index.retrieve(query, 3))[:3]
    assert [(n.node.node_id, n.score) for n in nodes] == [(d.doc_id, d.score) for d in expected]
    top = nodes[0].node
    assert top.get_content() == index.document_text(top.node_id)
    assert top.metadata["judgment_id"] == top.node_id and "bm25" in top.metadata["runs"]
    scored = SummaryIndexRetriever(index, k=2, fuser="score.v1", retrievers=("bm25",)).retrieve(query)
    assert [n.node.node_id for n in scored] == [d.doc_id for d in index.retrieve(query, 2, ("bm25",))["bm25"]]
