"""`llm.v1`: a structured summary from a language model, the study's way (SPEC.md, stage 1).

* A judgment whose prompt fits the input budget (the study's model: 30,720 tokens) gets
  one zero-shot request for all slots as JSON (structured output where the provider has it).
* A longer one is split into ~20,000-character chunks with 50% overlap on paragraph
  boundaries, indexed per judgment in FAISS, and summarised by chain-of-thought: one simple
  request per slot group over the k=4 best chunks (the header group reads the first and
  the last chunk), each answer validated, then assembled into the JSON summary.
* Every reply is parsed and validated against the JSON Schema; invalid output is repaired
  mechanically or re-asked with the problems (bounded), never returned.
* A safety block or refusal raises SummarizeError(id, 'safety_block', ...): the batch
  records it on the judgment and goes on. Other provider failures raise SummarizeError with
  the failure's kind ('timeout', 'rate_limited', 'auth', ...) as the reason.

The engine never stores. `take_usage()`, called in the thread that just summarised, gives
the batch what that summary cost (tokens and model calls, for provenance and the batch
report); the client's ledger keeps the run's totals. Model calls are I/O: a batch runs
this engine in threads (`parallelism = "thread"`), bounded by the client's concurrency.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from aqgr.errors import ConfigError, InvalidModelOutputError, ProviderError, SafetyBlockError, SummarizeError
from aqgr.llm.base import LLMRequest
from aqgr.llm.client import LLMClient
from aqgr.llm.prompts import load_prompt
from aqgr.llm.structured import ask_json
from schemas.summary import SummarySlots
from schemas.validation import schema_errors, summary_json_schema
from summarizer.base import JudgmentText, summarizers

from .chunks import CHUNK_CHARS, CHUNK_OVERLAP, Chunk, ChunkIndex, split_chunks
from .slots import SLOT_GROUPS, SlotGroup, check_slots, group_schema

ENGINE_VERSION = "1.0"
_PROMPTS = "summarizer.llm"
_ALL_SLOTS = tuple(SummarySlots.model_fields)


class LLMSummaryParams(BaseModel):
    """Every number of the method, with the study's values as defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = Field(default=30_720, ge=1000, description="Input budget: the study's model (Gemini-pro) took 30,720 tokens.")
    output_tokens: int = Field(default=2_048, ge=64, description="Output budget: the study's 2,048 tokens.")
    temperature: float = Field(default=0.9, ge=0, le=2, description="The study's default sampling; lower made the model copy whole paragraphs.")
    top_p: float = Field(default=1.0, gt=0, le=1)
    top_k: int | None = Field(default=1, ge=1)
    chars_per_token: float = Field(default=4.0, gt=0, description="Token estimate for the budget check (English legal text: ~4 characters a token).")
    chunk_chars: int = Field(default=CHUNK_CHARS, ge=500, description="Chunk size for long judgments: the study's 20,000 characters.")
    chunk_overlap: float = Field(default=CHUNK_OVERLAP, ge=0, lt=1, description="Overlap of consecutive chunks: the study's 50%.")
    k_chunks: int = Field(default=4, ge=1, description="Chunks retrieved per chain-of-thought request: the study's k=4.")
    window_chars: int = Field(default=1000, ge=100, description="Embedding window inside a chunk (MiniLM reads ~256 tokens).")
    max_attempts: int = Field(default=3, ge=1, le=10, description="Replies read per request: the first plus re-asks with the validation errors.")
    embedder: str = Field(default="minilm-l6.v1", description="Embedder of the per-judgment chunk index.")


class LLMSummarizer:
    """`llm.v1`: zero-shot JSON for judgments that fit, chain-of-thought over chunks otherwise."""

    name = "llm.v1"
    parallelism = "thread"  # a batch with workers shares this engine across threads, not processes

    def __init__(self, client: LLMClient, params: LLMSummaryParams | None = None, embedder=None):
        self.client = client
        self.params = params or LLMSummaryParams()
        self.model = client.label
        self._embedder = embedder
        self._single = load_prompt(_PROMPTS, "summary.v1")
        self._group = load_prompt(_PROMPTS, "summary_group.v1")
        self._system = load_prompt(_PROMPTS, "system.v1")
        prompts = "+".join(p.version for p in (self._system, self._single, self._group))
        # Provider, model and prompts are part of the version: changing any re-summarises.
        self.version = f"{ENGINE_VERSION};{client.label};{prompts}"
        self._local = threading.local()

    # -- the interface ----------------------------------------------------
    def summarize(self, judgment: JudgmentText) -> SummarySlots:
        text = judgment.text.strip()
        if not text:
            raise SummarizeError(judgment.judgment_id, "empty", "the judgment has no text")
        tokens = [0, 0, 0]  # input tokens, output tokens, model replies read
        self._local.usage = None
        try:
            if self.fits(text):
                slots = self._single_request(judgment.judgment_id, text, tokens)
            else:
                slots = self._chain_of_thought(judgment.judgment_id, text, tokens)
        except SafetyBlockError as exc:
            raise SummarizeError(judgment.judgment_id, "safety_block", str(exc)) from None
        except ProviderError as exc:
            raise SummarizeError(judgment.judgment_id, exc.kind, str(exc)) from None
        except InvalidModelOutputError as exc:
            raise SummarizeError(judgment.judgment_id, "invalid_output", str(exc)) from None
        finally:
            self._local.usage = {"input_tokens": float(tokens[0]), "output_tokens": float(tokens[1]), "model_calls": float(tokens[2])}
        return slots

    def take_usage(self) -> dict[str, float] | None:
        """What the last summary made in this thread cost (tokens, replies read), once."""
        usage, self._local.usage = getattr(self._local, "usage", None), None
        return usage

    # -- budget -------------------------------------------------------------
    def estimate_tokens(self, text: str) -> int:
        return int(len(text) / self.params.chars_per_token) + 1

    def fits(self, text: str) -> bool:
        overhead = len(self._system.text) + len(self._single.text) + len(json.dumps(summary_json_schema(slots_only=True)))
        return self.estimate_tokens(text) + int(overhead / self.params.chars_per_token) <= self.params.input_tokens

    # -- requests -----------------------------------------------------------
    def _request(self, prompt: str, version: str, schema: dict[str, Any]) -> LLMRequest:
        p = self.params
        return LLMRequest(
            prompt=prompt,
            stage="summaries",
            prompt_version=version,
            system=self._system.text,
            json_schema=schema,
            temperature=p.temperature,
            top_p=p.top_p,
            top_k=p.top_k,
            max_output_tokens=p.output_tokens,
        )

    def _ask(self, request: LLMRequest, keep: tuple[str, ...], tokens: list[int]) -> dict[str, Any]:
        answer = ask_json(self.client.complete, request, lambda value: check_slots(value, keep), max_attempts=self.params.max_attempts)
        tokens[0] += answer.input_tokens
        tokens[1] += answer.output_tokens
        tokens[2] += answer.calls
        return answer.value

    def _single_request(self, judgment_id: str, text: str, tokens: list[int]) -> SummarySlots:
        schema = summary_json_schema(slots_only=True)
        prompt = self._single.render(schema=json.dumps(schema), judgment_id=judgment_id, text=text)
        slots = self._ask(self._request(prompt, self._single.version, schema), _ALL_SLOTS, tokens)
        return SummarySlots.model_validate(slots)

    def embedder(self):
        if self._embedder is None or isinstance(self._embedder, str):
            from retrieval.embedders import embedders

            self._embedder = embedders.create(self._embedder or self.params.embedder)
        return self._embedder

    def chunks(self, text: str) -> list[Chunk]:
        return split_chunks(text, chunk_chars=self.params.chunk_chars, overlap=self.params.chunk_overlap)

    def _chain_of_thought(self, judgment_id: str, text: str, tokens: list[int]) -> SummarySlots:
        chunks = self.chunks(text)
        index = ChunkIndex(chunks, self.embedder(), window_chars=self.params.window_chars)
        found: dict[str, Any] = {}
        for group in SLOT_GROUPS:
            selected = self._select(group, chunks, index, found)
            prompt = self._group.render(
                judgment_id=judgment_id,
                n_excerpts=len(selected),
                n_chunks=len(chunks),
                questions="\n".join(f"{i}. {q}" for i, q in enumerate(group.questions, 1)),
                context=_context(group, found),
                keys=", ".join(group.slots),
                schema=json.dumps(group_schema(group.slots)),
                excerpts="\n\n".join(f"Excerpt (part {c.number + 1} of {len(chunks)}):\n<<<\n{c.text}\n>>>" for c in selected),
            )
            answer = self._ask(self._request(prompt, f"{self._group.version}:{group.name}", group_schema(group.slots)), group.slots, tokens)
            found.update(answer)
        problems = schema_errors(found, slots_only=True)
        if problems:  # each group was valid on its own; the assembly must be too
            raise InvalidModelOutputError(problems, 1)
        return SummarySlots.model_validate(found)

    def _select(self, group: SlotGroup, chunks: list[Chunk], index: ChunkIndex, found: dict[str, Any]) -> list[Chunk]:
        if not group.query:  # header: first page, and the end (bench and date)
            return [chunks[0]] + ([chunks[-1]] if len(chunks) > 1 else [])
        query = group.query
        if group.name == "principles_subjects" and found.get("issues"):
            query = query + " " + " ".join(found["issues"])
        return index.top(query, self.params.k_chunks)


def _context(group: SlotGroup, found: dict[str, Any]) -> str:
    """What earlier steps of the chain found, as context for this one (short)."""
    lines = []
    if group.name != "header" and found.get("parties"):
        parties = found["parties"]
        lines.append(f"Parties: {', '.join(parties.get('appellants', []))} v. {', '.join(parties.get('respondents', []))}")
    if group.name in ("issues_reasoning", "statutes_precedents", "principles_subjects") and found.get("facts"):
        lines.append(f"Facts (found earlier): {found['facts'][:1500]}")
    if group.name in ("statutes_precedents", "principles_subjects") and found.get("issues"):
        lines.append("Issues (found earlier): " + " | ".join(found["issues"])[:1500])
    return ("Already extracted from other parts of the judgment:\n" + "\n".join(lines) + "\n") if lines else ""


@summarizers.register("llm.v1")
def _llm_v1(llm: LLMClient | None = None, params: LLMSummaryParams | None = None, embedder: str | None = None) -> LLMSummarizer:
    if llm is None:
        from aqgr.llm.config import ProviderConfig

        config = ProviderConfig.resolve()
        if not config.configured:
            raise ConfigError("the llm.v1 summarizer needs a model provider: set AQGR_PROVIDER (gemini.v1, openai.v1, ...) or pass --provider")
        llm = LLMClient.from_config(config)
    if params is None and embedder is not None:
        params = LLMSummaryParams(embedder=embedder)
    return LLMSummarizer(llm, params)
