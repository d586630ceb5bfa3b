"""A llama-index retriever over a SummaryIndex (for llama-index pipelines).

llama-index is imported by this module, so nothing imports it at `import aqgr.retrieval`
time. No global `Settings`, no LLM, no embedding model from llama-index: the index does
the retrieval, a registered fuser merges the runs.
"""

from __future__ import annotations

from collections.abc import Iterable

from aqgr.foundation.errors import MissingDependencyError

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ModuleNotFoundError:
    raise MissingDependencyError("llama-index-core", "llama-index") from None

from .embedded.index import SummaryIndex
from .fusion import fusers


class SummaryIndexRetriever(BaseRetriever):
    """Fused top-k judgments as `NodeWithScore(TextNode(id_=judgment id, text=document))`.

    Node metadata: `judgment_id`, `slots` (the indexed slot names) and `runs` (the
    score each retriever gave, where it found the document).
    """

    def __init__(
        self,
        index: SummaryIndex,
        *,
        k: int = 10,
        fuser: str = "rrf.v1",
        retrievers: Iterable[str] | None = None,
        per_retriever_k: int | None = None,
    ):
        super().__init__(callback_manager=CallbackManager([]), verbose=False)
        self._index = index
        self._k = k
        self._fuse = fusers.create(fuser)
        self._retrievers = tuple(index.retrievers if retrievers is None else retrievers)
        self._per_k = per_retriever_k or k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        runs = self._index.retrieve(query_bundle.query_str, self._per_k, retrievers=self._retrievers)
        per_run = {name: {d.doc_id: d.score for d in run} for name, run in runs.items()}
        nodes = []
        for hit in self._fuse(runs)[: self._k]:
            node = TextNode(
                id_=hit.doc_id,
                text=self._index.document_text(hit.doc_id),
                metadata={
                    "judgment_id": hit.doc_id,
                    "slots": list(self._index.spec.slots),
                    "runs": {name: scores[hit.doc_id] for name, scores in per_run.items() if hit.doc_id in scores},
                },
            )
            nodes.append(NodeWithScore(node=node, score=hit.score))
        return nodes
