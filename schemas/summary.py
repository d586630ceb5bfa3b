"""The structured summary: one JSON document with fixed slots per judgment.

Slots follow ../shared/SPEC.md (stage 1). The model is split in two:

* `SummarySlots` holds only the slots. It is what a summarizer engine produces (and
  what an LLM is asked to fill, as JSON).
* `StructuredSummary` adds the judgment id and the provenance; it is what is stored,
  exported and indexed.

Bump `SCHEMA_VERSION` on any change to the slots: stored summaries and saved indexes
record it, and an index built on another schema version is refused.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1.0"

# Slots every judgment has (SPEC.md, stage 1): the header (court, case number), the parties,
# the facts, the issues or the reasoning on them, and the final order. The JSON Schema marks
# their keys `required`; `missing_required` checks their content (court and case number may be
# null where a judgment does not state them, and a judgment may state its reasoning without
# framing issues, or the reverse).
REQUIRED_SLOTS = ("court", "case_number", "parties", "facts", "issues", "reasoning", "final_judgment")


def _require_slots(schema: dict) -> None:
    """pydantic leaves fields with defaults out of `required`: name the slots every judgment has."""
    schema["required"] = sorted(
        set(schema.get("required", [])) | set(REQUIRED_SLOTS), key=list(schema["properties"]).index
    )


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Parties(_Model):
    """Appellants or petitioners on one side, respondents on the other."""

    appellants: list[str] = Field(
        default_factory=list, description="Appellants / petitioners, as named in the judgment."
    )
    respondents: list[str] = Field(default_factory=list, description="Respondents, as named in the judgment.")


class Arguments(_Model):
    """What each side argued, in the judgment's own words."""

    appellants: list[str] = Field(default_factory=list)
    respondents: list[str] = Field(default_factory=list)


class StatuteRef(_Model):
    """A statute or constitutional provision the judgment refers to."""

    name: str = Field(min_length=1, description="e.g. 'Section 302 of the Indian Penal Code'.")
    principle: str = Field(default="", description="What the provision lays down, as the judgment states it.")
    application: str = Field(default="", description="How the judgment applies it to the facts.")


class PrecedentRef(_Model):
    """A prior judgment the judgment refers to."""

    name: str = Field(
        min_length=1, description="Case title and/or citation, e.g. 'Maneka Gandhi v. Union of India (1978) 1 SCC 248'."
    )
    principle: str = Field(default="")
    application: str = Field(default="")


class NewPrinciple(_Model):
    """A legal principle the judgment lays down."""

    principle: str = Field(min_length=1)
    application: str = Field(default="")


class SummarySlots(_Model):
    """Every slot of the structured summary (SPEC.md, stage 1). Text is extracted, not paraphrased."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_require_slots)

    court: str | None = None
    case_number: str | None = None
    judgment_kind: str | None = Field(default=None, description="Kind of judgment: appeal, petition, reference, ...")
    parties: Parties = Field(default_factory=Parties)
    date: str | None = Field(default=None, description="Date of the judgment as written in it.")
    bench: list[str] = Field(default_factory=list, description="Judges on the bench.")
    facts: str = ""
    arguments: Arguments = Field(default_factory=Arguments)
    issues: list[str] = Field(default_factory=list, description="Issues or questions of law.")
    reasoning: str = Field(default="", description="The court's reasoning on those questions.")
    disposed_in_favour_of: str | None = None
    final_judgment: str = Field(default="", description="The final order.")
    statutes: list[StatuteRef] = Field(default_factory=list)
    precedents: list[PrecedentRef] = Field(default_factory=list)
    new_principles: list[NewPrinciple] = Field(default_factory=list)
    subjects: list[str] = Field(default_factory=list, description="Important subjects discussed (keywords).")


class Provenance(_Model):
    """Who made a summary, from what, and when."""

    engine: str = Field(description="Registered engine name, e.g. 'extractive.v1'.")
    engine_version: str
    schema_version: str = SCHEMA_VERSION
    source_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    model: str | None = Field(default=None, description="Model name, for model-backed engines.")
    input_tokens: int | None = None
    output_tokens: int | None = None
    ungrounded: list[str] = Field(
        default_factory=list,
        description="What a model wrote that the judgment's text does not show (a party, court, date, judge, statute or "
        "precedent, or a sentence citing a case), as 'slot: value': dropped from the slots, kept here as the model's claim.",
    )


def missing_required(slots: dict) -> list[str]:
    """The required slots whose content is missing from a slots document, as 'slot: what is missing'."""
    problems = [f"{name}: the slot is required" for name in REQUIRED_SLOTS if name not in slots]
    parties = slots.get("parties") or {}
    if "parties" in slots and not (
        isinstance(parties, dict) and any(parties.get(side) for side in ("appellants", "respondents"))
    ):
        problems.append("parties: name at least one appellant / petitioner or respondent")
    for name in ("facts", "final_judgment"):
        if name in slots and not str(slots.get(name) or "").strip():
            problems.append(f"{name}: must not be empty")
    if (
        "issues" in slots
        and "reasoning" in slots
        and not (slots.get("issues") or str(slots.get("reasoning") or "").strip())
    ):
        problems.append("issues, reasoning: give the questions of law or the court's reasoning (at least one)")
    return problems


class StructuredSummary(SummarySlots):
    """A stored summary: the slots plus the judgment id and provenance."""

    judgment_id: str = Field(min_length=1)
    provenance: Provenance

    @classmethod
    def from_slots(cls, judgment_id: str, slots: SummarySlots, provenance: Provenance) -> "StructuredSummary":
        return cls(judgment_id=judgment_id, provenance=provenance, **slots.model_dump())

    def slots(self) -> SummarySlots:
        return SummarySlots(**self.model_dump(exclude={"judgment_id", "provenance"}))
