"""Batch summarisation: files in, validated summaries stored, failures recorded.

A failure on one file (unreadable, empty, binary, an engine error, a schema violation,
a duplicate id) is recorded on that file in the store and reported; the batch goes on.
An unchanged judgment already summarised by the same engine version is skipped.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Callable, Iterable

from pydantic import BaseModel, Field

from aqgr.errors import ReadError, SummarizeError, SummaryValidationError
from aqgr.store import JudgmentRow, Store
from schemas.summary import SCHEMA_VERSION, Provenance, StructuredSummary
from schemas.validation import validate_summary
from summarizer.base import JudgmentText, SummarizerEngine
from summarizer.readers import read_judgment, supported_extensions

Progress = Callable[[int, int, str], None]


class FileFailure(BaseModel):
    path: str
    judgment_id: str | None
    stage: str
    reason: str
    message: str


class BatchReport(BaseModel):
    """What a summarisation batch did."""

    engine: str
    files: int = 0
    summarised: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    failed: list[FileFailure] = Field(default_factory=list)
    skipped_unsupported: list[str] = Field(default_factory=list)

    @property
    def failures_by_reason(self) -> dict[str, int]:
        return dict(Counter(f.reason for f in self.failed))

    @property
    def processed(self) -> int:
        return len(self.summarised) + len(self.unchanged)


def judgment_id_for(path: Path) -> str:
    """The judgment id of a file: its name without extension (C12.txt -> C12)."""
    return path.stem


def collect_files(paths: Iterable[str | Path]) -> tuple[list[Path], list[str]]:
    """(supported files in a stable order, unsupported or missing paths)."""
    supported = set(supported_extensions())
    files: list[Path] = []
    skipped: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")):
                if child.suffix.lower() in supported:
                    files.append(child)
                else:
                    skipped.append(str(child))
        elif path.is_file():
            files.append(path)  # an explicit file is attempted whatever its extension; the reader explains
        else:
            skipped.append(str(path))
    return files, skipped


def summarize_files(
    paths: Iterable[str | Path],
    store: Store,
    engine: SummarizerEngine,
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> BatchReport:
    files, skipped = collect_files(paths)
    report = BatchReport(engine=engine.name, files=len(files), skipped_unsupported=skipped)
    for path in skipped:
        if not Path(path).exists():
            report.failed.append(FileFailure(path=path, judgment_id=None, stage="read", reason="missing", message=f"{path}: no such file or directory"))
    seen: dict[str, Path] = {}
    for number, path in enumerate(files, 1):
        if progress:
            progress(number - 1, len(files), str(path))
        failure = _summarize_one(path, seen, store, engine, force, report)
        if failure is not None:
            report.failed.append(failure)
            store.record_failure(source_path=failure.path, engine=engine.name, judgment_id=failure.judgment_id, stage=failure.stage, reason=failure.reason, message=failure.message)
    if progress:
        progress(len(files), len(files), "")
    return report


def _summarize_one(path: Path, seen: dict[str, Path], store: Store, engine: SummarizerEngine, force: bool, report: BatchReport) -> FileFailure | None:
    source = str(path.resolve())
    judgment_id = judgment_id_for(path)

    def fail(stage: str, reason: str, message: str) -> FileFailure:
        return FileFailure(path=source, judgment_id=judgment_id, stage=stage, reason=reason, message=message)

    if judgment_id in seen:
        return fail("read", "duplicate_id", f"id {judgment_id!r} is also the id of {seen[judgment_id]} in this batch; rename one of the files")
    seen[judgment_id] = path
    try:
        text, sha = read_judgment(path)
    except ReadError as exc:
        return fail("read", exc.reason, str(exc))
    existing = store.judgment(judgment_id)
    if existing is not None and existing.source_path != source and existing.sha256 != sha and Path(existing.source_path).exists():
        return fail("read", "duplicate_id", f"id {judgment_id!r} already belongs to {existing.source_path} in the archive; rename the file")
    if not force and _unchanged(store, judgment_id, sha, engine):
        report.unchanged.append(judgment_id)
        return None
    try:
        slots = engine.summarize(JudgmentText(judgment_id=judgment_id, text=text, source_path=source, sha256=sha))
        provenance = Provenance(engine=engine.name, engine_version=engine.version, source_sha256=sha, model=engine.model)
        summary = validate_summary(StructuredSummary.from_slots(judgment_id, slots, provenance))
    except SummarizeError as exc:
        return fail("summarize", exc.reason, str(exc))
    except SummaryValidationError as exc:
        return fail("validate", "invalid_summary", str(exc))
    except Exception as exc:  # an engine bug on one judgment must not stop the batch
        return fail("summarize", "engine_error", f"{type(exc).__name__}: {exc}")
    row = JudgmentRow(id=judgment_id, source_path=source, sha256=sha, n_chars=len(text), text=text)
    try:
        store.save(row, summary)
    except Exception as exc:
        return fail("store", "store_error", f"{type(exc).__name__}: {exc}")
    report.summarised.append(judgment_id)
    return None


def _unchanged(store: Store, judgment_id: str, sha: str, engine: SummarizerEngine) -> bool:
    row = store.summary_row(judgment_id, engine.name)
    return row is not None and row.source_sha256 == sha and row.engine_version == engine.version and row.schema_version == SCHEMA_VERSION
