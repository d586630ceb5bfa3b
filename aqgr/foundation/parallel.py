"""A few independent calls of one search run side by side, on a pool the process shares.

A search reads its retrievers once per generated question, and each of those reads waits
mostly on code that lets go of the interpreter lock (tantivy's search, FAISS, numpy): on two
cores three questions' reads take little more than two. The caller runs the first call itself
and hands the rest to the pool, so a search makes progress even when other searches keep the
pool busy, and results come back in the order of the calls. Each call runs in a copy of the
caller's context (the model-task deadlines of aqgr/llm/deadline.py are context variables).
One core, or a call made from one of the pool's own threads (which must not wait on the pool
it is part of), and the calls run one after another, as before.
"""

from __future__ import annotations

import contextvars
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")

_PREFIX = "aqgr-search"
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _workers() -> int:
    """Threads beside the caller: one fewer than the cores this process may use, at most 3."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(0, min(cores - 1, 3))


def _shared_pool() -> ThreadPoolExecutor | None:
    global _pool
    with _pool_lock:
        if _pool is None and (workers := _workers()) > 0:
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=_PREFIX)
        return _pool


def side_by_side(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Each call's result, in order; the first error raised (after every call has ended)."""
    inside = threading.current_thread().name.startswith(_PREFIX)
    pool = _shared_pool() if len(calls) > 1 and not inside else None
    if pool is None:
        return [call() for call in calls]
    futures: list[Future] = [pool.submit(contextvars.copy_context().run, call) for call in calls[1:]]
    try:
        first = calls[0]()
    except BaseException:
        for future in futures:
            future.cancel()
            if not future.cancelled():
                future.exception()  # wait: nothing of this search runs on after it has failed
        raise
    wait(futures)
    return [first, *(future.result() for future in futures)]
