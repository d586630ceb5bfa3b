"""`aqgr check` (`Archive.check`): is every part a search needs sound, and if not, what to do.

Parts, each checked without writing anything (a read-only home is checked as it is):

* the home: whether it can be written (a read-only one is reported as such: readable, and
  searches and exports work; summarize, import and index need it writable);
* the database: the file exists, SQLite's integrity check, every table and column aqgr uses,
  and every stored summary parsed, validated and compared with the checksum written with it (a
  flipped byte is found, with the judgment's id, even one that still parses and validates; a
  summary is validated against the JSON Schema before it is stored, so one that matches its
  checksum gets the model's check, one stored before checksums the JSON Schema's in full, and
  those are counted, a warning);
* the index: the manifest loads, every checksum of its immutable files, its documents file
  (`docs.sqlite`) against the archive: each indexed id once, its fingerprint the one of its own
  stored summary (documents moved to other judgments' ids are found), the manifest's own id list
  where it has one, and a sample of documents found by the lexical engine under their own number;
  an index that is sound but older than the summaries is reported stale (with counts);
* the caches (`cache/embeddings.sqlite`, the model reply cache, `citations.sqlite`): readable;
  a damaged cache holds nothing that cannot be made again: `aqgr index` replaces it;
* leftovers of a killed `aqgr index` (`.index.tmp-*`, `.index.rebuild-*`, `.index.old-*`, and a
  citation store being made anew, `.citations.sqlite.rebuild`).

The report: {"ok", "home", "database", "index", "caches", "leftovers", "damaged", "warnings"};
`damaged` and `warnings` list {"part", "where", "problem", "recovery"}: `ok` is false when
`damaged` is not empty. `aqgr index` repairs what it can of what is reported (aqgr/archive/indexer.py).
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aqgr.pipeline.config import Settings
    from aqgr.retrieval.dense.cache import EmbeddingCache

RESTORE = (
    "restore a backup of it, or move it aside and `aqgr import` your last `aqgr export` (or `aqgr summarize` "
    "the judgments again), then `aqgr index`"
)
RESUMMARISE = (
    "`aqgr summarize --force` their files, or `aqgr import --replace` them from an export; until then "
    "searches and exports skip them"
)
REBUILD = "rebuild it with `aqgr index --rebuild`"
UNAVAILABLE = (
    "free space on the disk, or make the files readable (and the home writable), then check again: no rebuild is needed"
)
ADD_CHECKSUMS = "`aqgr index` gives them one (as does storing them again)"
REMAKE_CACHE = "`aqgr index` replaces it (a cache holds nothing that cannot be made again)"
SAMPLE = 64  # documents looked up by the lexical engine under their own number


def is_corrupt(exc: BaseException) -> bool:
    """Whether an sqlite3 error says the file itself is damaged (not locked, full or read-only)."""
    from aqgr.foundation.sqlite_files import DAMAGED, reason_of

    return isinstance(exc, sqlite3.DatabaseError) and reason_of(exc) == DAMAGED


def sqlite_state(path: Path, table: str | None = None) -> tuple[str, list[str]]:
    """An SQLite file opened read-only (aqgr/foundation/sqlite_files.py `read_uri`: a read-only home
    included) and checked: ("ok", []); ("damaged", what SQLite's quick check found, or `table`
    missing); or, when it cannot be read for a reason outside it, (that reason: 'disk_full',
    'read_only', 'busy', 'unreadable', [the error])."""
    from aqgr.foundation.sqlite_files import DAMAGED, read_uri, reason_of

    db = None
    try:
        db = sqlite3.connect(read_uri(path), uri=True)
        found = [r[0] for r in db.execute("PRAGMA quick_check(20)")]
        if found != ["ok"]:
            return DAMAGED, found
        if (
            table is not None
            and db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is None
        ):
            return DAMAGED, [f"it has no {table} table"]
        return "ok", []
    except sqlite3.Error as exc:
        reason = reason_of(exc, path)
        return reason, [str(exc) if reason == DAMAGED else f"cannot be read ({reason}: {exc})"]
    finally:
        if db is not None:
            db.close()


def sqlite_problems(path: Path, table: str | None = None) -> list[str]:
    """What is wrong with the SQLite file itself ([] when sound, and when it cannot be read for a
    reason outside it: a full disk or a read-only folder is no reason to replace it)."""
    state, problems = sqlite_state(path, table)
    return problems if state == "damaged" else []


def open_embedding_cache(path: Path) -> "EmbeddingCache":
    """The embedding cache at `path`; a damaged one (not a database, pages garbled) is removed and
    made anew, so that `aqgr index` recovers instead of failing. A cache that cannot be written
    (read-only, full) still raises."""
    from aqgr.retrieval.dense.cache import EmbeddingCache

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        cache = EmbeddingCache(path)
        try:
            cache._db.execute("SELECT fingerprint, text_sha256, dim, vector FROM vectors LIMIT 1").fetchall()
        except sqlite3.Error:
            cache.close()
            raise
        return cache
    except sqlite3.DatabaseError as exc:
        if not (is_corrupt(exc) or (path.exists() and sqlite_problems(path, "vectors"))):
            raise
    remove_sqlite(path)
    return EmbeddingCache(path)


def remove_sqlite(path: Path) -> None:
    from aqgr.foundation.sqlite_files import remove_file

    remove_file(path)


def writable(folder: Path) -> bool:
    """Whether a file can be created in `folder` (tried: permissions alone do not say so for root
    or a read-only mount)."""
    if not folder.is_dir():
        return False
    try:
        fd, name = tempfile.mkstemp(prefix=".aqgr-check-", dir=folder)
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT):
            return False
        raise
    os.close(fd)
    os.unlink(name)
    return True


class _Report:
    def __init__(self):
        self.damaged: list[dict] = []
        self.warnings: list[dict] = []

    def damage(self, part: str, where, problem: str, recovery: str) -> None:
        self.damaged.append({"part": part, "where": str(where), "problem": problem, "recovery": recovery})

    def warn(self, part: str, where, problem: str, recovery: str) -> None:
        self.warnings.append({"part": part, "where": str(where), "problem": problem, "recovery": recovery})


def check_archive(settings: "Settings") -> dict:
    """The report described in the module, for the archive of `settings`."""
    report = _Report()
    home = settings.home
    can_write = writable(home)
    home_info = {"where": str(home), "exists": home.is_dir(), "writable": can_write}
    database, store = _check_database(settings, report)
    engine = settings.summarizer
    index = _check_index(settings, store, engine, report)
    if home.is_dir() and not can_write:
        # what works is what was just tried: the database read, the index opened (tantivy, the default
        # lexical engine, takes a lock file to open an index, which a read-only folder refuses)
        reads = "exports, `aqgr status`, `show`, `citations` and" if store is not None else "only"
        searches = (
            "searches work" if index["state"] != "unavailable" else "searches do not (the index cannot be opened)"
        )
        report.warn(
            "home",
            home,
            f"the home is read-only: {reads} `aqgr check` work, {searches}; summarize, import and index do not",
            "make it writable (or copy the home to a writable place and use --home) before searching or changing the archive",
        )
    caches = _check_caches(settings, report)
    found = _check_leftovers(settings, report)
    if store is not None:
        store.close()
    return {
        "ok": not report.damaged,
        "home": home_info,
        "database": database,
        "index": index,
        "caches": caches,
        "leftovers": found,
        "damaged": report.damaged,
        "warnings": report.warnings,
    }


# -- the database --------------------------------------------------------------------------------
def _check_database(settings: "Settings", report: _Report):
    from sqlalchemy import inspect
    from sqlmodel import SQLModel

    from aqgr.archive.store import Store, classify, redact_url
    from aqgr.foundation.errors import DatabaseDamagedError, StoreError

    info: dict = {
        "where": redact_url(settings.db_url),
        "ok": True,
        "problems": [],
        "missing_tables": [],
        "damaged_summaries": [],
    }
    try:
        store = Store(settings.db_url, create=False)
    except StoreError as exc:
        info.update(ok=False, problems=[str(exc)])
        report.damage(
            "database", info["where"], str(exc), "check --database-url and that the database server is running"
        )
        return info, None
    info["where"] = store.where
    if store.dialect == "sqlite":
        path = Path(store.where)
        if not path.is_file():
            problem = f"there is no database file at {path}"
            info.update(ok=False, problems=[problem])
            report.damage(
                "database",
                path,
                problem,
                "restore it from a backup, or `aqgr import` your last `aqgr export` "
                "(a new archive starts with `aqgr summarize`), then `aqgr index`",
            )
            store.close()
            return info, None
    try:
        problems = store.integrity()
        if not problems:
            inspector = inspect(store.engine)
            have = set(inspector.get_table_names())
            for table in SQLModel.metadata.sorted_tables:
                if table.name not in have:
                    info["missing_tables"].append(table.name)
                    continue
                columns = {c["name"] for c in inspector.get_columns(table.name)}
                lacking = [
                    c.name for c in table.columns if c.name not in columns and not c.nullable
                ]  # a nullable one is added on the next write
                if lacking:
                    problems.append(f"table {table.name} lacks the column(s) {', '.join(lacking)}")
            if info["missing_tables"]:
                problems.append(
                    f"the database has no {', '.join(info['missing_tables'])} table(s)"
                    + (" (the file is empty)" if len(have) == 0 else "")
                )
    except DatabaseDamagedError as exc:
        problems = [exc.detail]
    except StoreError as exc:
        problems = [str(exc)]
    except Exception as exc:  # noqa: BLE001 - a driver error: reported, never a traceback
        problems = [str(classify(exc))]
    if problems:
        info.update(ok=False, problems=problems)
        report.damage("database", info["where"], "; ".join(problems), RESTORE)
        return info, None
    try:
        damaged = store.check_summaries()
    except (StoreError, Exception) as exc:  # noqa: BLE001
        info.update(ok=False, problems=[f"the summaries cannot be read ({exc})"])
        report.damage("database", info["where"], info["problems"][0], RESTORE)
        return info, None
    if damaged:
        info["ok"] = False
        info["damaged_summaries"] = [{"judgment_id": j, "engine": e, "problem": p} for j, e, p in damaged]
        info["problems"] = [f"the stored summary of {j!r} ({e}) is damaged: {p}" for j, e, p in damaged[:20]]
        shown = ", ".join(repr(j) for j, _, _ in damaged[:10]) + (
            f" and {len(damaged) - 10} more" if len(damaged) > 10 else ""
        )
        report.damage("summaries", info["where"], f"{len(damaged)} stored summary(ies) damaged: {shown}", RESUMMARISE)
    info["without_checksum"] = unchecked = store.without_checksum()
    if unchecked:
        report.warn(
            "summaries",
            info["where"],
            f"{unchecked} stored summary(ies) have no checksum yet (stored before checksums): "
            "a changed byte in them that still parses is not found",
            ADD_CHECKSUMS,
        )
    return info, store


# -- the index -----------------------------------------------------------------------------------
def _check_index(settings: "Settings", store, engine: str, report: _Report) -> dict:
    from aqgr.foundation.errors import AqgrError, IndexMismatchError, IndexUnavailableError, NoIndexError
    from aqgr.retrieval.backends import load_index

    where = settings.index_dir
    index = {"where": str(where), "ok": True, "state": "ok", "detail": None}
    if where.is_dir() and not (where / "manifest.json").exists() and any(where.iterdir()):
        problem = "the index folder has no manifest.json (deleted, or lost): its files cannot be read without it"
        index.update(ok=False, state="damaged_or_outdated", detail=f"{problem}: rebuild it with `aqgr index`")
        report.damage("index", where, problem, "`aqgr index` builds it again in its folder")
        return index
    try:
        loaded = load_index(where)
    except NoIndexError as exc:
        index.update(state="none", detail=str(exc))
        return index
    except IndexMismatchError as exc:
        index.update(ok=False, state="damaged_or_outdated", detail=str(exc))
        report.damage("index", where, str(exc), REBUILD)
        return index
    except IndexUnavailableError as exc:  # a full disk, a read-only folder, permissions: not damage
        index.update(ok=False, state="unavailable", detail=str(exc))
        report.warn("index", where, str(exc), "it opens again once that is done: no rebuild is needed")
        return index
    except (AqgrError, OSError, ValueError) as exc:
        index.update(ok=False, state="unreadable", detail=f"{exc}: rebuild it with `aqgr index`")
        report.damage("index", where, str(exc), REBUILD)
        return index
    try:
        index["detail"] = f"{len(loaded)} judgments indexed"
        deep = getattr(loaded, "check_files", None)  # every checksum, the registry's own check
        problems = list(deep()) if deep is not None else []
        stale = None
        if not problems and store is not None:
            found, stale = _check_documents(loaded, store, loaded.manifest.get("summarizer") or engine)
            problems += found
        if problems:
            index.update(
                ok=False,
                state="damaged_or_outdated",
                detail=f"{'; '.join(problems)}: rebuild it with `aqgr index --rebuild`",
            )
            report.damage("index", where, "; ".join(problems), REBUILD)
        elif stale is not None and any(stale.values()):
            index.update(state="stale", stale=stale)
            counts = ", ".join(f"{n} {what}" for what, n in stale.items() if n)
            index["detail"] += f"; the archive changed since: {counts}"
            report.warn(
                "index",
                where,
                f"the index is older than the summaries ({counts} judgment(s)): searches do not see those changes",
                "`aqgr index` brings it up to date (only what changed)",
            )
    finally:
        getattr(loaded, "close", lambda: None)()
    return index


def _check_documents(index, store, engine: str) -> tuple[list[str], dict[str, int]]:
    """The embedded index's documents against the archive: (problems, stale counts)."""
    registry = getattr(index, "_registry", None)
    if registry is None:  # another backend: only its own checks
        return [], {}
    generation = int(index.manifest["generation"])
    wanted = store.summary_fingerprints(engine)
    owner = {fp: judgment_id for judgment_id, fp in wanted.items()}
    problems: list[str] = []
    seen: dict[str, int] = {}
    moved: list[str] = []
    changed = 0
    order: list[str] = []
    for n, judgment_id, fingerprint, _texts in registry.live_rows(generation):
        order.append(judgment_id)
        if judgment_id in seen:
            problems.append(f"judgment {judgment_id!r} is indexed twice (documents {seen[judgment_id]} and {n})")
            continue
        seen[judgment_id] = n
        if judgment_id in wanted and wanted[judgment_id] != fingerprint:
            if owner.get(fingerprint) not in (None, judgment_id):
                moved.append(f"{judgment_id!r} holds the document of {owner[fingerprint]!r}")
            else:
                changed += 1
    if moved:
        problems.append(
            f"{len(moved)} indexed document(s) are under another judgment's id ({'; '.join(moved[:5])}): searches "
            "would return the wrong judgments"
        )
    listed = index.manifest.get("doc_ids")
    if isinstance(listed, list) and listed != order:
        problems.append("the manifest's doc_ids are not the documents file's ids in their order")
    if list(index.doc_ids) != order:
        problems.append("the loaded ids are not the documents file's ids in their order")
    if not problems:
        problems += _sample_lexical(index, registry, generation)
    stale = {
        "new": sum(1 for d in wanted if d not in seen),
        "changed": changed,
        "removed": sum(1 for d in seen if d not in wanted),
    }
    return problems, stale


def _sample_lexical(index, registry, generation: int) -> list[str]:
    """A sample of documents (by a hash of the id, never file order) looked up in the summary
    lexical engine by their rarest term, restricted to their own number: a part whose numbers
    name other documents finds nothing."""
    from aqgr.retrieval.types import id_hash

    if "bm25" not in index.retrievers:
        return []
    rows = sorted(registry.live_rows(generation), key=lambda row: id_hash(row[1]))[:SAMPLE]
    idf = index.idf()
    lost = []
    for _n, judgment_id, _fp, texts in rows:
        terms = [t for t in index.tokenizer(" ".join(json.loads(texts).values())) if idf.get(t) is not None]
        if not terms:
            continue
        rarest = max(dict.fromkeys(terms), key=lambda t: (idf.get(t), t))
        found = index.retrieve(rarest, 1, retrievers=["bm25"], restrict={judgment_id}).get("bm25", [])
        if not found:
            lost.append(judgment_id)
    if lost:
        return [
            f"the summary lexical index does not find {len(lost)} of {len(rows)} sampled documents under their own number "
            f"(e.g. {lost[0]!r})"
        ]
    return []


# -- caches and leftovers ------------------------------------------------------------------------
def _check_caches(settings: "Settings", report: _Report) -> list[dict]:
    found = []
    for name, path, table in (
        ("embeddings", settings.cache_dir / "embeddings.sqlite", "vectors"),
        ("model replies", getattr(settings, "llm_cache_path", None), None),
        ("citations", settings.home / "citations.sqlite", None),
    ):
        if path is None or not Path(path).exists():
            continue
        state, problems = sqlite_state(Path(path), table)
        entry = {"name": name, "where": str(path), "ok": not problems, "problems": problems}
        found.append(entry)
        if state == "damaged":
            recovery = REMAKE_CACHE if name != "citations" else "`aqgr index` finds the citations again"
            report.damage("cache", path, f"the {name} cache is damaged: {'; '.join(problems)}", recovery)
        elif problems:  # not damaged: a full disk, permissions (a read-only home opens read-only)
            report.warn("cache", path, f"the {name} cache {'; '.join(problems)}", UNAVAILABLE)
    return found


def _check_leftovers(settings: "Settings", report: _Report) -> list[str]:
    from aqgr.archive.linking import CITATIONS_FILE, beside
    from aqgr.retrieval.embedded.index import leftovers

    found = [str(p) for p in leftovers(settings.index_dir) + leftovers(settings.home / "statutes" / "index")]
    if found:
        report.warn(
            "leftovers",
            settings.home,
            f"{len(found)} folder(s) left by an `aqgr index` that was stopped: {', '.join(found[:5])}",
            "`aqgr index` removes them",
        )
    anew = beside(settings.home / CITATIONS_FILE)
    if anew.exists():
        found.append(str(anew))
        report.warn(
            "leftovers",
            anew,
            "a citation store being made anew (to replace one of another engine or damaged) by an `aqgr index` "
            "that was stopped; the one in use serves until then",
            "`aqgr index` completes it and puts it in place",
        )
    return found


def stale_counts(settings: "Settings", store, manifest: dict | None) -> dict[str, int] | None:
    """{"new", "changed", "removed"}: the archive's summaries the saved index does not reflect (from
    fingerprints on both sides: nothing is parsed), or None without a readable index."""
    from aqgr.retrieval.backends import indexed_fingerprints

    if not manifest:
        return None
    have = indexed_fingerprints(settings.index_dir)
    if not have and manifest.get("n_docs"):
        return None
    wanted = store.summary_fingerprints(manifest.get("summarizer") or settings.summarizer)
    return {
        "new": sum(1 for d in wanted if d not in have),
        "changed": sum(1 for d, fp in wanted.items() if d in have and have[d] != fp),
        "removed": sum(1 for d in have if d not in wanted),
    }
