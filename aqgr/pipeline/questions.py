"""Question generation: from the facts, the legal questions they raise.

Interface: `QuestionGenerator.generate(facts, examples, n, scorer)` returns up to `n`
ranked `CandidateQuestion`s. `examples` are the summaries most similar to the facts
(the study's in-context examples); a model-backed generator puts them in its prompt.

`harvest.v1` (offline default) harvests the issue sentences of those summaries and
ranks them by relevance to the facts: half meaning (cosine of embeddings), half shared
informative vocabulary, weighted a little by how high their judgment was retrieved;
near-duplicates are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from aqgr.foundation.registry import Registry
from aqgr.pipeline.relevance import RelevanceScorer
from aqgr.retrieval.documents import question_form
from aqgr.schemas.results import CandidateQuestion
from aqgr.schemas.summary import StructuredSummary

question_generators: Registry["QuestionGenerator"] = Registry("question generator", ("aqgr.pipeline.questions_llm",))


class QuestionGenerator(Protocol):
    """`name`; optionally `copies_examples = True` when every question is an example's own text (the
    search then skips the citation check it runs on questions a model wrote)."""

    name: str

    def generate(
        self, facts: str, examples: Sequence[StructuredSummary], n: int, scorer: RelevanceScorer
    ) -> list[CandidateQuestion]: ...


# Candidates shorter than this carry no legal question ("Whether the appeal lies?").
_MIN_WORDS = 5
_DUPLICATE_OVERLAP = 0.6


class HarvestQuestionGenerator:
    """`harvest.v1`: issue sentences of similar judgments, ranked by coverage of the facts."""

    name = "harvest.v1"
    copies_examples = (
        True  # its questions are the examples' own issue sentences: the search's citation check is not needed
    )

    def generate(
        self, facts: str, examples: Sequence[StructuredSummary], n: int, scorer: RelevanceScorer
    ) -> list[CandidateQuestion]:
        harvested = [
            (position, summary.judgment_id, question_form(issue), " ".join(issue.split()))
            for position, summary in enumerate(examples)
            for issue in summary.issues
            if len(issue.split()) >= _MIN_WORDS
        ]
        # Meaning is compared on the issue sentence as summarised: the index embedded those
        # when it was built, so ranking the candidates costs no model call.
        meaning = scorer.semantic(facts, [issue for _, _, _, issue in harvested])
        pool: list[CandidateQuestion] = []
        for (position, judgment_id, text, _), cosine in zip(harvested, meaning):
            prior = 1.0 / (1.0 + 0.1 * position)  # higher-retrieved examples count a little more
            words = 0.5 * scorer.coverage(facts, text) + 0.5 * scorer.coverage(text, facts)
            score = (0.5 * max(cosine, 0.0) + 0.5 * words) * prior
            pool.append(CandidateQuestion(text=text, score=round(score, 6), source_judgment_id=judgment_id))
        pool.sort(key=lambda c: (-c.score, c.text))
        kept: list[CandidateQuestion] = []
        for candidate in pool:
            if all(scorer.overlap(candidate.text, k.text) < _DUPLICATE_OVERLAP for k in kept):
                kept.append(candidate)
            if len(kept) == n:
                break
        return kept


@question_generators.register("harvest.v1")
def _harvest_v1() -> QuestionGenerator:
    return HarvestQuestionGenerator()
