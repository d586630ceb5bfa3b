"""Systems under evaluation: one protocol, a registry of named configurations.

A system is prepared once per dataset, then asked for one ranking per query. It must
honour `restrict` (rank only these documents) and `exclude` (never rank these); the
harness checks both. `returned(query_id)` is optional: the system's own returned set for
the study's set measures (absent, or returning None: the top 10 of the ranking).

The systems register in their own modules, imported on the first lookup: the full-text
baselines (`bm25-fulltext`, `bm25s-fulltext*`) in `eval/systems/fulltext.py`; the
summary-based systems (`bm25-summary`, `dense-summary`, `ensemble-summary`, `aqgr` and
their ablations), which go through the Archive API, in `eval/systems/pipeline.py`.
`NAME@<backend>` picks the index backend of a summary-based system
(`eval/systems/on_backend.py`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from aqgr.eval.datasets import Dataset
from aqgr.foundation.errors import ConfigError
from aqgr.foundation.registry import Registry

# Where the systems register: the full-text baselines, and the summary-based systems (they need
# the Archive API of aqgr/).
FULLTEXT_SYSTEMS_MODULE = "aqgr.eval.systems.fulltext"
PIPELINE_SYSTEMS_MODULE = "aqgr.eval.systems.pipeline"

Progress = Callable[[str, int, int], None]  # (what, done, total)


@runtime_checkable
class System(Protocol):
    name: str

    def prepare(self, dataset: Dataset, *, cache_dir: Path | None = None, progress: Progress | None = None) -> None: ...

    def rank(
        self,
        query_id: str,
        text: str,
        *,
        depth: int,
        restrict: frozenset[str] | None = None,
        exclude: frozenset[str] | None = None,
    ) -> list[tuple[str, float]]: ...

    def config(self) -> dict:
        """Everything that determines this system's output (written to config.json)."""
        ...


systems: Registry[System] = Registry("system", modules=(FULLTEXT_SYSTEMS_MODULE, PIPELINE_SYSTEMS_MODULE))


def get_system(name: str | System, **options) -> System:
    """A system by registered name (options go to its factory), or a System as is.

    `<name>@<backend>` (e.g. `aqgr-no-fulltext@milvus`) passes backend=<backend> to a
    factory that serves index backends (the summary-based systems: eval/systems/on_backend.py)."""
    if not isinstance(name, str):
        return name
    from aqgr.eval.systems.on_backend import SEPARATOR, split_name

    base, backend = split_name(name)
    if backend is None:
        return systems.create(name, **options)
    factory = systems.get(base)
    if not getattr(factory, "index_backends", False):
        served = [n for n in systems.names() if getattr(systems.get(n), "index_backends", False)]
        raise ConfigError(
            f"system {name!r}: {base!r} has no index backend to choose; {SEPARATOR}<backend> applies to "
            f"the summary-based systems ({', '.join(served[:4])}, ...)"
        )
    if options.get("backend") not in (None, backend):
        raise ConfigError(f"system {name!r} names backend {backend!r} but backend={options['backend']!r} was given")
    return factory(**{**options, "backend": backend})


def default_cache_dir() -> Path:
    """$AQGR_HOME/cache/eval, else the user's cache directory for aqgr."""
    home = os.environ.get("AQGR_HOME")
    if home:
        return Path(home).expanduser() / "cache" / "eval"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("aqgr", appauthor=False)) / "eval"


def system_names() -> Sequence[str]:
    return systems.names()
