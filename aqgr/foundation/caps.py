"""The limits on one request, the same at every door (HTTP API, MCP tools): one definition here.

A request past a cap is refused before any work is done, with a message that says the cap.
`request_problem` is the one check both doors call; each door only turns its answer into its
own error (HTTP: a status and `{error, detail}`; MCP: a tool error).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_FACTS_CHARS = 20_000  # about five pages: more than any fact scenario needs
MAX_QUESTIONS = 10  # legal questions one search may carry
MAX_QUESTION_CHARS = 1_000  # one legal question
MAX_K = 50  # judgments (or statutes) one request may ask for

# HTTP status of each refusal: too long a text is 413 (the body is too large), a count over its cap 422.
STATUS = {
    "facts_too_long": 413,
    "too_many_questions": 422,
    "question_too_long": 413,
    "k_too_large": 422,
    "k_too_small": 422,
}


@dataclass(frozen=True)
class Caps:
    """The caps one server applies (the defaults above unless its configuration changes them)."""

    facts_chars: int = MAX_FACTS_CHARS
    questions: int = MAX_QUESTIONS
    question_chars: int = MAX_QUESTION_CHARS
    k: int = MAX_K


def request_problem(
    facts: str | None = None, questions: Sequence[str] | None = None, k: int | None = None, caps: Caps = Caps()
) -> tuple[str, str] | None:
    """(kind, message) of the first cap the request passes, or None when it is within every cap."""
    if facts is not None and len(facts) > caps.facts_chars:
        return "facts_too_long", (
            f"the facts have {len(facts):,} characters; at most {caps.facts_chars:,} are accepted: keep the facts "
            "that matter (who did what, what happened, what is disputed)"
        )
    if questions is not None:
        if len(questions) > caps.questions:
            return "too_many_questions", f"{len(questions)} questions; a search takes at most {caps.questions}"
        longest = max((len(q) for q in questions if isinstance(q, str)), default=0)
        if longest > caps.question_chars:
            return (
                "question_too_long",
                f"a question has {longest:,} characters; at most {caps.question_chars:,} are accepted",
            )
    if k is not None:
        if k > caps.k:
            return "k_too_large", f"k={k}; at most {caps.k} results are returned per request"
        if k < 1:
            return "k_too_small", f"k={k}; ask for at least 1 result"
    return None
