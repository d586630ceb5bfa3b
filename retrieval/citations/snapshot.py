"""The citation graph as one file of arrays beside the citation store, for a fast opening.

A search process reads the whole graph when it opens: at 1e6 judgments the store's SQLite
query for the links and every judgment's name took 3.3-4.4 s (most of it stepping
rows into Python), while the same arrays read from one `.npz` file take a fraction of a
second. The store stays the truth: the snapshot is a copy of what it held at one commit,
named by that commit's `generation` (a random token the store sets in meta at every
update, retrieval/citations/store.py). A reader uses the snapshot only when its generation
is the store's now; a missing, stale, damaged or foreign file is ignored (`load` returns
None) and the graph is read from the store, as before. Only a writer (`aqgr index`) makes
the file; it is written whole under another name and renamed into place.

Layout (numpy `.npz`, no pickles): `generation` (str), `names` (uint8: every stored
judgment's id, UTF-8, each followed by a newline: first the graph's nodes in node order,
then the judgments that cite and are cited by none), `nodes` (the number of nodes),
`citing` and `cited` (int32 node numbers of each distinct link)."""

from __future__ import annotations

import logging
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aqgr.foundation.files import atomic_file

log = logging.getLogger(__name__)

FORMAT = "citation-snapshot.v1"


def snapshot_path(store: Path) -> Path:
    """Where the snapshot of the store file `store` lives: beside it."""
    return store.with_name(store.name + ".graph.npz")


@dataclass(frozen=True)
class Snapshot:
    """The graph's arrays as a search opens them: from the file (`load`) or from the store's rows."""

    node_names: list[str]  # the graph's names, in node order
    other_names: list[str]  # the stored judgments in no link
    citing: np.ndarray
    cited: np.ndarray
    joined: bytes | None = None  # node_names encoded, each followed by a newline (read from the file)

    @property
    def all_names(self) -> list[str]:
        """Every stored judgment's id."""
        return [*self.node_names, *self.other_names]


def save(path: Path, generation: str, graph: Snapshot, *, mode: int = 0o644) -> bool:
    """Write the snapshot (atomically, with permissions `mode`: the store file's); False, and no
    file, when it cannot be written (an id with a newline in it, a full disk): readers then read
    the store."""
    names = graph.all_names
    if any("\n" in name for name in names):
        path.unlink(missing_ok=True)
        return False
    blob = np.frombuffer("".join(f"{name}\n" for name in names).encode(), dtype=np.uint8)
    try:
        with atomic_file(path, "wb", permissions=mode) as out:  # readable by whoever can read the store
            np.savez(
                out,
                format=np.array(FORMAT),
                generation=np.array(generation),
                names=blob,
                nodes=np.array(len(graph.node_names), dtype=np.int64),
                citing=np.asarray(graph.citing, dtype=np.int32),
                cited=np.asarray(graph.cited, dtype=np.int32),
            )
        return True
    except OSError as exc:
        log.warning("the citation graph's snapshot %s was not written (%s): searches read the store instead", path, exc)
        path.unlink(missing_ok=True)
        return False


def load(path: Path, generation: str | None) -> Snapshot | None:
    """The snapshot at `path` if it is of the store's `generation` and whole; else None."""
    if generation is None or not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as found:
            if str(found["format"]) != FORMAT or str(found["generation"]) != generation:
                return None
            blob, n_nodes = found["names"].tobytes(), int(found["nodes"])
            citing, cited = found["citing"], found["cited"]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        log.warning("the citation graph's snapshot %s is unreadable (%s): reading the store", path, exc)
        return None
    if not blob.endswith(b"\n"):
        return None
    try:
        names = blob[:-1].decode().split("\n")
    except UnicodeDecodeError:
        return None
    if (
        not 0 <= n_nodes <= len(names)
        or len(citing) != len(cited)
        or (
            len(citing)
            and (min(int(citing.min()), int(cited.min())) < 0 or max(int(citing.max()), int(cited.max())) >= n_nodes)
        )
    ):
        return None
    joined = blob[: _nth_newline(blob, n_nodes) + 1] if n_nodes else b""
    return Snapshot(names[:n_nodes], names[n_nodes:], citing, cited, joined)


def _nth_newline(blob: bytes, n: int) -> int:
    """The offset of the n-th newline (1-based) in `blob`."""
    return int(np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 10)[n - 1])
