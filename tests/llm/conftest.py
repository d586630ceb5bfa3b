from __future__ import annotations

import pytest

from aqgr.archive.home import Archive
from aqgr.llm.cache import ResponseCache
from aqgr.llm.client import LLMClient
from aqgr.llm.config import ProviderConfig
from aqgr.llm.fake import FakeProvider
from aqgr.retrieval.spec import IndexSpec
from tests.aqgr.helpers import write_judgments


@pytest.fixture
def make_client():
    """make_client(script, **config) -> (LLMClient over a scripted fake.v1, the FakeProvider); no real sleeping,
    jitter at its top (waits at the full exponential bound) unless `jitter=` says otherwise."""

    def make(script=(), *, cache=None, sleeps=None, jitter=lambda: 1.0, **config):
        provider = FakeProvider(script)
        settings = ProviderConfig(provider="fake.v1", model="scripted", **config)
        waits = sleeps if sleeps is not None else []
        return LLMClient(provider, config=settings, cache=cache, sleep=waits.append, jitter=jitter), provider

    return make


@pytest.fixture
def memory_cache():
    cache = ResponseCache(":memory:")
    yield cache
    cache.close()


@pytest.fixture(scope="module")
def archive_dir(tmp_path_factory):
    """The test judgments summarised offline and indexed (hashing embedder): the home of a search archive."""
    root = tmp_path_factory.mktemp("llm-search")
    folder = write_judgments(root / "in")
    archive = Archive(root / "home", index=IndexSpec(embedder="hashing.v1"))
    archive.summarize([folder])
    archive.build_index()
    return root / "home"
