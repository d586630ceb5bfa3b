"""A judgment's citations inside the archive: what it cites, and what cites it.

The links are the archive's citation graph (retrieval/citations, found by `aqgr index`);
both ends of every link are judgments of the archive, each listed with its header slots,
the citing judgment's words that name it, so a reader can check the link, and how the
citing judgment treats the cited one (followed, distinguished, overruled, ...: quoted).
"""

from __future__ import annotations

from collections.abc import Callable

from aqgr.foundation.errors import NoCitationGraphError, UnknownJudgmentError
from aqgr.pipeline.search import parties_line
from aqgr.retrieval.citations.graph import Mention
from aqgr.schemas.results import CitationTreatment, CitedJudgment, JudgmentCitations
from aqgr.schemas.summary import StructuredSummary


def judgment_citations(
    judgment_id: str, graph, summary_of: Callable[[str], StructuredSummary | None]
) -> JudgmentCitations:
    """`graph`: the archive's CitationGraph (None: not made yet); `summary_of(id)`: a summary or None.
    Raises UnknownJudgmentError for an id the archive has not summarised, NoCitationGraphError
    when there is no graph; judgments of the graph the archive no longer holds are left out."""
    own = summary_of(judgment_id)
    if own is None:
        raise UnknownJudgmentError(judgment_id)
    if graph is None:
        raise NoCitationGraphError()

    def listed(ids, pair) -> list[CitedJudgment]:
        found = []
        for other in ids:
            summary = summary_of(other)
            if summary is not None:
                found.append(_ref(summary, graph.mentions.get(pair(other))))
        return sorted(found, key=lambda ref: (ref.parties.casefold(), ref.date or "", ref.judgment_id))

    return JudgmentCitations(
        judgment=_ref(own),
        cites=listed(graph.cites.get(judgment_id, ()), lambda cited: (judgment_id, cited)),
        cited_by=listed(graph.cited_by.get(judgment_id, ()), lambda citing: (citing, judgment_id)),
    )


def _ref(summary: StructuredSummary, mention: Mention | None = None) -> CitedJudgment:
    treated = mention.treatment if mention else None
    return CitedJudgment(
        judgment_id=summary.judgment_id,
        parties=parties_line(summary),
        case_number=summary.case_number,
        court=summary.court,
        date=summary.date,
        how=mention.how if mention else None,
        mention=mention.text if mention else None,
        treatment=CitationTreatment(
            label=treated.label,
            quote=treated.sentence,
            start=treated.start,
            end=treated.end,
            dissent=treated.dissent or None,
        )
        if treated
        else None,
    )
