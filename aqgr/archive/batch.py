"""Batch summarisation: files in, validated summaries stored, failures recorded.

A failure on one file (unreadable, empty, binary, encrypted, no text layer, an engine
error, a schema violation, a duplicate id) is recorded on that file in the store and
reported; the batch goes on. An unchanged judgment already summarised by the same engine
version is skipped, so a batch is resumable: each judgment and its summary are committed
in one transaction, and rerunning an interrupted (Ctrl-C, kill -9) batch only does the
rest. Only a database that cannot be written (disk full, read-only) stops a batch.

Parallelism (`workers`): the engine's `parallelism` attribute chooses how. "process"
(the default; CPU-bound engines such as extractive.v1): a pool of spawned processes,
each with its own engine copy and database connection, each committing its own results.
"thread" (I/O-bound provider engines): a bounded pool of threads sharing the engine and
the store, so at most `workers` provider calls are in flight.

Shared batches (`ledger`; on by default with PostgreSQL): the files are registered in the
work ledger (aqgr/archive/workqueue.py) and this run claims items from it with a lease, like every
other `aqgr summarize` on any machine pointed at the same database; each summary is stored
and its item marked done in one transaction. Without the ledger (SQLite by default) the run
works through its own list of files, as before.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from aqgr.archive.renames import StoredMeanwhile, guard, stored_as
from aqgr.archive.store import JudgmentRow, Store
from aqgr.foundation.errors import (
    BatchInterrupted,
    ConfigError,
    LeaseLostError,
    ReadError,
    StoreError,
    SummarizeError,
    SummaryValidationError,
)
from aqgr.foundation.inputs import encodable, id_problem, many, shown
from aqgr.llm.deadline import task as model_task
from aqgr.pipeline.grounding import ground_summary
from aqgr.schemas.summary import SCHEMA_VERSION, Provenance, StructuredSummary
from aqgr.schemas.validation import validate_summary
from aqgr.summarizer.base import JudgmentText, SummarizerEngine
from aqgr.summarizer.readers import read_judgment, supported_extensions

Progress = Callable[[int, int, str], None]
ID_RULES = ("stem", "relpath", "regex:PATTERN")
ID_PATTERN_TIMEOUT_S = 1.0  # a user's --id-from pattern on one path; one that backtracks without end is refused
# Paths refused before reading: reported, never recorded as the judgment's failure (a retry would read a FIFO, or a link out of the folder).
PATH_REFUSALS = ("missing", "broken_link", "outside_folder", "not_a_file")
MAX_WORKERS = 64
MIN_WORDS = 3  # fewer words of text are no judgment (a 1-byte file): failed, never an empty summary stored and indexed  # processes or provider requests at once: more only exhausts memory, file handles or quotas
# Failures that are the set-up's, not the judgment's: every other judgment would fail alike, so the
# batch stops at the first with one message and records nothing against the judgments.
SETUP_FAILURES = {
    "config": "the model provider is not set up",
    "auth": "the provider refused the API key",
    "not_found": "the provider does not know the model",
    "unreachable": "the model server cannot be reached",
}


class FileFailure(BaseModel):
    path: str
    judgment_id: str | None
    stage: str
    reason: str
    message: str


class Outcome(BaseModel):
    """What happened to one file: 'summarised', 'unchanged', 'renamed' (a stored judgment's file
    under a new name: its id kept, its path updated), 'duplicate' (the bytes of a stored judgment
    whose file is still there: nothing stored) or 'failed'. `judgment_id` is the stored id."""

    path: str
    judgment_id: str | None
    status: str
    failure: FileFailure | None = None
    usage: dict[str, float] | None = None
    stored_path: str | None = Field(
        default=None, description="Renamed: where the judgment's file was; duplicate: the stored judgment's file."
    )


class SameBytes(BaseModel):
    """A file whose bytes are a stored judgment's under another id (aqgr/archive/renames.py)."""

    path: str
    judgment_id: str = Field(description="The stored judgment's id (kept).")
    stored_path: str = Field(
        description="Renamed: the judgment's former path; duplicate: its file that is still there."
    )
    summarised: bool = Field(
        default=False, description="Renamed and also summarised again (engine changed): counted under summarised."
    )


class BatchReport(BaseModel):
    """What a summarisation batch did."""

    engine: str
    files: int = 0
    workers: int = 1
    seconds: float = 0.0
    summarised: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    failed: list[FileFailure] = Field(default_factory=list)
    skipped_unsupported: list[str] = Field(default_factory=list)
    usage: dict[str, float] = Field(
        default_factory=dict, description="Summed provider usage (tokens, cost) when the engine reports it."
    )
    renamed: list[SameBytes] = Field(
        default_factory=list,
        description="Files that are stored judgments under a new name: one judgment kept, its id unchanged, its path updated.",
    )
    duplicates: list[SameBytes] = Field(
        default_factory=list,
        description="Files with the bytes of a stored judgment whose file is still there: not stored again.",
    )
    lost_leases: list[str] = Field(
        default_factory=list,
        description="Items whose claim expired and went to another worker before this one finished (its result was discarded).",
    )
    worker: str | None = Field(default=None, description="This worker's name in the work ledger (shared batches).")
    interrupted: bool = False
    aborted: str | None = Field(
        default=None,
        description="Why the batch stopped early (the database cannot be written, or the model provider is not set up or unreachable); rerun to resume.",
    )

    @property
    def failures_by_reason(self) -> dict[str, int]:
        return dict(Counter(f.reason for f in self.failed))

    @property
    def processed(self) -> int:
        return (
            len(self.summarised)
            + len(self.unchanged)
            + len(self.duplicates)
            + sum(not r.summarised for r in self.renamed)
        )

    @property
    def rate(self) -> float:
        """Files handled per second."""
        done = self.processed + len(self.failed)
        return done / self.seconds if self.seconds > 0 else 0.0

    def add(self, outcome: Outcome) -> None:
        same = SameBytes(
            path=outcome.path,
            judgment_id=outcome.judgment_id or "",
            stored_path=outcome.stored_path or "",
            summarised=outcome.status == "summarised",
        )
        if outcome.status == "summarised":
            self.summarised.append(outcome.judgment_id or "")
            if outcome.stored_path is not None:
                self.renamed.append(same)
        elif outcome.status == "renamed":
            self.renamed.append(same)
        elif outcome.status == "duplicate":
            self.duplicates.append(same)
        elif outcome.status == "unchanged":
            self.unchanged.append(outcome.judgment_id or "")
        elif outcome.status == "lost":
            self.lost_leases.append(outcome.path)
        elif outcome.failure is not None:
            self.failed.append(outcome.failure)
        for key, value in (outcome.usage or {}).items():
            self.usage[key] = self.usage.get(key, 0.0) + value


@dataclass(frozen=True)
class WorkItem:
    path: str  # absolute
    judgment_id: str
    had_failure: bool = False
    claim: str | None = None  # the work ledger's claim token: the result is stored only while the claim holds
    force: bool = False  # registered with --force (by this or another run)


# -- ids ---------------------------------------------------------------------
def judgment_id_for(path: Path, root: Path | None = None, rule: str = "stem") -> str:
    """The judgment id of a file. 'stem': its name without extension (C12.txt -> C12);
    'relpath': its path relative to the folder given, without extension (sc/2001/C12);
    'regex:PATTERN': the first group (else the whole match) of PATTERN searched in that relative path."""
    relative = path.relative_to(root) if root is not None and path.is_relative_to(root) else Path(path.name)
    if rule == "stem":
        return path.stem
    if rule == "relpath":
        return relative.with_suffix("").as_posix()
    if rule.startswith("regex:"):
        where = relative.as_posix()
        try:
            match = _compiled(rule[6:]).search(where, timeout=ID_PATTERN_TIMEOUT_S)
        except TimeoutError:
            raise ConfigError(
                f"the id pattern {rule[6:]!r} took over {ID_PATTERN_TIMEOUT_S:g} s on {where!r} (it backtracks without end): "
                "write a simpler pattern, e.g. regex:(C[0-9]+)"
            ) from None
        if match is None:
            raise ValueError(f"the id pattern {rule[6:]!r} does not match {where!r}")
        found = match.group(1) if match.groups() else match.group(0)
        if not found:
            raise ValueError(
                f"the id pattern {rule[6:]!r} matches an empty id in {where!r}: make its group match at least one character"
            )
        return found
    raise ConfigError(f"unknown id rule {rule!r}; use one of: {', '.join(ID_RULES)}")


@functools.lru_cache(maxsize=8)
def _compiled(pattern: str):
    """A user's id pattern, compiled with the `regex` package (Python's `re` syntax, and a time limit per search)."""
    import regex

    try:
        return regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError, ValueError, MemoryError) as exc:
        raise ConfigError(
            f"invalid id pattern {pattern!r}: {exc}; the part after 'regex:' is a regular expression whose first group is the id"
        ) from None


def _check_rule(rule: str) -> None:
    if rule.startswith("regex:"):
        _compiled(rule[6:])
    elif rule not in ("stem", "relpath"):
        raise ConfigError(f"unknown id rule {rule!r}; use one of: {', '.join(ID_RULES)}")


def collect_files(paths: Iterable[str | Path]) -> tuple[list[tuple[Path, Path | None]], list[str]]:
    """([(supported file, the folder it was found under or None)] in a stable order, unsupported paths).
    Paths that cannot be read as files (missing, a dangling link, a FIFO, a link out of its folder) are
    left to `refused_paths`: each is a failure, never also 'skipped'."""
    files, skipped, _ = _walk(paths)
    return files, skipped


def refused_paths(paths: Iterable[str | Path]) -> list[FileFailure]:
    """The given or walked paths that are not read, each with why (see `_walk`)."""
    return _walk(paths)[2]


def _walk(paths: Iterable[str | Path]) -> tuple[list[tuple[Path, Path | None]], list[str], list[FileFailure]]:
    supported = set(supported_extensions())
    files: list[tuple[Path, Path | None]] = []
    skipped: list[str] = []
    refused: list[FileFailure] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            root = path.resolve()
            for child in sorted(
                p for p in path.rglob("*") if not any(part.startswith(".") for part in p.relative_to(path).parts)
            ):
                if child.is_dir():
                    continue
                problem = _not_a_file(child, root)
                if problem is not None:
                    refused.append(
                        FileFailure(
                            path=shown(str(child)),
                            judgment_id=None,
                            stage="read",
                            reason=problem[0],
                            message=f"{shown(str(child))}: {problem[1]}",
                        )
                    )
                    continue
                if child.suffix.lower() in supported:
                    files.append((child, path))
                else:
                    skipped.append(str(child))
        elif path.is_file():
            files.append(
                (path, None)
            )  # an explicit file (a link too: the user named it) is attempted whatever its extension; the reader explains
        else:
            problem = _not_a_file(path, None) or ("missing", "no such file or directory")
            refused.append(
                FileFailure(
                    path=shown(str(path)),
                    judgment_id=None,
                    stage="read",
                    reason=problem[0],
                    message=f"{shown(str(path))}: {problem[1]}",
                )
            )
    return files, skipped, refused


def _not_a_file(path: Path, root: Path | None) -> tuple[str, str] | None:
    """(reason, message) when `path` is not a regular file to read (under `root`, the folder walked), else None."""
    if path.is_symlink():
        if not path.exists():
            return "broken_link", f"a symbolic link to {os.readlink(path)}, which does not exist"
        if root is not None and not path.resolve().is_relative_to(root):
            return "outside_folder", (
                f"a symbolic link to {path.resolve()}, outside the folder {root}: not read (a folder's judgments stay "
                "inside it); give that file on the command line to summarise it"
            )
    if not path.exists():
        return None if root is not None else ("missing", "no such file or directory")
    if path.is_fifo():
        return "not_a_file", "a FIFO (named pipe), not a file: not read"
    if not path.is_file():
        return "not_a_file", "not a regular file (a socket or a device): not read"
    return None


# -- one file ------------------------------------------------------------------
def process_one(item: WorkItem, store: Store, engine: SummarizerEngine, force: bool = False) -> Outcome:
    """Read, summarise, validate and store one file; a failure is recorded in the store and returned.
    A claimed item (`item.claim`) is marked done or failed in the same transaction; if the claim
    was lost meanwhile nothing is written and the outcome is 'lost'.
    Raises only StoreError (the database cannot be written)."""
    try:
        return _process(item, store, engine, force or item.force)
    except LeaseLostError:
        return Outcome(path=item.path, judgment_id=item.judgment_id, status="lost")


def _settle(item: WorkItem, store: Store, engine: SummarizerEngine, status: str):
    """What marks a claimed item done/failed inside the write's transaction (None: not claimed)."""
    if item.claim is None:
        return None
    from aqgr.archive.workqueue import finish

    return lambda session: finish(store, session, engine.name, item.path, item.claim, status)


def _process(item: WorkItem, store: Store, engine: SummarizerEngine, force: bool) -> Outcome:
    path = Path(item.path)
    judgment_id = item.judgment_id

    def fail(stage: str, reason: str, message: str) -> Outcome:
        failure = FileFailure(path=item.path, judgment_id=judgment_id, stage=stage, reason=reason, message=message)
        store.record_failure(
            source_path=item.path,
            engine=engine.name,
            judgment_id=judgment_id,
            stage=stage,
            reason=reason,
            message=message,
            then=_settle(item, store, engine, "failed"),
        )
        return Outcome(path=item.path, judgment_id=judgment_id, status="failed", failure=failure)

    try:
        text, sha = read_judgment(path)
    except ReadError as exc:
        return fail("read", exc.reason, str(exc))
    words = len(text.split())
    if words < MIN_WORDS:
        return fail(
            "read",
            "too_short",
            f"{item.path}: only {words} word(s) of text: too little to be a judgment; nothing was stored",
        )
    existing = store.judgment(judgment_id)
    if (
        existing is not None
        and existing.source_path != item.path
        and existing.sha256 != sha
        and Path(existing.source_path).exists()
    ):
        return fail(
            "read",
            "duplicate_id",
            f"id {judgment_id!r} already belongs to {existing.source_path} in the archive; rename the file or use --id-from relpath",
        )
    moved_from = None
    same = (
        stored_as(store, item.path, sha) if existing is None else None
    )  # these bytes stored under another id (aqgr/archive/renames.py)
    if same is not None and same.kind == "duplicate":
        if item.had_failure or item.claim is not None:
            store.clear_failure(item.path, engine.name, then=_settle(item, store, engine, "done"))
        return Outcome(path=item.path, judgment_id=same.judgment_id, status="duplicate", stored_path=same.stored_path)
    if same is not None and same.kind == "renamed":  # the judgment keeps its id and records its new path
        store.move(same.judgment_id, item.path, text)
        moved_from = same.stored_path
    if same is not None:
        judgment_id = same.judgment_id
    if not force and _unchanged(store, judgment_id, sha, engine):
        if item.had_failure or item.claim is not None:
            store.clear_failure(item.path, engine.name, then=_settle(item, store, engine, "done"))
        return Outcome(
            path=item.path,
            judgment_id=judgment_id,
            status="renamed" if moved_from else "unchanged",
            stored_path=moved_from,
        )
    usage = None
    try:
        with model_task("judgment"):  # its model calls end within the judgment's time (aqgr/llm/deadline.py)
            slots = engine.summarize(
                JudgmentText(judgment_id=judgment_id, text=text, source_path=item.path, sha256=sha)
            )
        ungrounded: list[str] = []
        if (
            getattr(engine, "model", None) is not None
        ):  # a model wrote the values: keep those the judgment's text shows (aqgr/pipeline/grounding.py)
            slots, ungrounded = ground_summary(judgment_id, slots, text)
        take_usage = getattr(engine, "take_usage", None)  # seam: provider engines report tokens/cost per call
        usage = take_usage() if callable(take_usage) else None
        tokens = {k: int(usage[k]) for k in ("input_tokens", "output_tokens") if usage and k in usage}
        provenance = Provenance(
            engine=engine.name,
            engine_version=engine.version,
            source_sha256=sha,
            model=engine.model,
            ungrounded=ungrounded,
            **tokens,
        )
        summary = validate_summary(StructuredSummary.from_slots(judgment_id, slots, provenance))
    except SummarizeError as exc:
        if exc.reason in SETUP_FAILURES:
            message = f"{SETUP_FAILURES[exc.reason]} ({exc}); nothing was recorded against the judgments: fix the set-up and rerun to resume"
            return Outcome(
                path=item.path,
                judgment_id=judgment_id,
                status="aborted",
                failure=FileFailure(
                    path=item.path, judgment_id=judgment_id, stage="summarize", reason=exc.reason, message=message
                ),
            )
        return fail("summarize", exc.reason, str(exc))
    except SummaryValidationError as exc:
        return fail("validate", "invalid_summary", str(exc))
    except Exception as exc:  # an engine bug on one judgment must not stop the batch
        return fail("summarize", "engine_error", f"{type(exc).__name__}: {exc}")
    if not _has_content(summary):
        return fail(
            "summarize",
            "no_content",
            f"{item.path}: no parties, facts, issues or final order were found in its {words} words: "
            "not stored (is this file a judgment?)",
        )
    settle = _settle(item, store, engine, "done")
    if (
        existing is None and same is None
    ):  # a new judgment: unless a copy of it was stored meanwhile (aqgr/archive/renames.py)
        check = guard(store, judgment_id, item.path, sha)

        def then(session, settle=settle) -> None:
            check(session)
            if settle is not None:
                settle(session)
    else:
        then = settle
    try:
        store.save(
            JudgmentRow(id=judgment_id, source_path=item.path, sha256=sha, n_chars=len(text), text=text),
            summary,
            then=then,
        )
    except StoredMeanwhile as exc:
        if item.had_failure or item.claim is not None:
            store.clear_failure(item.path, engine.name, then=settle)
        return Outcome(
            path=item.path, judgment_id=exc.stored.judgment_id, status="duplicate", stored_path=exc.stored.stored_path
        )
    return Outcome(path=item.path, judgment_id=judgment_id, status="summarised", usage=usage, stored_path=moved_from)


def _has_content(summary: StructuredSummary) -> bool:
    """Whether a summary says anything a search can use: parties, facts, issues or the final order."""
    return bool(
        summary.parties.appellants
        or summary.parties.respondents
        or summary.facts.strip()
        or summary.issues
        or summary.final_judgment.strip()
    )


def _unchanged(store: Store, judgment_id: str, sha: str, engine: SummarizerEngine) -> bool:
    row = store.summary_row(judgment_id, engine.name)
    return (
        row is not None
        and row.source_sha256 == sha
        and row.engine_version == engine.version
        and row.schema_version == SCHEMA_VERSION
    )


# -- worker processes -------------------------------------------------------------
@dataclass
class _WorkerState:
    store: Store | None = None
    engine: SummarizerEngine | None = None
    force: bool = False


_worker = _WorkerState()


def _init_worker(url: str, engine: SummarizerEngine, force: bool) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and lets running items finish
    _worker.store, _worker.engine, _worker.force = Store(url, create=False), engine, force
    parent = os.getppid()

    def watch_parent() -> None:  # the parent was killed (kill -9): stop; an open transaction rolls back
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch_parent, daemon=True).start()


def _work(item: WorkItem) -> Outcome:
    try:
        return process_one(item, _worker.store, _worker.engine, _worker.force)
    except StoreError as exc:
        return Outcome(
            path=item.path,
            judgment_id=item.judgment_id,
            status="aborted",
            failure=FileFailure(
                path=item.path, judgment_id=item.judgment_id, stage="store", reason=exc.reason, message=str(exc)
            ),
        )


def _executor(
    store: Store, engine: SummarizerEngine, force: bool, workers: int
) -> tuple[Executor, Callable[[WorkItem], Outcome]]:
    if getattr(engine, "parallelism", "process") == "thread":

        def run(item: WorkItem) -> Outcome:
            try:
                return process_one(item, store, engine, force)
            except StoreError as exc:
                return Outcome(
                    path=item.path,
                    judgment_id=item.judgment_id,
                    status="aborted",
                    failure=FileFailure(
                        path=item.path, judgment_id=item.judgment_id, stage="store", reason=exc.reason, message=str(exc)
                    ),
                )

        return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="aqgr-batch"), run
    import multiprocessing

    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_worker,
        initargs=(store.url, engine, force),
    )
    return pool, _work


# -- the batch -------------------------------------------------------------------
@dataclass
class _Run:
    report: BatchReport
    total: int
    progress: Progress | None
    on_result: Callable[[Outcome], None] | None
    done: int = 0
    started: float = field(default_factory=time.perf_counter)

    def record(self, outcome: Outcome) -> None:
        if outcome.status == "aborted":
            self.report.aborted = outcome.failure.message if outcome.failure else "the database cannot be written"
            return
        self.report.add(outcome)
        self.done += 1
        if self.on_result:
            self.on_result(outcome)
        if self.progress:
            self.progress(self.done, self.total, outcome.path)

    def finish(self) -> BatchReport:
        self.report.seconds = round(time.perf_counter() - self.started, 3)
        return self.report


def plan(
    paths: Iterable[str | Path],
    store: Store,
    engine: SummarizerEngine,
    *,
    id_from: str = "stem",
    retry_failed: bool = False,
) -> tuple[list[WorkItem], list[FileFailure], list[str]]:
    """(work items, failures found before any work: missing paths and duplicate ids, skipped unsupported paths)."""
    _check_rule(id_from)
    failed_sources = {f.source_path: f.judgment_id for f in store.failures(engine.name)}
    early: list[FileFailure] = []
    if retry_failed:
        roots = [Path(p).resolve() for p in paths]
        found = [
            (Path(src), jid)
            for src, jid in sorted(failed_sources.items())
            if not roots or any(Path(src).is_relative_to(r) for r in roots)
        ]
        skipped: list[str] = []
        candidates = [(path, jid or path.stem) for path, jid in found]
    else:
        files, skipped, refused = _walk(paths)
        early.extend(refused)
        candidates = []
        for path, root in files:
            try:
                candidates.append((path.resolve(), judgment_id_for(path, root, id_from)))
            except ValueError as exc:
                early.append(
                    FileFailure(
                        path=str(path.resolve()), judgment_id=None, stage="read", reason="no_id", message=str(exc)
                    )
                )
    items: list[WorkItem] = []
    seen: dict[str, str] = {}
    for path, judgment_id in candidates:
        source = str(path)
        if not (encodable(source) and encodable(judgment_id)):  # bytes that are not UTF-8 in the name: cannot be stored
            early.append(
                FileFailure(
                    path=shown(source),
                    judgment_id=shown(judgment_id),
                    stage="read",
                    reason="bad_name",
                    message=f"{shown(source)}: the file name is not valid UTF-8 (its undecodable bytes shown as \\xNN): rename the file",
                )
            )
            continue
        problem = id_problem(judgment_id)  # the id rule of every door: the API must be able to open it
        if problem is not None:
            early.append(
                FileFailure(
                    path=source,
                    judgment_id=None,
                    stage="read",
                    reason="invalid_id",
                    message=f"{source}: {problem}; rename the file or choose another --id-from",
                )
            )
            continue
        if judgment_id in seen and seen[judgment_id] != source:
            early.append(
                FileFailure(
                    path=source,
                    judgment_id=judgment_id,
                    stage="read",
                    reason="duplicate_id",
                    message=f"id {judgment_id!r} is also the id of {seen[judgment_id]} in this batch; rename one of the files or use --id-from relpath",
                )
            )
            continue
        if judgment_id in seen:
            continue  # the same file given twice
        seen[judgment_id] = source
        items.append(WorkItem(path=source, judgment_id=judgment_id, had_failure=source in failed_sources))
    return items, early, skipped


def summarize_files(
    paths: Iterable[str | Path],
    store: Store,
    engine: SummarizerEngine,
    *,
    force: bool = False,
    progress: Progress | None = None,
    workers: int = 1,
    id_from: str = "stem",
    retry_failed: bool = False,
    on_result: Callable[[Outcome], None] | None = None,
    ledger: bool | None = None,
    worker_id: str | None = None,
    lease_seconds: float | None = None,
    on_claim: Callable[[WorkItem], None] | None = None,
) -> BatchReport:
    """Summarise every supported file under `paths` (folders are walked recursively).

    `retry_failed`: only the files whose last attempt with this engine failed (under `paths`
    when given). Raises `BatchInterrupted` (a KeyboardInterrupt carrying the report) on Ctrl-C;
    a database that cannot be written stops the batch with `report.aborted` set.

    `ledger`: share the batch with other workers through the work ledger (default: on with
    PostgreSQL or when `worker_id` is given); `worker_id` names this worker in it (default
    host:pid), `lease_seconds` is how long a claim lasts without a heartbeat (default
    aqgr.archive.workqueue.DEFAULT_LEASE_S), `on_claim` is called with each claimed item."""
    paths = many(paths, "summarize() paths", "['SC999.txt'] or [Path('judgments/')]")
    if not 1 <= workers <= MAX_WORKERS:
        raise ConfigError(
            f"workers must be between 1 and {MAX_WORKERS}, not {workers} (this machine has {os.cpu_count() or 1} CPU(s); "
            "the offline engine gains nothing beyond that, a provider engine is limited by the provider's rate)"
        )
    shared = ledger if ledger is not None else (store.dialect == "postgresql" or worker_id is not None)
    items, early, skipped = plan(paths, store, engine, id_from=id_from, retry_failed=retry_failed)
    report = BatchReport(
        engine=engine.name,
        files=len(items) + sum(f.reason == "duplicate_id" for f in early),
        workers=workers,
        skipped_unsupported=skipped,
    )
    run = _Run(report, len(items), progress, on_result)
    for failure in early:
        report.failed.append(failure)
        if failure.reason not in PATH_REFUSALS:
            store.record_failure(
                source_path=failure.path,
                engine=engine.name,
                judgment_id=failure.judgment_id,
                stage=failure.stage,
                reason=failure.reason,
                message=failure.message,
            )
    if progress:
        progress(0, len(items), "")
    try:
        if shared:
            from aqgr.archive.workqueue import DEFAULT_LEASE_S

            _run_ledger(
                items,
                store,
                engine,
                force,
                workers,
                run,
                worker_id=worker_id,
                lease_s=lease_seconds or DEFAULT_LEASE_S,
                on_claim=on_claim,
            )
        elif workers == 1 or len(items) <= 1:
            _run_inline(items, store, engine, force, run)
        else:
            _run_pool(items, store, engine, force, workers, run)
    except KeyboardInterrupt:
        report.interrupted = True
        raise BatchInterrupted(run.finish()) from None
    return run.finish()


def _run_inline(items: list[WorkItem], store: Store, engine: SummarizerEngine, force: bool, run: _Run) -> None:
    for item in items:
        try:
            run.record(process_one(item, store, engine, force))
        except StoreError as exc:
            run.report.aborted = str(exc)
        if run.report.aborted is not None:
            return


def _run_pool(
    items: list[WorkItem], store: Store, engine: SummarizerEngine, force: bool, workers: int, run: _Run
) -> None:
    from concurrent.futures.process import BrokenProcessPool

    executor, work = _executor(store, engine, force, workers)
    pending: set[Future] = set()
    queue = iter(items)
    window = workers * 2  # bounded: memory stays flat and Ctrl-C leaves little in flight
    try:
        while True:
            while len(pending) < window and run.report.aborted is None:
                item = next(queue, None)
                if item is None:
                    break
                pending.add(executor.submit(work, item))
            if not pending:
                break
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                try:
                    run.record(future.result())
                except BrokenProcessPool as exc:
                    run.report.aborted = (
                        f"a worker process died ({exc}); rerun to resume, or use fewer --workers if memory is short"
                    )
                    pending = set()
                    break
    except KeyboardInterrupt:
        _drain(executor, pending, run)
        raise
    executor.shutdown(wait=True, cancel_futures=True)


def _run_ledger(
    items: list[WorkItem],
    store: Store,
    engine: SummarizerEngine,
    force: bool,
    workers: int,
    run: _Run,
    *,
    worker_id: str | None,
    lease_s: float,
    on_claim: Callable[[WorkItem], None] | None,
) -> None:
    """Register `items` in the work ledger, then claim and do work until the ledger is drained
    (pending items, and claims of other workers that may still expire, included)."""
    from concurrent.futures.process import BrokenProcessPool

    from aqgr.archive.workqueue import Worker, WorkQueue, fingerprint

    queue = WorkQueue(store, engine.name, Worker.here(worker_id), lease_s=lease_s)
    run.report.worker = queue.worker.name
    try:
        done = queue.register(
            ((i.path, i.judgment_id, fingerprint(i.path, engine.version)) for i in items), force=force
        )
        queue.start()
    except StoreError as exc:
        run.report.aborted = str(exc)
        return
    for path, judgment_id in done:  # done earlier (this or another run) and unchanged since
        run.record(Outcome(path=path, judgment_id=judgment_id, status="unchanged"))
    executor, work = _executor(store, engine, force, workers) if workers > 1 else (None, None)
    window = workers * 2 if executor else 1
    inflight: dict[Future, WorkItem] = {}

    def safe(item: WorkItem) -> Outcome:
        try:
            return process_one(item, store, engine, force)
        except StoreError as exc:
            return Outcome(
                path=item.path,
                judgment_id=item.judgment_id,
                status="aborted",
                failure=FileFailure(
                    path=item.path, judgment_id=item.judgment_id, stage="store", reason=exc.reason, message=str(exc)
                ),
            )

    try:
        while run.report.aborted is None:
            try:
                claims = queue.claim(window - len(inflight))
            except StoreError as exc:
                run.report.aborted = str(exc)
                break
            for claim in claims:
                item = WorkItem(
                    path=claim.source_path, judgment_id=claim.judgment_id, claim=queue.worker.token, force=claim.force
                )
                if on_claim:
                    on_claim(item)
                if executor is None:
                    run.record(safe(item))
                else:
                    inflight[executor.submit(work, item)] = item
            if inflight:
                finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for future in finished:
                    inflight.pop(future)
                    try:
                        run.record(future.result())
                    except BrokenProcessPool as exc:
                        run.report.aborted = (
                            f"a worker process died ({exc}); rerun to resume, or use fewer --workers if memory is short"
                        )
                        break
            elif not claims:
                others, wait_s = queue.outstanding()  # held by other workers: done soon, or back after their lease
                if others == 0:
                    break
                time.sleep(min(max(wait_s, 0.05), 1.0))
    except KeyboardInterrupt:
        if executor is not None:
            _drain(executor, inflight, run)
        raise
    finally:
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        queue.stop()  # what is still held (cancelled by Ctrl-C) goes back to pending


def _drain(executor, futures, run) -> None:
    """On Ctrl-C: cancel what has not started, let running items finish and commit, record them."""
    for future in futures:
        future.cancel()
    executor.shutdown(wait=True, cancel_futures=True)
    for future in futures:
        if future.done() and not future.cancelled() and future.exception() is None:
            run.record(future.result())
