"""aqgr/foundation/parallel.py: a search's independent calls side by side, same results."""

from __future__ import annotations

import contextvars
import threading
import time

import pytest

from aqgr.foundation import parallel

WHO = contextvars.ContextVar("who", default="nobody")


def test_results_come_back_in_the_order_of_the_calls_whichever_ends_first():
    def call(i: int, pause: float):
        def run():
            time.sleep(pause)
            return i

        return run

    assert parallel.side_by_side([call(0, 0.05), call(1, 0.0), call(2, 0.02), call(3, 0.0)]) == [0, 1, 2, 3]
    assert parallel.side_by_side([]) == []


@pytest.mark.skipif(parallel._workers() == 0, reason="one core: the calls run one after another")
def test_calls_overlap_in_time_on_more_than_one_core():
    barrier = threading.Barrier(2, timeout=5)  # only passes when two calls run at once
    assert parallel.side_by_side([lambda: barrier.wait() >= 0, lambda: barrier.wait() >= 0]) == [True, True]


def test_each_call_sees_the_callers_context():
    WHO.set("search 7")
    assert parallel.side_by_side([WHO.get, WHO.get, WHO.get]) == ["search 7"] * 3


def test_an_error_is_raised_once_nothing_of_the_calls_runs_any_more():
    started, ended = [], []

    def slow():
        started.append("slow")
        time.sleep(0.1)
        ended.append("slow")
        return 1

    def broken():
        raise ValueError("retriever failed")

    for calls in ([lambda: 0, broken, slow], [broken, slow, slow]):
        with pytest.raises(ValueError, match="retriever failed"):
            parallel.side_by_side(calls)
        assert started == ended  # a call that began has ended; one not begun was cancelled
        snapshot = list(ended)
        time.sleep(0.15)
        assert ended == snapshot


@pytest.mark.timeout(30)  # a deadlock fails here rather than hanging the suite
def test_a_call_from_the_pools_own_thread_does_not_wait_on_the_pool(monkeypatch):
    monkeypatch.setattr(parallel, "_workers", lambda: 1)
    monkeypatch.setattr(parallel, "_pool", None)
    # the one worker runs a call that itself asks for calls side by side: it runs them itself
    inner = lambda: parallel.side_by_side([lambda: threading.current_thread().name] * 3)  # noqa: E731
    outside, in_worker = parallel.side_by_side([inner, inner])
    assert len(outside) == 3 and in_worker == [in_worker[0]] * 3 and in_worker[0].startswith("aqgr-search")
    parallel._pool.shutdown()


@pytest.mark.timeout(30)
def test_whoever_is_free_takes_the_next_call(monkeypatch):
    """With one worker, a quick call and two slow ones: the caller, done with the quick one, takes a
    slow one instead of leaving both to the worker (two slow calls at once, not one after another)."""
    monkeypatch.setattr(parallel, "_workers", lambda: 1)
    monkeypatch.setattr(parallel, "_pool", None)

    def slow():
        time.sleep(0.3)
        return threading.current_thread().name

    started = time.perf_counter()
    quick, first, second = parallel.side_by_side([lambda: threading.current_thread().name, slow, slow])
    assert first != second and time.perf_counter() - started < 0.55
    parallel._pool.shutdown()


@pytest.mark.timeout(30)
def test_a_call_knows_whether_it_runs_beside_others(monkeypatch):
    monkeypatch.setattr(parallel, "_workers", lambda: 1)
    monkeypatch.setattr(parallel, "_pool", None)
    assert not parallel.beside_others()
    assert parallel.side_by_side([parallel.beside_others] * 3) == [True] * 3
    assert parallel.side_by_side([parallel.beside_others]) == [False]  # one call: the caller runs it alone
    assert not parallel.beside_others()  # the caller's own context is as it was
    parallel._pool.shutdown()
