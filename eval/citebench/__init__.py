"""A self-supervised tuning benchmark from an archive's own citations.

`build_citation_benchmark(path, out_dir)` finds where a judgment cites another judgment
of the same archive and writes an AILA-format benchmark (queries.txt, qrels.txt,
citing.tsv) that `eval.datasets.load_dataset(out_dir, docs=path)` reads.
"""

from __future__ import annotations

from pathlib import Path

from aqgr.eval.citebench.build import Benchmark, CitebenchSettings, build_benchmark, write_benchmark

__all__ = ["Benchmark", "CitebenchSettings", "build_benchmark", "build_citation_benchmark", "write_benchmark"]


def build_citation_benchmark(
    archive: str | Path,
    out_dir: str | Path,
    settings: CitebenchSettings = CitebenchSettings(),
    *,
    progress=None,
    command: str | None = None,
    statutes: str | Path | None = None,
) -> Benchmark:
    """Build from `archive` (an AILA dataset folder holding Object_casedocs/, or any folder
    of .txt judgments; ids are file stems) and write to `out_dir`. `statutes`: a folder of
    statute files (or a dataset folder holding Object_statutes/): adds the statute qrels."""
    from aqgr.eval.datasets import find_documents, list_documents
    from aqgr.pipeline.statutes import read_statute

    archive = Path(archive).expanduser()
    docs_dir = find_documents(archive, "cases", docs=archive)
    statute_texts = None
    if statutes is not None:
        folder = find_documents(Path(statutes), "statutes", docs=Path(statutes).expanduser())
        statute_texts = {sid: read_statute(folder / f"{sid}.txt")[1] for sid in list_documents(folder, "statutes")}
    bench = build_benchmark(
        docs_dir, list_documents(docs_dir, "cases"), settings, progress=progress, statutes=statute_texts
    )
    write_benchmark(bench, Path(out_dir), source=str(archive), command=command)
    return bench
