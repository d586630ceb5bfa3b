"""Deadlines of model calls: one call's total time, and one task's (a judgment, a search).

* Per call: aqgr/llm/http_deadline.py (`deadline_client`, `DeadlineAdapter`, for the HTTP providers).
* Per task: `task("judgment")` / `task("search")` marks the work of one judgment (aqgr/archive/batch.py) or one search
  (aqgr/pipeline/search.py); every model call inside it ends by the task's deadline, retries and their
  waits included (`LLMClient.complete` asks `task_left()`), so a hung server holds a judgment
  or a search slot for at most that long, not for every retry of every call.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

# (monotonic start, what) of the task this thread works on: "judgment" or "search"
_TASK: contextvars.ContextVar[tuple[float, str] | None] = contextvars.ContextVar("aqgr_model_task", default=None)
TASKS = ("judgment", "search")  # each has its time in the provider's configuration: `<what>_timeout_s`


@contextmanager
def task(what: str) -> Iterator[None]:
    """Mark the work of one judgment or one search: every model call inside ends within that task's
    time (`ProviderConfig.judgment_timeout_s`, `search_timeout_s`) from now. Nested: the outer task stands."""
    if what not in TASKS:
        raise ValueError(f"unknown model task {what!r}; one of {', '.join(TASKS)}")
    token = _TASK.set((time.monotonic(), what)) if _TASK.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _TASK.reset(token)


def task_left(config) -> tuple[float, float, str] | None:
    """(seconds left, seconds given, what) of the current task under `config` (a ProviderConfig), or
    None outside a task."""
    found = _TASK.get()
    if found is None:
        return None
    start, what = found
    given = float(getattr(config, f"{what}_timeout_s"))
    return start + given - time.monotonic(), given, what
