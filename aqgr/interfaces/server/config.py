"""Settings of the server (limits, binding, access). Defaults declared once, here."""

from __future__ import annotations

import ipaddress

from pydantic import BaseModel, ConfigDict, Field

from aqgr.foundation.caps import MAX_FACTS_CHARS, MAX_K, MAX_QUESTION_CHARS, MAX_QUESTIONS

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


class ServeConfig(BaseModel):
    """How `aqgr serve` runs. Immutable; derive a variant with `model_copy(update=...)`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = Field(
        default="127.0.0.1", description="Loopback only by default: a shared instance is an explicit choice."
    )
    port: int = Field(default=8765, ge=0, le=65535)
    api_key: str | None = Field(
        default=None,
        description="When set, every /api/ request but health and version needs it (X-API-Key or 'Authorization: Bearer').",
    )
    max_facts_chars: int = Field(
        default=MAX_FACTS_CHARS,
        ge=100,
        description="Longer facts get 413: about five pages, more than any fact scenario needs.",
    )
    max_question_chars: int = Field(
        default=MAX_QUESTION_CHARS, ge=50, description="One legal question; longer ones get 413."
    )
    max_questions: int = Field(default=MAX_QUESTIONS, ge=1, le=50, description="Questions one search may carry.")
    max_body_bytes: int = Field(
        default=100_000, ge=1_000, description="Request bodies over this size get 413 before they are parsed."
    )
    max_k: int = Field(
        default=MAX_K, ge=1, le=1000, description="Most judgments (or statutes) one request may ask for."
    )
    cors_origins: tuple[str, ...] = Field(
        default=(), description="Origins allowed cross-origin requests; none by default (CORS closed)."
    )
    reload_check_seconds: float = Field(
        default=1.0, ge=0, description="How often a request looks whether the index was rebuilt on disk."
    )
    allowed_hosts: tuple[str, ...] = Field(
        default=(),
        description="Host names answered besides 127.0.0.1, localhost, ::1 and the bound address (this machine's name too when bound to 0.0.0.0); '*' answers any (DNS rebinding protection off).",
    )
    read_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        description="A request's headers and body must arrive within this (else 408, connection closed): slow clients cannot hold connections.",
    )
    max_connections: int | None = Field(
        default=512,
        ge=1,
        description="Open connections (and requests in progress) beyond which uvicorn answers 503 at once.",
    )
    max_searches: int = Field(
        default=8,
        ge=1,
        description="Searches (and question or statute searches) running at once; each uses a CPU core for ~0.1 s offline.",
    )
    max_waiting_searches: int = Field(
        default=64, ge=0, description="Searches queued for a free slot; beyond that, 503 with Retry-After at once."
    )
    search_wait_seconds: float = Field(
        default=15.0, gt=0, description="Longest a queued search waits for a slot before 503 with Retry-After."
    )


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
