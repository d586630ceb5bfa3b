"""Registration point for the systems that run through the aqgr Archive API.

Each configuration below is one named system (one flag to select). They summarise the
corpus once into an Archive under the eval cache (summaries and embeddings cached), build
its index with the configuration's slots, and search with the configuration's options.

STATUS: not wired yet. `aqgr/archive.py` appeared at the end of the harness work;
`ArchiveSystem.prepare/rank` raise a ConfigError until they are implemented against it:
prepare = Archive(<cache>/archive-<corpus fingerprint>).summarize(dataset docs) (cached,
judgment id = file stem) + build_index(spec with/without the precedents slot);
rank = Archive.search(facts, k=depth, options=SearchOptions(retrievers, weights,
n_questions=0 for facts-only)) mapped to (judgment id, score), honouring restrict/exclude;
returned = the explained hits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from aqgr.errors import ConfigError
from eval.datasets import Dataset
from eval.systems import Progress, systems


@dataclass(frozen=True)
class PipelineConfig:
    """What differs between the summary-based systems and ablations."""

    retrievers: tuple[str, ...] = ("bm25", "dense")
    questions: bool = False  # question-guided (AQgR) search vs the facts alone
    precedents_slot: bool = False  # index the precedents slot too (the study: off scores higher on FIRE)
    weights: tuple[float, ...] | None = None  # fusion weights in `retrievers` order; None = equal
    explain: bool = False  # rerank + explain (returned set = the explained hits)
    extra: dict = field(default_factory=dict)


# name -> configuration. Ablations of `aqgr`: with/without precedents; facts-only vs
# questions; ensemble vs each retriever alone; fusion weights.
PIPELINE_CONFIGS: dict[str, PipelineConfig] = {
    "bm25-summary": PipelineConfig(retrievers=("bm25",)),
    "dense-summary": PipelineConfig(retrievers=("dense",)),
    "ensemble-summary": PipelineConfig(),
    "aqgr": PipelineConfig(questions=True, explain=True),
    "aqgr+precedents": PipelineConfig(questions=True, explain=True, precedents_slot=True),
    "aqgr-facts-only": PipelineConfig(questions=False, explain=True),
    "aqgr-bm25-only": PipelineConfig(retrievers=("bm25",), questions=True, explain=True),
    "aqgr-dense-only": PipelineConfig(retrievers=("dense",), questions=True, explain=True),
    "aqgr-fusion-0.7-0.3": PipelineConfig(questions=True, explain=True, weights=(0.7, 0.3)),
    "aqgr-fusion-0.3-0.7": PipelineConfig(questions=True, explain=True, weights=(0.3, 0.7)),
}


class ArchiveSystem:
    """A system backed by an aqgr Archive (summaries -> index -> search)."""

    def __init__(self, name: str, config: PipelineConfig, **options):
        self.name = name
        self.pipeline = config
        self.options = options

    def config(self) -> dict:
        return {"system": self.name, **{k: v for k, v in self.pipeline.__dict__.items()}, **self.options}

    def prepare(self, dataset: Dataset, *, cache_dir: Path | None = None, progress: Progress | None = None) -> None:
        try:
            import aqgr.archive  # noqa: F401
        except ImportError:
            raise ConfigError(
                f"system {self.name!r} needs the aqgr Archive API (aqgr/archive.py), which is not available; "
                "use bm25-fulltext, or wire eval/pipeline_systems.py to the Archive"
            ) from None
        raise ConfigError(f"system {self.name!r}: the Archive is present but eval/pipeline_systems.py is not wired to it yet")

    def rank(self, query_id, text, *, depth, restrict=None, exclude=None) -> list[tuple[str, float]]:
        raise ConfigError(f"system {self.name!r} is not prepared")


def _factory(name: str, config: PipelineConfig):
    def build(**options) -> ArchiveSystem:
        return ArchiveSystem(name, config, **options)

    return build


for _name, _config in PIPELINE_CONFIGS.items():
    systems.register(_name)(_factory(_name, _config))
