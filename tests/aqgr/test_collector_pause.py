"""The garbage collector is paused for a search and only for it (aqgr/foundation/collector.py)."""

from __future__ import annotations

import gc
import threading

import pytest

from aqgr.foundation import collector
from aqgr.foundation.collector import collection_paused


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_and_back_after_even_on_error():
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), collection_paused():
        raise ValueError("a failed search")
    assert gc.isenabled()


def test_a_collector_the_program_turned_off_stays_off():
    gc.disable()
    with collection_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_overlapping_searches_share_one_pause_that_ends_with_the_last():
    inside, release = threading.Event(), threading.Event()

    def search():
        with collection_paused():
            inside.set()
            release.wait(10)

    other = threading.Thread(target=search)
    other.start()
    inside.wait(10)
    with collection_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other search still runs
    release.set()
    other.join(10)
    assert gc.isenabled()


def test_searches_overlapping_for_too_long_end_the_pause(monkeypatch):
    monkeypatch.setattr(collector, "MAX_PAUSE_S", 0.0)
    with collection_paused():
        assert not gc.isenabled()
        with collection_paused():  # a search that began after the limit
            assert gc.isenabled()
        assert gc.isenabled()
    assert gc.isenabled()


def test_a_search_runs_with_the_collector_paused(tmp_path, monkeypatch):
    from aqgr.pipeline.search import Searcher
    from tests.aqgr.helpers import DYING_DECLARATION_FACTS, indexed_archive

    archive = indexed_archive(tmp_path / "home", tmp_path / "in")

    seen = []
    real = Searcher.explain

    def explain(self, *args, **kwargs):
        seen.append(gc.isenabled())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Searcher, "explain", explain)
    assert archive.search(DYING_DECLARATION_FACTS).hits
    assert seen == [False] and gc.isenabled()
