"""The summary-based systems (eval/systems/pipeline.py) end to end on a tiny AILA-shaped dataset.

Embeddings come from `hashing.v1` (no torch); summaries from the offline extractive engine.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from aqgr.eval.datasets import load_dataset
from aqgr.eval.harness import evaluate, evaluate_path
from aqgr.eval.protocols import EvalProtocol
from aqgr.eval.runs import read_run
from aqgr.eval.systems.pipeline import PIPELINE_CONFIGS, ArchiveSystem
from aqgr.eval.systems.registry import get_system

NAMES = list(PIPELINE_CONFIGS)

# An issue sentence per judgment, so the offline question generator has questions to harvest.
ISSUES = {
    "C1": "whether the compensation for the land acquired must be the market value on the date of the notification",
    "C2": "whether the presumption of dowry death applies when cruelty by the husband is proved soon before her death",
    "C3": "whether the husband may appeal against a decree of divorce granted by the family court",
    "C4": "whether the deduction of interest paid by a partnership firm was rightly disallowed in the assessment",
    "C5": "whether the dismissal of a bank officer after a departmental inquiry into misconduct was lawful",
}


@pytest.fixture
def tiny(tmp_path):
    """The shared tiny dataset, each judgment with a paragraph stating its question of law."""
    from aila_tiny import write_dataset

    return _with_issues(write_dataset(tmp_path / "aila"))


def _with_issues(root):
    for doc_id, issue in ISSUES.items():
        path = root / "Object_casedocs" / f"{doc_id}.txt"
        path.write_text(f"{path.read_text()}\n\nThe question for consideration is {issue}.\n", encoding="utf-8")
    return root


def _systems(names=NAMES):
    return [get_system(n, embedder="hashing.v1") for n in names]


def test_no_two_pipeline_systems_are_the_same_system():
    """An ablation whose change the default has adopted (Lucene idf, once `aqgr+lucene-idf`) runs
    the default again under another name: each configuration differs in what it builds or searches."""
    seen: dict[str, str] = {}
    for name, config in PIPELINE_CONFIGS.items():
        system = ArchiveSystem(name, config)
        made = json.dumps(
            [
                system.index_spec().describe(),
                system.search_options().model_dump(mode="json"),
                system.explainer,
                system.question_generator,
                config.explain,
                config.statutes_via_precedents,
            ],
            sort_keys=True,
        )
        assert made not in seen, f"{name} is {seen.get(made)} under another name"
        seen[made] = name


@pytest.mark.parametrize("name", NAMES)
def test_each_pipeline_system_runs_end_to_end(tiny, tmp_path, name):
    report = evaluate_path(
        tiny, _systems([name]), "aila-cases", queries="all", out_dir=tmp_path / "out", cache_dir=tmp_path / "cache"
    )
    result = report.systems[0]
    assert result.name == name and result.dropped == 0
    assert set(result.run) == {"AILA_Q1", "AILA_Q2", "AILA_Q3"}
    assert result.run["AILA_Q1"], "the dowry query finds something"
    for ranking in result.run.values():
        assert len({d for d, _ in ranking}) == len(ranking)
        assert {d for d, _ in ranking} <= {"C1", "C2", "C3", "C4", "C5"}
    assert set(result.results.mean) >= {"AP", "P@10", "Bpref", "RR", "SetP", "SetR"}
    assert read_run(result.run_file)  # a TREC run file was written
    config = result.config
    assert config["system"] == name and config["summarizer"] == "extractive.v1"
    assert config["index_spec"]["embedder"] == "hashing.v1"
    assert ("precedents" in config["index_spec"]["slots"]) == (name == "aqgr+precedents")
    if PIPELINE_CONFIGS[name].explain:
        # the own returned set: the explained hits (at most SearchOptions.k), first in the ranking
        for qid, docs in result.returned.items():
            assert docs == [d for d, _ in result.run[qid][: len(docs)]] and len(docs) <= 10
    if PIPELINE_CONFIGS[name].questions:
        assert any(config["questions_used"].values())


def test_summaries_and_indexes_are_cached(tiny, tmp_path):
    ds = load_dataset(tiny)
    first = get_system("aqgr", embedder="hashing.v1")
    first.prepare(ds, cache_dir=tmp_path / "cache")
    home = first.home
    assert home.parent == tmp_path / "cache" / "archives"
    (index_dir,) = (home / "indexes").iterdir()
    built = json.loads((index_dir / "manifest.json").read_text())["created_at"]
    assert (home / "cache" / "embeddings.sqlite").is_file()
    assert sorted(s.judgment_id for s in first._searcher.summaries.values()) == ["C1", "C2", "C3", "C4", "C5"]

    import aqgr.eval.systems.pipeline as ps

    ps._LOADED.clear()  # as a new process would
    again = get_system("ensemble-summary", embedder="hashing.v1")
    stages = []
    again.prepare(ds, cache_dir=tmp_path / "cache", progress=lambda what, done, total: stages.append(what))
    assert again.home == home
    assert not stages, "nothing summarised or indexed again"
    assert json.loads((index_dir / "manifest.json").read_text())["created_at"] == built


def test_exclusions_are_honoured_inside_retrieval(tmp_path):
    from aila_tiny import write_dataset

    root = _with_issues(write_dataset(tmp_path / "aila", citing="AILA_Q1\tC2\nAILA_Q2\tC1\n"))
    report = evaluate_path(root, _systems(), "aila-cases", out_dir=tmp_path / "out", cache_dir=tmp_path / "cache")
    for result in report.systems:
        assert result.dropped == 0, f"{result.name} ranked an excluded document"
        assert "C2" not in [d for d, _ in result.run["AILA_Q1"]], result.name
        assert "C1" not in [d for d, _ in result.run["AILA_Q2"]], result.name
        assert "C2" not in result.returned["AILA_Q1"]
        assert "C1" not in {d for d, _ in read_run(result.run_file).get("AILA_Q2", [])}


def test_study_subset_restriction_is_honoured_inside_retrieval(tiny, tmp_path):
    pool = frozenset({"C1", "C3", "C4"})
    protocol = EvalProtocol("pool", "cases", "a 3-document pool", queries=("AILA_Q1", "AILA_Q2"), pool=pool)
    report = evaluate(load_dataset(tiny), _systems(), protocol, cache_dir=tmp_path / "cache")
    for result in report.systems:
        assert result.dropped == 0, f"{result.name} ranked outside the pool"
        for qid, ranking in result.run.items():
            assert {d for d, _ in ranking} <= pool, result.name
            assert set(result.returned[qid]) <= pool
    # the restriction applies to the system itself, not only to the harness's filter
    system = ArchiveSystem("aqgr", PIPELINE_CONFIGS["aqgr"], embedder="hashing.v1")
    system.prepare(load_dataset(tiny), cache_dir=tmp_path / "cache")
    ranking = system.rank("AILA_Q1", "The wife died after dowry harassment by her husband.", depth=10, restrict=pool)
    assert ranking and {d for d, _ in ranking} <= pool


def test_statutes_with_every_pipeline_system(tiny, tmp_path):
    report = evaluate_path(tiny, _systems(), "aila-statutes", cache_dir=tmp_path / "cache")
    for result in report.systems:
        assert result.dropped == 0
        for ranking in result.run.values():
            assert {d for d, _ in ranking} <= {"S1", "S2", "S3"}
        # the dowry-death statute is found for the dowry query by every configuration
        assert "S2" in [d for d, _ in result.run["AILA_Q1"]][:2], result.name
        assert result.config["documents"] == "statute title + description"
    aqgr = next(r for r in report.systems if r.name == "aqgr")
    assert aqgr.config["questions_used"]["AILA_Q1"], "questions come from the case archive"
    assert aqgr.config["archive_home"]


def test_statutes_through_the_precedents_that_quote_them(tiny, tmp_path):
    """A statute whose words the facts do not share is found through the judgment that
    quotes it (the product's ranking, aqgr/pipeline/statutes.py); the text-only ranking misses it."""
    quote = (
        "No member of a service of the Union shall be removed except after he has been given a reasonable "
        "opportunity of showing cause against the action proposed."
    )
    (tiny / "Object_statutes" / "S4.txt").write_text(
        f"Title: Reasonable opportunity\nDesc: {quote}\n", encoding="utf-8"
    )
    (tiny / "Object_statutes" / "S5.txt").write_text(  # shares the query's words, quoted by nobody
        "Title: Bank officers dismissed after an inquiry\nDesc: A bank officer dismissed after a departmental inquiry "
        "into misconduct may appeal to the board.\n",
        encoding="utf-8",
    )
    case = tiny / "Object_casedocs" / "C5.txt"
    case.write_text(f"{case.read_text()}\nThe rule reads: {quote}\n", encoding="utf-8")
    qrels = tiny / "relevance_judgments_statutes.dev.txt"
    qrels.write_text(qrels.read_text() + "AILA_Q3 Q0 S4 1\n", encoding="utf-8")
    report = evaluate_path(
        tiny, _systems(["aqgr-statutes-text-only", "aqgr"]), "aila-statutes", cache_dir=tmp_path / "cache"
    )
    text_only, via = report.systems
    assert [d for d, _ in via.run["AILA_Q3"]][0] == "S4"
    assert [d for d, _ in text_only.run["AILA_Q3"]][0] == "S5"
    assert {d for ranking in via.run.values() for d, _ in ranking} <= {"S1", "S2", "S3", "S4", "S5"}


def test_pipeline_system_before_prepare_says_what_to_do():
    from aqgr.foundation.errors import ConfigError

    with pytest.raises(ConfigError, match="prepare"):
        get_system("aqgr").rank("q", "facts", depth=10)


def test_aqgr_eval_cli_writes_the_report(tiny, tmp_path):
    from aqgr.interfaces.cli import app

    out = tmp_path / "report"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--data",
            str(tiny),
            "--systems",
            "bm25-fulltext,aqgr",
            "--system",
            "bm25-summary",
            "--embedder",
            "hashing.v1",
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    means = json.loads(result.stdout[result.stdout.index("{") :])["mean"]
    assert list(means) == ["bm25-summary", "bm25-fulltext", "aqgr"]
    assert {p.name for p in out.iterdir()} >= {"report.md", "results.json", "config.json", "runs"}
    assert sorted(p.name for p in (out / "runs").iterdir()) == [
        "aqgr.aila-cases.run",
        "bm25-fulltext.aila-cases.run",
        "bm25-summary.aila-cases.run",
    ]
    config = json.loads((out / "config.json").read_text())
    assert config["command"].startswith(("aqgr eval", "eval")) or "eval" in config["command"]
    assert config["systems"]["aqgr"]["index_spec"]["embedder"] == "hashing.v1"
    assert "| aqgr |" in (out / "report.md").read_text()


def test_unknown_system_in_cli_lists_the_known_ones(tiny, tmp_path):
    from aqgr.interfaces.cli import app

    result = CliRunner().invoke(app, ["eval", "--data", str(tiny), "--systems", "nope", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2


def test_cli_default_report_directory_is_timestamped(tiny, tmp_path, monkeypatch):
    from aqgr.interfaces.cli import app

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["eval", "--data", str(tiny), "--cache-dir", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    (out,) = (tmp_path / "reports").iterdir()
    assert (out / "report.md").is_file() and (out / "runs" / "bm25-fulltext.aila-cases.run").is_file()


def test_the_aqgr_statute_figures_come_from_the_products_statute_search(tiny, tmp_path, monkeypatch):
    """The `aqgr` systems rank statutes with `aqgr.pipeline.statutes.statutes_for` (the server's and the
    MCP tool's path: rrf.v1 over 12 per query), not with an assembly of their own."""
    import aqgr.pipeline.statutes as statutes

    answers = []
    real = statutes.statutes_for

    def spy(*args, **kwargs):
        answers.append(real(*args, **kwargs))
        return answers[-1]

    monkeypatch.setattr(statutes, "statutes_for", spy)
    report = evaluate_path(tiny, _systems(["aqgr"]), "aila-statutes", cache_dir=tmp_path / "cache")
    result = report.systems[0]
    assert len(answers) == len(result.run) >= 2
    for qid, answer in zip(result.run, answers):
        assert result.run[qid] == [(h.statute_id, h.score) for h in answer.hits]
        assert result.config["questions_used"][qid] == answer.questions
    assert result.config["statute_search"] == "aqgr.pipeline.statutes.statutes_for"
