"""Token budgets of one model call, derived from the model's window.

Every model-backed stage asks `LLMClient.budget(stage)` how many prompt and reply tokens one
call may take, and shapes its requests to fit (the summarizer picks one request or chunks,
the explainer splits its candidates over several calls, the question generator trims its
examples); the client checks each prompt against the window before sending it.

  window          the model's context window: the configured one (--context-window), else what
                  the provider reads from the model (llamacpp.v1), else the provider's
                  documented window (Gemini 2.5: 1,048,576), else 8,192 for an unknown
                  OpenAI-compatible server (a small local model's; Ollama's default is smaller:
                  set it, see the README)
  output_tokens   the configured --max-output-tokens, else the stage's default (summaries:
                  the study's 2,048), never more than a third of the window
  input_tokens    the configured --max-input-tokens, else the study's 30,720, never more than
                  the window less the reply and a reserve for the chat template
  output_ceiling  how far the client may raise the reply budget when a reply is cut at it
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aqgr.foundation.errors import ConfigError

from .base import LLMRequest

STUDY_INPUT_TOKENS = 30_720  # the study's model (Gemini-pro) took 30,720 input tokens
STAGE_OUTPUT_TOKENS = {
    "summaries": 2048,
    "questions": 1024,
    "explanations": 2048,
    "treatments": 256,
}  # summaries: the study's 2,048; treatments: a label and a short quote
DEFAULT_OUTPUT_TOKENS = 2048
UNKNOWN_WINDOW = 8192  # an OpenAI-compatible server that does not say: budget for a small local model
MIN_INPUT_TOKENS = 512  # below this not even the shortest prompt (instructions + schema) fits


def template_reserve(window: int) -> int:
    """Tokens kept free for the chat template's markup and the error of a token estimate."""
    return 64 + window // 50


@dataclass(frozen=True)
class Budget:
    window: int
    input_tokens: int  # most prompt tokens of one call (system + user message)
    output_tokens: int  # the reply budget each call starts with
    output_ceiling: int  # the most a cut reply's budget may be raised to
    exact_counts: bool = False  # prompt tokens are counted with the model's tokenizer, not estimated

    def request(
        self,
        prompt: str,
        *,
        stage: str,
        prompt_version: str,
        system: str | None,
        json_schema: dict[str, Any] | None,
        **sampling,
    ) -> LLMRequest:
        """A request whose reply starts at this budget and may grow to its ceiling."""
        return LLMRequest(
            prompt=prompt,
            stage=stage,
            prompt_version=prompt_version,
            system=system,
            json_schema=json_schema,
            max_output_tokens=self.output_tokens,
            output_ceiling=self.output_ceiling,
            **sampling,
        )

    def describe(self) -> str:
        return (
            f"window {self.window:,} tokens: prompts up to {self.input_tokens:,}, replies up to {self.output_tokens:,}"
        )


def stage_budget(
    window: int,
    stage: str,
    *,
    max_input_tokens: int | None = None,
    max_output_tokens: int | None = None,
    exact_counts: bool = False,
) -> Budget:
    """The budget of one call of `stage` inside `window`; ConfigError when even the smallest prompt cannot fit."""
    output = max_output_tokens or STAGE_OUTPUT_TOKENS.get(stage, DEFAULT_OUTPUT_TOKENS)
    output = max(16, min(output, window // 3))
    room = window - output - template_reserve(window)
    prompt = min(max_input_tokens or STUDY_INPUT_TOKENS, room)
    if prompt < MIN_INPUT_TOKENS:
        raise ConfigError(
            f"the model's context window ({window:,} tokens) leaves {max(prompt, 0):,} tokens for a prompt after a "
            f"{output:,}-token reply; aqgr's smallest prompt needs about {MIN_INPUT_TOKENS}: use a model with a larger "
            "window, raise --context-window if the model allows it, or lower --max-output-tokens / --max-input-tokens"
        )
    ceiling = max_output_tokens or max(output, min(4 * output, window // 2))
    return Budget(
        window=window,
        input_tokens=prompt,
        output_tokens=output,
        output_ceiling=max(ceiling, output),
        exact_counts=exact_counts,
    )
