"""Augmented Question-guided Retrieval over one loaded index (SPEC.md, stage 3).

A search is four explicit steps, each run once per request; `search`, `rank`, the statute
search (aqgr/pipeline/statutes.py) and the evaluation compose them, never repeat one:

1. `plan`: the questions. The summaries most similar to the facts are the in-context
   examples; the question generator proposes candidates, the top `n_questions` are used.
   A generated question citing a case that neither the examples nor the facts show is
   dropped and counted (aqgr/pipeline/citation_guard.py; not for `harvest.v1`, whose questions are
   the examples' own sentences). When the user chose the questions, nothing is generated (no model call) and the facts
   are retrieved only if the facts-alone query takes part (`include_facts_query`).
2. `retrieve`: each question together with the facts queries every retriever (runs read
   to `Plan.depth`, at least `fusion_depth`); with the facts-alone runs of step 1, reused.
   Lexical retrievers read the question followed by the facts; the dense retriever reads
   normalise(v(facts) + question_weight * v(question)), so the long facts are embedded
   once per search (memoised) and a question costs one short embedding.
   The facts are queried without anonymisation placeholders (`drop_masks`). With a
   correspondence table (aqgr/pipeline/correspondence.py), a lexical query also carries the
   counterparts of the sections it names ("Section 103 BNS" -> "Section 302 IPC").
3. `fuse`: all runs fused into one candidate list, and the precedents referred (when the
   archive's citation graph is loaded and `citation_weight` > 0): the judgments the best
   `citation_depth` fused ones cite gain citation_weight x the best fused score x their
   votes (retrieval/citations/graph.py: 1/rank summed over the judgments citing them,
   divided as `citation_norm` says, by default their number: the mean); a hit lists those
   citing judgments (`cited_by`).
4. `explain`: the explainer scores (1-10) and explains the best `explain_top` fused
   candidates, from a closed list. The grounding guard drops anything not in that list
   or not in the archive, and anything a model call wrote of a judgment that call was not
   shown (the explainer marks it, aqgr/pipeline/explain_llm.py), counting each; a judgment
   is a hit once; hits below `min_score` are not returned. A hit that a later
   judgment of the archive overruled or doubted carries that judgment's words
   (`treatment_warnings`); with `overruled_below`, an overruled hit ranks just below its
   overruling judgment when that judgment is among the hits (`overruled_below`, below).
5. `pin` (in `search`, not in `rank`): each returned hit's issue, reason and evidence pinned to
   the judgment's text (aqgr/pipeline/pinpoint.py: offsets, paragraph).

Process-wide settings are not the Searcher's: a long-running process calls `freeze_heap`
once, at its start-up (the server does). The one process-wide thing a search does is
temporary: it pauses the cyclic garbage collector while it runs and lets it go on after
(aqgr/foundation/collector.py).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from aqgr.foundation.collector import collection_paused
from aqgr.foundation.errors import EmptyArchiveError, FactsTooShortError, NoFiltersError, StoreError
from aqgr.foundation.inputs import check_count, check_text, check_texts, many
from aqgr.foundation.parallel import side_by_side
from aqgr.llm.deadline import task as model_task
from aqgr.pipeline.citation_guard import grounded_questions
from aqgr.pipeline.config import (
    SearchOptions,
)
from aqgr.pipeline.explain import Candidate, Explainer, Explanation
from aqgr.pipeline.pinpoint import pin_hits
from aqgr.pipeline.questions import QuestionGenerator
from aqgr.pipeline.relevance import RelevanceScorer
from aqgr.retrieval.embedded.retrievers import Dense, FullTextBM25, SummaryBM25, optional_retrievers, vector_retrievers
from aqgr.retrieval.fusion import fusers
from aqgr.retrieval.protocol import Filterable, Index, Rescoring
from aqgr.retrieval.text import strip_masks
from aqgr.retrieval.types import ScoredDoc, arrays_of, id_hash, ranked_arrays
from aqgr.schemas.filters import FacetCount, Facets, Filters
from aqgr.schemas.results import CandidateQuestion, Engines, Evidence, Hit, SearchResult, TreatmentWarning
from aqgr.schemas.summary import StructuredSummary

FULLTEXT = FullTextBM25.name
SUMMARY_BM25 = SummaryBM25.name
DENSE = Dense.name


def parties_line(summary: StructuredSummary) -> str:
    left = ", ".join(summary.parties.appellants) or "(appellant not identified)"
    right = ", ".join(summary.parties.respondents) or "(respondent not identified)"
    return f"{left} v. {right}"


NO_CITATIONS_NOTE = (
    "precedents referred were not used: the archive has no citation graph for this index "
    "(made by `aqgr index`; rebuild the index to add it)"
)


def overruled_below(hits: Sequence[Hit]) -> tuple[list[Hit], list[str]]:
    """The hits reordered so that each one overruled by another hit ranks just below it (below the
    last of them, where several hits overruled it), the rest in their order; ranks renumbered.
    With a note per hit moved. A hit whose overruling judgment is not among `hits` keeps its
    place; none is dropped; the warnings stay. Overrulings that go round (each overruled the
    other) move nothing."""
    ids = {h.judgment_id for h in hits}
    above = {
        h.judgment_id: {
            w.judgment_id for w in h.treatment_warnings if w.treatment == "overruled" and w.judgment_id in ids
        }
        - {h.judgment_id}
        for h in hits
    }

    def reaches(start: str, goal: str) -> bool:  # does goal stand among start's overrulers, theirs, ...?
        seen, todo = set(), [start]
        while todo:
            for j in above[todo.pop()] - seen:
                if j == goal:
                    return True
                seen.add(j)
                todo.append(j)
        return False

    above = {j: {o for o in by if not reaches(o, j)} for j, by in above.items()}  # a cycle's overrulings are left out
    placed: list[Hit] = []
    done: set[str] = set()
    waiting = list(hits)
    while waiting:  # the best-ranked hit whose overruling hits are all placed (there is one: no cycle is left)
        ready = next(h for h in waiting if above[h.judgment_id] <= done)
        waiting.remove(ready)
        placed.append(ready)
        done.add(ready.judgment_id)
    notes = [
        f"[{hit.judgment_id}] ranked {rank} (not {hit.rank}): below {', '.join(f'[{i}]' for i in sorted(above[hit.judgment_id]))}, "
        "which overruled it (overruled_below)"
        for rank, hit in enumerate(placed, 1)
        if rank > hit.rank
    ]
    return [h.model_copy(update={"rank": rank}) if h.rank != rank else h for rank, h in enumerate(placed, 1)], notes


@dataclass(frozen=True)
class Plan:
    """One request, settled by step 1: the facts, the questions, how it retrieves.

    `facts_runs`: the facts-alone runs (retriever, run) when step 1 retrieved them (for the
    in-context examples, or for the facts-alone query), reused by `retrieve`."""

    facts: str  # as checked: whitespace collapsed
    questions: tuple[str, ...]  # the questions the search uses
    chosen_by_user: bool
    candidates: tuple[CandidateQuestion, ...]  # generated candidates, best first; none when the user chose
    options: SearchOptions
    depth: int  # how deep each run is read
    restrict: AbstractSet[str] | None = None  # a filter's selection: retrieval.embedded.restriction.Admitted
    exclude: frozenset[str] | None = None
    facts_runs: tuple[tuple[str, list[ScoredDoc]], ...] | None = field(default=None, repr=False)
    dropped_questions: int = 0  # generated questions dropped for citing a case the examples and facts do not show
    filters: Filters | None = None  # what `restrict` was narrowed by (retrieval/embedded/facets.py)
    filter_notes: tuple[str, ...] = ()  # why a filter admitted no judgment, and the closest known values


@dataclass(frozen=True)
class Retrieval:
    """Step 2: every run (retriever, run) of one request, and which questions retrieved a judgment
    within their first `per_retriever_k` (judgment id -> question numbers)."""

    runs: tuple[tuple[str, list[ScoredDoc]], ...]
    retrieved_for: Mapping[str, frozenset[int]]


@dataclass(frozen=True)
class Fused:
    """Step 3: the fused ranking with the precedents referred raised, and judgment id -> Referral."""

    ranking: list[ScoredDoc]
    referred: Mapping[str, object]


def damaged_note(ids: Sequence[str]) -> str:
    """What a search (or an export) says of the judgments it skipped because their summary is damaged."""
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return (
        f"{len(ids)} judgment(s) skipped: the stored summary is damaged ({shown}); `aqgr check` lists every one, "
        "`aqgr summarize --force` of their files or `aqgr import --replace` of an export restores them"
    )


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
        texts: Callable[[Iterable[str]], Mapping[str, str]] | None = None,
        correspondence=None,
    ):
        if not len(index):
            raise EmptyArchiveError("search")
        self.index = index
        self.summaries = summaries  # judgment id -> summary; read as needed (aqgr/archive/store.py SummaryReader)
        self.questions = question_generator
        self.explainer = explainer
        self.options = options
        self.summarizer_name = summarizer_name
        self.citations = citations  # retrieval.citations.CitationGraph of the archive, or None
        self.texts = texts  # ids -> {id: judgment text} (Store.texts), to pin the hits' evidence; None: not pinned
        # () -> the archive's aqgr.pipeline.correspondence.Correspondence or None, asked per query (a store's
        # `load`, which reads the tables again only when their file changed), or None
        self._correspondence = correspondence
        self.scorer = RelevanceScorer(
            index.tokenizer, index.idf(), len(index), embed=index.embed_query, embed_many=index.embed_queries
        )

    @property
    def correspondence(self):
        """The section correspondence tables in force now (aqgr/pipeline/correspondence.py), or None."""
        return self._correspondence() if self._correspondence is not None else None

    # -- step 1: the questions ---------------------------------------------
    def resolved(self, options: SearchOptions | None = None) -> SearchOptions:
        """`options` (default: the searcher's) with the fields they leave unset taken from their
        search profile, else the index's (recorded when it was built; retrieval/spec.py)."""
        options = options or self.options
        return options.under(options.profile or self.index.profile)

    def plan(
        self,
        facts: str,
        questions: Sequence[str] | None = None,
        *,
        restrict=None,
        exclude=None,
        options: SearchOptions | None = None,
        depth: int | None = None,
        n_candidates: int | None = None,
        filters: Filters | None = None,
    ) -> Plan:
        """The request's questions: `questions` (the user's pick) as given, else the top generated
        ones. `depth`: how deep each run is read (default and at least: the options'
        `fusion_depth` and `per_retriever_k`). `n_candidates`: candidates generated (default
        the options' `n_candidate_questions`). `filters` narrow `restrict` to the judgments
        matching them (every retriever searches only those; retrieval/embedded/facets.py)."""
        many(questions, "questions", "['Whether a dying declaration alone can sustain a conviction?']")
        many(restrict, "restrict", "{'SC12', 'SC40'}")
        many(exclude, "exclude", "{'SC12'}")
        options = self.resolved(options)
        facts = self._check_facts(facts, options)
        check_texts(questions, "questions")
        chosen = tuple(" ".join(q.split()) for q in questions or () if q and q.strip())
        restrict = frozenset(restrict) if restrict is not None else None
        exclude = frozenset(exclude) if exclude else None
        filters = filters or None
        restrict, filter_notes = self._narrow(filters, restrict)
        depth = max(options.per_retriever_k, options.fusion_depth, depth or 0)
        plan = Plan(
            facts,
            chosen,
            bool(chosen),
            (),
            options,
            depth,
            restrict,
            exclude,
            filters=filters,
            filter_notes=filter_notes,
        )
        if chosen and not options.include_facts_query:
            return plan
        facts_runs = tuple(self._retrieve(plan))
        if chosen:
            return replace(plan, facts_runs=facts_runs)
        examples = list(
            self._summaries_of([d.doc_id for d in self._fuse(facts_runs, options)[: options.per_retriever_k]]).values()
        )
        candidates = tuple(
            self.questions.generate(
                self._query(facts, options), examples, n_candidates or options.n_candidate_questions, self.scorer
            )
        )
        dropped = 0
        if not getattr(self.questions, "copies_examples", False):  # written by a model: the citation guard's rule
            kept, dropped = grounded_questions(candidates, examples, facts)
            candidates = tuple(kept)
        return replace(
            plan,
            questions=tuple(_top_questions(candidates, options)),
            candidates=candidates,
            facts_runs=facts_runs,
            dropped_questions=dropped,
        )

    def candidate_questions(
        self,
        facts: str,
        *,
        n: int | None = None,
        restrict=None,
        exclude=None,
        options: SearchOptions | None = None,
        filters: Filters | None = None,
    ) -> list[CandidateQuestion]:
        """The candidate legal questions for the facts, best first (for the user to pick from),
        harvested from the judgments that match `filters`."""
        with model_task("search"):
            return list(
                self.plan(
                    facts, restrict=restrict, exclude=exclude, options=options, n_candidates=n, filters=filters
                ).candidates
            )

    # -- step 2: retrieval -------------------------------------------------
    def retrieve(self, plan: Plan) -> Retrieval:
        """Every run of the plan, each retriever read once per query: the facts alone (reused
        from `plan` when it has them) and each question with the facts."""
        options = plan.options
        runs: list[tuple[str, list[ScoredDoc]]] = []
        if options.include_facts_query or not plan.questions:
            runs += plan.facts_runs if plan.facts_runs is not None else self._retrieve(plan)
        retrieved_for: dict[str, set[int]] = defaultdict(set)
        reused = self._reused_runs(plan, runs)
        if plan.questions and vector_retrievers().intersection(set(self._retrievers(options)) - set(reused)):
            self.index.embed_queries(list(plan.questions))  # the questions not embedded yet, in one model call
        rescored_from = self._rescored_from(plan, runs, reused)
        # every question's reads in one `side_by_side` (aqgr/foundation/parallel.py), taken in turn
        # question by question, so no core idles while one question's reads end
        reads = [self._reads(plan, question, reused, rescored_from) for question in plan.questions]
        each = _Reads.all_runs(reads)
        for number, question_runs in enumerate(each):
            for name, run in question_runs:
                runs.append((name, run))
                for doc in run[: options.per_retriever_k]:
                    retrieved_for[doc.doc_id].add(number)
        return Retrieval(tuple(runs), {d: frozenset(n) for d, n in retrieved_for.items()})

    # -- step 3: fusion and precedents referred ----------------------------
    def fuse(self, plan: Plan, retrieval: Retrieval) -> Fused:
        """The runs fused into one ranking, the precedents its best judgments cite raised."""
        return Fused(*self._refer(self._fuse(retrieval.runs, plan.options), plan.options, plan.exclude))

    # -- step 4: explanation -----------------------------------------------
    def explain(self, plan: Plan, fused: Fused, retrieval: Retrieval, *, k: int | None = None) -> SearchResult:
        """The best `explain_top` (at least `k`) fused candidates explained; the returned hits:
        grounded, at or above `min_score`, at most `k` (default the options' `k`). An explainer
        that scores before quoting (`score_of`, aqgr/pipeline/explain.py) quotes only those. The facet
        counts over the fused ranking are made beside the explanation, on a worker thread: they
        are mostly the store's reads, which let go of the interpreter lock (~40 ms at 1e6)."""
        result, facets = side_by_side(
            [
                partial(self._explained, plan, fused, retrieval, k),
                partial(self.facets, [d.doc_id for d in fused.ranking]),
            ]
        )
        return result.model_copy(update={"facets": facets})

    def _explained(self, plan: Plan, fused: Fused, retrieval: Retrieval, k: int | None) -> SearchResult:
        """`explain` without the facet counts."""
        options = plan.options
        k = k or options.k
        best = fused.ranking[0].score if fused.ranking and fused.ranking[0].score > 0 else 1.0
        top = fused.ranking[: max(k, options.explain_top)]
        found = self._summaries_of([d.doc_id for d in top])
        handed = [
            Candidate(
                found[d.doc_id], d.score, d.score / best, tuple(sorted(retrieval.retrieved_for.get(d.doc_id, ())))
            )
            for d in top
            if d.doc_id in found
        ]
        used = list(plan.questions)
        by_id = {c.summary.judgment_id: c for c in handed}
        below = None
        if (
            score_of := getattr(self.explainer, "score_of", None)
        ) is not None:  # scored before quoting: quote the shown only
            scores = {c.summary.judgment_id: score_of(c) for c in handed}
            below = sum(1 for score in scores.values() if score < options.min_score)
            handed = sorted(
                (c for c in handed if scores[c.summary.judgment_id] >= options.min_score),
                key=lambda c: (-scores[c.summary.judgment_id], -c.retrieval_score, id_hash(c.summary.judgment_id)),
            )[:k]
        explained = self.explainer.explain(plan.facts, used, handed, self.scorer)
        grounded: list[Explanation] = []
        dropped, shown = 0, set()
        for e in explained:  # the closed list's judgments, each once (the explainer grounded their texts)
            if e.outside_list or e.judgment_id not in by_id:
                dropped += 1
            elif e.judgment_id not in shown:
                shown.add(e.judgment_id)
                grounded.append(e)
        grounded.sort(key=lambda e: (-e.score, -by_id[e.judgment_id].retrieval_score, id_hash(e.judgment_id)))
        kept = [e for e in grounded if e.score >= options.min_score]
        referred = fused.referred
        hits: list[Hit] = []
        for rank, e in enumerate(kept[:k], 1):
            summary = by_id[e.judgment_id].summary
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
                    cited_by=[d for d in referred[e.judgment_id].cited_by if d in self.index]
                    if e.judgment_id in referred
                    else [],
                    evidence=[Evidence(slot=s, text=t) for s, t in e.evidence],
                    sections=self._sections(summary, plan.facts),
                    treatment_warnings=self._warnings(e.judgment_id),
                )
            )
        notes = (
            list(plan.filter_notes)
            + [q.note for q in plan.candidates if q.note]
            + [e.note for e in explained if e.note]
        )
        if options.overruled_below:
            hits, moved = overruled_below(hits)
            notes += moved
        if plan.dropped_questions:
            notes.append(
                f"{plan.dropped_questions} generated question(s) dropped: they cited a judgment that neither the "
                "similar judgments' summaries nor the facts show"
            )
        if self.citations is None and options.citation_weight:
            notes.append(NO_CITATIONS_NOTE)
        missing = [d.doc_id for d in top if d.doc_id not in found]
        damaged_among = getattr(self.summaries, "damaged_among", None)
        damaged = damaged_among(missing) if damaged_among is not None and missing else []
        if damaged:
            notes.append(damaged_note(damaged))
        if len(missing) > len(damaged):
            notes.append(
                f"{len(missing) - len(damaged)} indexed judgment(s) have no summary in the archive now (removed or "
                "summarised by another engine since `aqgr index`): run `aqgr index` to bring the index up to date"
            )
        return SearchResult(
            facts=plan.facts,
            questions=used,
            questions_chosen_by_user=plan.chosen_by_user,
            candidate_questions=list(plan.candidates),
            hits=hits,
            engines=self.engines(options),
            dropped_not_in_archive=dropped,
            below_threshold=below if below is not None else len(grounded) - len(kept),
            dropped_citations=sum(e.dropped_citations for e in explained) + plan.dropped_questions,
            notes=list(dict.fromkeys(notes)),
            filters=plan.filters,
            profile=options.profile,
        )

    # -- step 5: pinpoints -------------------------------------------------
    def pin(self, result: SearchResult) -> SearchResult:
        """The result with its hits' issue, reason and evidence pinned to the judgments' texts
        (aqgr/pipeline/pinpoint.py): the hits shown only, their texts read in one query, each prepared
        once. Unchanged without a text source."""
        if self.texts is None or not result.hits:
            return result
        try:
            return result.model_copy(update={"hits": pin_hits(result.hits, self.texts)})
        except StoreError as exc:  # the texts cannot be read now (a damaged database): the hits stand, unpinned
            return result.model_copy(
                update={"notes": [*result.notes, f"passages not pinned to the judgments' texts: {exc}"]}
            )

    def _warnings(self, judgment_id: str) -> list[TreatmentWarning]:
        """The judgments of the index that overruled or doubted this one (citation graph,
        retrieval/citations/treatment.py), each with its date and words; the hit is kept."""
        if self.citations is None:
            return []
        found = [(citing, t) for citing, t in self.citations.treated_by(judgment_id) if citing in self.index]
        summaries = self._summaries_of([citing for citing, _ in found]) if found else {}
        return [
            TreatmentWarning(
                judgment_id=citing,
                parties=parties_line(summaries[citing]) if citing in summaries else citing,
                date=summaries[citing].date if citing in summaries else None,
                treatment=t.label,
                quote=t.sentence,
                start=t.start,
                end=t.end,
                dissent=t.dissent or None,
            )
            for citing, t in found
        ]

    # -- the steps composed ------------------------------------------------
    def search(
        self,
        facts: str,
        questions: Sequence[str] | None = None,
        *,
        k: int | None = None,
        restrict: set[str] | None = None,
        exclude: set[str] | None = None,
        options: SearchOptions | None = None,
        filters: Filters | None = None,
    ) -> SearchResult:
        """Question-guided search: plan, retrieve, fuse and refer, explain, pin; each once. `filters`:
        only judgments matching them are retrieved and ranked; the result's facets count the
        candidates. Its model calls end within the search's time (aqgr/llm/deadline.py)."""
        check_count(k, "k")
        with model_task("search"), collection_paused():
            return self._search(
                facts, questions, k=k, restrict=restrict, exclude=exclude, options=options, filters=filters
            )

    def _search(self, facts, questions, *, k, restrict, exclude, options, filters) -> SearchResult:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        plan = self.plan(facts, questions, restrict=restrict, exclude=exclude, options=options, filters=filters)
        timings["questions"] = _ms(started)
        t = time.perf_counter()
        retrieval = self.retrieve(plan)
        fused = self.fuse(plan, retrieval)
        timings["retrieval"] = _ms(t)
        t = time.perf_counter()
        result = self.explain(plan, fused, retrieval, k=k)
        timings["explanation"] = _ms(t)
        t = time.perf_counter()
        result = self.pin(result)
        timings["pinpoint"] = _ms(t)
        timings["total"] = _ms(started)
        return result.model_copy(update={"timings_ms": timings})

    def rank(
        self,
        facts: str,
        questions: Sequence[str] | None = None,
        *,
        depth: int = 1000,
        restrict=None,
        exclude=None,
        options: SearchOptions | None = None,
        filters: Filters | None = None,
    ) -> tuple[SearchResult, list[ScoredDoc]]:
        """The search result plus a deep ranking for evaluation: the explained candidates (the
        best `explain_top` fused ones, by explanation score, whatever their score) first, then
        every other fused judgment by fused score, down to `depth`. The result's hits are the
        returned set a search gives (`min_score`, `k`). One plan, one retrieval (runs read to
        `depth`, at least `fusion_depth`), one fusion, one explanation."""
        options = options or self.options
        every = options.model_copy(
            update={"min_score": 1, "overruled_below": False}
        )  # reordered below, among the hits returned
        plan = self.plan(
            facts, questions, restrict=restrict, exclude=exclude, options=every, depth=depth, filters=filters
        )
        retrieval = self.retrieve(plan)
        fused = self.fuse(plan, retrieval)
        result = self.explain(plan, fused, retrieval, k=min(depth, options.explain_top))
        head = [ScoredDoc(h.judgment_id, float(h.score)) for h in result.hits]
        kept = [
            h.model_copy(update={"rank": rank})
            for rank, h in enumerate((h for h in result.hits if h.score >= options.min_score), 1)
        ][: options.k]
        moved: list[str] = []
        if options.overruled_below:
            kept, moved = overruled_below(kept)
        result = result.model_copy(
            update={
                "hits": kept,
                "below_threshold": sum(h.score < options.min_score for h in result.hits),
                "notes": list(dict.fromkeys([*result.notes, *moved])),
            }
        )
        seen = {d.doc_id for d in head}
        return result, (head + [d for d in fused.ranking if d.doc_id not in seen])[:depth]

    def engines(self, options: SearchOptions | None = None) -> Engines:
        options = options or self.options
        return Engines(
            questions=self.questions.name,
            explainer=self.explainer.name,
            summarizer=self.summarizer_name,
            embedder=self.index.spec.embedder,
            fuser=options.fuser,
        )

    def facets(self, ids: Sequence[str]) -> Facets | None:
        """Counts per court, year, statute, ... over the judgments `ids` (a search's candidates);
        None when the index stores no filter fields."""
        if not isinstance(self.index, Filterable):
            return None
        reader = self.index.facets
        counted = self.index.ns_of(dict.fromkeys(ids))
        found = reader.counts(counted)
        return Facets(
            candidates=len(counted),
            **{name: [FacetCount(value=v, count=c) for v, c in pairs] for name, pairs in found.items()},
        )

    # -- helpers of the steps ----------------------------------------------
    def _narrow(
        self, filters: Filters | None, restrict: frozenset[str] | None
    ) -> tuple[AbstractSet[str] | None, tuple[str, ...]]:
        """`restrict` narrowed to the judgments matching `filters`, and the notes of the filter
        clauses that matched none (unknown court or judge: an empty result, not an error)."""
        if not filters:
            return restrict, ()
        if not isinstance(self.index, Filterable):
            raise NoFiltersError(self.index.location)
        reader = self.index.facets
        table = self.correspondence
        selection = reader.select(filters, table.section_equivalents if table else None)
        if selection.ns is None:
            return restrict, tuple(selection.notes)
        admitted = self.index.admitted(selection.ns, selection.where)  # the numbers as they are, not a set of ids
        return (admitted if restrict is None else frozenset(d for d in restrict if d in admitted)), tuple(
            selection.notes
        )

    def _summaries_of(self, ids: Sequence[str]) -> dict[str, StructuredSummary]:
        """The summaries of `ids` that the archive has, in the order of `ids` (one store query when
        the mapping reads the store)."""
        many = getattr(self.summaries, "many", None)
        if many is not None:
            return many(ids)
        return {i: self.summaries[i] for i in ids if i in self.summaries}

    def _check_facts(self, facts: str, options: SearchOptions) -> str:
        facts = " ".join(check_text(facts or "", "facts").split())
        found = self.scorer.content_words(facts)
        if found < options.min_content_words:
            raise FactsTooShortError(found, options.min_content_words)
        return facts

    def _retrievers(self, options: SearchOptions) -> list[str]:
        """The configured retrievers, less the optional ones this index lacks (retrieval/embedded/retrievers.py:
        "fulltext" needs an index built with full texts)."""
        have, optional = self.index.retrievers, optional_retrievers()
        return [name for name in options.retrievers if name in have or name not in optional]

    @staticmethod
    def _query(facts: str, options: SearchOptions) -> str:
        """The facts as a query: without anonymisation placeholders when `options.drop_masks`."""
        return (strip_masks(facts) or facts) if options.drop_masks else facts

    def _reused_runs(self, plan: Plan, facts_runs: Sequence[tuple[str, list[ScoredDoc]]]) -> dict[str, list[ScoredDoc]]:
        """retriever -> the facts' run that stands in for each question's run of it: the full text's
        when `fulltext_questions` is off (as in the "large" search profile); the dense one's likewise
        by `dense_questions` (the
        plan's facts runs, else `facts_runs`, else read now)."""
        options = plan.options
        names = self._retrievers(options)
        once = [
            name
            for name, wanted in ((FULLTEXT, options.fulltext_questions), (DENSE, options.dense_questions))
            if name in names and not wanted
        ]
        if not once or not plan.questions:
            return {}
        found: dict[str, list[ScoredDoc]] = {}
        for name, run in (*(plan.facts_runs or ()), *facts_runs):
            if name in once:
                found.setdefault(name, run)
        if missing := tuple(name for name in once if name not in found):
            found.update(self._retrieve(replace(plan, options=options.model_copy(update={"retrievers": missing}))))
        return found

    def _max_df(self, options: SearchOptions) -> dict[str, dict[str, float]]:
        """{"max_df": {retriever: share}} for the BM25 queries that leave out common terms
        (`fulltext_max_df`, `summary_max_df` below 1, as in the "large" search profile), {} when
        none does or the index cannot (Milvus scores BM25 itself)."""
        if not isinstance(self.index, Rescoring):
            return {}
        shares = {FULLTEXT: options.fulltext_max_df, SUMMARY_BM25: options.summary_max_df}
        cut = {name: share for name, share in shares.items() if share is not None and share < 1}
        return {"max_df": cut} if cut else {}

    def _rescored_from(
        self, plan: Plan, facts_runs: Sequence[tuple[str, list[ScoredDoc]]], reused: Mapping[str, list[ScoredDoc]]
    ) -> dict[str, list[ScoredDoc]]:
        """retriever -> the facts' run that each question's run of it re-ranks (`rescore_questions`
        on, as in the "large" search profile): the plan's facts
        runs, else `facts_runs`, less those `reused`; {} when off or when the facts' runs were not
        read (the user's questions without the facts-alone query)."""
        wanted = plan.options.rescore_questions
        if not wanted or not plan.questions or plan.options.question_alone or not isinstance(self.index, Rescoring):
            return {}
        return {name: run for name, run in (*(plan.facts_runs or ()), *facts_runs) if name not in reused}

    def _retrieve(
        self,
        plan: Plan,
        question: str | None = None,
        reused: Mapping[str, list[ScoredDoc]] | None = None,
        rescored_from: Mapping[str, list[ScoredDoc]] | None = None,
    ) -> list[tuple[str, list[ScoredDoc]]]:
        """(retriever, run) for the plan's facts, or for `question` + facts when a question is given;
        a retriever in `reused` is not read: its run there is returned in its place; one in
        `rescored_from` (the facts' runs) is that run re-ranked for the question where the index
        can (`SummaryIndex.rescore`: BM25), else read."""
        return _Reads.all_runs([self._reads(plan, question, reused, rescored_from)])[0]

    def _reads(
        self,
        plan: Plan,
        question: str | None = None,
        reused: Mapping[str, list[ScoredDoc]] | None = None,
        rescored_from: Mapping[str, list[ScoredDoc]] | None = None,
    ) -> "_Reads":
        """`_retrieve`'s reads, not yet made: each a call for `side_by_side` (see `_Reads`)."""
        options = plan.options
        query = self._query(plan.facts, options)
        names = self._retrievers(options)
        reused = reused or {}
        read = [name for name in names if name not in reused]
        vector = None
        if question is not None and vector_retrievers().intersection(read):
            vector = self.index.combined_vector(
                self.index.embed_query(query), self.index.embed_query(question), options.question_weight
            )
        text = query if question is None else question if options.question_alone else f"{question}\n{query}"
        as_written = text  # the dense query stays the text as written
        table = self.correspondence
        if table:  # the lexical retrievers also read the sections' counterparts in the other code
            text = table.expand(text)
        common = self._max_df(options) if {FULLTEXT, SUMMARY_BM25}.intersection(read) else {}

        def reading(group: list[str], vector=vector) -> dict[str, list[ScoredDoc]]:
            return self.index.retrieve(
                text,
                plan.depth,
                retrievers=group,
                restrict=plan.restrict,
                exclude=plan.exclude,
                vector=vector,
                **common,
            )

        calls: list[Callable[[], dict[str, list[ScoredDoc]]]] = []
        if (
            question is not None
            and rescored_from
            and (wanted := {name: rescored_from[name] for name in read if name in rescored_from})
        ):
            base = table.expand(query) if table else query

            def rescoring() -> dict[str, list[ScoredDoc]]:  # the runs the index cannot re-rank are read
                found = self.index.rescore(text, base, wanted, **common)
                if missing := [name for name in wanted if name not in found]:
                    found.update(reading(missing))
                return found

            calls.append(rescoring)
            read = [name for name in read if name not in wanted]
        if question is not None:
            # each retriever on its own, so that a search's questions' reads share the cores evenly
            return _Reads(names, dict(reused), [], [*calls, *(partial(reading, [name]) for name in read)])
        # the facts' reads each on its own, taken in turn by whichever thread is free (tantivy,
        # faiss and ONNX Runtime let go of the interpreter lock): first the facts' windows, one
        # model call each, then the lexical reads, then the vector reads, with the vector the
        # windows make (the embedding was most of the step on AILA, on one core of two)
        dense = [name for name in read if name in vector_retrievers()]
        windows = self.index.embedding_calls(as_written) if dense else []
        calls += [
            *(partial(reading, [name]) for name in read if name not in dense),
            *(lambda name=name: reading([name], self.index.embed_query(as_written)) for name in dense),
        ]
        return _Reads(names, dict(reused), windows, calls)

    def _sections(self, summary: StructuredSummary, facts: str) -> list[str]:
        """The judgment's sections with their counterparts (aqgr/pipeline/correspondence.py); [] without a table."""
        table = self.correspondence
        if not table:
            return []
        from aqgr.pipeline.correspondence import summary_text

        return table.describe(summary_text(summary), facts=facts)

    def _fuse(self, runs: Sequence[tuple[str, Sequence[ScoredDoc]]], options: SearchOptions) -> list[ScoredDoc]:
        return fusers.create(options.fuser)(
            [run for _, run in runs], options.fusion_weights([name for name, _ in runs])
        )

    def _refer(self, fused: list[ScoredDoc], options: SearchOptions, exclude) -> tuple[list[ScoredDoc], dict]:
        """The fused ranking with the precedents its best judgments cite raised (see the module),
        and judgment id -> Referral. Only judgments already in `fused` move: restrict/exclude hold."""
        if self.citations is None or not options.citation_weight or not fused:
            return fused, {}
        made = arrays_of(fused)  # fusion's ids and scores as it made them (retrieval/types.py RankedRun)
        ids = made[0] if made is not None else [d.doc_id for d in fused]
        referred = self.citations.referred(
            ids, depth=options.citation_depth, exclude=exclude or frozenset(), norm=options.citation_norm
        )
        if not referred:
            return fused, {}
        lift = options.citation_weight * (fused[0].score if fused[0].score > 0 else 1.0)
        scores = (
            made[1].copy()
            if made is not None
            else np.fromiter((d.score for d in fused), dtype=np.float64, count=len(fused))
        )
        raised = np.flatnonzero(np.fromiter(map(referred.__contains__, ids), dtype=bool, count=len(ids)))
        votes = np.fromiter((referred[ids[i]].votes for i in raised.tolist()), dtype=np.float64, count=len(raised))
        scores[raised] += lift * votes
        return ranked_arrays(ids, scores), referred


@dataclass
class _Reads:
    """One query's reads, prepared: `runs` known without reading (reused), `windows` (model calls
    to make first, their results no runs) and `calls`, each returning {retriever: run}."""

    names: list[str]
    known: dict[str, list[ScoredDoc]]
    windows: list[Callable[[], object]]
    calls: list[Callable[[], dict[str, list[ScoredDoc]]]]

    def _assembled(self, results: Sequence[Mapping[str, list[ScoredDoc]]]) -> list[tuple[str, list[ScoredDoc]]]:
        """(retriever, run) in the retrievers' order, from the calls' results."""
        runs = dict(self.known)
        for found in results:
            runs.update(found)
        return [(name, runs[name]) for name in self.names]

    @staticmethod
    def all_runs(reads: Sequence["_Reads"]) -> list[list[tuple[str, list[ScoredDoc]]]]:
        """Each query's (retriever, run) list, all their calls (its windows first) in one
        `side_by_side`, interleaved query by query (the first call of each, then the second, ...)."""
        todo = [[*r.windows, *r.calls] for r in reads]
        order = [(i, j) for j in range(max(map(len, todo), default=0)) for i in range(len(todo)) if j < len(todo[i])]
        got: list[list] = [[None] * len(calls) for calls in todo]
        for (i, j), result in zip(order, side_by_side([todo[i][j] for i, j in order])):
            got[i][j] = result
        return [r._assembled(results[len(r.windows) :]) for r, results in zip(reads, got)]


def _top_questions(candidates: Sequence[CandidateQuestion], options: SearchOptions) -> list[str]:
    """The best `n_questions` generated questions, without those far below the best one."""
    if not candidates:
        return []
    floor = candidates[0].score * options.question_min_ratio
    return [c.text for c in candidates[: options.n_questions] if c.score >= floor]


def freeze_heap() -> None:
    """Keep what is loaded now (the index, the summaries, the models) out of the garbage
    collector's full passes: a process-wide setting, for a long-running process to call
    once at its start-up, after loading (the server does: aqgr/interfaces/server/app.py).

    A loaded archive is hundreds of thousands of long-lived objects (670,000 for AILA's
    2,914 judgments); a full collection walks them all, and one landing inside a search
    cost ~200 ms: search p95 on 50 AILA queries 438-477 ms without, 259-282 ms with (p50
    unchanged, ~200 ms; `python -m aqgr.eval.bench.search`, three runs each). No
    collection first (it costs ~360 ms there): what is garbage at that moment stays
    allocated, once."""
    import gc

    gc.freeze()


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
