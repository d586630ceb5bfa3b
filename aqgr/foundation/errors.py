"""Every exception aqgr raises, in one place. Each message says what to do next."""

from __future__ import annotations

from pathlib import Path


class AqgrError(Exception):
    """Base class of every aqgr error."""


class UnknownNameError(AqgrError, KeyError):
    """A registry was asked for a name it does not know."""

    def __init__(self, kind: str, name: str, known: list[str]):
        self.kind, self.name, self.known = kind, name, known
        super().__init__(f"unknown {kind} {name!r}; known {kind}s: {', '.join(known) or '(none)'}")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class ReadError(AqgrError):
    """A judgment file could not be turned into text. `reason` is a short machine-readable kind."""

    def __init__(self, path: str, reason: str, detail: str):
        self.path, self.reason, self.detail = path, reason, detail
        super().__init__(f"{path}: {reason}: {detail}")


class SummaryValidationError(AqgrError):
    """A summary does not match the JSON Schema; `problems` lists 'path: message' strings."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        shown = "; ".join(problems[:10]) + (f"; ... ({len(problems) - 10} more)" if len(problems) > 10 else "")
        super().__init__(f"summary rejected by the JSON Schema: {shown}")


class SummarizeError(AqgrError):
    """An engine could not summarise one judgment (recorded on that judgment in a batch)."""

    def __init__(self, judgment_id: str, reason: str, detail: str):
        self.judgment_id, self.reason, self.detail = judgment_id, reason, detail
        super().__init__(f"{judgment_id}: {reason}: {detail}")


class NoIndexError(AqgrError):
    """Search was asked for before an index was built."""

    def __init__(self, where: str):
        super().__init__(f"no index at {where}: build one first with `aqgr index` (or Archive.build_index())")


class IndexMismatchError(AqgrError):
    """A saved index does not match what is asked of it (format, schema, model, slots)."""

    def __init__(self, where: str, differences: list[str]):
        self.differences = differences
        super().__init__(
            f"the index at {where} was built differently ({'; '.join(differences)}): "
            "rebuild it with `aqgr index` (or Archive.build_index()), which replaces it"
        )


class IndexUnavailableError(AqgrError):
    """A saved index (or the citation store beside it) that cannot be opened for a reason outside it:
    the disk is full, the folder is read-only, a file cannot be read (permissions, an I/O error),
    another process holds a lock. Its files are not damaged: rebuilding it is not the remedy.
    `reason`: 'disk_full', 'read_only', 'busy' or 'unreadable'."""

    def __init__(self, where: str, reason: str, detail: str):
        self.where, self.reason, self.detail = where, reason, detail
        advice = {
            "disk_full": "free space on that disk, then run the command again: the index itself is intact",
            "read_only": "make that folder writable, or open a copy of the home in a writable place",
            "busy": "another process holds it locked: wait for it to finish, then run the command again",
        }.get(
            reason,
            "check the files' permissions (they must be readable by this user) and the disk, then run the "
            "command again; `aqgr check` names what it cannot read",
        )
        super().__init__(f"the index at {where} cannot be opened ({reason}: {detail}): {advice}")


class IndexBuildingError(AqgrError):
    """A search asked for while the archive's first index is being built (`aqgr index` is running
    and has committed no judgment yet): the summaries are there, the index is not ready."""

    def __init__(self, where: str):
        self.where = where
        super().__init__(f"an index is being built at {where} (`aqgr index` is running): try again when it finishes")


class IndexBusyError(AqgrError):
    """Another process is writing the archive's index (`aqgr index`): one writer at a time."""

    def __init__(self, where: str, holder: str | None = None):
        self.where = where
        who = f" (held by {holder})" if holder else ""
        super().__init__(
            f"another `aqgr index` is updating the index of {where}{who}: wait for it to finish, then run "
            "this again (searches keep working meanwhile)"
        )


class IndexLockedError(AqgrError):
    """A lexical index (retrieval/lexical/) is being written by another writer, in this process or
    another: one writer at a time; searching needs no lock."""

    def __init__(self, where: str):
        self.where = where
        super().__init__(
            f"the lexical index at {where} is being written by another writer (another `aqgr index`, a server "
            "updating it, or another engine object in this process): wait until it commits or closes, then retry"
        )


class NoCitationGraphError(AqgrError):
    """The archive's citations were asked for before `aqgr index` found them (or the index changed since)."""

    def __init__(self, judgment_id: str | None = None):
        what = (
            f"judgment {judgment_id!r} was summarised after the index was built"
            if judgment_id
            else "the archive has no citation graph for its index"
        )
        super().__init__(
            f"{what}: run `aqgr index` (or Archive.build_index()), which finds the citations between its judgments"
        )


class UnknownJudgmentError(AqgrError, KeyError):
    """A judgment id the archive has not summarised."""

    def __init__(self, judgment_id: str):
        self.judgment_id = judgment_id
        super().__init__(f"no judgment {judgment_id!r} in the archive (ids are as in search hits and `aqgr export`)")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class EmptyArchiveError(AqgrError):
    """An operation needs summaries and the archive has none."""

    def __init__(self, what: str):
        super().__init__(f"the archive has no summaries to {what}: run `aqgr summarize PATH` first")


class FactsTooShortError(AqgrError):
    """The facts do not carry enough content to search on."""

    def __init__(self, found: int, needed: int):
        self.found, self.needed = found, needed
        super().__init__(
            f"the facts have {found} content word(s); at least {needed} are needed to search: "
            "describe who did what, what happened and what is disputed"
        )


class NoStatutesError(AqgrError):
    """The archive has no statute collection."""

    def __init__(self, where: Path | str):
        super().__init__(
            f"the archive has no statutes at {where}: add them with `aqgr statutes PATH...` (plain-text files, one statute each)"
        )


class InvalidFilterError(AqgrError, ValueError):
    """A search filter that cannot be read (a date that is not one, a range that ends before it starts)."""

    def __init__(self, detail: str):
        self.detail = detail
        super().__init__(f"invalid search filter: {detail}")


class NoFiltersError(AqgrError):
    """A filtered search on an index that stores no filter fields (a backend without them: Milvus)."""

    def __init__(self, where: str, why: str = "is on a backend that does not store filter fields"):
        super().__init__(
            f"the index at {where} {why}: search without filters, or build the archive's index on the "
            "embedded backend (`aqgr index --rebuild --backend embedded`), which stores the court, date, "
            "bench, kind, statute and disposal of every judgment"
        )


class InvalidTextError(AqgrError, ValueError):
    """Text that is not valid Unicode (a lone surrogate such as \\ud800, from a broken encoder or
    a JSON escape). Refused before it reaches the archive, the index or an answer."""

    def __init__(self, what: str, position: int, char: str):
        self.what, self.position = what, position
        super().__init__(
            f"invalid character (lone surrogate U+{ord(char):04X}) at position {position} of the {what}: "
            "send the text as UTF-8, or remove that character"
        )


class MissingDependencyError(AqgrError):
    """An optional dependency is not installed."""

    def __init__(self, module: str, extra: str | None):
        hint = f"pip install 'aqgr[{extra}]'" if extra else "reinstall aqgr (it is a core dependency)"
        super().__init__(f"{module} is not installed: {hint}")


class ProviderError(AqgrError):
    """A model provider call failed. `kind`: 'rate_limited', 'server_error', 'timeout', 'connection'
    (a reply cut off), 'unreachable' (nothing listens at the endpoint), 'auth', 'not_found' (an
    unknown model), 'bad_request', 'safety_block', 'empty_reply', 'truncated' (the reply stopped at
    its output budget), 'input_truncated' (the server cut the prompt to its window),
    'context_overflow' (the prompt cannot fit the window) or 'provider_error'. The message never
    carries an API key (aqgr.llm redacts it)."""

    def __init__(
        self,
        provider: str,
        kind: str,
        detail: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ):
        self.provider, self.kind, self.detail = provider, kind, detail
        self.status, self.retryable, self.retry_after = status, retryable, retry_after
        where = f"HTTP {status}: " if status else ""
        super().__init__(f"{provider}: {kind}: {where}{detail}")


class SafetyBlockError(ProviderError):
    """The provider refused or blocked the request or the reply (safety filters, a refusal)."""

    def __init__(self, provider: str, detail: str):
        super().__init__(provider, "safety_block", detail)


class InvalidModelOutputError(AqgrError):
    """A model kept answering with output that is not valid JSON or breaks the schema."""

    def __init__(self, problems: list[str], attempts: int):
        self.problems, self.attempts = problems, attempts
        shown = "; ".join(problems[:5]) + (f"; ... ({len(problems) - 5} more)" if len(problems) > 5 else "")
        super().__init__(f"model output still invalid after {attempts} attempt(s): {shown}")


class ConfigError(AqgrError):
    """A configuration value is invalid."""


class DatasetError(AqgrError):
    """Evaluation data is missing or malformed (message names the file and line)."""


class StoreError(AqgrError):
    """The archive database cannot be opened or written. `reason`: 'disk_full', 'read_only' or
    'unavailable'. A batch stops on it (every further write would fail); what was stored is kept."""

    def __init__(self, reason: str, detail: str):
        self.reason, self.detail = reason, detail
        advice = {
            "disk_full": "free space on the disk holding the archive, then run the command again (a batch keeps the "
            "judgments it finished and skips them)",
            "read_only": "the archive is read-only: make its home writable or choose another with --home / AQGR_HOME",
        }.get(reason, "check the database URL (--database-url / AQGR_DATABASE_URL), the server and the disk")
        super().__init__(f"the archive database cannot be written ({reason}): {detail}; {advice}")


class WriteError(AqgrError):
    """A file of the archive (the index, an export) could not be written. `reason`: 'disk_full',
    'read_only' or 'unwritable'. What was written before (the old index, an earlier export) is kept:
    these files are written to a temporary name and renamed into place. `written`: how many files a
    folder export had written before the failure (the message says so instead of "unchanged");
    `before`: what the command had changed when it stopped, said instead of "unchanged"."""

    def __init__(self, path: str, exc: OSError, *, written: int | None = None, before: str | None = None):
        import errno

        self.path, self.error = path, exc
        code = getattr(exc, "errno", None)
        self.reason = {
            errno.ENOSPC: "disk_full",
            errno.EDQUOT: "disk_full",
            errno.EROFS: "read_only",
            errno.EACCES: "read_only",
            errno.EPERM: "read_only",
        }.get(code, "unwritable")
        advice = {
            "disk_full": "free space on that disk and run the command again",
            "read_only": "make that folder writable, or choose another (--out, or --home / AQGR_HOME for the archive)",
        }.get(self.reason, "check the path and the disk, then run the command again")
        if before is None:
            before = (
                "what was there before is unchanged"
                if written is None
                else f"{written} file(s) were written before it, the rest were not: run the command again to write them all"
            )
        self.before = before
        super().__init__(f"cannot write {path} ({self.reason}: {exc.strerror or exc}): {advice}; {before}")


class DatabaseDamagedError(StoreError):
    """The archive database file is damaged (SQLite: 'database disk image is malformed', 'file is not
    a database'; PostgreSQL: data corrupted). Nothing more is read from or written to it."""

    def __init__(self, where: str, detail: str):
        self.reason, self.detail, self.where = "damaged", detail, where
        AqgrError.__init__(
            self,
            f"the archive database {where} is damaged ({detail}). Check it with `aqgr check` (SQLite's integrity check). "
            "To recover: restore a backup of that file; or move it aside and rebuild the archive: `aqgr import` your last "
            "`aqgr export` (summaries.jsonl), or run `aqgr summarize` on the judgments again, then `aqgr index`. "
            "The index and caches in the home are not affected",
        )


class LeaseLostError(AqgrError):
    """A worker's claim on a work item expired and another worker took the item over before this
    one finished: its result is discarded (rolled back) so the item is done once."""

    def __init__(self, source_path: str):
        self.source_path = source_path
        super().__init__(
            f"{source_path}: the claim expired and another worker took the item over; raise --lease-seconds if items take longer than the lease"
        )


class BatchInterrupted(KeyboardInterrupt):
    """A batch was interrupted (Ctrl-C). `report` holds what finished; rerunning resumes the rest."""

    def __init__(self, report):
        self.report = report
        super().__init__("interrupted")
