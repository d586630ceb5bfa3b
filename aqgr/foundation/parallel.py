"""A few independent calls of one search run side by side, on a pool the process shares.

A search reads its retrievers once per generated question, and each of those reads waits
mostly on code that lets go of the interpreter lock (tantivy's search, FAISS, numpy): on two
cores three questions' reads take little more than two. The caller and the pool's workers take
the calls in their order, each the next one not yet taken as soon as it is free: so the caller
never idles while a call waits for a worker, a search makes progress even when other searches
keep the pool busy (the caller can take every call), and calls of unequal length share the
cores (the first two at once, the third by whichever ends first). Results come back in the
order of the calls. A call a worker takes runs in a copy of the caller's context (the model-task
deadlines of aqgr/llm/deadline.py are context variables).
One core, or a call made from one of the pool's own threads (which must not wait on the pool
it is part of), and the calls run one after another, as before.
`beside_others()` tells a call whether it runs beside others, so that code with threads of its
own (ONNX Runtime's) can keep to one core instead of sharing both cores with its neighbour.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")

_PREFIX = "aqgr-search"
_pool: ThreadPoolExecutor | None = None
_beside = contextvars.ContextVar("aqgr_beside_others", default=False)
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


def beside_others() -> bool:
    """True inside a call that `side_by_side` runs beside others on the pool."""
    return _beside.get()


def side_by_side(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Each call's result, in order; the first error raised (by the calls' order), once every call
    that began has ended: after an error no further call begins."""
    inside = threading.current_thread().name.startswith(_PREFIX)
    pool = _shared_pool() if len(calls) > 1 and not inside else None
    if pool is None:
        return [call() for call in calls]
    results: list = [None] * len(calls)
    failed: dict[int, BaseException] = {}
    order = iter(range(len(calls)))
    lock = threading.Lock()

    def take_in_turn() -> None:
        beside = _beside.set(True)
        try:
            while True:
                with lock:
                    number = None if failed else next(order, None)
                if number is None:
                    return
                try:
                    results[number] = calls[number]()
                except BaseException as exc:
                    with lock:
                        failed[number] = exc
                    return
        finally:
            _beside.reset(beside)

    helpers: list[Future] = [
        pool.submit(contextvars.copy_context().run, take_in_turn) for _ in range(min(len(calls) - 1, _workers()))
    ]
    take_in_turn()
    for helper in helpers:
        helper.cancel()  # one still queued behind other searches' work has nothing left to take
    wait(helpers)
    if failed:
        raise failed[min(failed)]
    return results
