"""The cyclic garbage collector paused for the length of one search.

A search makes tens of thousands of small objects (the runs: 12 of up to 1,000 scored
documents) that all die when it returns. Left to run, the collector moves them into its oldest
generation while the search holds them, and every few searches walks that generation whole,
with the quarter of a million objects a loaded archive and its libraries keep for good: about
a fifth of a search's time (measured on the 2,914 AILA judgments). Paused, they are freed by
reference counting when the search returns, as they are anyway, and nothing reaches the oldest
generation.

The pause is the process's, so it is shared: it begins with the first search and ends with
the last one running. Searches that overlap without a gap for more than MAX_PAUSE_S seconds
(a busy server) end it early, and collection goes on as usual until they all return. A program
that turned the collector off keeps it off.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

MAX_PAUSE_S = 2.0

_lock = threading.Lock()
_holders = 0
_paused_at: float | None = (
    None  # when this pause began; None when it did not (the collector was off, or it ended early)
)


@contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic cyclic collection inside the `with` (see the module)."""
    global _holders, _paused_at
    with _lock:
        if _holders == 0:
            _paused_at = time.monotonic() if gc.isenabled() else None
            if _paused_at is not None:
                gc.disable()
        elif _paused_at is not None and time.monotonic() - _paused_at > MAX_PAUSE_S:
            gc.enable()  # searches have overlapped for too long: collection resumes
            _paused_at = None
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _paused_at is not None:
                gc.enable()
                _paused_at = None
