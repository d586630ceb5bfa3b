"""kill -9 of a real `aqgr index` process: the previous index still answers, nothing is left
behind once the next `aqgr index` has run, and every judgment is in the index exactly once."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqgr import Archive
from aqgr.foundation.paths import SAMPLE
from aqgr.retrieval.embedded.docstore import DocStore
from aqgr.retrieval.embedded.index import IndexSpec, SummaryIndex, leftovers

ROOT = Path(__file__).resolve().parents[2]
SPEC = IndexSpec(embedder="hashing.v1")
COPIES = 6  # 17 sample judgments made 102 distinct ones: a build long enough to be caught midway


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from aqgr.interfaces.cli import main; main()", *args]


@pytest.fixture(scope="module")
def summarised(tmp_path_factory):
    """A home with 102 judgments summarised (offline) and not yet indexed."""
    base = tmp_path_factory.mktemp("killed")
    folder = base / "judgments"
    folder.mkdir()
    for copy in range(COPIES):
        for path in sorted((SAMPLE / "judgments").glob("*.txt")):
            text = path.read_text(encoding="utf-8")
            (folder / f"{path.stem}-{copy}.txt").write_text(
                f"{text}\n\nCopy {copy} of the judgment, filed separately.\n", encoding="utf-8"
            )
    home = base / "home"
    with Archive(home, index=SPEC) as archive:
        report = archive.summarize([folder])
    assert not report.failed
    return home


@pytest.fixture
def home(summarised, tmp_path):
    copy = tmp_path / "home"
    shutil.copytree(summarised, copy)
    return copy


def _kill_when(home: Path, ready, *args: str) -> None:
    """Start `aqgr index` on `home` and kill -9 it as soon as `ready()` holds."""
    proc = subprocess.Popen(
        _cli("index", "--home", str(home), "--embedder", "hashing.v1", *args),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not ready() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL, f"`aqgr index` ended before it could be killed: {err}"


def _indexed(home: Path) -> list[str]:
    """Every judgment id the committed generation of the index holds (one per entry: duplicates kept),
    after checking that each retriever holds as many documents."""
    directory = home / "index"
    generation = json.loads((directory / "manifest.json").read_text())["generation"]
    registry = DocStore(directory)
    try:
        ids, n_of = registry.live(generation)
    finally:
        registry.close()
    live = [d for d in ids if d is not None]
    assert len(live) == len(n_of)
    index = SummaryIndex.load(directory, expect=SPEC)
    try:
        for name in ("bm25", "fulltext"):
            assert index._parts[name].n_docs() == len(live), name
    finally:
        index.close()
    return live


def _finish_and_count(home: Path) -> None:
    """The next `aqgr index` completes, leaves nothing behind, and the index holds each summary once."""
    done = subprocess.run(
        _cli("index", "--home", str(home), "--embedder", "hashing.v1"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert leftovers(home / "index") == []
    assert not list(home.glob(".index.*")) and not list(home.glob("**/.*.tmp-*"))
    with Archive(home, index=SPEC) as archive:
        summarised = sorted(s.judgment_id for s in archive.summaries())
        assert len(summarised) == COPIES * len(list((SAMPLE / "judgments").glob("*.txt")))
        assert archive.status()["index"]["n_docs"] == len(summarised)
        assert sorted(_indexed(home)) == summarised  # none lost, none twice
        probe = summarised[len(summarised) // 2]
        assert probe in [h.judgment_id for h in archive.search(archive.text(probe)[:1500]).hits]
    check = subprocess.run(_cli("check", "--home", str(home)), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_first_build_killed_midway_is_completed_by_the_next_run(home):
    index_dir = home / "index"
    _kill_when(home, lambda: (index_dir / "docs.sqlite").exists() and any(index_dir.glob("*/")))
    _finish_and_count(home)


@pytest.mark.parametrize("point", ["started", "parts written"])
def test_a_rebuild_killed_midway_leaves_the_old_index_serving(home, point):
    with Archive(home, index=SPEC) as archive:
        archive.build_index(spec=SPEC)
        probe = sorted(s.judgment_id for s in archive.summaries())[3]
        query = archive.text(probe)[:1500]
        before = [(h.judgment_id, round(h.score, 6)) for h in archive.search(query).hits]

    def beside() -> list[Path]:
        return [p for p in home.glob(".index.rebuild-*")]

    def ready() -> bool:
        made = beside()
        if point == "started":
            return bool(made)
        return any((p / "docs.sqlite").exists() and len([c for c in p.iterdir() if c.is_dir()]) >= 2 for p in made)

    _kill_when(home, ready, "--rebuild")
    assert beside(), "the kill came before the rebuild had begun"
    with Archive(home, index=SPEC) as archive:  # the old index answers, unchanged, beside the leftovers
        assert [(h.judgment_id, round(h.score, 6)) for h in archive.search(query).hits] == before
    _finish_and_count(home)
