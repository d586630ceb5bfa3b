"""The archive's database: judgments, their summaries and per-document failures.

sqlmodel over SQLite by default (a file in the aqgr home); PostgreSQL through a URL such
as `postgresql+psycopg://user@127.0.0.1/aqgr` (`--database-url` / `AQGR_DATABASE_URL`).
Each judgment and its summary are written in one transaction with upserts (INSERT ... ON
CONFLICT DO UPDATE), so a crash never leaves a half-written row and several processes
writing the same judgment at once neither fail nor duplicate it. Disk-full, read-only and
unreachable databases raise `StoreError` with what to do.

Each summary row carries the checksum of its JSON (`summary_checksum`), written with it: a read
that finds the content changed since (a flipped byte that still parses) leaves that summary out,
recorded in `Store.damaged`, as it does one that does not parse. JSON is stored in the form the
checksum is taken of (`canonical_json`), so a read checks the stored text's own sha256 and parses
it once (rows stored before in another form are checked the long way, with the same result).
Columns added since a database was made (the checksum) are added in place when it is opened for
writing; until then (a read-only one, `aqgr check`) its summaries read as having no checksum yet.

Two more tables serve batches spread over processes and machines (logic in aqgr/archive/workqueue.py
and aqgr/archive/quota.py): `work_items` (the work ledger: one row per source file and engine, with its
claim and lease) with `workers` (who is working, last heartbeat), and `rate_buckets` (token
buckets of shared provider quotas). `locked()` opens the transaction they need: rows read
with `SELECT ... FOR UPDATE` on PostgreSQL; on SQLite, which has no row locks, the whole
database (`BEGIN IMMEDIATE`), so one writer at a time.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, Text, bindparam, cast, event, inspect, literal_column, text
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError
from sqlmodel import Field, Session, SQLModel, create_engine, delete, func, select, update

from aqgr.foundation.errors import (
    ConfigError,
    DatabaseDamagedError,
    InvalidTextError,
    MissingDependencyError,
    StoreError,
)
from aqgr.foundation.inputs import encodable
from aqgr.schemas.summary import StructuredSummary


def _now() -> datetime:
    return datetime.now(UTC)


class JudgmentRow(SQLModel, table=True):
    __tablename__ = "judgments"

    id: str = Field(primary_key=True)
    source_path: str
    sha256: str = Field(index=True)
    n_chars: int
    text: str = Field(sa_column=Column(Text, nullable=False))
    added_at: datetime = Field(default_factory=_now)


class SummaryRow(SQLModel, table=True):
    __tablename__ = "summaries"
    # The columns an index update reads of every summary, in an index of their own: SQLite keeps a row's
    # columns after the large `data` in its overflow pages, so reading `created_at` from the table would
    # read every summary whole (at 100,000 summaries, 2.4 GB on each `aqgr index`). The partial index
    # finds the few summaries without a checksum without reading the others.
    __table_args__ = (
        Index("ix_summaries_fingerprint", "engine", "judgment_id", "engine_version", "source_sha256", "created_at"),
        Index(
            "ix_summaries_unchecked",
            "judgment_id",
            "engine",
            sqlite_where=text("checksum IS NULL"),
            postgresql_where=text("checksum IS NULL"),
        ),
    )

    judgment_id: str = Field(primary_key=True, foreign_key="judgments.id")
    engine: str = Field(primary_key=True)
    engine_version: str
    schema_version: str
    source_sha256: str
    data: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=_now)
    checksum: str | None = (
        None  # summary_checksum(data), written with it; None: stored before checksums (`aqgr index` adds it)
    )


def canonical_json(value: Any) -> str:
    """A JSON value in one canonical form (sorted keys, no spaces, ASCII escapes): the form the
    database stores its JSON in (the engine's serialiser) and the one a summary's checksum is taken of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def summary_checksum(data: Mapping[str, Any]) -> str:
    """sha256 of a summary's JSON document in its canonical form (`canonical_json`): the same for the
    text SQLite and PostgreSQL give back, however each spaces it. A changed byte that still parses and
    validates (one letter of the facts) changes it."""
    return _text_sha256(canonical_json(data))


def _text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _verbatim(raw: Any, checksum: str | None) -> bool:
    """The stored text is the very `canonical_json` its checksum was taken of (the engine's serialiser
    since 2026-12-07): nothing to compare but the model's check."""
    return checksum is not None and isinstance(raw, str) and _text_sha256(raw) == checksum


_TEXT_OF = select(JudgmentRow.__table__.c.text).where(JudgmentRow.__table__.c.id == bindparam("id"))  # Store.text

CHECKSUM_MISMATCH = "its content does not match the checksum written with it (changed after it was stored: a bad sector or a stray write)"


class FailureRow(SQLModel, table=True):
    """The latest failure of one source file with one engine; removed when it later succeeds."""

    __tablename__ = "failures"

    source_path: str = Field(primary_key=True)
    engine: str = Field(primary_key=True)
    judgment_id: str | None = None
    stage: str  # read | summarize | validate | store
    reason: str  # short kind: empty, binary, duplicate_id, invalid_output, ...
    message: str = Field(sa_column=Column(Text, nullable=False))
    at: datetime = Field(default_factory=_now)


class ImportRow(SQLModel, table=True):
    """A summary that came in through `aqgr import` rather than from a summarizer run here (shown by
    `aqgr status`); removed when this archive summarises the judgment with that engine itself."""

    __tablename__ = "imports"

    judgment_id: str = Field(primary_key=True)
    engine: str = Field(primary_key=True)
    source: str = Field(sa_column=Column(Text, nullable=False))  # file, or file:line
    imported_at: datetime = Field(default_factory=_now)


class WorkRow(SQLModel, table=True):
    """One source file to summarise with one engine: the work ledger (aqgr/archive/workqueue.py).
    Times are seconds since the epoch on the database's clock (one clock for every machine)."""

    __tablename__ = "work_items"
    __table_args__ = (Index("ix_work_items_engine_status", "engine", "status", "source_path"),)

    engine: str = Field(primary_key=True)
    source_path: str = Field(primary_key=True)
    judgment_id: str
    fingerprint: str  # size, mtime and engine version at registration: a change makes a done item pending again
    status: str = "pending"  # pending | claimed | done | failed
    force: bool = False  # summarise again even when unchanged (registered with --force)
    attempts: int = 0  # claims so far; a claim that outlives its lease counts
    claim_token: str | None = Field(default=None, index=True)  # the claiming worker run (WorkerRow.token)
    claimed_by: str | None = None  # worker name
    claimed_host: str | None = None
    claimed_pid: int | None = None
    lease_expires_at: float | None = None
    updated_at: float = 0.0


class WorkerRow(SQLModel, table=True):
    """One worker run of the ledger: who, where, its lease and last heartbeat."""

    __tablename__ = "workers"

    token: str = Field(primary_key=True)
    name: str
    host: str
    pid: int
    engine: str
    lease_s: float
    started_at: float
    heartbeat_at: float
    finished_at: float | None = None


class RateBucketRow(SQLModel, table=True):
    """A token bucket of a provider quota shared by every worker (aqgr/archive/quota.py)."""

    __tablename__ = "rate_buckets"

    key: str = Field(primary_key=True)  # 'provider:model:requests' or ':tokens'
    capacity: float
    rate_per_s: float
    level: float
    updated_at: float


_KEYS = {
    JudgmentRow: ("id",),
    SummaryRow: ("judgment_id", "engine"),
    FailureRow: ("source_path", "engine"),
    ImportRow: ("judgment_id", "engine"),
}
InTransaction = Callable[[Session], None]  # more work done in the same transaction as a write
_IN_CHUNK = 500  # ids per IN (...) list: well under SQLite's bound-parameter limit


def redact_url(url: str) -> str:
    """The URL with any password replaced by ***."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<unparsable database URL>"


_DAMAGED = ("database disk image is malformed", "file is not a database", "file is encrypted or is not a database")


def damage(exc: BaseException) -> str | None:
    """The problem, when `exc` says the database file itself is damaged (not locked, full or read-only)."""
    inner = getattr(exc, "orig", None) or exc
    if getattr(inner, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or (
        getattr(inner, "sqlstate", None) or ""
    ) in ("XX001", "XX002"):
        return str(inner).strip().splitlines()[0] if str(inner).strip() else type(inner).__name__
    message = str(inner).lower()
    return next((found for found in _DAMAGED if found in message), None)


def classify(exc: BaseException, path: str | None = None) -> StoreError:
    """A database exception as a StoreError with a reason ('disk_full', 'read_only', 'unavailable').
    `path`: the SQLite file, if it is one: SQLite says 'disk I/O error' or 'unable to open database
    file' when a full disk refuses its shared-memory file, which is then said as 'disk_full'."""
    from aqgr.foundation.sqlite_files import DISK_FULL, disk_full

    inner = getattr(exc, "orig", None) or exc
    message = str(inner).strip().splitlines()[0] if str(inner).strip() else type(inner).__name__
    lowered = message.lower()
    sqlstate = getattr(inner, "sqlstate", None) or ""
    if "disk is full" in lowered or "no space left" in lowered or sqlstate == "53100":
        return StoreError("disk_full", message)
    if path is not None and ("i/o error" in lowered or "unable to open" in lowered) and disk_full(path):
        return StoreError(DISK_FULL, f"{message} (the disk holding {path} is full)")
    if "readonly" in lowered or "read-only" in lowered or "read only" in lowered or sqlstate == "25006":
        return StoreError("read_only", message)
    return StoreError("unavailable", message)


def summary_problem(
    raw: str | None, *, full: bool = False, judgment_id: str | None = None, checksum: str | None = None
) -> str | None:
    """What is wrong with a stored summary's JSON text (None when it is a summary): not JSON, not an
    object, not the summary model, with `full` not the JSON Schema, of another judgment's id, or (given
    the `checksum` written with it) not the content that was written."""
    from pydantic import ValidationError

    from aqgr.foundation.errors import SummaryValidationError

    if not full and _verbatim(raw, checksum):
        try:
            found = StructuredSummary.model_validate_json(raw).judgment_id
        except (ValidationError, ValueError) as exc:
            return f"not a valid summary ({str(exc).splitlines()[0]})"
        return (
            None if judgment_id is None or found == judgment_id else f"the stored summary names judgment {found[:80]!r}"
        )
    try:
        data = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        return f"the stored JSON does not parse ({exc})"
    if not isinstance(data, dict):
        return f"the stored JSON is a {type(data).__name__}, not a summary object"
    if full:
        from aqgr.schemas.validation import validate_summary

        try:
            validate_summary(data)
        except SummaryValidationError as exc:
            return str(exc)
        except (ValidationError, ValueError, RecursionError) as exc:
            return f"not a valid summary ({str(exc).splitlines()[0]})"
    else:
        try:
            StructuredSummary.model_validate(data)
        except (ValidationError, ValueError) as exc:
            return f"not a valid summary ({str(exc).splitlines()[0]})"
    if judgment_id is not None and data.get("judgment_id") != judgment_id:
        return f"the stored summary names judgment {str(data.get('judgment_id'))[:80]!r}"
    if checksum is not None and summary_checksum(data) != checksum:
        return CHECKSUM_MISMATCH
    return None


class Store:
    """Typed access to the archive database. Methods commit their own transaction.

    `create=False` skips creating the tables (worker processes of a batch, whose parent
    already did)."""

    def __init__(self, url: str, *, create: bool = True):
        self.url = url
        self.damaged: dict[
            tuple[str, str], str
        ] = {}  # (judgment id, engine) -> problem, of summaries read and left out
        self._checksums: bool | None = None  # whether the summaries table has its checksum column (asked once)
        self.dialect = url.split(":", 1)[0].split("+", 1)[0]
        try:
            if self.dialect == "sqlite":
                self.engine = create_engine(
                    self._reading_url(url), connect_args={"timeout": 60}, json_serializer=canonical_json
                )
                event.listen(self.engine, "connect", _sqlite_pragmas)
            else:
                self.engine = create_engine(url, pool_pre_ping=True, json_serializer=canonical_json)
        except ModuleNotFoundError as exc:  # the database driver: PostgreSQL's is the extra [postgres]
            extra = "postgres" if self.dialect == "postgresql" else self.dialect
            raise MissingDependencyError(exc.name or self.dialect, extra) from None
        except (
            ArgumentError,
            ValueError,
            TypeError,
        ) as exc:  # not a URL, an unknown dialect, a port that is not a number
            raise ConfigError(
                f"invalid database URL {redact_url(url) if '://' in url else url!r} (--database-url / AQGR_DATABASE_URL): {exc}; "
                "give e.g. sqlite:////path/to/aqgr.db or postgresql+psycopg://user@host:5432/aqgr"
            ) from None
        event.listen(self.engine, "handle_error", self._on_error)
        if create:
            self._create_tables()

    def _on_error(self, context) -> None:
        """Every database error passes here: a damaged database becomes DatabaseDamagedError, whatever
        the query (reads included), so each command and route reports it the same way."""
        original = context.original_exception
        if isinstance(original, UnicodeEncodeError):  # a lone surrogate in an id or a name: no row can match it
            raise InvalidTextError("text given (an id or a name)", original.start, original.object[original.start])
        problem = damage(original)
        if problem is not None:
            raise DatabaseDamagedError(self.where, problem)

    @property
    def where(self) -> str:
        """The database for messages: the SQLite file's path, else the URL without its password."""
        from sqlalchemy.engine import make_url

        if self.dialect == "sqlite":
            try:
                database = make_url(self.url).database
            except Exception:
                database = None
            if database and database.startswith("file:"):  # an SQLite URI (uri=true): file:PATH?mode=ro
                database = database[5:].split("?", 1)[0]
            if database and database != ":memory:":
                import os

                return os.path.abspath(database)
        return redact_url(self.url)

    def _create_tables(self) -> None:
        try:
            with self.engine.begin() as conn:
                # concurrent first runs must not race on CREATE TABLE; the lock's key stays the bytes it
                # was first made of (this module's name then), so every version of aqgr takes the same lock
                if self.dialect == "postgresql":
                    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": zlib.crc32(b"aqgr.store.schema")})
                SQLModel.metadata.create_all(conn)
        except (OperationalError, DBAPIError) as exc:
            error = classify(exc, self._file)
            reason = "read_only" if error.reason == "unavailable" and self._sqlite_dir_read_only() else error.reason
            raise StoreError(reason, f"{redact_url(self.url)}: {error.detail}") from None
        try:
            with self.engine.begin() as conn:
                self._add_columns(conn)
        except (OperationalError, DBAPIError) as exc:  # a read-only database made before them: read as it is
            if classify(exc).reason != "read_only" and not self._sqlite_dir_read_only():
                raise classify(exc) from None

    def _add_columns(self, conn) -> None:
        """Columns added to aqgr's tables since a database was made (all nullable: `summaries.checksum`),
        and indexes, added in place: an older database is migrated, never refused."""
        if self.dialect == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": zlib.crc32(b"aqgr.store.schema")})
        found = inspect(conn)
        for table in SQLModel.metadata.sorted_tables:
            have = {c["name"] for c in found.get_columns(table.name)}
            for column in table.columns:
                if column.name not in have and column.nullable and not column.primary_key:
                    kind = column.type.compile(dialect=conn.dialect)
                    try:
                        conn.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}"))
                    except OperationalError as exc:  # SQLite: another process added it since we looked
                        if "duplicate column" not in str(exc).lower():
                            raise
        for table in SQLModel.metadata.sorted_tables:  # indexes added since (built once, on the first open for writing)
            have = {i["name"] for i in found.get_indexes(table.name)}
            for index in table.indexes:
                if index.name not in have:
                    try:
                        index.create(conn, checkfirst=True)
                    except OperationalError as exc:  # SQLite: another process made it since we looked
                        if "already exists" not in str(exc).lower():
                            raise
        self._checksums = None

    @property
    def has_checksums(self) -> bool:
        """Whether the summaries table has its checksum column (a database made before checksums and not
        yet opened for writing has not: its summaries are read as having no checksum yet)."""
        if self._checksums is None:
            try:
                self._checksums = "checksum" in {c["name"] for c in inspect(self.engine).get_columns("summaries")}
            except (OperationalError, DBAPIError):
                return False
        return self._checksums

    def _with_checksum(self, *columns):
        """`columns` and the summaries' checksum (NULL where the table has no such column yet)."""
        return (*columns, SummaryRow.checksum if self.has_checksums else literal_column("NULL").label("checksum"))

    @property
    def _file(self) -> str | None:
        """The SQLite file's path (None for another database)."""
        return self.where if self.dialect == "sqlite" and os.path.isabs(self.where) else None

    def _reading_url(self, url: str) -> str:
        """`url`, or for an SQLite file in a folder that cannot be written (a read-only mount, a home
        without write permission) the URL that opens it read-only: SQLite could not make the -shm file
        it reads a write-ahead-logged database with (aqgr/foundation/sqlite_files.py), and every read
        would fail. Writes then raise StoreError 'read_only'."""
        from sqlalchemy.engine import make_url

        from aqgr.foundation.sqlite_files import read_uri

        try:
            database = make_url(url).database
        except Exception:  # noqa: BLE001 - not a URL: create_engine says so
            return url
        if not database or database == ":memory:" or database.startswith("file:") or not self._sqlite_dir_read_only():
            return url
        if not os.path.isfile(database):
            return url
        return f"sqlite:///{read_uri(database)}&uri=true"

    def _sqlite_dir_read_only(self) -> bool:
        """SQLite reports a read-only folder as 'unable to open database file' (it cannot make its -wal/-shm files)."""
        import os

        from sqlalchemy.engine import make_url

        database = make_url(self.url).database if self.dialect == "sqlite" else None
        folder = os.path.dirname(os.path.abspath(database)) if database and database != ":memory:" else None
        return bool(folder) and os.path.isdir(folder) and not os.access(folder, os.W_OK)

    def integrity(self) -> list[str]:
        """What is wrong with the database, empty when nothing is: SQLite's `PRAGMA integrity_check`
        (every page and index), elsewhere a full read of every table."""
        try:
            with self.engine.connect() as conn:
                if self.dialect == "sqlite":
                    found = [
                        line
                        for row in conn.exec_driver_sql("PRAGMA integrity_check(20)")
                        for line in str(row[0]).splitlines()
                    ]
                    return [] if found == ["ok"] else found
                for table in SQLModel.metadata.sorted_tables:
                    conn.execute(select(func.count()).select_from(table)).one()
                return []
        except DatabaseDamagedError as exc:
            return [exc.detail]
        except (OperationalError, DBAPIError) as exc:
            return [str(classify(exc))]

    def session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    def close(self) -> None:
        self.engine.dispose()

    def _upsert(self, session: Session, row: SQLModel) -> None:
        """INSERT ... ON CONFLICT (primary key) DO UPDATE: atomic against concurrent writers."""
        model = type(row)
        values = {c.name: getattr(row, c.name) for c in model.__table__.columns}
        keys = _KEYS[model]
        if self.dialect in ("sqlite", "postgresql"):
            if self.dialect == "sqlite":
                from sqlalchemy.dialects.sqlite import insert
            else:
                from sqlalchemy.dialects.postgresql import insert
            statement = insert(model.__table__).values(**values)
            statement = statement.on_conflict_do_update(
                index_elements=list(keys), set_={k: v for k, v in values.items() if k not in keys}
            )
            session.exec(statement)
        else:  # other databases: merge (select then insert/update)
            session.merge(row)

    def _write(self, action, then: InTransaction | None = None) -> None:
        try:
            with self.session() as s:
                if then is not None:
                    self._lock_all(s)
                action(s)
                if then is not None:
                    then(s)
                s.commit()
        except (OperationalError, DBAPIError) as exc:
            raise classify(exc, self._file) from exc

    def _lock_all(self, session: Session) -> None:
        if self.dialect == "sqlite":  # take the write lock now: a read-then-write upgrade can fail as 'locked'
            session.connection().exec_driver_sql("BEGIN IMMEDIATE")

    @contextmanager
    def locked(self) -> Iterator[Session]:
        """A transaction for read-modify-write (claims, token buckets), committed on exit.
        PostgreSQL: lock the rows you read with `SELECT ... FOR UPDATE [SKIP LOCKED]`; SQLite has
        neither, so the whole database is locked (BEGIN IMMEDIATE) for the transaction."""
        try:
            with self.session() as s:
                self._lock_all(s)
                yield s
                s.commit()
        except (OperationalError, DBAPIError) as exc:
            raise classify(exc, self._file) from exc

    def clock(self, session: Session) -> float:
        """Now, in seconds since the epoch, on the database's clock (PostgreSQL) or this machine's
        (SQLite, a single machine): leases and buckets then agree across machines."""
        if self.dialect == "postgresql":
            return float(session.exec(text("SELECT extract(epoch FROM clock_timestamp())")).one()[0])
        import time

        return time.time()

    # judgments -----------------------------------------------------------
    def judgment(self, judgment_id: str) -> JudgmentRow | None:
        if not encodable(judgment_id):
            return None
        with self.session() as s:
            return s.get(JudgmentRow, judgment_id)

    def judgment_ids(self) -> set[str]:
        with self.session() as s:
            return set(s.exec(select(JudgmentRow.id)).all())

    def text(self, judgment_id: str) -> str | None:
        """The judgment's source text (its column alone: the citation linker reads every text)."""
        if not encodable(judgment_id):
            return None
        # on a connection, not an ORM session: a build reads each text three times (a quarter of the
        # ORM's cost a call: at a million judgments, minutes)
        with self.engine.connect() as conn:
            return conn.execute(_TEXT_OF, {"id": judgment_id}).scalar()

    def judgments_with_sha(self, sha256: str) -> list[tuple[str, str, datetime]]:
        """(id, source path, when added) of the stored judgments whose source file had these bytes:
        how a batch knows a file it meets under a new name is one it has already stored."""
        with self.session() as s:
            return [
                tuple(r)
                for r in s.exec(
                    select(JudgmentRow.id, JudgmentRow.source_path, JudgmentRow.added_at).where(
                        JudgmentRow.sha256 == sha256
                    )
                ).all()
            ]

    def move(self, judgment_id: str, source_path: str, text: str) -> None:
        """Record that a stored judgment's file is now at `source_path` (renamed or moved, same bytes);
        its id, summaries, index entries and citations stay. `text` fills an imported placeholder's."""

        def action(s: Session) -> None:
            row = s.get(JudgmentRow, judgment_id)
            if row is not None:
                row.source_path, row.text, row.n_chars = source_path, text, len(text)
                s.add(row)

        self._write(action)

    def remove(self, ids: Iterable[str]) -> list[str]:
        """Delete judgments with their summaries (every engine), import records, failures and work
        items, in one transaction; returns the ids that were stored."""
        wanted = [i for i in dict.fromkeys(ids) if encodable(i)]
        found: list[str] = []

        def action(s: Session) -> None:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                found.extend(s.exec(select(JudgmentRow.id).where(JudgmentRow.id.in_(chunk))).all())
                for table, column in (
                    (SummaryRow, SummaryRow.judgment_id),
                    (ImportRow, ImportRow.judgment_id),
                    (FailureRow, FailureRow.judgment_id),
                    (WorkRow, WorkRow.judgment_id),
                    (JudgmentRow, JudgmentRow.id),
                ):
                    s.exec(delete(table).where(column.in_(chunk)))

        self._write(action)
        return found

    # summaries -----------------------------------------------------------
    def summary_row(self, judgment_id: str, engine: str) -> SummaryRow | None:
        if not encodable(judgment_id):
            return None
        with self.session() as s:
            return s.get(SummaryRow, (judgment_id, engine))

    @staticmethod
    def _summary_row(judgment_id: str, summary: StructuredSummary) -> SummaryRow:
        prov = summary.provenance
        return SummaryRow(
            judgment_id=judgment_id,
            engine=prov.engine,
            engine_version=prov.engine_version,
            schema_version=prov.schema_version,
            source_sha256=prov.source_sha256,
            data=(data := summary.model_dump(mode="json")),
            created_at=prov.created_at,
            checksum=summary_checksum(data),
        )

    def save(self, judgment: JudgmentRow, summary: StructuredSummary, *, then: InTransaction | None = None) -> None:
        """Store a judgment and its (already validated) summary in one transaction; clears its failure.
        `then(session)` runs in that transaction (the work ledger marks the item done); if it raises,
        nothing is stored."""
        row = self._summary_row(judgment.id, summary)

        def action(s: Session) -> None:
            self._upsert(s, judgment)
            self._upsert(s, row)
            s.exec(
                delete(FailureRow).where(
                    FailureRow.source_path == judgment.source_path, FailureRow.engine == row.engine
                )
            )
            s.exec(
                delete(ImportRow).where(ImportRow.judgment_id == judgment.id, ImportRow.engine == row.engine)
            )  # made here now

        self._write(action, then)

    def save_many(self, items: Sequence[tuple[JudgmentRow, StructuredSummary]]) -> None:
        """`save` for many judgments in one transaction (bulk loads: one commit, and one
        multi-row upsert per table, instead of a transaction per judgment); the same upserts,
        and each judgment's failure and import records for that engine are cleared. All or
        nothing: on an error none is stored."""
        if not items:
            return
        judgments = [{c.name: getattr(j, c.name) for c in JudgmentRow.__table__.columns} for j, _ in items]
        rows = [self._summary_row(j.id, s) for j, s in items]
        summaries = [{c.name: getattr(r, c.name) for c in SummaryRow.__table__.columns} for r in rows]
        by_engine: dict[str, list[tuple[str, str]]] = {}
        for (judgment, _), row in zip(items, rows):
            by_engine.setdefault(row.engine, []).append((judgment.id, judgment.source_path))

        def action(s: Session) -> None:
            self._upsert_many(s, JudgmentRow, judgments)
            self._upsert_many(s, SummaryRow, summaries)
            for engine, pairs in by_engine.items():
                for at in range(0, len(pairs), _IN_CHUNK):
                    chunk = pairs[at : at + _IN_CHUNK]
                    s.exec(
                        delete(FailureRow).where(
                            FailureRow.engine == engine, FailureRow.source_path.in_([p for _, p in chunk])
                        )
                    )
                    s.exec(
                        delete(ImportRow).where(
                            ImportRow.engine == engine, ImportRow.judgment_id.in_([i for i, _ in chunk])
                        )
                    )

        self._write(action)

    def _upsert_many(self, session: Session, model: type[SQLModel], values: list[dict[str, Any]]) -> None:
        """`_upsert` of many rows of one table as one executemany statement."""
        keys = _KEYS[model]
        if self.dialect not in ("sqlite", "postgresql"):
            for row in values:
                session.merge(model(**row))
            return
        if self.dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert
        statement = insert(model.__table__)
        statement = statement.on_conflict_do_update(
            index_elements=list(keys),
            set_={c.name: statement.excluded[c.name] for c in model.__table__.columns if c.name not in keys},
        )
        session.connection().execute(statement, values)

    def save_imported(self, summary: StructuredSummary, *, source: str, replace: bool = False) -> str:
        """Store an imported (already validated) summary, recorded as imported. Its judgment row is kept
        when present, else a text-less placeholder is added. Returns 'new'; 'same' when an identical
        summary of that engine is stored (nothing written); 'replaced' when a different one was stored
        and `replace` is true; 'refused' (nothing written) when a different one is stored and `replace`
        is false. Checked and written in one locked transaction."""
        row = self._summary_row(summary.judgment_id, summary)
        outcome = "new"
        with self.locked() as s:
            stored = s.get(SummaryRow, (summary.judgment_id, row.engine), with_for_update=True)
            if stored is not None:
                if stored.data == row.data:
                    if stored.checksum != row.checksum:  # stored before checksums: it gets one now
                        stored.checksum = row.checksum
                        s.add(stored)
                    return "same"
                if not replace:
                    return "refused"
                outcome = "replaced"
            if s.get(JudgmentRow, summary.judgment_id) is None:
                self._upsert(
                    s,
                    JudgmentRow(
                        id=summary.judgment_id,
                        source_path=source,
                        sha256=summary.provenance.source_sha256,
                        n_chars=0,
                        text="",
                    ),
                )
            self._upsert(s, row)
            self._upsert(
                s, ImportRow(judgment_id=summary.judgment_id, engine=row.engine, source=source, imported_at=_now())
            )
        return outcome

    def count_imported(self) -> dict[tuple[str, str], int]:
        """{(engine, schema_version): count} of the stored summaries that came in through an import."""
        with self.session() as s:
            query = (
                select(SummaryRow.engine, SummaryRow.schema_version, func.count())
                .join(
                    ImportRow,
                    (ImportRow.judgment_id == SummaryRow.judgment_id) & (ImportRow.engine == SummaryRow.engine),
                )
                .group_by(SummaryRow.engine, SummaryRow.schema_version)
            )
            return {(e, v): n for e, v, n in s.exec(query).all()}

    def summaries(self, engine: str, ids: Iterable[str] | None = None) -> list[StructuredSummary]:
        """Every stored summary made by `engine` (optionally only these ids), ordered by judgment id.
        A damaged one (its stored JSON does not parse or is not a summary) is left out and recorded
        in `damaged`: one bad row never fails the others' reads."""
        with self.session() as s:
            query = (
                select(*self._with_checksum(SummaryRow.judgment_id, cast(SummaryRow.data, Text)))
                .where(SummaryRow.engine == engine)
                .order_by(SummaryRow.judgment_id)
            )
            if ids is not None:
                query = query.where(SummaryRow.judgment_id.in_([i for i in ids if encodable(i)]))
            rows = s.exec(query).all()
        out = []
        for judgment_id, raw, checksum in rows:
            summary, _ = self._document(judgment_id, engine, raw, checksum, want_data=False)
            if summary is not None:
                out.append(summary)
        return out

    def _document(
        self, judgment_id: str, engine: str, raw: str | None, checksum: str | None, want_data: bool = True
    ) -> tuple[StructuredSummary | None, dict | None]:
        """The summary stored as `raw` and its JSON document, or (None, None) with the problem recorded
        in `damaged`: it does not parse, is not a summary, or does not match its checksum. Without
        `want_data`, the document may be None (not parsed twice) beside a sound summary."""
        from pydantic import ValidationError

        verbatim = _verbatim(raw, checksum)  # no canonical copy made to check it; the model parses the text itself
        try:
            if verbatim:
                summary = StructuredSummary.model_validate_json(raw)
                data = summary.model_dump(mode="json") if want_data else None  # as it was stored, in the model's order
            else:
                data = json.loads(raw) if isinstance(raw, str) else raw
                summary = StructuredSummary.model_validate(data)
        except (ValidationError, ValueError, TypeError):
            self.damaged[(judgment_id, engine)] = summary_problem(raw) or "not a valid summary"
            return None, None
        if not verbatim and checksum is not None and summary_checksum(data) != checksum:
            self.damaged[(judgment_id, engine)] = CHECKSUM_MISMATCH
            return None, None
        self.damaged.pop((judgment_id, engine), None)
        return summary, data

    def check_summaries(self, batch: int = 500) -> list[tuple[str, str, str]]:
        """(judgment id, engine, problem) of every stored summary that does not parse, is not a summary, or
        does not match its checksum (one without a checksum: does not pass the summary's JSON Schema):
        what `aqgr check` reports (a flipped byte found, with its id)."""
        found: list[tuple[str, str, str]] = []
        last: tuple[str, str] = ("", "")
        while True:
            with self.session() as s:
                query = (
                    select(*self._with_checksum(SummaryRow.judgment_id, SummaryRow.engine, cast(SummaryRow.data, Text)))
                    .where(
                        (SummaryRow.judgment_id > last[0])
                        | ((SummaryRow.judgment_id == last[0]) & (SummaryRow.engine > last[1]))
                    )
                    .order_by(SummaryRow.judgment_id, SummaryRow.engine)
                    .limit(batch)
                )
                rows = s.exec(query).all()
            if not rows:
                return found
            for judgment_id, engine, raw, checksum in rows:
                # a summary is validated against the JSON Schema before it is stored: one that matches its checksum is
                # what was validated (the model's check is enough), one without a checksum is validated again in full
                problem = summary_problem(raw, full=checksum is None, judgment_id=judgment_id, checksum=checksum)
                if problem is not None:
                    found.append((judgment_id, engine, problem))
            last = (rows[-1][0], rows[-1][1])

    def without_checksum(self) -> int:
        """How many stored summaries have no checksum yet (stored before checksums existed)."""
        with self.session() as s:
            query = select(func.count()).select_from(SummaryRow)
            return s.exec(query.where(SummaryRow.checksum.is_(None)) if self.has_checksums else query).one()

    def add_checksums(self, batch: int = 500) -> int:
        """Give every stored summary without a checksum its checksum (those that parse and are summaries:
        a damaged one is left as it is, for `aqgr check` to report); returns how many got one."""
        if not self.has_checksums:
            return 0
        added, skipped = 0, 0
        while True:
            with self.session() as s:
                rows = s.exec(
                    select(SummaryRow.judgment_id, SummaryRow.engine, cast(SummaryRow.data, Text))
                    .where(SummaryRow.checksum.is_(None))
                    .order_by(SummaryRow.judgment_id, SummaryRow.engine)
                    .offset(skipped)
                    .limit(batch)
                ).all()
            if not rows:
                return added
            sums = {
                (j, e): summary_checksum(json.loads(raw))
                for j, e, raw in rows
                if summary_problem(raw, judgment_id=j) is None
            }
            skipped += len(rows) - len(sums)

            def action(s: Session, sums: dict = sums) -> None:
                for (judgment_id, engine), checksum in sums.items():
                    s.exec(
                        update(SummaryRow)
                        .where(
                            SummaryRow.judgment_id == judgment_id,
                            SummaryRow.engine == engine,
                            SummaryRow.checksum.is_(None),
                        )
                        .values(checksum=checksum)
                    )

            self._write(action)
            added += len(sums)

    def summary_ids(self, engine: str) -> list[str]:
        """The ids of the judgments with a summary by `engine`, ordered."""
        with self.session() as s:
            return list(
                s.exec(
                    select(SummaryRow.judgment_id).where(SummaryRow.engine == engine).order_by(SummaryRow.judgment_id)
                ).all()
            )

    def summary_fingerprints(self, engine: str) -> dict[str, str]:
        """judgment id -> fingerprint (retrieval/documents.py `summary_fingerprint`) of every summary by
        `engine`, from the row's columns: no summary is parsed, so this is cheap at any size."""
        from aqgr.retrieval.documents import fingerprint_of

        with self.session() as s:
            rows = s.exec(
                select(
                    SummaryRow.judgment_id, SummaryRow.engine_version, SummaryRow.source_sha256, SummaryRow.created_at
                ).where(SummaryRow.engine == engine)
            ).all()
        return {j: fingerprint_of(engine, v, sha, created) for j, v, sha, created in rows}

    def iter_summary_models(
        self, engine: str, ids: Iterable[str] | None = None, batch: int = 500
    ) -> Iterator[StructuredSummary]:
        """The summaries by `engine` (of `ids` in the given order, or all by judgment id), parsed
        `batch` at a time: memory stays flat however many there are."""
        if ids is None:
            yield from (summary for summary, _ in self._iter_documents(engine, batch, want_data=False))
            return
        chunk: list[str] = []
        for judgment_id in ids:
            chunk.append(judgment_id)
            if len(chunk) >= batch:
                yield from self.summaries(engine, ids=chunk)
                chunk = []
        if chunk:
            yield from self.summaries(engine, ids=chunk)

    def texts(self, ids: Iterable[str]) -> dict[str, str]:
        """judgment id -> source text of those of `ids` that are stored (one query)."""
        wanted = [i for i in ids if encodable(i)]
        if not wanted:
            return {}
        with self.session() as s:
            return dict(s.exec(select(JudgmentRow.id, JudgmentRow.text).where(JudgmentRow.id.in_(wanted))).all())

    def iter_summaries(self, engine: str | None = None, batch: int = 500) -> Iterator[dict[str, Any]]:
        """Stored summaries as JSON documents, by judgment id (then engine), `batch` rows at a time;
        a damaged one is left out and recorded in `damaged` (see `summaries`)."""
        return (data for _, data in self._iter_documents(engine, batch, want_data=True))

    def _iter_documents(
        self, engine: str | None, batch: int, *, want_data: bool
    ) -> Iterator[tuple[StructuredSummary, dict | None]]:
        """(summary, document) of `iter_summaries`; without `want_data` the document may be None."""
        last: tuple[str, str] = ("", "")
        while True:
            with self.session() as s:
                query = select(
                    *self._with_checksum(SummaryRow.judgment_id, SummaryRow.engine, cast(SummaryRow.data, Text))
                )
                if engine is not None:
                    query = query.where(SummaryRow.engine == engine)
                query = query.where(
                    (SummaryRow.judgment_id > last[0])
                    | ((SummaryRow.judgment_id == last[0]) & (SummaryRow.engine > last[1]))
                )
                rows = s.exec(query.order_by(SummaryRow.judgment_id, SummaryRow.engine).limit(batch)).all()
            if not rows:
                return
            for judgment_id, engine_name, raw, checksum in rows:
                summary, data = self._document(judgment_id, engine_name, raw, checksum, want_data)
                if summary is not None:
                    yield summary, data
            last = (rows[-1][0], rows[-1][1])

    def count_summaries(self) -> dict[tuple[str, str], int]:
        """{(engine, schema_version): count}."""
        with self.session() as s:
            rows = s.exec(
                select(SummaryRow.engine, SummaryRow.schema_version, func.count()).group_by(
                    SummaryRow.engine, SummaryRow.schema_version
                )
            ).all()
        return {(e, v): n for e, v, n in rows}

    # failures ------------------------------------------------------------
    def record_failure(
        self,
        *,
        source_path: str,
        engine: str,
        judgment_id: str | None,
        stage: str,
        reason: str,
        message: str,
        then: InTransaction | None = None,
    ) -> None:
        row = FailureRow(
            source_path=source_path,
            engine=engine,
            judgment_id=judgment_id,
            stage=stage,
            reason=reason,
            message=message.replace("\x00", ""),
            at=_now(),
        )
        self._write(lambda s: self._upsert(s, row), then)

    def clear_failure(self, source_path: str, engine: str, *, then: InTransaction | None = None) -> None:
        self._write(
            lambda s: s.exec(
                delete(FailureRow).where(FailureRow.source_path == source_path, FailureRow.engine == engine)
            ),
            then,
        )

    def failures(self, engine: str | None = None) -> list[FailureRow]:
        with self.session() as s:
            query = select(FailureRow).order_by(FailureRow.source_path)
            if engine is not None:
                query = query.where(FailureRow.engine == engine)
            return list(s.exec(query).all())

    def count_failures(self) -> dict[tuple[str, str], int]:
        """{(engine, reason): count}."""
        with self.session() as s:
            rows = s.exec(
                select(FailureRow.engine, FailureRow.reason, func.count()).group_by(
                    FailureRow.engine, FailureRow.reason
                )
            ).all()
        return {(e, r): n for e, r, n in rows}

    def count_judgments(self) -> int:
        with self.session() as s:
            return s.exec(select(func.count()).select_from(JudgmentRow)).one()


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
    except Exception:  # a read-only medium cannot switch journal mode; reading still works
        pass
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class SummaryReader(Mapping):
    """The summaries of one engine as a read-only mapping judgment id -> StructuredSummary, read
    from the store when asked (`many` fetches a batch in one query) and kept in a bounded
    least-recently-used memo: a search reads the few dozen it explains, never the archive.

    Membership asks the store; iteration and len are offered for completeness (both query)."""

    def __init__(self, store: Store, engine: str, *, memo: int = 4096):
        self._store, self._engine, self._size = store, engine, memo
        self._memo: OrderedDict[str, StructuredSummary] = OrderedDict()
        self._lock = threading.Lock()

    def many(self, ids: Iterable[str]) -> dict[str, StructuredSummary]:
        """Those of `ids` that have a summary (one query for the ones not in the memo)."""
        wanted = list(dict.fromkeys(ids))
        out: dict[str, StructuredSummary] = {}
        with self._lock:
            for i in wanted:
                if i in self._memo:
                    self._memo.move_to_end(i)
                    out[i] = self._memo[i]
        todo = [i for i in wanted if i not in out]
        if todo:
            found = {s.judgment_id: s for s in self._store.summaries(self._engine, ids=todo)}
            with self._lock:
                for i, summary in found.items():
                    self._memo[i] = summary
                while len(self._memo) > self._size:
                    self._memo.popitem(last=False)
            out.update(found)
        return {i: out[i] for i in wanted if i in out}

    def damaged_among(self, ids: Iterable[str]) -> list[str]:
        """Those of `ids` whose stored summary was read and found damaged (left out of every answer)."""
        return [i for i in ids if (i, self._engine) in self._store.damaged]

    def __getitem__(self, judgment_id: str) -> StructuredSummary:
        found = self.many([judgment_id])
        if judgment_id not in found:
            raise KeyError(judgment_id)
        return found[judgment_id]

    def __contains__(self, judgment_id: object) -> bool:
        return isinstance(judgment_id, str) and bool(self.many([judgment_id]))

    def __iter__(self) -> Iterator[str]:
        return iter(self._store.summary_ids(self._engine))

    def __len__(self) -> int:
        return sum(n for (engine, _), n in self._store.count_summaries().items() if engine == self._engine)
