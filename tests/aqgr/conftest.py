"""The archive's database for a test: SQLite (always) and PostgreSQL (when a server is given).

PostgreSQL runs need a server URL in AQGR_TEST_POSTGRES_URL (a role that may create
databases, e.g. postgresql+psycopg://postgres@127.0.0.1:5432/postgres); `.ci/run`
starts one on 127.0.0.1 and exports it. Each test gets a fresh database, dropped after.
"""

from __future__ import annotations

import os
import uuid

import pytest

POSTGRES_ENV = "AQGR_TEST_POSTGRES_URL"
NO_POSTGRES = f"no PostgreSQL server for the tests: set {POSTGRES_ENV} to a server URL (bash .ci/run starts one)"


def _admin(url: str):
    import psycopg
    from sqlalchemy.engine import make_url

    u = make_url(url)
    return psycopg.connect(
        host=u.host, port=u.port, user=u.username, password=u.password, dbname=u.database or "postgres", autocommit=True
    ), u


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, home, monkeypatch):
    """The URL of an empty archive database; also what Archive(home) and the CLI will use."""
    if request.param == "sqlite":
        monkeypatch.delenv("AQGR_DATABASE_URL", raising=False)
        yield f"sqlite:///{home / 'aqgr.db'}"
        return
    server = os.environ.get(POSTGRES_ENV)
    if not server:
        pytest.skip(NO_POSTGRES)
    name = f"aqgr_test_{uuid.uuid4().hex[:12]}"
    conn, base = _admin(server)
    with conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = base.set(database=name).render_as_string(hide_password=False)
    monkeypatch.setenv("AQGR_DATABASE_URL", url)
    yield url
    conn, _ = _admin(server)
    with conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def archive(database_url, home):
    from aqgr import Archive

    return Archive(home)
