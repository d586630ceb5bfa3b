"""Augmented Question-guided Retrieval over one loaded index (SPEC.md, stage 3).

1. Questions: the summaries most similar to the facts are the in-context examples;
   the question generator proposes candidates, the top `n_questions` are used (or the
   user's chosen questions are).
2. Retrieval: each question together with the facts queries every retriever (up to
   `per_retriever_k` each); all runs are fused into one candidate list. Lexical
   retrievers read the question followed by the facts; the dense retriever reads
   normalise(v(facts) + question_weight * v(question)), so the long facts are embedded
   once per search (memoised) and a question costs one short embedding.
   The facts are queried without anonymisation placeholders (`drop_masks`).
   Precedents referred (when the archive's citation graph is loaded and
   `citation_weight` > 0): the judgments the best `citation_depth` fused ones cite gain
   citation_weight x the best fused score x their votes (retrieval/citations/graph.py:
   1/rank summed over the judgments citing them, divided as `citation_norm` says, by
   default their number: the mean); a hit lists those citing judgments (`cited_by`).
3. Explanation: the explainer scores (1-10) and explains the best `explain_top` fused
   candidates, from a closed list. The grounding guard drops anything not in that list
   or not in the archive; hits below `min_score` are not returned.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Mapping, Sequence

from aqgr.config import SearchOptions
from aqgr.errors import EmptyArchiveError, FactsTooShortError
from aqgr.explain import Candidate, Explainer
from aqgr.inputs import check_text, check_texts
from aqgr.questions import QuestionGenerator
from aqgr.relevance import RelevanceScorer
from aqgr.retrieval.fusion import fusers
from aqgr.retrieval.protocol import Index
from aqgr.retrieval.retrievers import optional_retrievers
from aqgr.retrieval.text import strip_masks
from aqgr.retrieval.types import ScoredDoc, id_hash, ranked
from aqgr.schemas.results import CandidateQuestion, Engines, Evidence, Hit, SearchResult
from aqgr.schemas.summary import StructuredSummary


def parties_line(summary: StructuredSummary) -> str:
    left = ", ".join(summary.parties.appellants) or "(appellant not identified)"
    right = ", ".join(summary.parties.respondents) or "(respondent not identified)"
    return f"{left} v. {right}"


NO_CITATIONS_NOTE = ("precedents referred were not used: the archive has no citation graph for this index "
                     "(made by `aqgr index`; rebuild the index to add it)")


class Searcher:
    """Question-guided search over an index and the summaries it was built from."""

    def __init__(
        self,
        index: Index,
        summaries: Mapping[str, StructuredSummary],
        question_generator: QuestionGenerator,
        explainer: Explainer,
        options: SearchOptions,
        summarizer_name: str,
        citations=None,
    ):
        missing = [d for d in index.doc_ids if d not in summaries]
        if missing:
            from aqgr.errors import IndexMismatchError

            raise IndexMismatchError("the archive's index", [f"{len(missing)} indexed judgment(s) are not in the archive (e.g. {missing[0]})"])
        if not len(index):
            raise EmptyArchiveError("search")
        self.index = index
        self.summaries = summaries
        self.questions = question_generator
        self.explainer = explainer
        self.options = options
        self.summarizer_name = summarizer_name
        self.citations = citations  # retrieval.citations.CitationGraph of the archive, or None
        self.scorer = RelevanceScorer(index.tokenizer, index.idf(), len(index), embed=index.embed_query, embed_many=index.embed_queries)
        _freeze_heap()
        self._settled = False  # frozen again after the first search, once the models are loaded

    # -- stage 3.1 ---------------------------------------------------------
    def _check_facts(self, facts: str, options: SearchOptions) -> str:
        facts = " ".join(check_text(facts or "", "facts").split())
        found = self.scorer.content_words(facts)
        if found < options.min_content_words:
            raise FactsTooShortError(found, options.min_content_words)
        return facts

    def _retrievers(self, options: SearchOptions) -> list[str]:
        """The configured retrievers, less the optional ones this index lacks (retrieval/retrievers.py:
        "fulltext" needs an index built with full texts)."""
        have, optional = self.index.retrievers, optional_retrievers()
        return [name for name in options.retrievers if name in have or name not in optional]

    @staticmethod
    def _query(facts: str, options: SearchOptions) -> str:
        """The facts as a query: without anonymisation placeholders when `options.drop_masks`."""
        return (strip_masks(facts) or facts) if options.drop_masks else facts

    def _retrieve(self, query: str, options: SearchOptions, k: int, restrict, exclude, question: str | None = None) -> list[tuple[str, list[ScoredDoc]]]:
        """(retriever, run) for the facts (`query`), or for `question` + facts when a question is given."""
        query = self._query(query, options)
        names = self._retrievers(options)
        vector = None
        if question is not None and "dense" in names:
            vector = self.index.combined_vector(self.index.embed_query(query), self.index.embed_query(question), options.question_weight)
        text = query if question is None else question if options.question_alone else f"{question}\n{query}"
        runs = self.index.retrieve(text, k, retrievers=names, restrict=restrict, exclude=exclude, vector=vector)
        return [(name, runs[name]) for name in names]

    def _fuse(self, runs: Sequence[tuple[str, Sequence[ScoredDoc]]], options: SearchOptions) -> list[ScoredDoc]:
        weights = None
        if options.weights is not None:
            by_name = dict(zip(options.retrievers, options.weights))
            weights = [by_name.get(name, 1.0) for name, _ in runs]
        return fusers.create(options.fuser)([run for _, run in runs], weights)

    def _refer(self, fused: list[ScoredDoc], options: SearchOptions, exclude) -> tuple[list[ScoredDoc], dict]:
        """The fused ranking with the precedents its best judgments cite raised (see the module),
        and judgment id -> Referral. Only judgments already in `fused` move: restrict/exclude hold."""
        if self.citations is None or not options.citation_weight or not fused:
            return fused, {}
        referred = self.citations.referred([d.doc_id for d in fused], depth=options.citation_depth, exclude=exclude or frozenset(),
                                           norm=options.citation_norm)
        if not referred:
            return fused, {}
        lift = options.citation_weight * (fused[0].score if fused[0].score > 0 else 1.0)
        return ranked((d.doc_id, d.score + lift * referred[d.doc_id].votes if d.doc_id in referred else d.score) for d in fused), referred

    def candidate_questions(self, facts: str, *, n: int | None = None, restrict=None, exclude=None, options: SearchOptions | None = None) -> list[CandidateQuestion]:
        options = options or self.options
        facts = self._check_facts(facts, options)
        return self._candidates(facts, n or options.n_candidate_questions, options, restrict, exclude)[0]

    def questions_for(self, facts: str, *, restrict=None, exclude=None, options: SearchOptions | None = None) -> list[str]:
        """The questions a search on `facts` would use (the top generated ones), without searching.

        For querying another collection with the archive's questions (e.g. statutes)."""
        options = options or self.options
        facts = self._check_facts(facts, options)
        return _top_questions(self._candidates(facts, options.n_candidate_questions, options, restrict, exclude)[0], options)

    def _candidates(self, facts: str, n: int, options: SearchOptions, restrict, exclude) -> tuple[list[CandidateQuestion], list[tuple[str, list[ScoredDoc]]]]:
        query = self._query(facts, options)
        facts_runs = self._retrieve(query, options, max(options.per_retriever_k, options.fusion_depth), restrict, exclude)
        examples = [self.summaries[d.doc_id] for d in self._fuse(facts_runs, options)[: options.per_retriever_k]]
        return self.questions.generate(query, examples, n, self.scorer), facts_runs

    # -- the whole search --------------------------------------------------
    def search(
        self,
        facts: str,
        questions: Sequence[str] | None = None,
        *,
        k: int | None = None,
        restrict: set[str] | None = None,
        exclude: set[str] | None = None,
        options: SearchOptions | None = None,
    ) -> SearchResult:
        options = options or self.options
        k = k or options.k
        timings: dict[str, float] = {}
        started = time.perf_counter()
        facts = self._check_facts(facts, options)
        check_texts(questions, "questions")

        candidates, facts_runs = self._candidates(facts, options.n_candidate_questions, options, restrict, exclude)
        chosen = [" ".join(q.split()) for q in questions or [] if q and q.strip()]
        used = chosen or _top_questions(candidates, options)
        timings["questions"] = _ms(started)

        t = time.perf_counter()
        runs: list[tuple[str, list[ScoredDoc]]] = list(facts_runs) if options.include_facts_query or not used else []
        retrieved_for: dict[str, set[int]] = defaultdict(set)
        if used and "dense" in self._retrievers(options):
            self.index.embed_queries(used)  # the questions not embedded yet, in one model call
        for number, question in enumerate(used):
            for name, run in self._retrieve(facts, options, max(options.per_retriever_k, options.fusion_depth), restrict, exclude, question=question):
                runs.append((name, run))
                for doc in run[: options.per_retriever_k]:
                    retrieved_for[doc.doc_id].add(number)
        fused, referred = self._refer(self._fuse(runs, options), options, exclude)
        timings["retrieval"] = _ms(t)

        t = time.perf_counter()
        result = self._explain(facts, used, fused, retrieved_for, k, options, referred)
        timings["explanation"] = _ms(t)
        timings["total"] = _ms(started)
        notes = list(dict.fromkeys(q.note for q in candidates if q.note)) + result.notes
        if self.citations is None and options.citation_weight:
            notes.append(NO_CITATIONS_NOTE)
        if not self._settled:
            self._settled = True
            _freeze_heap()
        return result.model_copy(update={"candidate_questions": candidates, "questions_chosen_by_user": bool(chosen), "timings_ms": timings, "notes": notes})

    def _explain(self, facts: str, used: list[str], fused: list[ScoredDoc], retrieved_for, k: int, options: SearchOptions, referred) -> SearchResult:
        best = fused[0].score if fused and fused[0].score > 0 else 1.0
        handed = [
            Candidate(self.summaries[d.doc_id], d.score, d.score / best, tuple(sorted(retrieved_for.get(d.doc_id, ()))))
            for d in fused[: max(k, options.explain_top)]
            if d.doc_id in self.summaries
        ]
        explained = self.explainer.explain(facts, used, handed, self.scorer)
        by_id = {c.summary.judgment_id: c for c in handed}
        grounded = [e for e in explained if e.judgment_id in by_id and e.judgment_id in self.summaries]
        dropped = len(explained) - len(grounded)
        grounded.sort(key=lambda e: (-e.score, -by_id[e.judgment_id].retrieval_score, id_hash(e.judgment_id)))
        kept = [e for e in grounded if e.score >= options.min_score]
        hits = []
        for rank, e in enumerate(kept[:k], 1):
            summary = self.summaries[e.judgment_id]
            hits.append(
                Hit(
                    rank=rank,
                    judgment_id=e.judgment_id,
                    parties=parties_line(summary),
                    case_number=summary.case_number,
                    court=summary.court,
                    date=summary.date,
                    score=e.score,
                    legal_issue=e.legal_issue,
                    reason=e.reason,
                    questions=list(by_id[e.judgment_id].questions),
                    retrieval_score=round(by_id[e.judgment_id].retrieval_score, 6),
                    cited_by=[d for d in referred[e.judgment_id].cited_by if d in self.summaries] if e.judgment_id in referred else [],
                    evidence=[Evidence(slot=s, text=t) for s, t in e.evidence],
                )
            )
        return SearchResult(
            facts=facts,
            questions=used,
            hits=hits,
            engines=self.engines(options),
            dropped_not_in_archive=dropped,
            below_threshold=len(grounded) - len(kept),
            dropped_citations=sum(e.dropped_citations for e in grounded),
            notes=list(dict.fromkeys(e.note for e in explained if e.note)),
        )

    def engines(self, options: SearchOptions | None = None) -> Engines:
        options = options or self.options
        return Engines(
            questions=self.questions.name,
            explainer=self.explainer.name,
            summarizer=self.summarizer_name,
            embedder=self.index.spec.embedder,
            fuser=options.fuser,
        )

    def rank(self, facts: str, questions: Sequence[str] | None = None, *, depth: int = 1000, restrict=None, exclude=None, options: SearchOptions | None = None) -> tuple[SearchResult, list[ScoredDoc]]:
        """The search result plus a deep ranking for evaluation: the explained candidates (the
        best `explain_top` fused ones, by explanation score, whatever their score) first, then
        every other retrieved judgment by fused score, down to `depth`. The result's hits are
        the returned set a search gives (`min_score`, `k`)."""
        options = options or self.options
        every = options.model_copy(update={"min_score": 1})
        result = self.search(facts, questions, k=min(depth, options.explain_top), restrict=restrict, exclude=exclude, options=every)
        head = [ScoredDoc(h.judgment_id, float(h.score)) for h in result.hits]
        kept = [h for h in result.hits if h.score >= options.min_score][: options.k]
        result = result.model_copy(update={
            "hits": [h.model_copy(update={"rank": rank}) for rank, h in enumerate(kept, 1)],
            "below_threshold": sum(h.score < options.min_score for h in result.hits),
        })
        facts_clean = result.facts
        runs: list[tuple[str, list[ScoredDoc]]] = []
        if options.include_facts_query or not result.questions:
            runs += self._retrieve(facts_clean, options, depth, restrict, exclude)
        for question in result.questions:
            runs += self._retrieve(facts_clean, options, depth, restrict, exclude, question=question)
        seen = {d.doc_id for d in head}
        tail = [d for d in self._refer(self._fuse(runs, options), options, exclude)[0] if d.doc_id not in seen]
        return result, (head + tail)[:depth]


def _top_questions(candidates: Sequence[CandidateQuestion], options: SearchOptions) -> list[str]:
    """The best `n_questions` generated questions, without those far below the best one."""
    if not candidates:
        return []
    floor = candidates[0].score * options.question_min_ratio
    return [c.text for c in candidates[: options.n_questions] if c.score >= floor]


def _freeze_heap() -> None:
    """Keep the loaded index and summaries out of the garbage collector's full passes.

    A loaded archive is hundreds of thousands of long-lived objects (670,000 for AILA's
    2,914 judgments); a full collection walks them all, and one landing inside a search
    cost ~200 ms: search p95 on 50 AILA queries 438-477 ms without, 259-282 ms with (p50
    unchanged, ~200 ms; `python -m aqgr.eval.bench_search`, three runs each). Called when the Searcher is made
    and after its first search (the embedding model loads then). No collection first (it
    costs ~360 ms there): what is garbage at that moment stays allocated, once."""
    import gc

    gc.freeze()


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
