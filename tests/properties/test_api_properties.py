"""Property tests of the HTTP API: any body, any id, any bytes -> a 2xx answer, or a 4xx (503 for
a busy or broken archive) of the documented shape {"error", "detail"}; never a 500, never a trace,
and the archive unchanged (every route reads)."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aqgr import Archive, Settings
from aqgr.interfaces.server import create_app
from tests.properties.conftest import snapshot
from tests.properties.strategies import any_text, facts, json_values, nested_json, numbers
from tests.server.conftest import FAST, TestClient

ROUTES = ["/api/search", "/api/questions", "/api/statutes/search"]
FIELDS = ["facts", "questions", "k", "n", "options", "retrievers", "min_score"]


@pytest.fixture(scope="module")
def client(built_home):
    before = snapshot(built_home)
    archive = Archive(settings=Settings.resolve(built_home, index=FAST))
    with TestClient(create_app(archive=archive), raise_server_exceptions=False) as client:
        yield client
    archive.close()
    assert snapshot(built_home) == before  # nothing any request did changed the archive


def _check(response) -> None:
    assert response.status_code < 500 or response.status_code == 503, (response.status_code, response.text[:500])
    assert "Traceback" not in response.text
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error", "detail"} and isinstance(body["error"], str) and body["detail"], body


def _post_json(client, path: str, value) -> None:
    raw = json.dumps(value, allow_nan=True)  # ensure_ascii: lone surrogates travel as \\udXXX escapes
    _check(client.post(path, content=raw.encode(), headers={"Content-Type": "application/json"}))


search_bodies = st.fixed_dictionaries(
    {"facts": facts},
    optional={
        "questions": st.one_of(st.lists(any_text, max_size=4), json_values),
        "k": st.one_of(numbers, json_values),
        "n": numbers,
        "options": st.one_of(
            json_values,
            st.fixed_dictionaries(
                {},
                optional={
                    "retrievers": st.lists(st.sampled_from(["bm25", "dense", "milvus", "\ud800"]), max_size=3),
                    "fuser": any_text,
                    "n_questions": numbers,
                    "per_retriever_k": numbers,
                    "min_score": numbers,
                    "include_facts_query": json_values,
                },
            ),
        ),
    },
)


@given(route=st.sampled_from(ROUTES), body=search_bodies)
def test_properties_search_routes_any_json_body(client, route, body):
    _post_json(client, route, body)


@given(
    route=st.sampled_from(ROUTES),
    body=st.one_of(json_values, st.dictionaries(st.sampled_from(FIELDS) | any_text, json_values, max_size=5)),
)
def test_properties_search_routes_any_json_value(client, route, body):
    _post_json(client, route, body)


@given(
    route=st.sampled_from(ROUTES),
    raw=st.one_of(
        st.binary(max_size=300),
        nested_json.map(str.encode),
        st.builds(lambda n: b'{"facts": "x", "k": ' + b"9" * n + b"}", st.integers(1, 6000)),
    ),
)
def test_properties_search_routes_any_bytes(client, route, raw):
    _check(client.post(route, content=raw, headers={"Content-Type": "application/json"}))


@given(judgment_id=any_text, suffix=st.sampled_from(["", "/text", "/citations"]), raw=st.booleans())
def test_properties_judgment_routes_any_id(client, judgment_id, suffix, raw):
    encoded = judgment_id.encode("utf-8", "surrogatepass")
    path = "/api/judgments/" + (quote(encoded, safe="") if not raw else quote(encoded, safe="/.%")) + suffix
    _check(client.get(path))


@given(method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]), path=any_text)
def test_properties_any_method_any_path(client, method, path):
    _check(client.request(method, "/" + quote(path.encode("utf-8", "surrogatepass"), safe="/")))
