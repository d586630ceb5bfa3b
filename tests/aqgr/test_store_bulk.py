"""Store.save_many: many judgments and summaries in one transaction, as Store.save stores them."""

from __future__ import annotations

import hashlib

import pytest
from sqlmodel import select

from aqgr.archive.store import FailureRow, ImportRow, JudgmentRow, Store, SummaryRow
from aqgr.foundation.errors import InvalidTextError
from aqgr.schemas.summary import Provenance, StructuredSummary


def _item(doc_id: str, text: str, facts: str = "The facts."):
    sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    summary = StructuredSummary.model_validate(
        {
            "judgment_id": doc_id,
            "court": "Supreme Court of India",
            "case_number": f"CA {doc_id}",
            "parties": {"appellants": ["A"], "respondents": ["B"]},
            "facts": facts,
            "issues": ["Whether?"],
            "reasoning": "Because.",
            "final_judgment": "Dismissed.",
            "provenance": Provenance(engine="extractive.v1", engine_version="1", source_sha256=sha),
        }
    )
    return JudgmentRow(id=doc_id, source_path=f"in/{doc_id}.txt", sha256=sha, n_chars=len(text), text=text), summary


def _rows(store: Store):
    with store.session() as s:
        judgments = {r.id: (r.source_path, r.sha256, r.n_chars, r.text) for r in s.exec(select(JudgmentRow)).all()}
        summaries = {r.judgment_id: r.data for r in s.exec(select(SummaryRow)).all()}
    return judgments, summaries


def test_save_many_stores_what_save_stores(tmp_path):
    items = [_item(f"J{i}", f"text {i}") for i in range(5)]
    one, many = Store(f"sqlite:///{tmp_path}/one.db"), Store(f"sqlite:///{tmp_path}/many.db")
    for judgment, summary in items:
        one.save(judgment, summary)
    many.save_many(items)
    assert _rows(many) == _rows(one) and len(_rows(many)[0]) == 5
    assert [s.judgment_id for s in many.summaries("extractive.v1")] == [f"J{i}" for i in range(5)]


def test_save_many_replaces_and_clears_failures_and_imports(tmp_path):
    store = Store(f"sqlite:///{tmp_path}/a.db")
    store.save_many([_item("J1", "old"), _item("J2", "two")])
    store.record_failure(
        source_path="in/J1.txt", engine="extractive.v1", judgment_id="J1", stage="read", reason="empty", message="x"
    )
    store.record_failure(
        source_path="in/J9.txt", engine="extractive.v1", judgment_id="J9", stage="read", reason="empty", message="x"
    )
    with store.session() as s:
        s.add(ImportRow(judgment_id="J2", engine="extractive.v1", source="file.jsonl"))
        s.commit()
    store.save_many([_item("J1", "new text", facts="New facts."), _item("J2", "two")])
    judgments, summaries = _rows(store)
    assert judgments["J1"][3] == "new text" and summaries["J1"]["facts"] == "New facts." and len(judgments) == 2
    assert [f.source_path for f in store.failures()] == ["in/J9.txt"]  # only the stored judgment's failure is cleared
    with store.session() as s:
        assert s.exec(select(ImportRow)).all() == [] and len(s.exec(select(FailureRow)).all()) == 1


def test_save_many_is_all_or_nothing(tmp_path):
    store = Store(f"sqlite:///{tmp_path}/a.db")
    store.save_many([])
    with pytest.raises(InvalidTextError):
        store.save_many([_item("J1", "fine"), _item("J2", "a lone surrogate \ud800")])
    assert store.count_judgments() == 0 and store.count_summaries() == {}
