"""Export and import of structured summaries: JSON Lines, or one JSON file per judgment.

    aqgr export --format jsonl --out summaries.jsonl
    aqgr export --format json-dir --out summaries/     # summaries/C1.json, summaries/C2.json, ...
    aqgr import summaries/

A json-dir file is named after the judgment id (characters unsafe in a file name are
%-escaped: an id `sc/2001/C12` becomes `sc%2F2001%2FC12.json`) and holds the summary as
stored (slots and provenance), like the study's C1.json files. Import validates every
document against the JSON Schema (`schemas.validation.validate_summary`); an invalid one
is reported with its file, line and problems and never stored.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import IO, Iterable, Iterator
from urllib.parse import quote

from pydantic import BaseModel, Field

from aqgr.errors import ConfigError, SummaryValidationError
from aqgr.store import Store
from schemas.validation import validate_summary

EXPORT_FORMATS = ("jsonl", "json-dir")
IMPORT_SUFFIXES = (".json", ".jsonl", ".ndjson")


class InvalidDocument(BaseModel):
    where: str  # file, or file:line
    problem: str


class ImportReport(BaseModel):
    imported: list[str] = Field(default_factory=list)
    replaced: list[str] = Field(default_factory=list, description="Imported ids that replaced a stored summary of the same engine.")
    invalid: list[InvalidDocument] = Field(default_factory=list)


def file_name_for(judgment_id: str) -> str:
    name = quote(judgment_id, safe="-_.,()[] ")
    return ("%2E" + name[1:] if name.startswith(".") else name) + ".json"


def export_summaries(store: Store, out: str | Path | IO[str] | None, *, format: str = "jsonl", engine: str | None = None) -> int:
    """Write every summary of `engine` (all engines when None); returns how many were written."""
    if format not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format {format!r}; use one of: {', '.join(EXPORT_FORMATS)}")
    documents = store.iter_summaries(engine)
    if format == "json-dir":
        if out is None or not isinstance(out, (str, Path)):
            raise ConfigError("--format json-dir needs a folder: --out DIR")
        return _write_dir(documents, Path(out))
    if out is None or not isinstance(out, (str, Path)):
        import sys

        stream = out or sys.stdout
        return sum(1 for doc in documents if stream.write(json.dumps(doc, ensure_ascii=False) + "\n") is not None)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=target.parent, prefix=f".{target.name}.", delete=False) as tmp:
        count = sum(1 for doc in documents if tmp.write(json.dumps(doc, ensure_ascii=False) + "\n") is not None)
    os.replace(tmp.name, target)  # atomic: a reader never sees half a file
    return count


def _write_dir(documents: Iterable[dict], folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    for doc in documents:
        name = file_name_for(doc["judgment_id"])
        tmp = folder / f".{name}.tmp"
        tmp.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, folder / name)
        count += 1
    return count


def _documents(paths: Iterable[str | Path], report: ImportReport) -> Iterator[tuple[str, object]]:
    """(where, parsed JSON) for every document in the files and folders; parse errors go to the report."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in IMPORT_SUFFIXES and not p.name.startswith(".")))
        elif path.is_file():
            files.append(path)
        else:
            report.invalid.append(InvalidDocument(where=str(path), problem="no such file or directory"))
    for path in files:
        try:
            content = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            report.invalid.append(InvalidDocument(where=str(path), problem=f"cannot read: {exc}"))
            continue
        if path.suffix.lower() in (".jsonl", ".ndjson"):
            for number, line in enumerate(content.splitlines(), 1):
                if line.strip():
                    yield from _parse(f"{path}:{number}", line, report)
        else:
            for where, value in _parse(str(path), content, report):
                if isinstance(value, list):
                    yield from ((f"{where}[{i}]", item) for i, item in enumerate(value))
                else:
                    yield where, value


def _parse(where: str, content: str, report: ImportReport) -> Iterator[tuple[str, object]]:
    try:
        yield where, json.loads(content)
    except json.JSONDecodeError as exc:
        report.invalid.append(InvalidDocument(where=where, problem=f"not JSON: {exc}"))


def import_summaries(store: Store, paths: Iterable[str | Path]) -> ImportReport:
    """Validate and store every summary in `paths` (.jsonl/.ndjson: one per line; .json: one, or a list)."""
    report = ImportReport()
    for where, document in _documents(paths, report):
        if not isinstance(document, dict):
            report.invalid.append(InvalidDocument(where=where, problem=f"expected a JSON object (a summary), found {type(document).__name__}"))
            continue
        try:
            summary = validate_summary(document)
        except SummaryValidationError as exc:
            report.invalid.append(InvalidDocument(where=where, problem=str(exc)))
            continue
        if store.save_imported(summary, source=f"import:{where}"):
            report.replaced.append(summary.judgment_id)
        report.imported.append(summary.judgment_id)
    return report
