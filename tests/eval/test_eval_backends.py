"""Pipeline systems on the Milvus backend (`NAME@milvus`) through the eval harness, and the agreement report.

milvus-lite serves the collection from a folder in the eval cache (over gRPC on
127.0.0.1); embeddings come from `hashing.v1` (no torch), summaries from the offline
extractive engine. The data is written by the tests: ten judgments, four queries.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pymilvus", reason="pymilvus not installed: pip install 'aqgr[milvus]'")
pytest.importorskip("milvus_lite", reason="milvus-lite not installed: pip install 'aqgr[milvus]'")

from aqgr.eval.datasets import load_dataset  # noqa: E402
from aqgr.eval.harness import evaluate_path  # noqa: E402
from aqgr.eval.stats.agreement import TOLERANCE, agreement, pairs  # noqa: E402
from aqgr.eval.systems.registry import get_system  # noqa: E402
from aqgr.foundation.errors import ConfigError  # noqa: E402

# judgment id -> (facts, question of law)
CASES = {
    "C1": (
        "The collector fixed the market value of the acquired land below the sale deeds of nearby plots.",
        "whether compensation for land acquisition must follow the market value shown by comparable sale deeds",
    ),
    "C2": (
        "The wife died of burns within two years of marriage after the husband demanded dowry and beat her.",
        "whether the presumption of dowry death applies when cruelty for dowry is proved soon before her death",
    ),
    "C3": (
        "The husband appealed against the decree of divorce granted to the wife on the ground of cruelty.",
        "whether mental cruelty by the husband justifies a decree of divorce in favour of the wife",
    ),
    "C4": (
        "The assessing officer disallowed the interest paid by the partnership firm to its partners.",
        "whether interest paid by a partnership firm to its partners is a deductible expense in the assessment",
    ),
    "C5": (
        "A bank officer was dismissed after a departmental inquiry found that he sanctioned loans without security.",
        "whether the dismissal of a bank officer after a departmental inquiry into misconduct was lawful",
    ),
    "C6": (
        "The accused was convicted of murder on a dying declaration recorded by a police officer in hospital.",
        "whether a dying declaration recorded by the police without a magistrate can alone sustain a conviction for murder",
    ),
    "C7": (
        "The landlord sought eviction of the tenant for arrears of rent and for his own bona fide need.",
        "whether the bona fide need of the landlord justifies eviction of a tenant who paid the arrears of rent",
    ),
    "C8": (
        "The state acquired agricultural land for a road and paid compensation months after taking possession.",
        "whether interest on compensation for acquired land runs from the date of taking possession",
    ),
    "C9": (
        "The husband and his mother harassed the wife for dowry; she was found dead in the matrimonial home.",
        "whether cruelty and harassment for dowry by the husband and his relatives were proved beyond doubt",
    ),
    "C10": (
        "An employee of a public bank was removed from service without being given a copy of the inquiry report.",
        "whether removal from service without supplying the inquiry report violates natural justice",
    ),
}
QUERIES = {
    "AILA_Q1": "The wife was harassed for dowry by her husband and died of burns in the matrimonial home.",
    "AILA_Q2": "The compensation for our acquired land was fixed far below the market value of nearby sales.",
    "AILA_Q3": "A bank dismissed the officer after an inquiry without giving him the inquiry report.",
    "AILA_Q4": "The only evidence of murder is a statement the deceased made to the police in hospital.",
}
QRELS = {"AILA_Q1": ["C2", "C9"], "AILA_Q2": ["C1", "C8"], "AILA_Q3": ["C5", "C10"], "AILA_Q4": ["C6"]}
STATUTES = {
    "S1": (
        "Dowry death",
        "Where the death of a woman is caused by burns within seven years of marriage and she was subjected to cruelty for dowry.",
    ),
    "S2": ("Land acquisition", "Compensation for land acquired shall be the market value on the date of notification."),
    "S3": ("Dying declaration", "A statement made by a person as to the cause of his death is relevant."),
}


@pytest.fixture
def data(tmp_path) -> Path:
    root = tmp_path / "aila"
    (root / "Object_casedocs").mkdir(parents=True)
    for doc_id, (facts, issue) in CASES.items():
        (root / "Object_casedocs" / f"{doc_id}.txt").write_text(
            f"{facts}\n\nThe question for consideration is {issue}.\n", encoding="utf-8"
        )
    (root / "Object_statutes").mkdir()
    for doc_id, (title, desc) in STATUTES.items():
        (root / "Object_statutes" / f"{doc_id}.txt").write_text(f"Title: {title}\nDesc: {desc}\n", encoding="utf-8")
    (root / "Query_doc.txt").write_text("".join(f"{q}||{t}\n" for q, t in QUERIES.items()), encoding="utf-8")
    (root / "relevance_judgments_priorcases.dev.txt").write_text(
        "".join(f"{q} Q0 {d} 1\n" for q, docs in QRELS.items() for d in docs), encoding="utf-8"
    )
    (root / "relevance_judgments_statutes.dev.txt").write_text(
        "AILA_Q1 Q0 S1 1\nAILA_Q2 Q0 S2 1\nAILA_Q4 Q0 S3 1\n", encoding="utf-8"
    )
    return root


def _systems(*names):
    return [get_system(n, embedder="hashing.v1") for n in names]


def test_a_pipeline_system_runs_on_milvus_and_agrees_with_the_embedded_backend(data, tmp_path):
    names = ("aqgr-no-fulltext", "aqgr-no-fulltext@milvus", "ensemble-summary", "ensemble-summary@milvus")
    report = evaluate_path(data, _systems(*names), "aila-cases", out_dir=tmp_path / "out", cache_dir=tmp_path / "cache")
    by_name = {s.name: s for s in report.systems}
    assert list(by_name) == list(names) and len(report.scored) == 4
    milvus = by_name["aqgr-no-fulltext@milvus"]
    assert milvus.config["backend"] == "milvus.v1" and by_name["aqgr-no-fulltext"].config["backend"] == "embedded.v1"
    uri = Path(milvus.config["milvus_uris"]["cases"])
    assert (
        uri.parent.parent == tmp_path / "cache" / "archives" and uri.name == "milvus.db"
    )  # milvus-lite, in the eval cache
    assert milvus.config["index_spec"] == by_name["aqgr-no-fulltext"].config["index_spec"]
    assert any(
        "statistics" in note for note in milvus.config["backend_notes"]
    )  # what Milvus computes otherwise is stated
    assert milvus.config["search_options"] == by_name["aqgr-no-fulltext"].config["search_options"]
    for name in names:
        assert by_name[name].dropped == 0
        assert by_name[name].results.mean["RR"] >= 0.75, name  # the relevant judgments lead
    for base, variant in pairs(list(by_name)):
        row = agreement(by_name[base], by_name[variant])
        assert row["within_tolerance"], row
        assert row["max_abs_delta"] <= TOLERANCE.measure and row["overlap"] >= TOLERANCE.overlap
        for qid in report.scored:  # the same first hit on both backends
            assert by_name[base].run[qid][0][0] == by_name[variant].run[qid][0][0], (variant, qid)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [(r["base"], r["variant"]) for r in results["backend_agreement"]] == [
        ("aqgr-no-fulltext", "aqgr-no-fulltext@milvus"),
        ("ensemble-summary", "ensemble-summary@milvus"),
    ]
    assert "## Backend agreement" in (tmp_path / "out" / "report.md").read_text()
    assert (tmp_path / "out" / "runs" / "aqgr-no-fulltext_milvus.aila-cases.run").is_file()


def test_the_milvus_index_is_cached_beside_the_embedded_one(data, tmp_path):
    import aqgr.eval.systems.on_backend as on_backend
    import aqgr.eval.systems.pipeline as ps

    dataset = load_dataset(data)
    first = get_system("ensemble-summary@milvus", embedder="hashing.v1")
    first.prepare(dataset, cache_dir=tmp_path / "cache")
    (directory,) = [p for p in (first.home / "indexes").iterdir() if ".milvus-" in p.name]
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["backend"] == "milvus.v1" and manifest["n_docs"] == len(CASES)

    ps._LOADED.clear()
    on_backend._LOADED.clear()  # as a new process would
    again = get_system("bm25-summary@milvus", embedder="hashing.v1")
    stages = []
    again.prepare(dataset, cache_dir=tmp_path / "cache", progress=lambda what, done, total: stages.append(what))
    assert not [s for s in stages if "milvus" in s], "the collection is loaded, not built again"
    assert (
        json.loads((directory / "manifest.json").read_text())["milvus"]["collection"]
        == manifest["milvus"]["collection"]
    )
    assert again.rank("AILA_Q1", QUERIES["AILA_Q1"], depth=3)[0][0] in {"C2", "C9"}


def test_statutes_on_milvus(data, tmp_path):
    report = evaluate_path(
        data, _systems("aqgr-no-fulltext", "aqgr-no-fulltext@milvus"), "aila-statutes", cache_dir=tmp_path / "cache"
    )
    base, variant = report.systems
    assert set(variant.config["milvus_uris"]) == {"cases"}  # statutes: the product's collection (embedded)
    assert variant.config["questions_used"] == base.config["questions_used"]
    for qid, wanted in (("AILA_Q1", "S1"), ("AILA_Q2", "S2")):
        assert variant.run[qid][0][0] == base.run[qid][0][0] == wanted
    assert agreement(base, variant)["within_tolerance"]


def test_a_configuration_the_backend_cannot_serve_is_refused():
    with pytest.raises(ConfigError, match="'fulltext' retriever") as info:
        get_system("aqgr@milvus")
    assert "aqgr-no-fulltext" in str(info.value)  # the configurations that fit are listed
    with pytest.raises(ConfigError, match="no index backend"):
        get_system("bm25-fulltext@milvus")
    with pytest.raises(ConfigError, match="embedded.*milvus"):
        get_system("aqgr-no-fulltext@elastic")
    with pytest.raises(ConfigError, match="<system>@<backend>"):
        get_system("aqgr@")
    with pytest.raises(ConfigError, match="bm25_idf"):
        get_system("bm25-summary@milvus", bm25_idf="tfidf")
    like = get_system("bm25-summary@milvus", bm25_idf="lucene")  # Milvus's own idf: like with like
    assert like.index_spec().bm25_idf == "lucene" and not any("idf" in n for n in like.config()["backend_notes"])
    assert get_system("aqgr-no-fulltext@embedded").name == "aqgr-no-fulltext"
    assert get_system("aqgr-no-fulltext", backend="milvus").name == "aqgr-no-fulltext@milvus"


def test_eval_cli_lists_both_backends_side_by_side(data, tmp_path):
    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app

    uri = tmp_path / "elsewhere" / "milvus.db"
    out = tmp_path / "report"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--data",
            str(data),
            "--systems",
            "bm25-summary,bm25-summary@milvus",
            "--embedder",
            "hashing.v1",
            "--milvus-uri",
            str(uri),
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    means = json.loads(result.stdout[result.stdout.index("{") :])["mean"]
    assert list(means) == ["bm25-summary", "bm25-summary@milvus"]
    config = json.loads((out / "config.json").read_text())
    assert config["systems"]["bm25-summary@milvus"]["milvus_uris"] == {"cases": str(uri)}
    assert uri.is_dir()
    refused = CliRunner().invoke(
        app,
        [
            "eval",
            "--data",
            str(data),
            "--systems",
            "bm25-summary,aqgr@milvus",
            "--out",
            str(tmp_path / "o2"),
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
    )
    assert refused.exit_code == 2 and "fulltext" in refused.output
    assert not (tmp_path / "o2").exists(), "refused before anything ran"


def test_sample_archive_as_an_eval_dataset(tmp_path):
    from aqgr.eval.bench.backend_agreement import SAMPLE, sample_dataset

    dataset = load_dataset(sample_dataset(tmp_path / "sample"), docs=SAMPLE / "judgments")
    scenarios = json.loads((SAMPLE / "scenarios.json").read_text())
    assert list(dataset.queries) == [s["id"] for s in scenarios]
    assert {q: sorted(d) for q, d in dataset.qrels.items()} == {s["id"]: sorted(s["relevant"]) for s in scenarios}
    assert len(dataset.doc_ids) == 17 and not dataset.warnings
