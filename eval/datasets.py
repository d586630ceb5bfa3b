"""A format-driven loader for AILA-2019-shaped evaluation data.

Layout (FIRE 2019 AILA release; any dataset of this shape works):

    <root>/Object_casedocs/C<n>.txt     judgments (plain text)        kind="cases"
    <root>/Object_statutes/S<n>.txt     line 1 "Title: ...", line 2 "Desc: ..."   kind="statutes"
    <root>/Query_doc.txt or queries.txt lines "QID||facts"
    <root>/<qrels>                      TREC qrels "qid Q0 doc rel"
    <root>/citing.tsv                   optional "QID<TAB>doc": never rank that doc for that query

A dataset without documents (the citebench) refers to another dataset's documents: pass
`docs=` (a dataset root or the documents folder itself); by default a sibling `aila2019`
folder is used. Documents are listed eagerly (cheap) and read lazily. Problems that the
real release has (qrels naming unknown documents or queries) are collected as warnings;
anything unreadable raises `DatasetError` naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from aqgr.foundation.errors import DatasetError

Kind = Literal["cases", "statutes"]

# Folder of documents per kind (the AILA release's names).
DOC_FOLDERS: dict[str, str] = {"cases": "Object_casedocs", "statutes": "Object_statutes"}
QUERY_FILES: tuple[str, ...] = ("Query_doc.txt", "queries.txt")
# Qrels looked for when none is given: the AILA dev files, then a generic name.
QRELS_FILES: dict[str, tuple[str, ...]] = {
    "cases": ("relevance_judgments_priorcases.dev.txt", "qrels.txt"),
    "statutes": ("relevance_judgments_statutes.dev.txt", "qrels_statutes.txt", "qrels.txt"),
}
EXCLUDE_FILE = "citing.tsv"
# Where a documents-less dataset finds its documents by default: a sibling folder.
SIBLING_DOCS = "aila2019"

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


@dataclass
class Dataset:
    """Queries, relevance judgments, exclusions and (lazily read) documents of one dataset."""

    root: Path
    kind: Kind
    docs_dir: Path
    doc_ids: tuple[str, ...]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    qrels_path: Path | None
    exclude: dict[str, frozenset[str]] = field(default_factory=dict)
    exclude_path: Path | None = None
    warnings: list[str] = field(default_factory=list)

    def text(self, doc_id: str) -> str:
        """The text of one document (for statutes: title, a newline, description)."""
        path = self.docs_dir / f"{doc_id}.txt"
        try:
            raw = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise DatasetError(f"{path}: cannot read document {doc_id}: {exc}") from exc
        return _statute_text(path, raw) if self.kind == "statutes" else raw

    def documents(self) -> Iterator[tuple[str, str]]:
        """(doc_id, text) for every document, read one at a time."""
        for doc_id in self.doc_ids:
            yield doc_id, self.text(doc_id)

    def judged_queries(self) -> list[str]:
        """Query ids that have relevance judgments, in query-file order."""
        return [qid for qid in self.queries if qid in self.qrels]

    def describe(self) -> dict:
        return {
            "root": str(self.root),
            "kind": self.kind,
            "documents": str(self.docs_dir),
            "n_documents": len(self.doc_ids),
            "n_queries": len(self.queries),
            "qrels": str(self.qrels_path) if self.qrels_path else None,
            "n_judged_queries": len(self.judged_queries()),
            "exclusions": str(self.exclude_path) if self.exclude_path else None,
            "warnings": list(self.warnings),
        }


def load_dataset(
    path: str | Path,
    qrels: str | Path | None = None,
    kind: Kind = "cases",
    *,
    docs: str | Path | None = None,
) -> Dataset:
    """Load an AILA-shaped dataset rooted at `path`.

    `qrels`: a qrels file (default: the first of QRELS_FILES[kind] found in `path`; none
    found means no judgments, and a warning). `docs`: a dataset root holding the
    documents folder, or that folder itself (default: `path`, else a sibling `aila2019`).
    """
    if kind not in DOC_FOLDERS:
        raise DatasetError(f"unknown dataset kind {kind!r}: use one of {', '.join(DOC_FOLDERS)}")
    root = Path(path).expanduser()
    if not root.is_dir():
        raise DatasetError(
            f"dataset folder {root} does not exist: point it at an AILA-format folder holding "
            f"{' or '.join(QUERY_FILES)}, TREC qrels and {DOC_FOLDERS[kind]}/ (or give the documents with --docs)"
        )
    docs_dir = _find_docs_dir(root, kind, docs)
    doc_ids = _list_documents(docs_dir, kind)
    queries = read_queries(_find_query_file(root))
    warnings: list[str] = []
    qrels_path = _find_qrels(root, kind, qrels)
    judgments: dict[str, dict[str, int]] = {}
    if qrels_path is None:
        warnings.append(f"no qrels in {root} (looked for {', '.join(QRELS_FILES[kind])}): nothing can be scored")
    else:
        judgments = read_qrels(qrels_path)
        warnings += _check_references(qrels_path, judgments, queries, set(doc_ids))
    exclude_path = root / EXCLUDE_FILE
    exclude: dict[str, frozenset[str]] = {}
    if exclude_path.is_file():
        # statutes: the exclusions name judgments (the citing one), kept out of the case ranking
        # that supplies the questions and precedents (eval/systems/pipeline.py)
        exclude, more = read_exclusions(exclude_path, queries, set(doc_ids) if kind == "cases" else None)
        warnings += more
    else:
        exclude_path = None
    return Dataset(
        root=root,
        kind=kind,
        docs_dir=docs_dir,
        doc_ids=doc_ids,
        queries=queries,
        qrels=judgments,
        qrels_path=qrels_path,
        exclude=exclude,
        exclude_path=exclude_path,
        warnings=warnings,
    )


# ---------------------------------------------------------------- file readers


def read_queries(path: Path) -> dict[str, str]:
    """`QID||text` per line (blank lines skipped); file order kept."""
    queries: dict[str, str] = {}
    for number, line in _lines(path):
        qid, sep, text = line.partition("||")
        qid = qid.strip()
        if not sep or not qid or not text.strip():
            raise DatasetError(f"{path}:{number}: expected 'QID||query text', got {_clip(line)!r}")
        if qid in queries:
            raise DatasetError(f"{path}:{number}: query {qid} appears twice")
        queries[qid] = text.strip()
    if not queries:
        raise DatasetError(f"{path}: no queries (expected lines 'QID||query text')")
    return queries


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """TREC qrels `qid iter doc rel` (the iteration column is ignored, as trec_eval does)."""
    qrels: dict[str, dict[str, int]] = {}
    for number, line in _lines(path):
        parts = line.split()
        if len(parts) != 4:
            raise DatasetError(f"{path}:{number}: expected TREC qrels 'qid Q0 doc relevance', got {_clip(line)!r}")
        qid, _, doc, rel = parts
        try:
            qrels.setdefault(qid, {})[doc] = int(rel)
        except ValueError:
            raise DatasetError(f"{path}:{number}: relevance must be an integer, got {rel!r}") from None
    return qrels


def read_exclusions(
    path: Path, queries: dict[str, str], doc_ids: set[str] | None
) -> tuple[dict[str, frozenset[str]], list[str]]:
    """`QID<TAB>doc` per line; a first line naming no known query is a header; a document
    not in `doc_ids` is a warning (None: not checked)."""
    found: dict[str, set[str]] = {}
    warnings: list[str] = []
    for number, line in _lines(path):
        parts = line.split("\t")
        if len(parts) != 2 or not all(p.strip() for p in parts):
            raise DatasetError(f"{path}:{number}: expected 'QID<TAB>document id', got {_clip(line)!r}")
        qid, doc = parts[0].strip(), parts[1].strip()
        if qid not in queries:
            if number == 1:
                continue  # header ("query_id<TAB>citing_judgment")
            warnings.append(f"{path}:{number}: exclusion for unknown query {qid}")
        elif doc_ids is not None and doc not in doc_ids:
            warnings.append(f"{path}:{number}: exclusion names unknown document {doc}")
        found.setdefault(qid, set()).add(doc)
    return {qid: frozenset(docs) for qid, docs in found.items()}, warnings


def _statute_text(path: Path, raw: str) -> str:
    lines = raw.splitlines()
    if len(lines) < 2 or not lines[0].startswith("Title:") or not lines[1].startswith("Desc:"):
        line = 1 if not lines or not lines[0].startswith("Title:") else 2
        raise DatasetError(f"{path}:{line}: a statute file starts with 'Title: ...' then 'Desc: ...'")
    title = lines[0][len("Title:") :].strip()
    desc = "\n".join([lines[1][len("Desc:") :].strip(), *lines[2:]]).strip()
    return f"{title}\n{desc}"


# ---------------------------------------------------------------- locating files


def find_documents(root: str | Path, kind: Kind, docs: str | Path | None = None) -> Path:
    """The documents folder of `kind` for a dataset at `root` (as `load_dataset` finds it)."""
    return _find_docs_dir(Path(root).expanduser(), kind, docs)


def list_documents(docs_dir: Path, kind: Kind) -> tuple[str, ...]:
    """The document ids in a documents folder (file stems), in a readable order."""
    return _list_documents(Path(docs_dir), kind)


def _find_docs_dir(root: Path, kind: str, docs: str | Path | None) -> Path:
    folder = DOC_FOLDERS[kind]
    if docs is not None:
        given = Path(docs).expanduser()
        for candidate in (given / folder, given):
            if candidate.is_dir() and any(candidate.glob("*.txt")):
                return candidate
        raise DatasetError(
            f"no documents at {given}: expected {folder}/ with one .txt per document there, or such files directly"
        )
    for candidate in (root / folder, root.parent / SIBLING_DOCS / folder):
        if candidate.is_dir():
            return candidate
    raise DatasetError(
        f"no documents for {root}: expected {root / folder} (one .txt per document) "
        f"or {root.parent / SIBLING_DOCS / folder}; give the folder with --docs"
    )


def _list_documents(docs_dir: Path, kind: str) -> tuple[str, ...]:
    ids = [p.stem for p in docs_dir.glob("*.txt") if p.is_file()]
    if not ids:
        raise DatasetError(f"{docs_dir} holds no .txt documents (expected one file per {kind[:-1]}, e.g. C1.txt)")
    # A natural-number order for readability only; no ranking ever depends on it.
    return tuple(sorted(ids, key=_natural_key))


def _find_query_file(root: Path) -> Path:
    for name in QUERY_FILES:
        if (root / name).is_file():
            return root / name
    raise DatasetError(f"no queries in {root}: expected {' or '.join(QUERY_FILES)} with lines 'QID||query text'")


def _find_qrels(root: Path, kind: str, qrels: str | Path | None) -> Path | None:
    if qrels is not None:
        given = Path(qrels).expanduser()
        if not given.is_absolute() and not given.exists() and (root / given).exists():
            given = root / given
        if not given.is_file():
            raise DatasetError(f"qrels file {given} does not exist: expected TREC qrels lines 'qid Q0 doc relevance'")
        return given
    for name in QRELS_FILES[kind]:
        if (root / name).is_file():
            return root / name
    return None


def _check_references(path: Path, qrels: dict[str, dict[str, int]], queries: dict, doc_ids: set[str]) -> list[str]:
    warnings = []
    unknown_q = sorted(set(qrels) - set(queries), key=_natural_key)
    if unknown_q:
        warnings.append(f"{path}: {len(unknown_q)} judged quer(y/ies) not in the query file: {_few(unknown_q)}")
    unknown_d = sorted({d for judged in qrels.values() for d in judged} - doc_ids, key=_natural_key)
    if unknown_d:
        warnings.append(f"{path}: {len(unknown_d)} judged document(s) not in the documents folder: {_few(unknown_d)}")
    return warnings


# ---------------------------------------------------------------- query subsets

QUERY_FORMS = (
    "'all'; ids 'AILA_Q1,AILA_Q2' (a prefix such as 'AILA_' may be left out: 'Q1,Q2'); "
    "ranges 'Q1-Q10' or 'Q1..Q10'; mixed 'Q1..Q10,Q31'"
)


def select_queries(dataset: Dataset, spec: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """Resolve a query subset to query ids (spec order, duplicates dropped).

    `None` or 'all' selects every query in file order; a list is taken item by item.
    """
    if spec is None:
        return list(dataset.queries)
    items = [spec] if isinstance(spec, str) else list(spec)
    parts = [p.strip() for item in items for p in str(item).split(",") if p.strip()]
    if not parts:
        raise DatasetError(f"empty query selection; accepted forms: {QUERY_FORMS}")
    chosen: list[str] = []
    for part in parts:
        for qid in _resolve(dataset, part):
            if qid not in chosen:
                chosen.append(qid)
    return chosen


def _resolve(dataset: Dataset, part: str) -> list[str]:
    if part.lower() == "all":
        return list(dataset.queries)
    single = _match_id(dataset, part)
    if single is not None:
        return [single]
    for sep in ("..", "-"):
        if sep in part:
            lo, _, hi = part.partition(sep)
            lo_m, hi_m = _NUMBERED.match(lo.strip()), _NUMBERED.match(hi.strip())
            if lo_m and hi_m:
                a, b = int(lo_m.group(2)), int(hi_m.group(2))
                found = [
                    qid
                    for qid in dataset.queries
                    if (m := _NUMBERED.match(qid))
                    and a <= int(m.group(2)) <= b
                    and _same_prefix(m.group(1), lo_m.group(1))
                    and _same_prefix(m.group(1), hi_m.group(1))
                ]
                if found:
                    return sorted(found, key=_natural_key)
            raise DatasetError(f"query range {part!r} matches no query; accepted forms: {QUERY_FORMS}")
    raise DatasetError(f"unknown query {part!r} (e.g. {_few(list(dataset.queries), 3)}); accepted forms: {QUERY_FORMS}")


def _match_id(dataset: Dataset, part: str) -> str | None:
    if part in dataset.queries:
        return part
    hits = [qid for qid in dataset.queries if qid.endswith("_" + part)]
    return hits[0] if len(hits) == 1 else None


def _same_prefix(full: str, given: str) -> bool:
    return full == given or full.endswith("_" + given)


# ---------------------------------------------------------------- helpers


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from exc
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, line.rstrip("\r\n")


def _natural_key(name: str) -> tuple:
    m = _NUMBERED.match(name)
    return (m.group(1), int(m.group(2)), name) if m else (name, -1, name)


def _few(items: list[str], n: int = 10) -> str:
    return ", ".join(items[:n]) + (f", ... ({len(items) - n} more)" if len(items) > n else "")


def _clip(line: str, n: int = 80) -> str:
    return line if len(line) <= n else line[:n] + "..."
