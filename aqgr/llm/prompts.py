"""Versioned prompt templates, shipped as text files inside the packages.

A template file is named `<name>.v<N>.txt` and uses `$placeholders` (string.Template, so
JSON braces need no escaping). Its version string is the file name plus a hash of the
content: editing a template changes the version, which keys the response cache and the
engine version recorded in provenance.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template


@dataclass(frozen=True)
class Prompt:
    name: str  # e.g. 'summary.v1'
    text: str

    @property
    def version(self) -> str:
        return f"{self.name}@{hashlib.sha256(self.text.encode('utf-8')).hexdigest()[:12]}"

    def render(self, **values: object) -> str:
        return Template(self.text).substitute({k: str(v) for k, v in values.items()})


@cache
def load_prompt(package: str, name: str) -> Prompt:
    """The template `<package>/prompts/<name>.txt` (e.g. load_prompt('aqgr.summarizer.llm', 'summary.v1'))."""
    text = resources.files(package).joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8")
    return Prompt(name, text)
