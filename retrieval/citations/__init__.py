"""Citations between the judgments of one archive.

`links.find_links` finds each mention (case titles and reporter citations, with date
checks; used by the citation benchmark builder, eval/citebench); `graph.CitationGraph`
keeps the distinct pairs and gives the search its "precedents referred" signal
(aqgr/pipeline/search.py); `store.CitationStore` keeps an archive's graph in one SQLite file and
updates it as judgments are added or removed, relinking only what they change.
"""

from aqgr.retrieval.citations.graph import CitationGraph, Mention, Referral
from aqgr.retrieval.citations.store import CitationStore

__all__ = ["CitationGraph", "CitationStore", "Mention", "Referral"]
