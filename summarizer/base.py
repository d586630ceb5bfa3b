"""The summarizer engine interface and its registry.

An engine turns one judgment's text into `SummarySlots`. It never writes anywhere:
the archive wraps the slots with provenance, validates them against the JSON Schema
and stores them. An engine that cannot summarise a judgment raises `SummarizeError`
with a short reason ('empty', 'safety_block', 'invalid_output', ...); in a batch that
is recorded on the judgment and the batch goes on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from aqgr.foundation.registry import Registry
from aqgr.schemas.summary import SummarySlots


@dataclass(frozen=True)
class JudgmentText:
    """One judgment as text, with where it came from."""

    judgment_id: str
    text: str
    source_path: str
    sha256: str


@runtime_checkable
class SummarizerEngine(Protocol):
    name: str  # registered name, e.g. 'extractive.v1'
    version: str  # implementation version, recorded in provenance
    model: str | None  # model name for model-backed engines, else None

    def summarize(self, judgment: JudgmentText) -> SummarySlots: ...


summarizers: Registry[SummarizerEngine] = Registry(
    "summarizer", ("aqgr.summarizer.extractive.engine", "aqgr.summarizer.llm.engine")
)
