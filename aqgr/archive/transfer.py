"""Export and import of structured summaries: JSON Lines, or one JSON file per judgment.

    aqgr export --format jsonl --out summaries.jsonl
    aqgr export --format json-dir --out summaries/     # summaries/C1.json, summaries/C2.json, ...
    aqgr import summaries/

A json-dir file is named after the judgment id (characters unsafe in a file name are
%-escaped: an id `sc/2001/C12` becomes `sc%2F2001%2FC12.json`; `judgment_id_of_file` reverses
it) and holds the summary as stored (slots and provenance), like the study's C1.json files.
Every id the store accepts gets a file: an id whose escaped name would pass the file system's
255-byte limit, or would collide with another on a case-insensitive one (C1, c1), is named by
its beginning and a hash of the whole id (`~` and 16 hex digits); the file still holds the id.
JSON Lines are split on newlines alone: U+2028, U+2029 and U+0085 in a summary's text are
written escaped, and read back as they were. Import validates every
document against the JSON Schema (`schemas.validation.validate_summary`, formats such as
date-time checked); an invalid one (bad JSON, a number too long to read, nesting too deep,
a schema violation) is reported with its file, line and problems and never stored, and the
import goes on with the next one.

Import never overwrites silently: a summary for a judgment that already has a different
summary from the same engine is refused (reported, not stored) unless `replace=True`
(`aqgr import --replace`); an identical one changes nothing. Imported summaries are
recorded as imported (`aqgr status` counts them per engine) until this archive summarises
that judgment with that engine itself.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO
from urllib.parse import quote, unquote

from pydantic import BaseModel, Field

from aqgr.archive.store import Store
from aqgr.foundation.errors import ConfigError, SummaryValidationError, WriteError
from aqgr.foundation.inputs import first_invalid, id_problem, many
from aqgr.foundation.targets import check_folder, write_file
from aqgr.schemas.summary import StructuredSummary
from aqgr.schemas.validation import validate_summary

EXPORT_FORMATS = ("jsonl", "json-dir")
IMPORT_SUFFIXES = (".json", ".jsonl", ".ndjson")


class InvalidDocument(BaseModel):
    where: str  # file, or file:line
    problem: str


class ImportReport(BaseModel):
    imported: list[str] = Field(default_factory=list)
    replaced: list[str] = Field(
        default_factory=list,
        description="Imported ids that replaced a stored summary of the same engine (or matched it exactly).",
    )
    invalid: list[InvalidDocument] = Field(default_factory=list)
    refused: list[InvalidDocument] = Field(
        default_factory=list,
        description="Valid summaries not stored: a different summary of that judgment by that engine is stored (import with replace=True / --replace to overwrite).",
    )


NAME_BYTES = 200  # well under the 255 bytes of ext4, APFS, NTFS, leaving room for a temporary name
_HASHED = "~"
# Characters some JSON Lines readers (str.splitlines, JavaScript) take for line ends; written escaped.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def file_name_for(judgment_id: str) -> str:
    """The json-dir file name of a judgment: its id %-escaped (reversed by `judgment_id_of_file`), or,
    when that would be longer than NAME_BYTES, the escaped id's beginning, `~` and a hash of the id."""
    name = quote(judgment_id, safe="-_.,()[] ").replace(_HASHED, "%7E")  # quote() keeps ~, which marks a hashed name
    name = "%2E" + name[1:] if name.startswith(".") else name
    if len(name) + len(".json") > NAME_BYTES:
        return hashed_file_name_for(judgment_id)
    return name + ".json"


def hashed_file_name_for(judgment_id: str) -> str:
    """A name for any id, unique by a hash of the whole id (ASCII: the same on every file system)."""
    digest = hashlib.sha256(judgment_id.encode("utf-8")).hexdigest()[:16]
    head = ""
    for char in judgment_id:  # whole escapes only: a cut %XX would not read back
        piece = quote(char, safe="-_.,()[] ").replace(_HASHED, "%7E")
        if len(head) + len(piece) > 60:
            break
        head += piece
    return ("%2E" + head[1:] if head.startswith(".") else head) + _HASHED + digest + ".json"


def judgment_id_of_file(name: str) -> str | None:
    """The judgment id a json-dir file name stands for, or None for a hashed name (the id is in the file)."""
    stem = name[: -len(".json")] if name.endswith(".json") else name
    return None if _HASHED in stem else unquote(stem)


def _line(document: dict) -> str:
    text = json.dumps(document, ensure_ascii=False)
    for char, escaped in _LINE_BREAKS.items():  # only inside strings: JSON has no such character elsewhere
        text = text.replace(char, escaped)
    return text + "\n"


def export_summaries(
    store: Store,
    out: str | Path | IO[str] | None,
    *,
    format: str = "jsonl",
    engine: str | None = None,
    force: bool = False,
) -> int:
    """Write every summary of `engine` (all engines when None); returns how many were written.
    A path is written only as a regular file (or a folder for json-dir), atomically; a symbolic link,
    FIFO or device there is refused (ConfigError) unless `force` (see aqgr/foundation/targets.py)."""
    if format not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format {format!r}; use one of: {', '.join(EXPORT_FORMATS)}")
    documents = store.iter_summaries(engine)
    if format == "json-dir":
        if out is None or not isinstance(out, (str, Path)):
            raise ConfigError("--format json-dir needs a folder: --out DIR")
        return _write_dir(documents, check_folder(out, force=force))
    if out is None or not isinstance(out, (str, Path)):
        import sys

        stream = out or sys.stdout
        return sum(1 for doc in documents if stream.write(_line(doc)) is not None)
    return write_file(
        out, lambda stream: sum(1 for doc in documents if stream.write(_line(doc)) is not None), force=force
    )


def _write_dir(documents: Iterable[dict], folder: Path) -> int:
    count = 0
    taken: set[str] = set()  # names written, case-folded: C1 and c1 must not share a file on macOS or Windows
    for doc in documents:
        name = file_name_for(doc["judgment_id"])
        if name.casefold() in taken:
            name = hashed_file_name_for(doc["judgment_id"])
        taken.add(name.casefold())
        tmp = folder / f".{name}.tmp"
        try:
            tmp.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
            os.replace(tmp, folder / name)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise WriteError(str(folder / name), exc, written=count) from None
        count += 1
    return count


def _documents(paths: Iterable[str | Path], report: ImportReport) -> Iterator[tuple[str, object]]:
    """(where, parsed JSON) for every document in the files and folders; parse errors go to the report."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(
                sorted(
                    p
                    for p in path.rglob("*")
                    if p.is_file() and p.suffix.lower() in IMPORT_SUFFIXES and not p.name.startswith(".")
                )
            )
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
            for number, line in enumerate(content.split("\n"), 1):  # not splitlines(): U+2028 may be inside a string
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
        value = json.loads(content)
    except json.JSONDecodeError as exc:
        report.invalid.append(InvalidDocument(where=where, problem=f"not JSON: {exc}"))
    except RecursionError:
        report.invalid.append(
            InvalidDocument(
                where=where, problem="not readable: the JSON nests too deeply (a summary nests a few levels)"
            )
        )
    except ValueError as exc:  # e.g. an integer over Python's 4,300-digit limit
        report.invalid.append(InvalidDocument(where=where, problem=f"not readable: {exc}"))
    else:
        yield where, value


def import_summaries(store: Store, paths: Iterable[str | Path], *, replace: bool = False) -> ImportReport:
    """Validate and store every summary in `paths` (.jsonl/.ndjson: one per line; .json: one, or a list).
    One bad document is reported and skipped; a stored summary of the same engine is only overwritten
    with `replace=True`. A database that cannot be written (StoreError) stops the import: every further
    write would fail; what was stored before is kept."""
    paths = many(paths, "import_summaries() paths", "['summaries.jsonl']")
    report = ImportReport()
    for where, document in _documents(paths, report):
        summary = _validated(where, document, report)
        if summary is None:
            continue
        outcome = store.save_imported(summary, source=f"import:{where}", replace=replace)
        if outcome == "refused":
            report.refused.append(
                InvalidDocument(
                    where=where,
                    problem=f"a different summary of {summary.judgment_id!r} by {summary.provenance.engine} is stored: "
                    "kept; import with --replace (replace=True) to overwrite it",
                )
            )
            continue
        if outcome in ("replaced", "same"):
            report.replaced.append(summary.judgment_id)
        report.imported.append(summary.judgment_id)
    return report


def _validated(where: str, document: object, report: ImportReport) -> StructuredSummary | None:
    """The summary, or None with the problem recorded (whatever the document holds)."""
    if not isinstance(document, dict):
        report.invalid.append(
            InvalidDocument(where=where, problem=f"expected a JSON object (a summary), found {type(document).__name__}")
        )
        return None
    found = first_invalid(document)
    if found is not None:
        report.invalid.append(
            InvalidDocument(
                where=where,
                problem=f"a string holds an invalid character (lone surrogate U+{ord(found[1]):04X}): not valid Unicode text",
            )
        )
        return None
    try:
        summary = validate_summary(document)
        problem = id_problem(summary.judgment_id)  # the id rule of every door: the API must be able to open it
        if problem is None:
            return summary
    except SummaryValidationError as exc:
        problem = str(exc)
    except RecursionError:
        problem = "the document nests too deeply to validate (a summary nests a few levels)"
    except ValueError as exc:  # pydantic's ValidationError: what the JSON Schema cannot express
        problem = (
            "summary rejected: "
            + "; ".join(f"{'/'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in exc.errors())
            if hasattr(exc, "errors")
            else str(exc)
        )
    report.invalid.append(InvalidDocument(where=where, problem=problem))
    return None
