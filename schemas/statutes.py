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
    score: float = Field(
        description="The ranking score, higher is better: reciprocal rank fusion of the text matches, or, "
        "when the archive's precedents quote statutes, their votes (1 for the most voted) plus a small share of it."
    )
    questions: list[int] = Field(
        default_factory=list, description="Indexes (0-based) of the questions it was retrieved for."
    )
    quoted_by: list[str] = Field(
        default_factory=list,
        description="Judgments of the archive, among the precedents found "
        "for the facts, that quote this statute word for word (best ranked first, at most 5).",
    )
    sections: list[str] = Field(
        default_factory=list,
        description="The sections this statute's title and text name, with their "
        "counterparts in the other code of the archive's correspondence table ('Section 302 IPC, now Section 103(1) BNS').",
    )


class StatuteResult(_Model):
    """Facts in; the questions used and the statutes retrieved for them out."""

    facts: str
    questions: list[str] = Field(
        description="The legal questions used (chosen, or the top ones generated from the case archive)."
    )
    hits: list[StatuteHit] = Field(default_factory=list)
    embedder: str
