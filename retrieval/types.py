"""Internal records shared by the retrievers and fusion."""

from __future__ import annotations

from typing import NamedTuple


class ScoredDoc(NamedTuple):
    """One retrieved document: its id and the retriever's (or fusion's) score."""

    doc_id: str
    score: float
