"""The archive's database: judgments, their summaries and per-document failures.

sqlmodel over SQLite by default (a file in the aqgr home); any SQLAlchemy URL works,
so PostgreSQL can be used by setting the database URL. Each judgment and its summary
are written in one transaction: a crash never leaves a half-written row.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable, Iterator

from sqlalchemy import JSON, Column, Text, event
from sqlmodel import Field, Session, SQLModel, create_engine, delete, func, select

from schemas.summary import StructuredSummary


def _now() -> datetime:
    return datetime.now(timezone.utc)


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

    judgment_id: str = Field(primary_key=True, foreign_key="judgments.id")
    engine: str = Field(primary_key=True)
    engine_version: str
    schema_version: str
    source_sha256: str
    data: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=_now)


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


class Store:
    """Typed access to the archive database. Methods commit their own transaction."""

    def __init__(self, url: str):
        self.url = url
        connect_args = {"timeout": 30} if url.startswith("sqlite") else {}
        self.engine = create_engine(url, connect_args=connect_args)
        if url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
        SQLModel.metadata.create_all(self.engine)

    def session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    # judgments -----------------------------------------------------------
    def judgment(self, judgment_id: str) -> JudgmentRow | None:
        with self.session() as s:
            return s.get(JudgmentRow, judgment_id)

    def judgment_ids(self) -> set[str]:
        with self.session() as s:
            return set(s.exec(select(JudgmentRow.id)).all())

    def text(self, judgment_id: str) -> str | None:
        row = self.judgment(judgment_id)
        return row.text if row else None

    # summaries -----------------------------------------------------------
    def summary_row(self, judgment_id: str, engine: str) -> SummaryRow | None:
        with self.session() as s:
            return s.get(SummaryRow, (judgment_id, engine))

    def save(self, judgment: JudgmentRow, summary: StructuredSummary) -> None:
        """Store a judgment and its (already validated) summary in one transaction."""
        prov = summary.provenance
        row = SummaryRow(
            judgment_id=judgment.id,
            engine=prov.engine,
            engine_version=prov.engine_version,
            schema_version=prov.schema_version,
            source_sha256=prov.source_sha256,
            data=summary.model_dump(mode="json"),
            created_at=prov.created_at,
        )
        with self.session() as s:
            s.merge(judgment)
            s.merge(row)
            s.exec(delete(FailureRow).where(FailureRow.source_path == judgment.source_path, FailureRow.engine == prov.engine))
            s.commit()

    def summaries(self, engine: str, ids: Iterable[str] | None = None) -> list[StructuredSummary]:
        """Every stored summary made by `engine` (optionally only these ids), ordered by judgment id."""
        with self.session() as s:
            query = select(SummaryRow).where(SummaryRow.engine == engine).order_by(SummaryRow.judgment_id)
            if ids is not None:
                query = query.where(SummaryRow.judgment_id.in_(list(ids)))
            rows = s.exec(query).all()
        return [StructuredSummary.model_validate(r.data) for r in rows]

    def iter_summaries(self, engine: str, batch: int = 500) -> Iterator[StructuredSummary]:
        yield from self.summaries(engine)

    def count_summaries(self) -> dict[tuple[str, str], int]:
        """{(engine, schema_version): count}."""
        with self.session() as s:
            rows = s.exec(select(SummaryRow.engine, SummaryRow.schema_version, func.count()).group_by(SummaryRow.engine, SummaryRow.schema_version)).all()
        return {(e, v): n for e, v, n in rows}

    # failures ------------------------------------------------------------
    def record_failure(self, *, source_path: str, engine: str, judgment_id: str | None, stage: str, reason: str, message: str) -> None:
        with self.session() as s:
            s.merge(FailureRow(source_path=source_path, engine=engine, judgment_id=judgment_id, stage=stage, reason=reason, message=message))
            s.commit()

    def failures(self, engine: str | None = None) -> list[FailureRow]:
        with self.session() as s:
            query = select(FailureRow).order_by(FailureRow.source_path)
            if engine is not None:
                query = query.where(FailureRow.engine == engine)
            return list(s.exec(query).all())

    def count_judgments(self) -> int:
        with self.session() as s:
            return s.exec(select(func.count()).select_from(JudgmentRow)).one()


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
