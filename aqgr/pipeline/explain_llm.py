"""`llm.v1` explainer: the model ranks and explains a closed list of candidate judgments.

The prompt lists the candidates by id with their retrieval slots (parties, case number,
issues, facts, reasoning; sized to the prompt budget, split over several calls where they do not fit one). The model returns JSON: for
each judgment it finds applicable, id, party names, score 1-10, legal issue and reason.

Grounding, one rule for every explanation of every call, applied here before it leaves the
explainer: its text is checked against the candidates of its own call (the summaries that
call showed the model), whatever the call split: a sentence in an issue or reason that cites
a case (any form: see aqgr/pipeline/citation_guard.py) that none of them shows is removed and
counted. An explanation of a judgment that is not among its call's candidates (an invented
id, or an archive judgment that another call was shown: the model never saw its summary) is
returned marked `outside_list`, its citing sentences counted: the search drops and counts it,
so each judgment is explained once, by the call that was shown it. The party names shown come
from the archive, never from the model. Evidence slots are quoted from the summary (as
evidence.v1 does). If the model fails (error, timeout, block, output
still invalid after the re-asks), `evidence.v1` explains every candidate and each such
explanation says so (`explained_by`, `note`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from aqgr.foundation.errors import ConfigError, InvalidModelOutputError, ProviderError
from aqgr.llm.client import LLMClient, client_from_environment
from aqgr.llm.prompts import load_prompt
from aqgr.llm.structured import ask_json, schema_problems
from aqgr.pipeline.citation_guard import CitationGuard
from aqgr.pipeline.explain import Candidate, EvidenceExplainer, Explainer, Explanation, explainers
from aqgr.pipeline.relevance import RelevanceScorer
from aqgr.schemas.summary import StructuredSummary

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

_ITEM_TOKENS = 200  # reply tokens of one explanation: id, parties, score, legal issue, reason (bounded below)
_ISSUE_CHARS, _REASON_CHARS = 300, 600  # the most characters of an explanation's legal issue and reason
_BLOCK_CHARS = (600, 2400)  # a candidate's summary in the prompt: at least, at most


def reply_schema(n_candidates: int, output_tokens: int) -> dict[str, Any]:
    """REPLY_SCHEMA for one call: at most one explanation per candidate, each sized so that all of
    them fit `output_tokens` (a grammar-constrained model cannot run past the budget)."""
    per_item = max(60, int(output_tokens * 2.5 / max(1, n_candidates)) - 60)
    item = REPLY_SCHEMA["properties"]["judgments"]["items"]
    props = dict(item["properties"])
    props["parties"] = {**props["parties"], "maxLength": min(120, max(20, per_item // 6))}
    props["legal_issue"] = {**props["legal_issue"], "maxLength": min(_ISSUE_CHARS, max(30, per_item // 3))}
    props["reason"] = {**props["reason"], "maxLength": min(_REASON_CHARS, max(30, per_item // 2))}
    props["id"] = {**props["id"], "maxLength": 64}
    judgments = {"type": "array", "items": {**item, "properties": props}, "maxItems": n_candidates}
    return {**REPLY_SCHEMA, "properties": {"judgments": judgments}}


def _parties(summary: StructuredSummary) -> str:
    return f"{', '.join(summary.parties.appellants) or '?'} v. {', '.join(summary.parties.respondents) or '?'}"


class LLMExplainer:
    """Explains candidates in as many calls as the budget needs: each call's prompt holds as many
    candidate summaries as fit the prompt budget and its reply as many explanations as fit the
    reply budget (the study's 36 candidates need about 4,750 reply tokens: one call on Gemini's
    defaults, six on an 8k-token local model). A call that fails leaves its candidates to the
    evidence explainer; the others keep the model's explanations."""

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
        self.prompt = load_prompt("aqgr", "explain.v1")
        self.system = load_prompt("aqgr", "system.v1")
        self.fallback = EvidenceExplainer()

    @staticmethod
    def _block(candidate: Candidate, chars: int) -> str:
        s = candidate.summary
        block = f"[id: {s.judgment_id}] {_parties(s)}" + (f"; {s.case_number}" if s.case_number else "")
        body = f"\n  Issues: {' | '.join(s.issues) or '(none extracted)'}\n  Facts: {' '.join(s.facts.split())}\n  Reasoning: {' '.join(s.reasoning.split())}"
        return block + body[: max(0, chars - len(block))]

    def _render(self, facts: str, questions: Sequence[str], blocks: Sequence[str], schema: dict[str, Any]) -> str:
        return self.prompt.render(
            facts=facts,
            questions="\n".join(f"Q{i}. {q}" for i, q in enumerate(questions, 1))
            or "(none: judge relevance to the facts)",
            candidates="\n".join(blocks),
            schema=json.dumps(schema),
        )

    def batches(
        self, facts: str, questions: Sequence[str], candidates: Sequence[Candidate]
    ) -> list[tuple[list[Candidate], list[str]]]:
        """The candidates split into calls that fit the budget, in their order, each with its prompt blocks."""
        budget = self.client.budget("explanations")
        per_reply = max(1, budget.output_tokens // _ITEM_TOKENS)
        overhead = self.client.count_tokens(
            self._render(facts, questions, [], reply_schema(per_reply, budget.output_tokens))
        ) + self.client.count_tokens(self.system.text)
        room = budget.input_tokens - overhead
        if room < 150:
            raise ConfigError(
                f"the facts and questions alone take {overhead:,} of the {budget.input_tokens:,} prompt tokens of an explanation; shorten the facts or raise --max-input-tokens"
            )
        chars = max(_BLOCK_CHARS[0], min(_BLOCK_CHARS[1], room * 3 // min(per_reply, len(candidates))))
        out: list[tuple[list[Candidate], list[str]]] = []
        batch, blocks, used = [], [], 0
        for candidate in candidates:
            block = self._block(candidate, chars)
            cost = self.client.count_tokens(block) + 1
            if cost > room:  # one summary larger than a whole prompt: shorten it to fit
                block = block[: max(200, len(block) * room // cost - 20)]
                cost = self.client.count_tokens(block) + 1
            if batch and (len(batch) == per_reply or used + cost > room):
                out.append((batch, blocks))
                batch, blocks, used = [], [], 0
            batch.append(candidate)
            blocks.append(block)
            used += cost
        if batch:
            out.append((batch, blocks))
        return out

    def explain(
        self, facts: str, questions: Sequence[str], candidates: Sequence[Candidate], scorer: RelevanceScorer
    ) -> list[Explanation]:
        if not candidates:
            return []
        try:
            batches = self.batches(facts, questions, candidates)
        except ConfigError as exc:
            return self._fall_back(facts, questions, candidates, scorer, exc)
        budget = self.client.budget("explanations")
        out: list[Explanation] = []
        for batch, blocks in batches:
            schema = reply_schema(len(batch), budget.output_tokens)
            prompt = self._render(facts, questions, blocks, schema)
            request = budget.request(
                prompt,
                stage="explanations",
                prompt_version=f"{self.system.version}+{self.prompt.version}",
                system=self.system.text,
                json_schema=schema,
                **self.sampling,
            )
            try:
                answer = ask_json(
                    self.client,
                    request,
                    lambda v: (v, schema_problems(REPLY_SCHEMA, v)),
                    max_attempts=self.max_attempts,
                )
            except (ProviderError, InvalidModelOutputError) as exc:
                out += self._fall_back(facts, questions, batch, scorer, exc)
                continue
            out += self._grounded(answer.value["judgments"], facts, questions, batch, scorer)
        return out

    def _fall_back(
        self,
        facts: str,
        questions: Sequence[str],
        candidates: Sequence[Candidate],
        scorer: RelevanceScorer,
        exc: Exception,
    ) -> list[Explanation]:
        note = f"{self.name} failed ({exc}); explained by {self.fallback.name}"
        return [
            Explanation(
                e.judgment_id, e.score, e.legal_issue, e.reason, e.evidence, explained_by=self.fallback.name, note=note
            )
            for e in self.fallback.explain(facts, questions, candidates, scorer)
        ]

    def _grounded(
        self, items: list[dict], facts: str, questions, candidates: Sequence[Candidate], scorer
    ) -> list[Explanation]:
        """One call's reply, grounded in that call's `candidates` (see the module)."""
        by_id = {c.summary.judgment_id: c for c in candidates}
        guard = CitationGuard(c.summary for c in candidates)
        out, seen = [], set()
        for item in sorted(items, key=lambda i: -i["score"]):
            judgment_id = item["id"].strip().strip("[]")
            if judgment_id in seen:
                continue
            seen.add(judgment_id)
            issue, cut_issue = guard.clean(item["legal_issue"])
            reason, cut_reason = guard.clean(item["reason"])
            candidate = by_id.get(judgment_id)
            if candidate is None:  # not in this call's closed list: dropped and counted by the search
                out.append(
                    Explanation(
                        judgment_id,
                        item["score"],
                        issue,
                        reason,
                        (),
                        dropped_citations=cut_issue + cut_reason,
                        outside_list=True,
                    )
                )
                continue
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
    return LLMExplainer(llm or client_from_environment("llm.v1 explainer"))
