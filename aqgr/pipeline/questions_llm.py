"""`llm.v1` question generator: the model proposes and ranks the legal questions the facts raise.

The prompt gives the facts and the most similar summaries (ids, parties, issues, a little
of the facts) as in-context examples and asks for several candidate questions, each with
a relevance score 1-10; the reply is validated (re-asked with the problems, bounded) and
sorted by score. The search keeps the top 3; all candidates are exposed. A `source` id
is kept only if it is one of the examples. If the model fails (error, timeout, block,
output still invalid), `harvest.v1` answers and each candidate says so in `generated_by`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from aqgr.foundation.errors import AqgrError, InvalidModelOutputError, ProviderError
from aqgr.llm.client import LLMClient, client_from_environment
from aqgr.llm.prompts import load_prompt
from aqgr.llm.structured import ask_json, schema_problems
from aqgr.pipeline.questions import HarvestQuestionGenerator, QuestionGenerator, question_generators
from aqgr.pipeline.relevance import RelevanceScorer
from aqgr.schemas.results import CandidateQuestion
from aqgr.schemas.summary import StructuredSummary

REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "question": {"type": "string", "minLength": 10},
                    "relevance": {"type": "integer", "minimum": 1, "maximum": 10},
                    "source": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                },
                "required": ["question", "relevance"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["questions"],
    "additionalProperties": False,
}
_EXAMPLE_CHARS = 700
_MAX_EXAMPLES = 12
_MAX_CANDIDATES = 12
_QUESTION_CHARS = 300  # the longest candidate question
_QUESTION_TOKENS = 120  # reply tokens of one candidate: the question, its score and source


def reply_schema(n_candidates: int) -> dict[str, Any]:
    """REPLY_SCHEMA for one call: at most `n_candidates` questions of bounded length."""
    item = REPLY_SCHEMA["properties"]["questions"]["items"]
    props = {
        **item["properties"],
        "question": {**item["properties"]["question"], "maxLength": _QUESTION_CHARS},
        "source": {"anyOf": [{"type": "string", "maxLength": 64}, {"type": "null"}]},
    }
    questions = {
        **REPLY_SCHEMA["properties"]["questions"],
        "maxItems": n_candidates,
        "items": {**item, "properties": props},
    }
    return {**REPLY_SCHEMA, "properties": {"questions": questions}}


def _example(summary: StructuredSummary) -> str:
    parties = f"{', '.join(summary.parties.appellants) or '?'} v. {', '.join(summary.parties.respondents) or '?'}"
    issues = "; ".join(summary.issues)[:_EXAMPLE_CHARS] or "(none extracted)"
    facts = " ".join(summary.facts.split())[:_EXAMPLE_CHARS]
    return f"[{summary.judgment_id}] {parties}\n  Issues: {issues}\n  Facts: {facts}"


class LLMQuestionGenerator:
    name = "llm.v1"

    def __init__(
        self,
        client: LLMClient,
        *,
        max_attempts: int = 3,
        temperature: float = 0.9,
        top_p: float = 1.0,
        top_k: int | None = 1,
    ):
        self.client = client
        self.max_attempts = max_attempts
        self.sampling = dict(temperature=temperature, top_p=top_p, top_k=top_k)
        self.prompt = load_prompt("aqgr", "questions.v1")
        self.system = load_prompt("aqgr", "system.v1")
        self.fallback: QuestionGenerator = HarvestQuestionGenerator()

    def _prompt(self, facts: str, shown: Sequence[StructuredSummary], n_candidates: int, schema: dict[str, Any]) -> str:
        return self.prompt.render(
            facts=facts,
            examples="\n".join(_example(s) for s in shown) or "(none)",
            n_candidates=n_candidates,
            schema=json.dumps(schema),
        )

    def generate(
        self, facts: str, examples: Sequence[StructuredSummary], n: int, scorer: RelevanceScorer
    ) -> list[CandidateQuestion]:
        try:
            budget = self.client.budget("questions")
        except AqgrError as exc:
            return self._fall_back(facts, examples, n, scorer, exc)
        n_candidates = max(1, min(n, _MAX_CANDIDATES, budget.output_tokens // _QUESTION_TOKENS))
        schema = reply_schema(n_candidates)
        shown = list(examples)[:_MAX_EXAMPLES]
        prompt = self._prompt(facts, shown, n_candidates, schema)
        system_tokens = self.client.count_tokens(self.system.text)
        while (
            shown and self.client.count_tokens(prompt) + system_tokens > budget.input_tokens
        ):  # fewer examples on a small window
            shown = shown[:-1]
            prompt = self._prompt(facts, shown, n_candidates, schema)
        request = budget.request(
            prompt,
            stage="questions",
            prompt_version=f"{self.system.version}+{self.prompt.version}",
            system=self.system.text,
            json_schema=schema,
            **self.sampling,
        )
        try:
            answer = ask_json(
                self.client, request, lambda v: (v, schema_problems(REPLY_SCHEMA, v)), max_attempts=self.max_attempts
            )
        except (ProviderError, InvalidModelOutputError) as exc:
            return self._fall_back(facts, examples, n, scorer, exc)
        known = {s.judgment_id for s in shown}
        ranked = sorted(enumerate(answer.value["questions"]), key=lambda item: (-item[1]["relevance"], item[0]))
        out: list[CandidateQuestion] = []
        seen: set[str] = set()
        for _, item in ranked:
            text = " ".join(item["question"].split())
            key = text.lower().rstrip("?. ")
            if key in seen:
                continue
            seen.add(key)
            source = item.get("source") if item.get("source") in known else None
            out.append(
                CandidateQuestion(
                    text=text, score=item["relevance"] / 10, source_judgment_id=source, generated_by=self.name
                )
            )
            if len(out) == n:
                break
        return out

    def _fall_back(self, facts: str, examples, n: int, scorer, exc: AqgrError) -> list[CandidateQuestion]:
        reason = f"{self.name} failed ({exc}); questions harvested by {self.fallback.name}"
        return [
            q.model_copy(update={"generated_by": self.fallback.name, "note": reason})
            for q in self.fallback.generate(facts, examples, n, scorer)
        ]


@question_generators.register("llm.v1")
def _llm_v1(llm: LLMClient | None = None) -> QuestionGenerator:
    return LLMQuestionGenerator(llm or client_from_environment("llm.v1 question generator"))
