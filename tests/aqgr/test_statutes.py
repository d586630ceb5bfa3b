"""Statutes through the precedents: the archive's judgments that quote a statute vote for it."""

from __future__ import annotations

import json

import pytest

from aqgr import Archive, IndexSpec, Settings
from aqgr.interfaces.server.service import ArchiveService
from aqgr.pipeline.statutes import StatuteCollection, rank_with_precedents
from aqgr.retrieval.types import ScoredDoc

from .helpers import DYING_DECLARATION_FACTS, JUDGMENTS, write_judgments

EVIDENCE = (
    "When the statement is made by a person as to the cause of his death, or as to any of the circumstances of the "
    "transaction which resulted in his death, in cases in which the cause of that person's death comes into question."
)
SERVICE = (
    "No person employed in a civil capacity shall be dismissed or removed or reduced in rank except after an inquiry "
    "in which he has been informed of the charges against him."
)
STATUTES = {
    "S_EVID": f"Title: Statements of relevant facts by a person who is dead\nDesc: {EVIDENCE}",
    "S_SERVICE": f"Title: Dismissal of persons employed in civil capacities\nDesc: {SERVICE}",
    "S_MURDER": "Title: Punishment for murder\nDesc: Whoever commits murder shall be punished with death, or imprisonment for life.",
}


def _quoting(judgments: dict[str, str]) -> dict[str, str]:
    """The test judgments, the dying-declaration ones quoting the Evidence Act provision and
    the natural-justice ones the service provision (as real judgments quote what they apply)."""
    out = dict(judgments)
    for name, quote in (("A1", EVIDENCE), ("A3", EVIDENCE), ("A2", SERVICE), ("A4", SERVICE)):
        out[name] = out[name].replace("\n5. ", f"\n5. The provision reads: {quote}\n6. ", 1)
    return out


@pytest.fixture
def archive(tmp_path) -> Archive:
    archive = Archive(settings=Settings.resolve(tmp_path / "home", index=IndexSpec(embedder="hashing.v1")))
    archive.summarize([write_judgments(tmp_path / "in", _quoting(JUDGMENTS))])
    archive.build_index()
    assert archive.link_statutes() is None  # no statutes yet
    folder = tmp_path / "statutes"
    folder.mkdir()
    for name, text in STATUTES.items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    archive.add_statutes([folder])
    return archive


def test_precedents_vote_for_the_statutes_they_quote(archive):
    collection = StatuteCollection(archive.settings)
    assert collection.links() == {"A1": ["S_EVID"], "A2": ["S_SERVICE"], "A3": ["S_EVID"], "A4": ["S_SERVICE"]}
    result = ArchiveService(archive).search_statutes(DYING_DECLARATION_FACTS, k=3)
    top = result.hits[0]
    assert top.statute_id == "S_EVID" and top.quoted_by and set(top.quoted_by) <= {"A1", "A3"}
    assert [h.statute_id for h in result.hits].index("S_SERVICE") > 0
    assert {h.statute_id for h in result.hits} <= set(STATUTES)  # grounded in the collection
    # without the precedents the same statutes come back, by their text alone, with no quoted_by
    direct = collection.search(DYING_DECLARATION_FACTS, result.questions, k=3)
    assert all(not h.quoted_by for h in direct.hits)


def test_links_follow_the_statutes_and_the_index(archive, tmp_path):
    collection = StatuteCollection(archive.settings)
    extra = tmp_path / "more"
    extra.mkdir()
    (extra / "S_NEW.txt").write_text(
        "Title: Something else\nDesc: Rent of a shop shall be paid monthly.", encoding="utf-8"
    )
    collection.add([extra])  # statutes changed, judgments not given: the old links no longer count
    assert collection.links() == {}
    assert not any(h.quoted_by for h in ArchiveService(archive).search_statutes(DYING_DECLARATION_FACTS, k=3).hits)
    archive.build_index()  # rebuilding the case index links again
    assert collection.links()["A1"] == ["S_EVID"]
    stored = json.loads((collection.root / "links.json").read_text(encoding="utf-8"))
    assert stored["version"] == 1 and "statutes_sha256" in stored
    # a damaged links file is as if never linked: statutes are still found by their text
    (collection.root / "links.json").write_text('{"version": 1, "links": {"A1": [', encoding="utf-8")
    assert collection.links() == {}
    assert ArchiveService(archive).search_statutes(DYING_DECLARATION_FACTS, k=3).hits
    seen = []
    archive.link_statutes(lambda stage, done, total: seen.append((stage, done, total)))
    assert seen[-1] == ("statute links", 4, 4) and collection.links()["A3"] == ["S_EVID"]


def test_a_statute_index_an_older_aqgr_made_is_refused_then_built_again_by_aqgr_index(archive):
    """The statute index is an embedded index too: one an older aqgr made is refused like the case
    index, and `aqgr index` builds it again from the collection's own statutes."""
    import sqlite3

    from aqgr.foundation.errors import IndexMismatchError

    collection = StatuteCollection(archive.settings)
    with sqlite3.connect(collection.index_dir / "docs.sqlite") as db:  # as an index of an earlier aqgr
        db.execute("DROP INDEX docs_live")
    with pytest.raises(IndexMismatchError, match="`aqgr index --rebuild` makes it anew"):
        Archive(settings=archive.settings).search_statutes(DYING_DECLARATION_FACTS, k=3)
    archive.build_index()
    assert not collection.renew()  # made anew by this aqgr: nothing to do
    result = Archive(settings=archive.settings).search_statutes(DYING_DECLARATION_FACTS, k=3)
    assert result.hits[0].statute_id == "S_EVID"


def test_rank_with_precedents_orders_by_votes_then_text():
    direct = [ScoredDoc("S1", 1.0), ScoredDoc("S2", 0.9), ScoredDoc("S3", 0.5), ScoredDoc("S4", 0.4)]
    links = {"J1": ["S3"], "J2": ["S4", "S3"], "J3": ["S4"], "J9": ["S2"]}
    ranking, quoted_by = rank_with_precedents(direct, ["J1", "J2", "J3", "J5"], links, text_weight=0.05)
    # S3: 1 + 1/2 votes, S4: 1/2 + 1/3; then the unquoted ones by their text; J9 ranked nowhere
    assert [d.doc_id for d in ranking] == ["S3", "S4", "S1", "S2"]
    assert quoted_by == {"S3": ["J1", "J2"], "S4": ["J2", "J3"]}
    assert ranking[0].score == pytest.approx(1 + 0.05 * 0.5)
    # the depth: only the first judgments vote
    assert rank_with_precedents(direct, ["J5", "J1"], links, depth=1)[0] == direct
    # no precedent quotes anything: the direct ranking unchanged
    assert rank_with_precedents(direct, ["J7"], links) == (direct, {})


def test_statutes_command_links_the_archive(tmp_path):
    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app

    runner = CliRunner()
    home = tmp_path / "home"
    assert (
        runner.invoke(
            app, ["summarize", str(write_judgments(tmp_path / "in", _quoting(JUDGMENTS))), "--home", str(home)]
        ).exit_code
        == 0
    )
    assert runner.invoke(app, ["index", "--home", str(home), "--embedder", "hashing.v1"]).exit_code == 0
    folder = tmp_path / "statutes"
    folder.mkdir()
    for name, text in STATUTES.items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["statutes", str(folder), "--home", str(home)])
    assert result.exit_code == 0, result.output
    assert "3 statutes indexed" in result.output and "4 judgments of the archive quote them" in result.output
    assert json.loads((home / "statutes" / "links.json").read_text(encoding="utf-8"))["links"]["A2"] == ["S_SERVICE"]


def test_the_archive_searches_its_statutes_as_the_server_does(archive, tmp_path):
    mine = archive.search_statutes(DYING_DECLARATION_FACTS, k=3)
    assert mine.hits[0].statute_id == "S_EVID"
    assert mine == ArchiveService(archive).search_statutes(DYING_DECLARATION_FACTS, k=3)
    from aqgr import NoStatutesError

    with pytest.raises(NoStatutesError):
        Archive(settings=archive.settings.model_copy(update={"home": tmp_path / "other"})).search_statutes(
            DYING_DECLARATION_FACTS
        )
