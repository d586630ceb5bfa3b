"""`llm.v1` treatment engine: the model labels the citing sentence, `phrases.v1` stands behind it.

For one mention the model is given the citing sentence (found as `phrases.v1` finds it:
treatment.sentence_span) and the cited case's name as the citing judgment writes it, and
answers JSON: one label of treatment.LABELS and the quote, the words of the sentence that
show it. The answer is kept only when it is valid: a label of the fixed set, and a quote
that stands in the citing sentence (whitespace aside; the quote kept is the sentence's own
text, so it is a substring of the citing judgment's text and names no judgment that the
archive's own text does not). Anything else (an unknown label, malformed JSON, a quote
that is not in the sentence, a provider error, a timeout, no provider) gives the
`phrases.v1` treatment of that mention: never a guess, never a crash. A valid answer whose
label differs from `phrases.v1`'s is reconciled by severity (treatment.reconciled): the more
severe label stands, whichever engine gave it, and the other's is recorded as the
treatment's `dissent`: a model's "referred" never hides an overruling the phrases found. A sentence that is
not readable English is "referred" without asking (treatment.readable). A failure of the
set-up (the server cannot be reached, the key or the model is refused: every later call
would fail alike) stops the engine asking: the rest of its mentions get `phrases.v1`'s
treatment at once, and `stopped` says why.

The engine's `version` names the provider, the model, the prompt and the rule that
reconciles the two engines (RULE): a citation store made with another
(retrieval/citations/store.py) is rebuilt by the next `aqgr index` (a store made before
severity won may hold a model's "referred" in place of an overruling; the archive's reply
cache answers the calls asked before).
The store marks each citing judgment's linking as one model task (aqgr/llm/deadline.py):
every call for its mentions ends within the judgment's time, after which the rest of its
mentions get the `phrases.v1` treatment.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aqgr.foundation.errors import AqgrError, ProviderError
from aqgr.llm.client import LLMClient, client_from_environment
from aqgr.llm.prompts import load_prompt
from aqgr.llm.structured import ask_json, schema_problems
from aqgr.retrieval.citations.treatment import (
    LABELS,
    REFERRED,
    PhraseTreatments,
    Treatment,
    TreatmentEngine,
    readable,
    reconciled,
    treatment_engines,
)

ENGINE = "llm.v1"
RULE = "severity.v1"  # how the model's label and phrases.v1's are reconciled: the more severe stands (treatment.reconciled)
QUOTE_CHARS = 400  # the longest quote asked for: the words that show a treatment, not the whole sentence
CITED_CHARS = 200  # the cited case's name as shown to the model
# ProviderError kinds of the set-up, not of one call (aqgr/archive/batch.py stops a batch on the same ones)
SETUP_KINDS = frozenset({"auth", "not_found", "unreachable"})
REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": list(LABELS)},
        "quote": {"type": "string", "maxLength": QUOTE_CHARS},
    },
    "required": ["label", "quote"],
    "additionalProperties": False,
}


def find_quote(quote: str, sentence: str) -> tuple[int, int] | None:
    """Where `quote` stands in `sentence` (its words in order, any white space between them,
    letter case as written), or None."""
    words = quote.strip().strip("\"'\u201c\u201d\u2018\u2019").split()
    if not words:
        return None
    found = re.search(r"\s+".join(re.escape(w) for w in words), sentence)
    return (found.start(), found.end()) if found else None


class LLMTreatments:
    """The model-backed engine (see the module). `max_attempts`: replies read per mention; 1,
    no re-ask: a link's treatment is one small call, and an invalid answer has `phrases.v1`
    behind it."""

    name = ENGINE

    def __init__(self, client: LLMClient, *, max_attempts: int = 1, temperature: float = 0.0):
        self.client = client
        self.max_attempts = max_attempts
        self.temperature = temperature
        self.prompt = load_prompt("aqgr", "treatment.v1")
        self.system = load_prompt("aqgr", "system.v1")
        self.fallback: TreatmentEngine = PhraseTreatments()
        self.prompt_version = f"{self.system.version}+{self.prompt.version}"
        self.version = f"{ENGINE};{client.label};{self.prompt_version};{RULE}"
        self.stopped: str | None = None  # why the engine stopped asking the model (a set-up failure)

    def classify(self, text: str, start: int, end: int, cited: str = "") -> Treatment:
        offline = self.fallback.classify(text, start, end, cited)
        if self.stopped is not None or not readable(offline.sentence):
            return offline  # stopped, or another language or garbled (referred): the model is not asked
        try:
            answer = ask_json(
                self.client,
                self._request(offline.sentence, cited or text[start:end]),
                lambda value: self._check(value, offline.sentence),
                max_attempts=self.max_attempts,
            )
        except (
            AqgrError
        ) as exc:  # ProviderError (an error, a timeout), InvalidModelOutputError, ConfigError (nothing fits)
            if isinstance(exc, ProviderError) and exc.kind in SETUP_KINDS:
                self.stopped = str(exc)
            return offline
        label, cue = answer.value
        said = Treatment(label, offline.sentence, offline.start, offline.end, cue)
        return reconciled(offline, self.fallback.name, said, self.name)

    def _request(self, sentence: str, cited: str):
        budget = self.client.budget("treatments")
        prompt = self.prompt.render(
            cited=" ".join(cited.split())[:CITED_CHARS], sentence=sentence, schema=json.dumps(REPLY_SCHEMA)
        )
        return budget.request(
            prompt,
            stage="treatments",
            prompt_version=self.prompt_version,
            system=self.system.text,
            json_schema=REPLY_SCHEMA,
            temperature=self.temperature,
            top_p=1.0,
            top_k=1,
        )

    @staticmethod
    def _check(value: Any, sentence: str) -> tuple[tuple[str, str] | None, list[str]]:
        """((label, the quote as the sentence has it), []) for a valid answer, else (None, problems)."""
        problems = schema_problems(REPLY_SCHEMA, value)
        if problems:
            return None, problems
        label, quote = value["label"], value["quote"]
        if label == REFERRED:
            return (REFERRED, ""), []
        at = find_quote(quote, sentence)
        if at is None:
            return None, [f"quote: {quote[:80]!r} is not in the sentence: copy its words exactly"]
        return (label, sentence[at[0] : at[1]]), []


@treatment_engines.register(ENGINE)
def _llm_v1(llm: LLMClient | None = None) -> TreatmentEngine:
    return LLMTreatments(llm or client_from_environment("llm.v1 treatment engine"))
