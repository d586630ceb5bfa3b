"""Structured-output negotiation: the forms a provider may ask a server for, in order, and the one the
server accepted, kept for the run.

A provider tries its current form; an error that `refused` recognises as the server refusing that
form (say an HTTP 400/500 naming `response_format`) moves every later call to the next form at
once, without a retry. A single fixed form is never changed.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import TypeVar

from aqgr.foundation.errors import ProviderError

T = TypeVar("T")


class StructuredForms:
    def __init__(self, forms: tuple[str, ...], statuses: tuple[int, ...], about: str):
        self.forms = forms
        self._statuses = statuses
        self._about = re.compile(about, re.IGNORECASE)
        self._index = 0  # the form this server accepted (or is being tried)
        self._lock = threading.Lock()

    @property
    def current(self) -> str:
        return self.forms[self._index]

    def refused(self, exc: ProviderError, index: int) -> bool:
        """Whether `exc` is the server refusing form `index`, and another form is left to try."""
        return (
            index + 1 < len(self.forms) and exc.status in self._statuses and bool(self._about.search(exc.detail or ""))
        )

    def call(self, attempt: Callable[[str], T], structured: bool = True) -> T:
        """`attempt(form)` with the current form; a refused form is replaced by the next one, once each."""
        while True:
            index = self._index
            try:
                return attempt(self.forms[index])
            except ProviderError as exc:
                if not (structured and self.refused(exc, index)):
                    raise
                with self._lock:  # remember for the run: every later call uses the form that works
                    self._index = max(self._index, index + 1)
