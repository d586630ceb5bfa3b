"""Pinpoints over HTTP: search hits carry their evidence's spans, the text route the paragraph
marks the spans are read against, the pinpoints route each summary passage's place."""

from __future__ import annotations

import pytest

from aqgr.interfaces.server import create_app
from tests.aqgr.pinpoint_check import pinpoint_problem
from tests.server.conftest import TestClient  # Host: 127.0.0.1


@pytest.fixture(scope="module")
def client(sample_archive):
    with TestClient(create_app(archive=sample_archive), raise_server_exceptions=False) as client:
        yield client


def test_search_hits_carry_spans_into_the_text_route(client, scenarios):
    hits = client.post("/api/search", json={"facts": scenarios[0]["facts"], "k": 3}).json()["hits"]
    assert hits
    for hit in hits:
        text = client.get(f"/api/judgments/{hit['judgment_id']}/text").json()["text"]
        for e in hit["evidence"]:
            assert e["located"] and isinstance(e["paragraph"], int)
            assert (
                " ".join(e["text"].removesuffix(" ...").split())
                .lower()
                .find(" ".join(text[e["start"] : e["end"]].split()).lower())
                >= 0
            )
        assert hit["reason_at"]["located"] and hit["legal_issue_at"]["located"]


def test_text_route_gives_where_each_numbered_paragraph_starts(client):
    body = client.get("/api/judgments/SC001/text").json()
    marks = body["paragraphs"]
    assert [m["number"] for m in marks] == list(range(1, len(marks) + 1)) and len(marks) >= 5
    assert all(body["text"][m["start"] :].lstrip().startswith(f"{m['number']}.") for m in marks)


def test_pinpoints_route_gives_the_summary_and_each_passage_place(client, sample_archive):
    body = client.get("/api/judgments/SC001/pinpoints").json()
    assert body["summary"]["judgment_id"] == "SC001" and body["paragraphs_numbered"] is True
    text = sample_archive.text("SC001")
    from aqgr.schemas.results import Evidence

    passages = [Evidence.model_validate(p) for p in body["passages"]]
    assert passages and all(p.located for p in passages)
    assert all(pinpoint_problem(text, p.text, p) is None for p in passages)
    assert any(p.slot == "issues[0]" for p in passages)


def test_pinpoints_of_an_unknown_judgment_is_404(client):
    response = client.get("/api/judgments/nope/pinpoints")
    assert response.status_code == 404 and response.json()["error"] == "not_found"
    assert "/api/judgments/{judgment_id}/pinpoints" in client.get("/openapi.json").json()["paths"]
