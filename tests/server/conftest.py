"""Archives and a live server on 127.0.0.1 for the server, web page and MCP tests.

Archives use the hashing embedder (no torch): the sample archive builds in about 2 s."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from aqgr import Archive, IndexSpec, Settings

FAST = IndexSpec(embedder="hashing.v1")


def TestClient(app, **kwargs):
    """Starlette's test client, addressing the server as a browser on this machine does (Host: 127.0.0.1):
    the server answers only the hosts it was started for, and Starlette's default 'testserver' is not one."""
    from fastapi.testclient import TestClient as _TestClient

    kwargs.setdefault("base_url", "http://127.0.0.1")
    return _TestClient(app, **kwargs)


REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
# Facts that bring up the sample's overruled judgment: SC012 (quota-rota seniority), overruled by SC017.
SENIORITY_FACTS = (
    "Junior engineers of a state irrigation department were promoted as Assistant Engineers on an ad hoc basis "
    "because the state held no direct recruitment for several years; they were regularised later, and the direct "
    "recruits appointed afterwards were placed above them in the seniority list. The promotees say the quota rule "
    "broke down and their officiating service must count for seniority."
)

STATUTES = {
    "S1": "Title: Section 32 of the Indian Evidence Act, 1872\nDesc: Statements, written or verbal, of relevant facts made by a person who is dead, when the statement is made by a person as to the cause of his death, or as to any of the circumstances of the transaction which resulted in his death (dying declaration).",
    "S2": "Title: Article 311 of the Constitution of India\nDesc: No person employed in a civil capacity shall be dismissed or removed or reduced in rank except after an inquiry in which he has been informed of the charges against him and given a reasonable opportunity of being heard.",
    "S3": "Title: Section 302 of the Indian Penal Code\nDesc: Whoever commits murder shall be punished with death, or imprisonment for life, and shall also be liable to fine.",
}


def build_sample(home: Path, *, statutes_dir: Path | None = None) -> Archive:
    archive = Archive(settings=Settings.resolve(home, index=FAST))
    archive.summarize([SAMPLE / "judgments"])
    archive.build_index()
    if statutes_dir is not None:
        from aqgr.pipeline.statutes import StatuteCollection

        statutes_dir.mkdir(parents=True, exist_ok=True)
        for name, text in STATUTES.items():
            (statutes_dir / f"{name}.txt").write_text(text, encoding="utf-8")
        StatuteCollection(archive.settings).add([statutes_dir])
    return archive


@pytest.fixture(scope="session")
def sample_archive(tmp_path_factory) -> Archive:
    """The sample archive (17 judgments) with three statutes; shared, read-only."""
    root = tmp_path_factory.mktemp("sample")
    return build_sample(root / "home", statutes_dir=root / "statutes")


@pytest.fixture(scope="session")
def scenarios() -> list[dict]:
    import json

    return json.loads((SAMPLE / "scenarios.json").read_text(encoding="utf-8"))


class LiveServer:
    """uvicorn serving an app in a thread, on a socket bound to 127.0.0.1 on a free port."""

    def __init__(self, app, **options):
        import uvicorn

        self.app = app
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(
            uvicorn.Config(app, log_level="critical", lifespan="on", timeout_graceful_shutdown=2, **options)
        )
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


@pytest.fixture(scope="session")
def live_server(sample_archive):
    from aqgr.interfaces.server import ServeConfig, create_app

    with LiveServer(create_app(archive=sample_archive, config=ServeConfig(reload_check_seconds=0))) as server:
        yield server
