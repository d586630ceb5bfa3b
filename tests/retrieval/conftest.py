"""Fixtures: the tiny corpus of retrieval_samples.py and a hashing-embedder index over it."""

from __future__ import annotations

import pytest
from retrieval_samples import CORPUS


@pytest.fixture(scope="session")
def corpus():
    return list(CORPUS)


@pytest.fixture
def hashing_spec():
    from aqgr.retrieval.spec import IndexSpec

    return IndexSpec(embedder="hashing.v1")


@pytest.fixture
def index(corpus, hashing_spec):
    from aqgr.retrieval.embedded.index import SummaryIndex

    return SummaryIndex.build(corpus, hashing_spec)
