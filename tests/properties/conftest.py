"""An archive and an app shared by the property tests (the sample archive, hashing embedder: ~2 s)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")


@pytest.fixture(scope="session")
def built_home(tmp_path_factory) -> Path:
    from tests.server.conftest import build_sample

    home = tmp_path_factory.mktemp("prop") / "home"
    archive = build_sample(home, statutes_dir=home.parent / "statutes")
    archive.export_summaries(home.parent / "all.jsonl")
    archive.close()
    return home


@pytest.fixture
def home_copy(built_home, tmp_path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(built_home, home)
    return home


def snapshot(home: Path) -> str:
    """What the archive holds: its summaries, judgments and failures, as one digest."""
    from aqgr.archive.store import Store

    store = Store(f"sqlite:///{home / 'aqgr.db'}", create=False)
    try:
        digest = hashlib.sha256()
        for doc in store.iter_summaries():
            digest.update(repr(sorted(doc.items())).encode("utf-8", "backslashreplace"))
        digest.update(
            repr(
                (
                    store.count_judgments(),
                    sorted(store.count_failures().items()),
                    sorted(store.count_imported().items()),
                )
            ).encode()
        )
        return digest.hexdigest()
    finally:
        store.close()
