"""Bad input at the HTTP API: every refusal is a 4xx of the documented shape {"error", "detail"}."""

from __future__ import annotations

import json

import pytest

from aqgr.interfaces.server import create_app
from tests.server.conftest import TestClient  # Host: 127.0.0.1

FACTS = (
    "An elderly shopkeeper was attacked with an axe by his neighbour during a dispute over a boundary wall. "
    "Before dying in the hospital he gave a statement to the treating doctor naming the neighbour"
)


@pytest.fixture(scope="module")
def client(sample_archive):
    with TestClient(create_app(archive=sample_archive), raise_server_exceptions=False) as client:
        yield client


def _post(client, path: str, raw: bytes | str):
    return client.post(
        path, content=raw.encode("utf-8") if isinstance(raw, str) else raw, headers={"Content-Type": "application/json"}
    )


def _assert_error(response, status: int, kind: str) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "detail"} and body["error"] == kind and body["detail"], body
    assert "Traceback" not in body["detail"]
    return body


@pytest.mark.parametrize("path", ["/api/search", "/api/questions", "/api/statutes/search"])
@pytest.mark.parametrize(
    "body",
    [
        {"facts": FACTS + " \ud800"},  # a lone surrogate in the facts (a JSON escape)
        {"facts": FACTS, "questions": ["\udc00"]},
        {"facts": FACTS, "questions": ["Whether \udfff a dying declaration alone can support a conviction?"]},
        {"facts": FACTS, "\ud800": 1},  # ... or in a field name
    ],
)
def test_a_lone_surrogate_is_a_clean_422(client, path, body):
    if path == "/api/questions" and "questions" in body:
        body = {"facts": body["facts"] + "\udc00"}
    raw = json.dumps(body)  # ensure_ascii: the surrogate travels as a \\udXXX escape, as a broken client sends it
    found = _assert_error(_post(client, path, raw), 422, "invalid_text")
    assert "surrogate" in found["detail"] and "UTF-8" in found["detail"]


@pytest.mark.parametrize(
    "raw",
    [
        b'{"facts": "\xff\xfe not utf-8"}',
        b'{"facts": "' + FACTS.encode() + b'", "k": 1' + b"0" * 5000 + b"}",  # an integer too long to read
        b'{"facts": ' + b"[" * 40_000 + b"]" * 40_000 + b"}",  # nested 40,000 deep (under the body limit)
        b'{"facts": "unterminated',
        b"",
    ],
)
def test_unreadable_json_is_a_clean_400_or_422(client, raw):
    response = _post(client, "/api/search", raw)
    assert response.status_code in (400, 422), response.text
    assert set(response.json()) == {"error", "detail"}


def test_unknown_routes_and_methods_answer_in_the_error_shape(client):
    _assert_error(client.get("/api/nope"), 404, "not_found")
    _assert_error(client.get("/static/nope.js"), 404, "not_found")
    refused = _assert_error(client.delete("/api/search"), 405, "method_not_allowed")
    assert refused["detail"]
    _assert_error(client.get("/api/search"), 405, "method_not_allowed")


@pytest.mark.parametrize(
    "path", ["/api/judgments/%ED%A0%80", "/api/judgments/%ED%A0%80/text", "/api/judgments/%FF/citations"]
)
def test_ids_that_are_not_utf8_are_clean_4xx(client, path):
    response = client.get(path)
    assert 400 <= response.status_code < 500 and set(response.json()) == {"error", "detail"}


def test_the_searcher_refuses_invalid_text_itself(sample_archive):
    from aqgr.foundation.errors import InvalidTextError

    with pytest.raises(InvalidTextError, match=r"lone surrogate U\+D800\) at position"):
        sample_archive.search(FACTS + "\ud800")
    with pytest.raises(InvalidTextError, match="questions"):
        sample_archive.search(FACTS, ["\udc00 whether"])
