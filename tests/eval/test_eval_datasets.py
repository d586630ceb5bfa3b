"""The AILA-format loader: layout, errors with file:line, warnings, query subsets."""

from __future__ import annotations

import pytest
from aila_tiny import write_dataset

from aqgr.eval.datasets import load_dataset, select_queries
from aqgr.foundation.errors import DatasetError


def test_loads_cases_and_statutes(tiny):
    ds = load_dataset(tiny)
    assert ds.doc_ids == ("C1", "C2", "C3", "C4", "C5")
    assert list(ds.queries) == ["AILA_Q1", "AILA_Q2", "AILA_Q3"]
    assert ds.qrels["AILA_Q1"] == {"C2": 0, "C3": 1, "C1": 0}
    assert ds.judged_queries() == ["AILA_Q1", "AILA_Q2"]
    assert ds.warnings == [] and ds.exclude == {}
    assert "Dowry death" in ds.text("C2")
    st = load_dataset(tiny, kind="statutes")
    assert st.doc_ids == ("S1", "S2", "S3")
    assert st.text("S1").startswith("Punishment for murder\nWhoever commits murder")
    assert st.qrels["AILA_Q2"] == {"S3": 1}


def test_missing_folder_says_what_is_expected(tmp_path):
    with pytest.raises(DatasetError, match="does not exist.*Query_doc.txt"):
        load_dataset(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="Object_casedocs"):
        load_dataset(tmp_path / "empty")


def test_missing_qrels_file(tiny):
    with pytest.raises(DatasetError, match="qrels file .* does not exist"):
        load_dataset(tiny, qrels=tiny / "missing.txt")


def test_malformed_query_line_names_file_and_line(tiny):
    (tiny / "Query_doc.txt").write_text("AILA_Q1||facts\n\nAILA_Q2 facts without separator\n")
    with pytest.raises(DatasetError, match=r"Query_doc.txt:3: expected 'QID\|\|query text'"):
        load_dataset(tiny)


def test_malformed_qrels_line_names_file_and_line(tiny):
    (tiny / "relevance_judgments_priorcases.dev.txt").write_text("AILA_Q1 Q0 C1 1\nAILA_Q1 C2 1\n")
    with pytest.raises(DatasetError, match=r"relevance_judgments_priorcases.dev.txt:2:"):
        load_dataset(tiny)
    (tiny / "relevance_judgments_priorcases.dev.txt").write_text("AILA_Q1 Q0 C1 yes\n")
    with pytest.raises(DatasetError, match=r":1: relevance must be an integer"):
        load_dataset(tiny)


def test_malformed_statute_names_file_and_line(tiny):
    (tiny / "Object_statutes" / "S2.txt").write_text("Title: x\nno description\n")
    ds = load_dataset(tiny, kind="statutes")
    with pytest.raises(DatasetError, match=r"S2.txt:2: .*Desc:"):
        ds.text("S2")


def test_unknown_docs_and_queries_in_qrels_are_warnings(tmp_path):
    root = write_dataset(tmp_path / "d", qrels="AILA_Q1 Q0 C3 1\nAILA_Q1 Q0 C99 1\nAILA_Q77 Q0 C1 1\n")
    ds = load_dataset(root)
    text = " ".join(ds.warnings)
    assert "C99" in text and "AILA_Q77" in text
    assert ds.qrels["AILA_Q1"]["C99"] == 1  # kept, as trec_eval would


def test_exclusions_with_header_and_sibling_documents(tmp_path):
    write_dataset(tmp_path / "aila2019")
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "queries.txt").write_text("PQ_C2||dowry harassment by the husband\nPQ_C1||land compensation\n")
    (bench / "qrels.txt").write_text("PQ_C2 Q0 C3 1\nPQ_C1 Q0 C4 1\n")
    (bench / "citing.tsv").write_text("query_id\tciting_judgment\nPQ_C2\tC2\nPQ_C1\tC1\n")
    ds = load_dataset(bench)
    assert ds.docs_dir == tmp_path / "aila2019" / "Object_casedocs"
    assert ds.exclude == {"PQ_C2": frozenset({"C2"}), "PQ_C1": frozenset({"C1"})}
    assert load_dataset(bench, docs=tmp_path / "aila2019" / "Object_casedocs").doc_ids == ds.doc_ids
    with pytest.raises(DatasetError, match="no documents at"):
        load_dataset(bench, docs=tmp_path / "nowhere")
    (bench / "citing.tsv").write_text("query_id\tciting_judgment\nPQ_C2 C2\n")
    with pytest.raises(DatasetError, match=r"citing.tsv:2: expected 'QID<TAB>document id'"):
        load_dataset(bench)


def test_select_queries_forms(tmp_path):
    root = tmp_path / "q"
    write_dataset(root)
    (root / "Query_doc.txt").write_text("".join(f"AILA_Q{i}||facts {i}\n" for i in range(1, 51)))
    ds = load_dataset(root)
    assert select_queries(ds, "AILA_Q1,AILA_Q2") == ["AILA_Q1", "AILA_Q2"]
    assert select_queries(ds, "Q1,Q2") == ["AILA_Q1", "AILA_Q2"]
    assert select_queries(ds, "Q1-Q10") == [f"AILA_Q{i}" for i in range(1, 11)]
    assert select_queries(ds, "Q1..Q3,Q31,Q2") == ["AILA_Q1", "AILA_Q2", "AILA_Q3", "AILA_Q31"]
    assert select_queries(ds, "AILA_Q48..AILA_Q50") == ["AILA_Q48", "AILA_Q49", "AILA_Q50"]
    assert len(select_queries(ds, "all")) == 50 and len(select_queries(ds, None)) == 50
    with pytest.raises(DatasetError, match="accepted forms: 'all'.*'Q1-Q10' or 'Q1..Q10'"):
        select_queries(ds, "Q99")
    with pytest.raises(DatasetError, match="accepted forms"):
        select_queries(ds, "Q60-Q70")
    with pytest.raises(DatasetError, match="accepted forms"):
        select_queries(ds, " , ")
