"""What a statute search returns (the server and the MCP server)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StatuteHit(_Model):
    """One statute of the archive's statute collection."""

    rank: int = Field(ge=1)
    statute_id: str
    title: str
    text: str = Field(description="The statute's text as stored (title line excluded), cut to about 1,000 characters.")
    score: float = Field(description="The fused retrieval score (reciprocal rank fusion; higher is better).")
    questions: list[int] = Field(default_factory=list, description="Indexes (0-based) of the questions it was retrieved for.")


class StatuteResult(_Model):
    """Facts in; the questions used and the statutes retrieved for them out."""

    facts: str
    questions: list[str] = Field(description="The legal questions used (chosen, or the top ones generated from the case archive).")
    hits: list[StatuteHit] = Field(default_factory=list)
    embedder: str
