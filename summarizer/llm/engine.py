"""`llm.v1`: a structured summary from a language model, the study's way (SPEC.md, stage 1).

* Budgets come from the model's window (`LLMClient.budget("summaries")`, aqgr/llm/budget.py):
  the study's 30,720 prompt and 2,048 reply tokens where the window allows, less on a small
  model. Prompts are counted with the model's tokenizer where the provider has one.
* A judgment whose whole prompt fits the prompt budget gets one zero-shot request for all
  slots as JSON (structured output where the provider has it). If that reply is cut at its
  budget, or the reply budget is too small for every slot at once (`min_reply_tokens`), the
  judgment is summarised by chain-of-thought instead (smaller replies).
* A longer one is split into chunks with 50% overlap on paragraph boundaries, indexed per
  judgment in FAISS, and summarised by chain-of-thought: one simple request per slot group
  over the k=4 best chunks (the header group reads the first and the last chunk), each
  answer validated, then assembled into the JSON summary. Chunks are the study's 20,000
  characters where k of them fit the prompt budget, smaller where they do not (an 8k-token
  window reads 4 chunks of about 5,000 characters); a request that still would not fit
  drops excerpts, then cuts the last one.
* The reply schema bounds every list and string (summarizer/llm/slots.py, `reply_schema`) to
  the reply budget and requires the slots every judgment has (schemas.summary.REQUIRED_SLOTS),
  so a grammar-constrained model cannot run a list on until it is cut.
* Every reply is parsed and validated against the JSON Schema, and the required slots must be
  filled; invalid output is repaired mechanically or re-asked with the problems (bounded),
  never returned.
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

from aqgr.foundation.errors import ConfigError, InvalidModelOutputError, ProviderError, SafetyBlockError, SummarizeError
from aqgr.llm.base import LLMRequest
from aqgr.llm.budget import Budget, template_reserve
from aqgr.llm.client import LLMClient
from aqgr.llm.prompts import load_prompt
from aqgr.llm.structured import ask_json
from aqgr.schemas.summary import SummarySlots, missing_required
from aqgr.schemas.validation import schema_errors
from aqgr.summarizer.base import JudgmentText, summarizers

from .chunks import CHUNK_CHARS, CHUNK_OVERLAP, Chunk, ChunkIndex, split_chunks
from .slots import SLOT_GROUPS, SlotGroup, check_slots, min_reply_tokens, reply_schema

# 1.1: budgets from the model's window, bounded reply schemas, required slots;
# 1.2: a batch keeps only the values the judgment's text shows (aqgr/pipeline/grounding.py): earlier summaries are made again
ENGINE_VERSION = "1.2"
_PROMPTS = "aqgr.summarizer.llm"
_ALL_SLOTS = tuple(SummarySlots.model_fields)
_MAX_CONTEXT_CHARS = 4000  # the longest "already extracted" context a group prompt carries (_context)
_EXCERPT_HEADER_CHARS = 40  # "Excerpt (part i of n):" and the fences around each excerpt
_CHUNK_FILL = 0.9  # chunks fill 90% of the room: the sample's characters per token are not every chunk's
_MIN_CHUNK_CHARS = 1000  # a shorter excerpt rarely holds one paragraph of a judgment


class LLMSummaryParams(BaseModel):
    """Every number of the method, with the study's values as defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int | None = Field(
        default=None,
        ge=500,
        description="Prompt budget of one call; None: the client's budget for summaries (the study's 30,720 tokens, less on a smaller window).",
    )
    output_tokens: int | None = Field(
        default=None,
        ge=16,
        description="Reply budget of one call; None: the client's (the study's 2,048 tokens, less on a small window).",
    )
    temperature: float = Field(
        default=0.9, ge=0, le=2, description="The study's default sampling; lower made the model copy whole paragraphs."
    )
    top_p: float = Field(default=1.0, gt=0, le=1)
    top_k: int | None = Field(default=1, ge=1)
    chunk_chars: int = Field(
        default=CHUNK_CHARS, ge=500, description="Chunk size for long judgments: the study's 20,000 characters."
    )
    chunk_overlap: float = Field(
        default=CHUNK_OVERLAP, ge=0, lt=1, description="Overlap of consecutive chunks: the study's 50%."
    )
    k_chunks: int = Field(
        default=4, ge=1, description="Chunks retrieved per chain-of-thought request: the study's k=4."
    )
    window_chars: int = Field(
        default=1000, ge=100, description="Embedding window inside a chunk (MiniLM reads ~256 tokens)."
    )
    max_attempts: int = Field(
        default=3,
        ge=1,
        le=10,
        description="Replies read per request: the first plus re-asks with the validation errors.",
    )
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
            budget = self.budget()
            slots = None
            if budget.output_tokens >= min_reply_tokens(_ALL_SLOTS) and self.fits(text, budget):
                try:
                    slots = self._single_request(judgment.judgment_id, text, budget, tokens)
                except ProviderError as exc:
                    if exc.kind != "truncated":
                        raise
            if slots is None:  # too long for one prompt, or its all-slots reply did not fit one reply
                slots = self._chain_of_thought(judgment.judgment_id, text, budget, tokens)
        except ConfigError as exc:
            raise SummarizeError(judgment.judgment_id, "config", str(exc)) from None
        except SafetyBlockError as exc:
            raise SummarizeError(judgment.judgment_id, "safety_block", str(exc)) from None
        except ProviderError as exc:
            raise SummarizeError(judgment.judgment_id, exc.kind, str(exc)) from None
        except InvalidModelOutputError as exc:
            raise SummarizeError(judgment.judgment_id, "invalid_output", str(exc)) from None
        finally:
            self._local.usage = {
                "input_tokens": float(tokens[0]),
                "output_tokens": float(tokens[1]),
                "model_calls": float(tokens[2]),
            }
        return slots

    def take_usage(self) -> dict[str, float] | None:
        """What the last summary made in this thread cost (tokens, replies read), once."""
        usage, self._local.usage = getattr(self._local, "usage", None), None
        return usage

    # -- budget -------------------------------------------------------------
    def budget(self) -> Budget:
        """The client's budget for summaries, with this engine's explicit overrides."""
        budget = self.client.budget("summaries")
        p = self.params
        if p.input_tokens is None and p.output_tokens is None:
            return budget
        output = p.output_tokens or budget.output_tokens
        room = budget.window - output - template_reserve(budget.window)
        return Budget(
            budget.window,
            min(p.input_tokens or budget.input_tokens, room),
            output,
            max(output, budget.output_ceiling),
            budget.exact_counts,
        )

    def prompt_tokens(self, prompt: str) -> int:
        return self.client.count_tokens(prompt) + self.client.count_tokens(self._system.text)

    def _single_prompt(self, judgment_id: str, text: str, budget: Budget) -> tuple[str, dict[str, Any]]:
        schema = reply_schema(_ALL_SLOTS, budget.output_tokens)
        return self._single.render(schema=json.dumps(schema), judgment_id=judgment_id, text=text), schema

    def fits(self, text: str, budget: Budget | None = None) -> bool:
        """Whether the whole judgment fits one prompt of the budget."""
        budget = budget or self.budget()
        if (
            len(text) / 8 > budget.input_tokens
        ):  # far too long: no need to count (no tokenizer makes 8+ characters a token)
            return False
        return self.prompt_tokens(self._single_prompt("X", text, budget)[0]) <= budget.input_tokens

    # -- requests -----------------------------------------------------------
    def _request(self, prompt: str, version: str, schema: dict[str, Any], budget: Budget) -> LLMRequest:
        p = self.params
        return budget.request(
            prompt,
            stage="summaries",
            prompt_version=version,
            system=self._system.text,
            json_schema=schema,
            temperature=p.temperature,
            top_p=p.top_p,
            top_k=p.top_k,
        )

    def _ask(self, request: LLMRequest, keep: tuple[str, ...], tokens: list[int]) -> dict[str, Any]:
        answer = ask_json(
            self.client, request, lambda value: check_slots(value, keep), max_attempts=self.params.max_attempts
        )
        tokens[0] += answer.input_tokens
        tokens[1] += answer.output_tokens
        tokens[2] += answer.calls
        return answer.value

    def _single_request(self, judgment_id: str, text: str, budget: Budget, tokens: list[int]) -> SummarySlots:
        prompt, schema = self._single_prompt(judgment_id, text, budget)
        slots = self._ask(self._request(prompt, self._single.version, schema, budget), _ALL_SLOTS, tokens)
        return SummarySlots.model_validate(slots)

    def embedder(self):
        if self._embedder is None or isinstance(self._embedder, str):
            from aqgr.retrieval.dense.embedders import embedders

            self._embedder = embedders.create(self._embedder or self.params.embedder)
        return self._embedder

    def chunk_chars(self, text: str, budget: Budget | None = None) -> int:
        """Chunk size for `text`: the study's 20,000 characters where k chunks fit one prompt of the
        budget, else the size at which they do (measured with this judgment's characters per token)."""
        budget = budget or self.budget()
        context = text[:_MAX_CONTEXT_CHARS]  # the longest context, in this judgment's own words (tokenised alike)
        overhead = max(
            self.prompt_tokens(self._group_prompt(group, "X", [], 1, context, budget)) for group in SLOT_GROUPS
        )
        sample = text[:20_000]
        chars_per_token = len(sample) / max(1, self.client.count_tokens(sample))
        room = budget.input_tokens - overhead
        per_chunk = int(room * chars_per_token * _CHUNK_FILL / self.params.k_chunks) - _EXCERPT_HEADER_CHARS
        if per_chunk < _MIN_CHUNK_CHARS:
            raise ConfigError(
                f"a prompt budget of {budget.input_tokens:,} tokens leaves room for {max(per_chunk, 0):,}-character excerpts of a long judgment "
                f"({self.params.k_chunks} per request); aqgr needs at least {_MIN_CHUNK_CHARS:,}: use a model with a larger window or raise --max-input-tokens"
            )
        return min(self.params.chunk_chars, per_chunk)

    def chunks(self, text: str, budget: Budget | None = None) -> list[Chunk]:
        return split_chunks(text, chunk_chars=self.chunk_chars(text, budget), overlap=self.params.chunk_overlap)

    def _group_prompt(
        self, group: SlotGroup, judgment_id: str, selected: list[Chunk], n_chunks: int, context: str, budget: Budget
    ) -> str:
        return self._group.render(
            judgment_id=judgment_id,
            n_excerpts=len(selected),
            n_chunks=n_chunks,
            questions="\n".join(f"{i}. {q}" for i, q in enumerate(group.questions, 1)),
            context=context,
            keys=", ".join(group.slots),
            schema=json.dumps(reply_schema(group.slots, budget.output_tokens)),
            excerpts="\n\n".join(f"Excerpt (part {c.number + 1} of {n_chunks}):\n<<<\n{c.text}\n>>>" for c in selected),
        )

    def _fitted_prompt(
        self, group: SlotGroup, judgment_id: str, selected: list[Chunk], n_chunks: int, context: str, budget: Budget
    ) -> str:
        """The group's prompt inside the budget: chunks are sized to fit, but a tokenizer can disagree
        with the sample; then the last excerpt is dropped, and a lone one cut, until it fits."""
        while True:
            prompt = self._group_prompt(group, judgment_id, selected, n_chunks, context, budget)
            used = self.prompt_tokens(prompt)
            if used <= budget.input_tokens:
                return prompt
            if len(selected) > 1:
                selected = selected[:-1]
                continue
            chunk = selected[0]
            keep = int(len(chunk.text) * budget.input_tokens / used * _CHUNK_FILL)
            if keep < _MIN_CHUNK_CHARS // 2:
                raise ConfigError(
                    f"a {group.name} prompt does not fit the prompt budget of {budget.input_tokens:,} tokens; raise --max-input-tokens or use a model with a larger window"
                )
            selected = [Chunk(chunk.number, chunk.start, chunk.start + keep, chunk.text[:keep])]

    def _chain_of_thought(self, judgment_id: str, text: str, budget: Budget, tokens: list[int]) -> SummarySlots:
        chunks = self.chunks(text, budget)
        index = ChunkIndex(chunks, self.embedder(), window_chars=self.params.window_chars)
        found: dict[str, Any] = {}
        for group in SLOT_GROUPS:
            selected = self._select(group, chunks, index, found)
            prompt = self._fitted_prompt(group, judgment_id, selected, len(chunks), _context(group, found), budget)
            schema = reply_schema(group.slots, budget.output_tokens)
            answer = self._ask(
                self._request(prompt, f"{self._group.version}:{group.name}", schema, budget), group.slots, tokens
            )
            found.update(answer)
        problems = schema_errors(found, slots_only=True) + missing_required(found)
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
        lines.append(
            f"Parties: {', '.join(parties.get('appellants', []))} v. {', '.join(parties.get('respondents', []))}"
        )
    if group.name in ("issues_reasoning", "statutes_precedents", "principles_subjects") and found.get("facts"):
        lines.append(f"Facts (found earlier): {found['facts'][:1500]}")
    if group.name in ("statutes_precedents", "principles_subjects") and found.get("issues"):
        lines.append("Issues (found earlier): " + " | ".join(found["issues"])[:1500])
    return ("Already extracted from other parts of the judgment:\n" + "\n".join(lines) + "\n") if lines else ""


@summarizers.register("llm.v1")
def _llm_v1(
    llm: LLMClient | None = None, params: LLMSummaryParams | None = None, embedder: str | None = None
) -> LLMSummarizer:
    if llm is None:
        from aqgr.llm.config import ProviderConfig

        config = ProviderConfig.resolve()
        if not config.configured:
            raise ConfigError(
                "the llm.v1 summarizer needs a model provider: set AQGR_PROVIDER (gemini.v1, openai.v1, ...) or pass --provider"
            )
        llm = LLMClient.from_config(config)
    if params is None and embedder is not None:
        params = LLMSummaryParams(embedder=embedder)
    return LLMSummarizer(llm, params)
