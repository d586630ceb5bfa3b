"""Citations between the judgments of one archive.

`links.find_links` finds each mention (case titles and reporter citations, with date
checks; used by the citation benchmark builder, eval/citebench); `graph.CitationGraph`
keeps the distinct pairs, is saved beside the index, and gives the search its
"precedents referred" signal (aqgr/search.py).
"""

from aqgr.retrieval.citations.graph import CitationGraph, Mention, Referral

__all__ = ["CitationGraph", "Mention", "Referral"]
