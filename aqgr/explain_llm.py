"""`llm.v1` explainer: the model ranks and explains a closed list of candidate judgments.

The prompt lists the candidates by id with their retrieval slots (parties, case number,
issues, facts, reasoning; trimmed to fit the input budget). The model returns JSON: for
each judgment it finds applicable, id, party names, score 1-10, legal issue and reason.

Grounding: an id outside the list is passed on untouched so that the search's guard drops
and counts it; a sentence in an issue or reason that cites a case (any form: see
aqgr/citation_guard.py) that no candidate's parties nor summary show is removed and counted. The
party names shown come from the archive, never from the model. Evidence slots are quoted
from the summary (as evidence.v1 does). If the model fails (error, timeout, block, output
still invalid after the re-asks), `evidence.v1` explains every candidate and each such
explanation says so (`explained_by`, `note`).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from aqgr.citation_guard import CitationGuard
from aqgr.errors import InvalidModelOutputError, ProviderError
from aqgr.explain import Candidate, EvidenceExplainer, Explainer, Explanation, explainers
from aqgr.llm.base import LLMRequest
from aqgr.llm.client import LLMClient
from aqgr.llm.prompts import load_prompt
from aqgr.llm.structured import ask_json, schema_problems
from aqgr.relevance import RelevanceScorer
from schemas.summary import StructuredSummary

REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "judgments": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "parties": {"type": "string"},
                    "score": {"type": "integer", "minimum": 1, "maximum": 10},
                    "legal_issue": {"type": "string", "minLength": 1},
                    "reason": {"type": "string", "minLength": 1},
                },
                "required": ["id", "score", "legal_issue", "reason"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["judgments"],
    "additionalProperties": False,
}

def _parties(summary: StructuredSummary) -> str:
    return f"{', '.join(summary.parties.appellants) or '?'} v. {', '.join(summary.parties.respondents) or '?'}"


class LLMExplainer:
    name = "llm.v1"

    def __init__(self, client: LLMClient, *, max_attempts: int = 3, input_tokens: int = 30_720, chars_per_token: float = 4.0, temperature: float = 0.9, top_p: float = 1.0, top_k: int | None = 1, max_output_tokens: int = 2048):
        self.client = client
        self.max_attempts = max_attempts
        self.input_chars = int(input_tokens * chars_per_token)
        self.sampling = dict(temperature=temperature, top_p=top_p, top_k=top_k, max_output_tokens=max_output_tokens)
        self.prompt = load_prompt("aqgr", "explain.v1")
        self.system = load_prompt("aqgr", "system.v1")
        self.fallback = EvidenceExplainer()

    def _candidate_block(self, candidates: Sequence[Candidate], facts: str) -> str:
        budget = max(600, min(2400, (self.input_chars - len(facts) - 4000) // max(1, len(candidates))))
        blocks = []
        for c in candidates:
            s = c.summary
            block = f"[id: {s.judgment_id}] {_parties(s)}" + (f"; {s.case_number}" if s.case_number else "")
            body = f"\n  Issues: {' | '.join(s.issues) or '(none extracted)'}\n  Facts: {' '.join(s.facts.split())}\n  Reasoning: {' '.join(s.reasoning.split())}"
            blocks.append(block + body[: max(0, budget - len(block))])
        return "\n".join(blocks)

    def explain(self, facts: str, questions: Sequence[str], candidates: Sequence[Candidate], scorer: RelevanceScorer) -> list[Explanation]:
        if not candidates:
            return []
        prompt = self.prompt.render(
            facts=facts,
            questions="\n".join(f"Q{i}. {q}" for i, q in enumerate(questions, 1)) or "(none: judge relevance to the facts)",
            candidates=self._candidate_block(candidates, facts),
            schema=json.dumps(REPLY_SCHEMA),
        )
        request = LLMRequest(prompt=prompt, stage="explanations", prompt_version=f"{self.system.version}+{self.prompt.version}", system=self.system.text, json_schema=REPLY_SCHEMA, **self.sampling)
        try:
            answer = ask_json(self.client.complete, request, lambda v: (v, schema_problems(REPLY_SCHEMA, v)), max_attempts=self.max_attempts)
        except (ProviderError, InvalidModelOutputError) as exc:
            note = f"{self.name} failed ({exc}); explained by {self.fallback.name}"
            return [
                Explanation(e.judgment_id, e.score, e.legal_issue, e.reason, e.evidence, explained_by=self.fallback.name, note=note)
                for e in self.fallback.explain(facts, questions, candidates, scorer)
            ]
        return self._grounded(answer.value["judgments"], facts, questions, candidates, scorer)

    def _grounded(self, items: list[dict], facts: str, questions, candidates: Sequence[Candidate], scorer) -> list[Explanation]:
        by_id = {c.summary.judgment_id: c for c in candidates}
        guard = CitationGuard(c.summary for c in candidates)
        out, seen = [], set()
        for item in sorted(items, key=lambda i: -i["score"]):
            judgment_id = item["id"].strip().strip("[]")
            if judgment_id in seen:
                continue
            seen.add(judgment_id)
            candidate = by_id.get(judgment_id)
            if candidate is None:  # not in the closed list: the search's guard drops and counts it
                out.append(Explanation(judgment_id, item["score"], item["legal_issue"], item["reason"], ()))
                continue
            issue, cut_issue = guard.clean(item["legal_issue"])
            reason, cut_reason = guard.clean(item["reason"])
            evidence = self.fallback.explain(facts, questions, [candidate], scorer)[0].evidence
            out.append(
                Explanation(
                    judgment_id,
                    item["score"],
                    issue or "(removed: it cited a judgment outside the candidate list)",
                    reason or "(removed: it cited a judgment outside the candidate list)",
                    evidence,
                    dropped_citations=cut_issue + cut_reason,
                )
            )
        return out


@explainers.register("llm.v1")
def _llm_v1(llm: LLMClient | None = None) -> Explainer:
    from aqgr.errors import ConfigError
    from aqgr.llm.config import ProviderConfig

    if llm is None:
        config = ProviderConfig.resolve()
        if not config.configured:
            raise ConfigError("the llm.v1 explainer needs a model provider: set AQGR_PROVIDER or pass --provider")
        llm = LLMClient.from_config(config)
    return LLMExplainer(llm)
