"""The HTTP API over the sample archive (in-process client; fast)."""

from __future__ import annotations

import pytest

from aqgr import Archive, Settings
from aqgr.interfaces.server import ServeConfig, create_app
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, write_judgments
from tests.server.conftest import (
    FAST,
    SENIORITY_FACTS,
    TestClient,  # Host: 127.0.0.1
)


@pytest.fixture(scope="module")
def client(sample_archive):
    with TestClient(create_app(archive=sample_archive), raise_server_exceptions=False) as client:
        yield client


def _archive_ids(archive) -> set[str]:
    return {s.judgment_id for s in archive.summaries()}


def test_health_version_and_openapi(client):
    health = client.get("/api/health").json()
    assert health == {"status": "ok", "version": "0.1.0", "judgments_indexed": 17, "statutes": True, "detail": None}
    version = client.get("/api/version").json()
    assert version["schema_version"] and version["engines"]["explainer"] == "evidence.v2"
    spec = client.get("/openapi.json").json()
    assert {
        "/api/search",
        "/api/questions",
        "/api/judgments/{judgment_id}",
        "/api/judgments/{judgment_id}/text",
        "/api/statutes/search",
    } <= set(spec["paths"])
    assert {"SearchResult", "Hit", "CandidateQuestion", "StructuredSummary"} <= set(spec["components"]["schemas"])
    assert client.get("/docs").status_code == 404  # the docs pages load a CDN: off


def test_candidate_questions_with_top_three_preselected(client, scenarios):
    body = client.post("/api/questions", json={"facts": scenarios[0]["facts"]}).json()
    assert len(body["candidates"]) == 10 and body["preselected"] == [0, 1, 2]
    assert "dying declaration" in body["candidates"][0]["text"].lower()
    assert body["engine"] == "harvest.v1"


def test_search_with_chosen_questions_is_grounded(client, sample_archive, scenarios):
    facts = scenarios[0]["facts"]
    chosen = [
        "Whether a dying declaration recorded by a police officer without a doctor's certificate can alone support a conviction?"
    ]
    result = client.post("/api/search", json={"facts": facts, "questions": chosen, "k": 5}).json()
    assert result["questions"] == chosen and result["questions_chosen_by_user"] is True
    assert 1 <= len(result["hits"]) <= 5
    assert {h["judgment_id"] for h in result["hits"]} <= _archive_ids(sample_archive)
    assert {"SC001", "SC007"} <= {h["judgment_id"] for h in result["hits"][:3]}
    assert all(1 <= h["score"] <= 10 and h["parties"] and h["legal_issue"] and h["reason"] for h in result["hits"])
    assert result["dropped_not_in_archive"] == 0 and result["engines"]["questions"] == "harvest.v1"


def test_search_options_are_applied_and_checked(client, scenarios):
    facts = scenarios[0]["facts"]
    ok = client.post("/api/search", json={"facts": facts, "k": 3, "options": {"retrievers": ["bm25"], "min_score": 5}})
    assert ok.status_code == 200 and all(h["score"] >= 5 for h in ok.json()["hits"])
    bad = client.post("/api/search", json={"facts": facts, "options": {"fuser": "nope.v1"}})
    assert bad.status_code == 422 and "rrf.v1" in bad.json()["detail"]
    assert client.post("/api/search", json={"facts": facts, "options": {"retrievers": ["milvus"]}}).status_code == 422
    mismatched = client.post(
        "/api/search", json={"facts": facts, "options": {"retrievers": ["bm25"], "weights": {"bm52": 2.0}}}
    )
    assert mismatched.status_code == 422 and mismatched.json()["error"].startswith("invalid_")


def test_summary_and_text_of_a_judgment(client):
    summary = client.get("/api/judgments/SC001").json()
    assert summary["judgment_id"] == "SC001" and summary["issues"]
    text = client.get("/api/judgments/SC001/text").json()
    assert text["text"].startswith("Harbans Lal v State of Punjab")


def test_citations_of_a_judgment_both_ways(client, sample_archive):
    cited = client.get("/api/judgments/SC001/citations").json()
    assert cited["judgment"]["judgment_id"] == "SC001" and cited["cites"] == []
    [citing] = cited["cited_by"]
    assert (
        citing["judgment_id"] == "SC007"
        and citing["how"] == "title"
        and "Harbans Lal v. State of Punjab" in citing["mention"]
    )
    citing_side = client.get("/api/judgments/SC007/citations").json()
    assert [c["judgment_id"] for c in citing_side["cites"]] == ["SC001"] and citing_side["cited_by"] == []
    assert citing_side["cites"][0]["mention"] == citing["mention"]


def test_a_hit_overruled_within_the_sample_carries_the_warning(client):
    """SC017 overrules SC012: the JSON hit carries treatment_warnings with that judgment, its date and words;
    with the option overruled_below, SC012 ranks just below SC017."""
    found = client.post("/api/search", json={"facts": SENIORITY_FACTS})
    assert found.status_code == 200, found.text
    hits = {h["judgment_id"]: h for h in found.json()["hits"]}
    [warning] = hits["SC012"]["treatment_warnings"]
    assert (
        warning["judgment_id"] == "SC017"
        and warning["treatment"] == "overruled"
        and warning["date"] == "22 August 2019"
    )
    assert (
        warning["parties"].startswith("Anil Kumar Srivastava")
        and "does not lay down the correct law" in warning["quote"]
    )
    assert not any(h["treatment_warnings"] for i, h in hits.items() if i != "SC012")
    text = client.get("/api/judgments/SC017/text").json()["text"]
    assert text[warning["start"] : warning["end"]] == warning["quote"]
    order = [h["judgment_id"] for h in found.json()["hits"]]
    assert order.index("SC012") < order.index("SC017")  # score order by default
    below = [
        h["judgment_id"]
        for h in client.post(
            "/api/search", json={"facts": SENIORITY_FACTS, "options": {"overruled_below": True}}
        ).json()["hits"]
    ]
    assert below.index("SC012") == below.index("SC017") + 1 and sorted(below) == sorted(order)


@pytest.mark.parametrize("path", ["/api/judgments/nope", "/api/judgments/nope/text", "/api/judgments/nope/citations"])
def test_unknown_judgment_is_404(client, path):
    response = client.get(path)
    assert response.status_code == 404 and response.json()["error"] == "not_found"


@pytest.mark.parametrize(
    "raw", ["/api/judgments/..%2F..%2Fetc%2Fpasswd", "/api/judgments/%2Fetc%2Fpasswd/text", "/api/judgments/a%5C..%5Cb"]
)
def test_path_like_ids_are_refused(client, raw):
    response = client.get(raw)
    assert response.status_code == 422 and response.json()["error"] == "invalid_id"


def test_clear_4xx_errors_without_stack_traces(client, scenarios):
    short = client.post("/api/search", json={"facts": "my neighbour hit me"})
    assert short.status_code == 422 and "content word" in short.json()["detail"]
    long = client.post("/api/search", json={"facts": "word " * 5000})
    assert long.status_code == 413 and long.json()["error"] == "facts_too_long" and "20,000" in long.json()["detail"]
    huge = client.post(
        "/api/questions", content=b'{"facts": "' + b"a" * 200_000 + b'"}', headers={"content-type": "application/json"}
    )
    assert huge.status_code == 413 and huge.json()["error"] == "body_too_large"
    many = client.post("/api/search", json={"facts": scenarios[0]["facts"], "k": 51})
    assert many.status_code == 422 and "at most 50" in many.json()["detail"]
    broken = client.post("/api/search", content=b"{not json", headers={"content-type": "application/json"})
    assert broken.status_code == 422 and broken.json()["error"] == "invalid_request"
    extra = client.post("/api/search", json={"facts": scenarios[0]["facts"], "unknown": 1})
    assert extra.status_code == 422 and "unknown" in extra.json()["detail"]
    for response in (short, long, huge, many, broken, extra):
        assert "Traceback" not in response.text and set(response.json()) == {"error", "detail"}


def test_an_engine_failure_is_500_without_trace_and_the_server_stays_up(sample_archive, scenarios):
    app = create_app(archive=Archive(settings=sample_archive.settings))
    with TestClient(app, raise_server_exceptions=False) as client:
        searcher = app.state.service.searcher()

        def boom(*args, **kwargs):
            raise RuntimeError("secret internal detail")

        searcher_search, searcher.search = searcher.search, boom
        try:
            response = client.post("/api/search", json={"facts": scenarios[0]["facts"]})
        finally:
            searcher.search = searcher_search
        assert response.status_code == 500 and response.json()["error"] == "internal_error"
        assert "secret" not in response.text and "Traceback" not in response.text
        assert client.post("/api/search", json={"facts": scenarios[0]["facts"], "k": 2}).status_code == 200


def test_no_index_is_503_with_the_fix(home, tmp_path):
    archive = Archive(settings=Settings.resolve(home, index=FAST))
    archive.summarize([write_judgments(tmp_path / "in")])
    with TestClient(create_app(archive=archive)) as client:
        response = client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS})
        assert response.status_code == 503 and "aqgr index" in response.json()["detail"]
        assert client.get("/api/health").json()["status"] == "no_index"
        assert (
            client.post("/api/statutes/search", json={"facts": DYING_DECLARATION_FACTS}).json()["error"]
            == "no_statutes"
        )
        archive.build_index()  # built while serving: picked up without a restart
        assert client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS}).status_code == 200


def test_statute_search(client, scenarios):
    result = client.post("/api/statutes/search", json={"facts": scenarios[0]["facts"], "k": 2}).json()
    assert result["questions"] and {h["statute_id"] for h in result["hits"]} == {"S1", "S3"}  # not Article 311
    titles = {h["statute_id"]: h["title"] for h in result["hits"]}
    assert titles["S1"] == "Section 32 of the Indian Evidence Act, 1872" and len(result["hits"]) == 2


def test_api_key_when_configured(sample_archive, scenarios):
    app = create_app(archive=sample_archive, config=ServeConfig(api_key="s3cret"))
    with TestClient(app) as client:
        assert client.get("/api/health").status_code == 200  # health and the page stay open
        assert client.get("/").status_code == 200
        refused = client.get("/api/judgments/SC001")
        assert refused.status_code == 401 and "X-API-Key" in refused.json()["detail"]
        assert client.get("/api/judgments/SC001", headers={"X-API-Key": "wrong"}).status_code == 401
        assert client.get("/api/judgments/SC001", headers={"X-API-Key": "s3cret"}).status_code == 200
        assert client.get("/api/judgments/SC001", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_cors_closed_by_default_and_opt_in(sample_archive):
    preflight = {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
    with TestClient(create_app(archive=sample_archive)) as client:
        assert "access-control-allow-origin" not in client.options("/api/search", headers=preflight).headers
        assert (
            "access-control-allow-origin"
            not in client.get("/api/health", headers={"Origin": "http://evil.example"}).headers
        )
    with TestClient(
        create_app(archive=sample_archive, config=ServeConfig(cors_origins=("http://firm.example",)))
    ) as client:
        allowed = client.options("/api/search", headers={**preflight, "Origin": "http://firm.example"})
        assert allowed.headers["access-control-allow-origin"] == "http://firm.example"


def test_the_page_and_its_assets_are_local(client):
    page = client.get("/")
    assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
    assert "http://" not in page.text and "https://" not in page.text
    for asset in ("/static/app.js", "/static/app.css"):
        response = client.get(asset)
        assert response.status_code == 200 and "https://" not in response.text


def test_rebuild_while_serving_swaps_the_index(sample_archive, scenarios):
    archive = Archive(settings=sample_archive.settings)
    app = create_app(archive=archive, config=ServeConfig(reload_check_seconds=0))
    with TestClient(app) as client:
        before = client.post("/api/search", json={"facts": scenarios[1]["facts"]}).json()
        Archive(settings=sample_archive.settings).build_index(
            rebuild=True
        )  # another Archive, as `aqgr index --rebuild` would
        after = client.post("/api/search", json={"facts": scenarios[1]["facts"]}).json()
        assert app.state.service.reloads == 1
        assert [h["judgment_id"] for h in after["hits"]] == [h["judgment_id"] for h in before["hits"]]


def test_serve_refuses_a_public_bind_without_a_key():
    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app

    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"], env={"AQGR_SERVE_API_KEY": ""})
    assert result.exit_code == 2 and "API key" in result.output


def test_the_heap_is_frozen_once_at_start_up_not_on_a_reload(tmp_path, monkeypatch):
    import gc

    from tests.server.conftest import build_sample

    archive = build_sample(tmp_path / "home")
    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    app = create_app(archive=archive, config=ServeConfig(reload_check_seconds=0))
    assert not frozen  # making the app (and its searcher) touches no process-wide state
    with TestClient(app) as client:
        assert len(frozen) == 1
        archive.build_index(rebuild=True)  # a rebuild: the next request loads a new searcher
        assert client.get("/api/health").status_code == 200
        assert app.state.service.reloads == 1
    assert len(frozen) == 1


def test_an_incremental_update_while_serving_is_picked_up_without_a_failed_request(tmp_path, scenarios):
    """`aqgr index` after new judgments were summarised adds them in place; the server, searching
    all the while, swaps to the new generation without a restart and without one failed request."""
    import shutil
    import threading

    from aqgr.foundation.paths import SAMPLE
    from aqgr.retrieval.spec import IndexSpec

    judgments = sorted((SAMPLE / "judgments").glob("*.txt"))
    folder = tmp_path / "judgments"
    folder.mkdir()
    for path in judgments[:10]:
        shutil.copy(path, folder / path.name)
    home = tmp_path / "home"
    archive = Archive(home, index=IndexSpec(embedder="hashing.v1"))
    archive.summarize([folder])
    archive.build_index()
    app = create_app(
        archive=Archive(home, index=IndexSpec(embedder="hashing.v1")), config=ServeConfig(reload_check_seconds=0)
    )
    with TestClient(app) as client:
        assert client.post("/api/search", json={"facts": scenarios[0]["facts"]}).status_code == 200
        for path in judgments[10:]:
            shutil.copy(path, folder / path.name)
        writer = Archive(home, index=IndexSpec(embedder="hashing.v1"))
        writer.summarize([folder])
        done: dict = {}
        update = threading.Thread(target=lambda: done.setdefault("manifest", writer.build_index()))
        update.start()
        statuses = []
        while update.is_alive() or len(statuses) < 3:
            statuses.append(client.post("/api/search", json={"facts": scenarios[0]["facts"], "k": 3}).status_code)
        update.join()
        assert (
            done["manifest"]["update"]["mode"] == "update"
            and done["manifest"]["update"]["added"] == len(judgments) - 10
        )
        assert set(statuses) == {200}, statuses
        newest = judgments[-1].stem
        assert client.get(f"/api/judgments/{newest}").status_code == 200
        hits = client.post("/api/search", json={"facts": archive.text(newest)[:1500]}).json()["hits"]
        assert newest in [h["judgment_id"] for h in hits]
        assert app.state.service.reloads >= 1


def test_a_long_lived_server_opens_no_descriptor_per_request(client, scenarios):
    """Searches, summaries, texts, citations and health checks reuse the server's connections and
    loaded index: a server that answers for weeks does not run out of file descriptors."""
    import os

    facts = scenarios[0]["facts"]

    def round_of_requests():
        assert client.post("/api/search", json={"facts": facts, "k": 3}).status_code == 200
        assert client.get("/api/judgments/SC001").status_code == 200
        assert client.get("/api/judgments/SC001/text").status_code == 200
        assert client.get("/api/health").status_code == 200

    for _ in range(3):  # loaded, connections pooled
        round_of_requests()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(40):
        round_of_requests()
    assert len(os.listdir("/proc/self/fd")) - before <= 2
