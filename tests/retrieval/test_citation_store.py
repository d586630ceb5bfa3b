"""The citation store: built whole or in batches, it finds exactly what CitationGraph.from_texts finds."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter

import pytest

from aqgr.foundation.errors import IndexMismatchError
from aqgr.foundation.paths import SAMPLE, shared_datasets
from aqgr.retrieval.citations import CitationGraph
from aqgr.retrieval.citations.store import CitationStore


def _judgment(title: str, date: str, body: str, header: str = "") -> str:
    return f"{title}\nSupreme Court of India\n\n{date}\n{header}\nThe Judgment was delivered by : A. Judge, J.\n1. {body}\n"


TEXTS = {
    "OLD": _judgment(
        "Ram Kumar v State of Punjab",
        "12 March 1998",
        "A dying declaration may found a conviction.",
        header="1998 Indlaw SC 101",
    ),
    "MID": _judgment(
        "Sunita Devi v Union of India",
        "3 April 2001",
        "The appellant relied on Ram Kumar v. State of Punjab on dying declarations.",
    ),
    "NEW": _judgment(
        "Mohan Lal v State of Rajasthan",
        "9 July 2004",
        "As held in 1998 Indlaw SC 101 and followed in Sunita Devi v. Union of India, the rule stands.",
    ),
    "LATER": _judgment(
        "Hari Prasad v Commissioner of Excise",
        "5 May 2010",
        "The High Court followed Mohan Lal v. State of Rajasthan in this matter.",
    ),
    # a second judgment under OLD's title: MID's bare mention of it now fits two judgments
    "TWIN": _judgment("Ram Kumar v State of Punjab", "2 February 1999", "Bail was refused."),
    # a header carrying OLD's citation (a misprint): the reporter table drops that citation
    "CLASH": _judgment(
        "Gopal Singh v State of Haryana", "20 August 1998", "The appeal is dismissed.", header="1998 Indlaw SC 101"
    ),
    "QUIET": _judgment("Kamla Bai v State of Kerala", "1 June 2005", "Nothing is cited here."),
}


class Reader:
    """text_of over a dict, counting the reads."""

    def __init__(self, texts: dict[str, str]):
        self.texts, self.reads = texts, Counter()

    def __call__(self, doc_id: str) -> str:
        self.reads[doc_id] += 1
        return self.texts[doc_id]


def _add(store: CitationStore, ids, texts=TEXTS) -> Counter:
    reader = Reader(texts)
    store.add(((i, texts[i]) for i in ids), text_of=reader)
    return reader.reads


def _same_as_full(store: CitationStore, texts: dict[str, str]) -> CitationGraph:
    full = CitationGraph.from_texts(texts.items())
    graph = store.graph()
    assert graph.pairs() == full.pairs()
    assert dict(graph.mentions) == dict(full.mentions)
    assert store.ids() == set(texts)
    return graph


def test_batches_find_what_one_build_finds_as_ambiguities_come_and_go(tmp_path):
    store = CitationStore(tmp_path / "citations.sqlite")
    _add(store, ["OLD", "MID", "LATER"])
    assert _same_as_full(store, {k: TEXTS[k] for k in ("OLD", "MID", "LATER")}).pairs() == [("MID", "OLD")]
    # LATER, stored before, cites the new NEW; NEW cites OLD by the citation OLD's header carries
    _add(store, ["NEW"])
    before = [("LATER", "NEW"), ("MID", "OLD"), ("NEW", "MID"), ("NEW", "OLD")]
    assert _same_as_full(store, {k: TEXTS[k] for k in ("OLD", "MID", "LATER", "NEW")}).pairs() == before
    assert store.graph().mentions[("NEW", "OLD")].how == "citation"
    # TWIN makes MID's title ambiguous, CLASH the citation NEW relied on: both links go
    _add(store, ["TWIN", "CLASH"])
    assert _same_as_full(store, {k: TEXTS[k] for k in ("OLD", "MID", "LATER", "NEW", "TWIN", "CLASH")}).pairs() == [
        ("LATER", "NEW"),
        ("NEW", "MID"),
    ]
    # and come back when those judgments leave
    store.remove(["TWIN", "CLASH", "ABSENT"], text_of=Reader(TEXTS))
    assert _same_as_full(store, {k: TEXTS[k] for k in ("OLD", "MID", "LATER", "NEW")}).pairs() == before
    store.remove(["NEW"], text_of=Reader(TEXTS))
    assert _same_as_full(store, {k: TEXTS[k] for k in ("OLD", "MID", "LATER")}).pairs() == [("MID", "OLD")]


def test_an_update_rereads_only_the_judgments_it_can_change(tmp_path):
    store = CitationStore(tmp_path / "citations.sqlite")
    _add(store, ["OLD", "MID", "NEW", "LATER"])
    assert _add(store, ["QUIET"]) == {"QUIET": 2}  # its title pass and its citation pass; nobody cites it
    # TWIN's title is mentioned by MID alone
    assert _add(store, ["TWIN"]) == {"TWIN": 2, "MID": 1}
    # CLASH's header changes a citation that NEW holds
    assert _add(store, ["CLASH"]) == {"CLASH": 2, "NEW": 1}
    _same_as_full(store, {k: TEXTS[k] for k in ("OLD", "MID", "NEW", "LATER", "QUIET", "TWIN", "CLASH")})


def test_a_judgment_added_again_replaces_its_old_facts(tmp_path):
    store = CitationStore(tmp_path / "citations.sqlite")
    _add(store, ["OLD", "MID", "NEW", "LATER"])
    # OLD now dated after MID and NEW: neither can cite it any more
    moved = {**TEXTS, "OLD": TEXTS["OLD"].replace("12 March 1998", "12 March 2006")}
    _add(store, ["OLD"], moved)
    graph = _same_as_full(store, {k: moved[k] for k in ("OLD", "MID", "NEW", "LATER")})
    assert graph.pairs() == [("LATER", "NEW"), ("NEW", "MID")]


def test_a_redated_judgment_loses_the_citations_of_judgments_now_older_than_it(tmp_path):
    texts = {
        "OLD": TEXTS["OLD"],
        "SOON": _judgment(
            "Kamla Bai v State of Kerala", "1 July 1998", "Following 1998 Indlaw SC 101, the appeal fails."
        ),
    }
    store = CitationStore(tmp_path / "citations.sqlite")
    _add(store, texts, texts)
    assert store.graph().pairs() == [("SOON", "OLD")]
    # still of 1998, so its header citation still names it; but now decided after SOON
    moved = {**texts, "OLD": TEXTS["OLD"].replace("12 March 1998", "20 November 1998")}
    _add(store, ["OLD"], moved)
    assert _same_as_full(store, moved).pairs() == []


def test_a_failed_update_leaves_the_previous_graph_and_running_it_again_completes_it(tmp_path):
    store = CitationStore(tmp_path / "citations.sqlite")
    _add(store, ["OLD", "MID", "LATER"])
    before = store.graph().pairs()

    def failing(doc_id: str) -> str:
        if doc_id == "LATER":  # the stored judgment relinked because it cites NEW
            raise OSError("disk gone")
        return TEXTS[doc_id]

    with pytest.raises(OSError, match="disk gone"):
        store.add([("NEW", TEXTS["NEW"])], text_of=failing)
    assert store.ids() == {"OLD", "MID", "LATER"} and store.graph().pairs() == before
    reopened = CitationStore(tmp_path / "citations.sqlite")
    assert reopened.graph().pairs() == before
    _add(reopened, ["NEW"])
    _same_as_full(reopened, {k: TEXTS[k] for k in ("OLD", "MID", "LATER", "NEW")})


def test_the_stored_graph_answers_as_the_graph_from_texts(tmp_path):
    store = CitationStore(tmp_path / "citations.sqlite")
    texts = {k: TEXTS[k] for k in ("OLD", "MID", "NEW", "LATER")}
    _add(store, texts)
    graph, full = store.graph(), CitationGraph.from_texts(texts.items())
    assert len(graph) == len(full) == 4
    for doc_id in [*texts, "ABSENT"]:
        assert graph.cites.get(doc_id) == full.cites.get(doc_id)
        assert graph.cited_by.get(doc_id) == full.cited_by.get(doc_id)
    assert dict(graph.cites) == dict(full.cites) and len(graph.cited_by) == len(full.cited_by) == 3
    assert graph.mentions.get(("NEW", "MID")) == full.mentions[("NEW", "MID")]
    assert graph.mentions.get(("MID", "NEW")) is None
    for ranking, exclude in [
        (["NEW", "LATER", "MID", "X"], frozenset()),
        (["LATER", "NEW", "MID"], {"NEW"}),
        (["MID", "NEW"], {"OLD"}),
    ]:
        for norm in ("mean", "cosine", "sum"):
            assert graph.referred(ranking, depth=2, exclude=exclude, norm=norm) == full.referred(
                ranking, depth=2, exclude=exclude, norm=norm
            )


def test_the_graph_and_the_ids_read_together_are_those_read_apart(tmp_path):
    """`graph_and_ids` (what a search process opens) gives `graph()` and `ids()` from one read; a
    link naming a judgment the store no longer holds is a damaged store, not a wrong name."""
    store = CitationStore(tmp_path / "citations.sqlite")
    _add(store, ["OLD", "MID", "NEW", "LATER", "QUIET"])
    graph, ids = store.graph_and_ids()
    assert ids == store.ids() == {"OLD", "MID", "NEW", "LATER", "QUIET"}
    assert graph.pairs() == store.graph().pairs() == CitationGraph.from_texts((k, TEXTS[k]) for k in ids).pairs()
    store._db.execute("DELETE FROM judgments WHERE name = 'MID'")  # as a damaged file would
    with pytest.raises(sqlite3.DatabaseError, match="does not hold"):
        store.graph_and_ids()


def test_the_sample_archive_gives_todays_links(tmp_path):
    texts = {p.stem: p.read_text(encoding="utf-8") for p in sorted((SAMPLE / "judgments").glob("*.txt"))}
    store = CitationStore(tmp_path / "citations.sqlite")
    store.add(texts.items(), text_of=texts.__getitem__)
    assert len(_same_as_full(store, texts)) > 0


def test_a_file_of_another_kind_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "citations.sqlite"
    CitationStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = 'links.v0' WHERE key = 'linker'")
    with pytest.raises(IndexMismatchError, match="linker 'links.v0'.*rebuild"):
        CitationStore(path)
    (tmp_path / "junk.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(IndexMismatchError, match="not a citation store"):
        CitationStore(tmp_path / "junk.sqlite")
    with sqlite3.connect(tmp_path / "other.sqlite") as db:
        db.execute("CREATE TABLE summaries(x)")
    with pytest.raises(IndexMismatchError, match="format None"):
        CitationStore(tmp_path / "other.sqlite")


# ------------------------------------------------------------------ the real archive


def _aila() -> dict[str, str]:
    docs = shared_datasets() / "aila2019" / "Object_casedocs"
    if not docs.is_dir():
        pytest.skip(f"no AILA judgments at {docs}")
    return {p.stem: p.read_text(encoding="utf-8", errors="replace") for p in sorted(docs.glob("*.txt"))}


@pytest.mark.slow
def test_aila_in_one_build_and_in_batches_with_removals_gives_todays_links(tmp_path):
    texts = _aila()
    full = CitationGraph.from_texts(texts.items())
    whole = CitationStore(tmp_path / "whole.sqlite")
    whole.add(texts.items(), text_of=texts.__getitem__)
    graph = whole.graph()
    assert graph.pairs() == full.pairs() and dict(graph.mentions) == dict(full.mentions)

    ids = sorted(texts)
    random.Random(2019).shuffle(ids)
    third = len(ids) // 3
    batches, dropped = [ids[:third], ids[third : 2 * third], ids[2 * third :]], ids[:40] + ids[-40:]
    store = CitationStore(tmp_path / "batches.sqlite")
    store.add(((i, texts[i]) for i in batches[0]), text_of=texts.__getitem__)
    store.add(((i, texts[i]) for i in batches[1] + batches[2]), text_of=texts.__getitem__)
    store.remove(dropped, text_of=texts.__getitem__)
    kept = {i: texts[i] for i in ids if i not in set(dropped)}
    reference = CitationGraph.from_texts(kept.items())
    graph = store.graph()
    assert graph.pairs() == reference.pairs() and dict(graph.mentions) == dict(reference.mentions)
    store.add(((i, texts[i]) for i in dropped), text_of=texts.__getitem__)
    graph = store.graph()
    assert graph.pairs() == full.pairs() and dict(graph.mentions) == dict(full.mentions)


# ------------------------------------------------------------------ large updates


def _sample_and_templates() -> dict[str, str]:
    texts = {p.stem: p.read_text(encoding="utf-8") for p in sorted((SAMPLE / "judgments").glob("*.txt"))}
    return {**texts, **{k: TEXTS[k] for k in ("OLD", "MID", "NEW", "LATER", "QUIET")}}


@pytest.fixture
def large(monkeypatch):
    """Updates of four judgments or more count as large (commit every three), passes on two worker
    processes, a judgment per task (so that few texts are read ahead of what is filed)."""
    from aqgr.retrieval.citations import passes
    from aqgr.retrieval.citations import store as module

    monkeypatch.setattr(module, "LARGE", 4)
    monkeypatch.setattr(module, "PAGE", 3)
    monkeypatch.setattr(passes, "CHUNK", 1)
    monkeypatch.setenv("AQGR_CITATION_WORKERS", "2")


_DOC_COLUMNS = {
    "links": (0, 1),
    "observed": (0, 2),
    "headers": (1,),
    "titles": (2,),
    "reporter": (1,),
    "markers": (1,),
    "occurs": (1,),
}


def _rows(path) -> dict[str, list[tuple]]:
    """Every table of a store but the work tables, rows sorted, row ids read as judgment ids
    (two stores may number their judgments differently); "left": the work tables not empty."""
    with sqlite3.connect(path) as db:
        names = dict(db.execute("SELECT id, name FROM judgments"))
        out = {
            table: sorted(
                tuple(names[v] if i in columns else v for i, v in enumerate(row))
                for row in db.execute(f"SELECT * FROM {table}")
            )
            for table, columns in _DOC_COLUMNS.items()
        }
        out["judgments"] = sorted(db.execute("SELECT name, date FROM judgments"))
        out["left"] = [t for t in ("work_todo", "work_fresh") if db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]]
    return out


def test_a_large_update_on_worker_processes_finds_what_one_transaction_finds(tmp_path, large):
    texts = _sample_and_templates()
    store = CitationStore(tmp_path / "large.sqlite")
    store.add(texts.items(), text_of=texts.__getitem__)
    assert store.pending is None
    graph = _same_as_full(store, texts)
    assert len(graph) > 0 and store.graph().mentions == graph.mentions
    small = CitationStore(tmp_path / "small.sqlite")
    from aqgr.retrieval.citations import store as module

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "LARGE", 10_000)
        small.add(texts.items(), text_of=texts.__getitem__)
    assert _rows(tmp_path / "large.sqlite") == _rows(tmp_path / "small.sqlite")
    assert _rows(tmp_path / "large.sqlite")["left"] == []


@pytest.mark.parametrize("cut", ["filing", "titles", "citations"])
def test_a_large_update_killed_part_way_is_completed_by_the_next_without_a_loss_or_a_double(tmp_path, large, cut):
    texts = _sample_and_templates()
    ids = list(texts)
    reads = Counter()

    def failing(doc_id: str) -> str:
        reads[doc_id] += 1
        if cut != "filing" and sum(reads.values()) == (12 if cut == "titles" else len(ids) + 15):
            raise OSError("killed")
        return texts[doc_id]

    def stream():
        for n, doc_id in enumerate(ids):
            if cut == "filing" and n == 8:
                raise OSError("killed")
            yield doc_id, texts[doc_id]

    store = CitationStore(tmp_path / "citations.sqlite")
    with pytest.raises(OSError, match="killed"):
        store.add(stream(), text_of=failing)
    store.close()
    reopened = CitationStore(tmp_path / "citations.sqlite")
    assert reopened.pending == cut
    stored = reopened.ids()
    assert stored and stored <= set(texts)
    rereads = Reader(texts)
    reopened.add(((i, texts[i]) for i in ids if i not in stored), text_of=rereads)  # what the archive does
    assert reopened.pending is None
    _same_as_full(reopened, texts)
    assert _rows(tmp_path / "citations.sqlite")["left"] == []
    if cut == "citations":  # the title pass was not done again, nor the pages of this one already committed
        assert sum(rereads.reads.values()) < len(ids) - 3, rereads.reads


def test_a_worker_process_that_fails_or_dies_fails_the_pass_with_its_reason(tmp_path):
    from aqgr.retrieval.citations.passes import TITLE, _Workers

    CitationStore(tmp_path / "c.sqlite").close()
    pool = _Workers(1, tmp_path / "c.sqlite", "phrases.v1")
    try:
        pool.send(0, (TITLE, [("X", None)]))  # not a text: the worker's error comes back, raised here
        with pytest.raises((TypeError, AttributeError)):
            pool.receive(0)
        pool.send(0, (TITLE, [("QUIET", TEXTS["QUIET"])]))
        assert pool.receive(0)[0].links == []  # and it goes on serving
        pool._procs[0].kill()
        with pytest.raises(RuntimeError, match="citation worker process ended"):
            pool.send(0, (TITLE, [("QUIET", TEXTS["QUIET"])]))
            pool.receive(0)
    finally:
        pool.close(abandon=True)
