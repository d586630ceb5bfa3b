"""Export then import is lossless: any summary the store accepts (any Unicode in its slots, any id)
comes back identical from a fresh home, through JSON Lines and through a folder of JSON files, with
the same checksum (recomputed by the importing store) and sound by `check_summaries`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from aqgr.archive.store import Store
from aqgr.archive.transfer import export_summaries, import_summaries
from aqgr.foundation.errors import SummaryValidationError
from aqgr.foundation.inputs import id_problem
from aqgr.schemas.validation import validate_summary
from tests.properties.strategies import NASTY

# Unicode the store can hold: every code point but lone surrogates (refused at every door)
storable_char = st.characters(codec="utf-8", exclude_categories=())
storable_text = st.one_of(
    st.text(storable_char, max_size=80),
    st.lists(
        st.sampled_from(
            [n for n in NASTY if "\ud800" not in n and "\udcff" not in n]
            + ["\u2028", "\u2029", "\x85", "\x1b[2J", "~", "%"]
        ),
        max_size=8,
    ).map("".join),
)
ids = st.one_of(
    storable_text,
    st.text(storable_char, min_size=100, max_size=300),
    st.sampled_from(["C1", "c1", ".x", "a/b", "~x", "%41"]),
).filter(lambda i: id_problem(i) is None)  # the ids every door accepts


@pytest.fixture(scope="module")
def template(built_home) -> dict:
    store = Store(f"sqlite:///{built_home / 'aqgr.db'}", create=False)
    try:
        return next(store.iter_summaries())
    finally:
        store.close()


def _summary(template: dict, judgment_id: str, facts: str, party: str, issue: str) -> dict:
    document = json.loads(json.dumps(template))
    document.update(
        judgment_id=judgment_id, facts=facts, issues=[issue], parties={"appellants": [party], "respondents": []}
    )
    return document


@given(
    cases=st.lists(
        st.tuples(ids, storable_text, storable_text, storable_text), min_size=1, max_size=4, unique_by=lambda c: c[0]
    )
)
def test_properties_export_import_round_trip(template, tmp_path_factory, cases):
    where = tmp_path_factory.mktemp("round-trip")
    source = Store(f"sqlite:///{where / 'source.db'}")
    try:
        for judgment_id, facts, party, issue in cases:
            try:
                summary = validate_summary(_summary(template, judgment_id, facts, party, issue))
            except (SummaryValidationError, ValueError):
                assume(False)  # not a summary the store accepts
            source.save_imported(summary, source="test")
        stored = {d["judgment_id"]: d for d in source.iter_summaries()}
        for fmt, out in (("jsonl", where / "all.jsonl"), ("json-dir", where / "all")):
            assert export_summaries(source, out, format=fmt) == len(stored)
            fresh = Store(f"sqlite:///{where / f'{fmt}.db'}")
            try:
                report = import_summaries(fresh, [out])
                assert report.invalid == [] and report.refused == [], (fmt, report)
                assert {d["judgment_id"]: d for d in fresh.iter_summaries()} == stored, fmt
                assert fresh.check_summaries() == [] and fresh.without_checksum() == 0, fmt
                for (
                    judgment_id,
                    document,
                ) in stored.items():  # the checksum is recomputed, the same: it names the content
                    engine = document["provenance"]["engine"]
                    assert (
                        fresh.summary_row(judgment_id, engine).checksum
                        == source.summary_row(judgment_id, engine).checksum
                    ), fmt
            finally:
                fresh.close()
        assert all(len(p.name.encode()) <= 255 for p in Path(where / "all").iterdir())
    finally:
        source.close()
