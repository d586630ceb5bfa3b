"""Archive.close() (and `with Archive(...)`) lets go of every file of the home it opened."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from aqgr import Archive
from aqgr.foundation.paths import SAMPLE
from aqgr.retrieval.spec import IndexSpec
from tests.aqgr.helpers import DYING_DECLARATION_FACTS


def _open_in(home: Path) -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(home)):
            found.append(target)
    return found


def test_close_releases_the_database_and_the_loaded_indexes_and_the_archive_reopens(tmp_path):
    folder = tmp_path / "judgments"
    folder.mkdir()
    for path in sorted((SAMPLE / "judgments").glob("*.txt"))[:6]:
        shutil.copy(path, folder / path.name)
    home = (tmp_path / "home").resolve()
    with Archive(home, index=IndexSpec(embedder="hashing.v1")) as archive:
        archive.summarize([folder])
        archive.build_index()
        first = archive.search(DYING_DECLARATION_FACTS).hits
        assert _open_in(home), "nothing open while searching: the check below would prove nothing"
    assert _open_in(home) == []
    again = archive.search(DYING_DECLARATION_FACTS).hits  # used after close: opened again
    assert [h.judgment_id for h in again] == [h.judgment_id for h in first]
    archive.close()
    assert _open_in(home) == []
