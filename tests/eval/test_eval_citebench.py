"""The citation-benchmark builder on a tiny archive written into tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from aqgr.eval.citebench import CitebenchSettings, build_citation_benchmark
from aqgr.eval.citebench.mask import mask
from aqgr.eval.datasets import load_dataset
from aqgr.retrieval.citations.normalize import citations, party_key

FILLER = (
    "The appellant was employed in the district office and the dispute concerned the payment of his "
    "salary for the years in question, which the department had withheld after an inquiry was held. "
    "The trial court decreed the suit and the first appellate court affirmed the decree on the evidence "
    "led by both sides, after which the second appeal was dismissed by the High Court in limine."
)


def judgment(title: str, date: str, *paragraphs: str) -> str:
    numbered = [f"{i}. {p}" for i, p in enumerate(paragraphs, start=1)]
    return (
        "\n".join(
            [
                title,
                "Supreme Court of India",
                "",
                date,
                "Civil Appeal No. 1 of 2000",
                "The Judgment was delivered by : A. Judge, J.",
                *numbered,
            ]
        )
        + "\n"
    )


ARCHIVE = {
    "C1": judgment("Ram Kumar v State of U.P.", "10 January 1990", FILLER, FILLER),
    "C2": judgment("Union of India v Sita Devi and Others", "5 March 1995", FILLER, FILLER),
    "C3": judgment("Hari Singh v State of Punjab", "7 July 2005", FILLER, FILLER),
    "C4": judgment(
        "Mohan Lal v State of Bihar",
        "1 June 2000",
        "The appellant Mohan Lal was convicted under Sections 302 and 34 of the Indian Penal Code by the "
        "Sessions Judge for the murder of one Gopal Das (PW-2) in the village. " + FILLER,
        "A similar question arose in Kishan v. Jagdish where it was decided otherwise. " + FILLER,
        "In Ram Kumar v. State of Uttar Pradesh (1990) 2 SCC 100 1990 Indlaw SC 11, this Court held that "
        "the evidence must be weighed. Reliance was also placed on Hari Singh v. State of Punjab.",
        "The same view was taken in AIR 1995 SC 500.",
    ),
    "C5": judgment(
        "Gita Rani v State of Kerala",
        "2 February 2001",
        FILLER,
        "As held in Union of India v. Sita Devi and Ors., AIR 1995 SC 500 1995 Indlaw SC 22, the rule applies.",
    ),
}


def write_archive(root: Path, docs: dict[str, str]) -> Path:
    folder = root / "Object_casedocs"
    folder.mkdir(parents=True)
    for doc_id, text in docs.items():
        (folder / f"{doc_id}.txt").write_text(text, encoding="utf-8")
    return root


def build(tmp_path, docs=ARCHIVE, name="bench", **settings):
    archive = write_archive(tmp_path / f"archive-{name}", docs)
    out = tmp_path / name
    bench = build_citation_benchmark(archive, out, CitebenchSettings(**settings))
    return archive, out, bench


def pairs(bench) -> set[tuple[str, str]]:
    return {(link.citing, link.cited) for link in bench.links}


def test_title_match_and_reporter_citation_match(tmp_path):
    _, _, bench = build(tmp_path)
    how = {(l.citing, l.cited, l.how) for l in bench.links}
    assert ("C4", "C1", "title") in how  # "State of Uttar Pradesh" matches "State of U.P."
    assert ("C5", "C2", "title") in how  # "and Ors." folded
    assert ("C4", "C2", "citation") in how  # bare "AIR 1995 SC 500", learned from C5's title match


def test_citation_of_a_newer_judgment_is_rejected(tmp_path):
    _, _, bench = build(tmp_path)
    assert ("C4", "C3") not in pairs(bench)  # Hari Singh (2005) cannot be cited in 2000


def test_reporter_citations_are_normalised():
    keys = {c.key for text in ("(1994) 3 SCC 112", "1994 (3) SCC 112", "[1994] 3 S.C.C. 112") for c in citations(text)}
    assert keys == {"scc:1994:3:112"}
    assert [c.key for c in citations("AIR 1980 SC 898; 1980 Indlaw SC 5")] == ["air:1980:sc:898", "indlaw:1980:sc:5"]
    assert party_key("State Of U.P. & Ors") == party_key("State of Uttar Pradesh") == ("state", "uttar", "pradesh")


def test_popularity_cap(tmp_path):
    docs = dict(ARCHIVE)
    for n in (6, 7):  # two more judgments cite Ram Kumar: three citers in all
        docs[f"C{n}"] = judgment(
            f"Citer{n} v State of Goa",
            f"{n} May 2003",
            FILLER,
            "In Ram Kumar v. State of U.P. (1990) 2 SCC 100 the rule was stated.",
        )
    _, _, capped = build(tmp_path, docs, "capped")
    _, _, loose = build(tmp_path, docs, "loose", popularity_cap=3)
    assert capped.stats["links_before_cap"] == loose.stats["links_before_cap"]
    assert "C1" not in {d for docs_ in capped.qrels.values() for d in docs_}
    assert "C1" in loose.qrels["PQ_C4"]


def test_masking():
    text = (
        "The appellant Mohan Lal was convicted u/s. 302 read with 34 I.P.C. and under Section 3(1) of "
        "the Arms Act, 1959; his brother Suresh (PW-2) and Smt. Kamla Devi deposed."
    )
    masked = mask(text, ("Mohan Lal", "State of Bihar"))
    for hidden in ("Mohan", "302", "I.P.C.", "Arms Act", "Suresh", "Kamla"):
        assert hidden not in masked
    assert "Section S" in masked and "Act A1" in masked and "Act A2" in masked and "P1" in masked


def test_query_is_masked_facts_without_citation_sentences(tmp_path):
    _, out, bench = build(tmp_path)
    query = bench.queries["PQ_C4"]
    assert "Kishan" not in query and "Jagdish" not in query  # a sentence naming a case is removed
    assert "this Court held" not in query  # the paragraph of the first citation is not facts
    assert "Mohan" not in query and "Section S" in query and "P1" in query
    assert bench.citing["PQ_C4"] == "C4"


def test_output_loads_with_the_eval_loader(tmp_path):
    archive, out, bench = build(tmp_path)
    data = load_dataset(out, docs=archive)
    assert set(data.queries) == set(bench.queries) == {"PQ_C4", "PQ_C5"}
    assert data.qrels["PQ_C4"] == {"C1": 1, "C2": 1}
    assert data.exclude["PQ_C4"] == frozenset({"C4"})
    assert not data.warnings


QUOTED = (
    "Whoever commits murder shall be punished with death or imprisonment for life and shall also be liable to fine."
)


def test_statute_qrels_are_the_statutes_the_citing_judgment_quotes(tmp_path):
    """With statutes, each query's relevant statutes are those its citing judgment quotes
    word for word; a facts sentence quoting one is dropped from the query (it would give
    the answer), and the statute protocol reads the qrels and the citing-judgment exclusion."""
    docs = dict(ARCHIVE)
    docs["C4"] = docs["C4"].replace(
        "for the murder of one Gopal Das (PW-2) in the village. ",
        f"for the murder of one Gopal Das (PW-2) in the village. The section says: {QUOTED} ",
    )
    archive = write_archive(tmp_path / "archive", docs)
    statutes = archive / "Object_statutes"
    statutes.mkdir()
    (statutes / "S1.txt").write_text(f"Title: Punishment for murder\nDesc: {QUOTED}\n", encoding="utf-8")
    (statutes / "S2.txt").write_text(
        "Title: Theft\nDesc: Whoever intending to take dishonestly any movable property "
        "out of the possession of any person without consent commits theft.\n",
        encoding="utf-8",
    )
    out = tmp_path / "bench"
    bench = build_citation_benchmark(archive, out, CitebenchSettings(), statutes=archive)
    assert bench.statute_qrels == {"PQ_C4": ["S1"]}
    assert "liable to fine" not in bench.queries["PQ_C4"] and "Gopal" not in bench.queries["PQ_C4"]
    assert (out / "qrels_statutes.txt").read_text() == "PQ_C4 Q0 S1 1\n"
    assert bench.stats["statute_queries"] == 1 and "qrels_statutes.txt" in (out / "README.md").read_text()
    data = load_dataset(out, kind="statutes", docs=archive)
    assert data.qrels == {"PQ_C4": {"S1": 1}} and data.exclude["PQ_C4"] == frozenset({"C4"})
    assert not data.warnings  # the exclusions name judgments, not statutes: expected here
    # without statutes nothing about them is written
    assert (
        build(tmp_path, name="plain")[2].statute_qrels is None
        and not (tmp_path / "plain" / "qrels_statutes.txt").exists()
    )


def test_min_words_drops_short_facts(tmp_path):
    _, _, bench = build(tmp_path, min_words=10_000)
    assert bench.queries == {} and bench.stats["dropped_facts_too_short"] == 2


def test_deterministic(tmp_path):
    _, a, _ = build(tmp_path, name="a")
    _, b, _ = build(tmp_path, name="b")
    for name in ("queries.txt", "qrels.txt", "citing.tsv", "links.tsv"):
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_renumbering_documents_changes_no_link(tmp_path):
    rename = {"C1": "C50", "C2": "C9", "C3": "C31", "C4": "C2", "C5": "C7"}
    _, _, bench = build(tmp_path, name="orig")
    _, _, renamed = build(tmp_path, {rename[k]: v for k, v in ARCHIVE.items()}, "renamed")
    assert {(rename[a], rename[b], l.how) for a, b, l in ((l.citing, l.cited, l) for l in bench.links)} == {
        (l.citing, l.cited, l.how) for l in renamed.links
    }


def test_rejects_a_folder_without_judgments(tmp_path):
    from aqgr.foundation.errors import DatasetError

    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError):
        build_citation_benchmark(tmp_path / "empty", tmp_path / "out")


def test_refuses_to_overwrite_a_folder_that_is_not_a_benchmark(tmp_path):
    from aqgr.foundation.errors import DatasetError

    archive = write_archive(tmp_path / "archive", ARCHIVE)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(DatasetError):
        build_citation_benchmark(archive, tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    build_citation_benchmark(archive, tmp_path / "bench")
    build_citation_benchmark(archive, tmp_path / "bench")  # an earlier benchmark is replaced


def test_aqgr_eval_build_citation_benchmark_command(tmp_path):
    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app

    archive = write_archive(tmp_path / "archive", ARCHIVE)
    out = tmp_path / "cli-bench"
    result = CliRunner().invoke(
        app, ["eval", "build-citation-benchmark", str(archive), "--out", str(out), "--min-words", "0"]
    )
    assert result.exit_code == 0, result.output
    assert (out / "queries.txt").exists() and (out / "qrels.txt").exists() and (out / "citing.tsv").exists()
    _, api_out, _ = build(tmp_path, min_words=0)
    for name in ("queries.txt", "qrels.txt", "citing.tsv"):
        assert (out / name).read_text(encoding="utf-8") == (api_out / name).read_text(encoding="utf-8"), name
    assert (out / "qrels.txt").read_text(encoding="utf-8").strip()
