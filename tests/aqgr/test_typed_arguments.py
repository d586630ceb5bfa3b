"""The Python API refuses one string where it takes a list: a TypeError that says so, before any work
(Python would read the string character by character: "SC999.txt" would summarise the folder ".")."""

from __future__ import annotations

from pathlib import Path

import pytest

from aqgr.foundation.inputs import many
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, indexed_archive


@pytest.fixture
def archive(home, tmp_path):
    return indexed_archive(home, tmp_path / "in")


def test_one_string_or_path_for_the_paths_is_a_type_error(archive, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path / "in")  # where "." would lead
    before = archive.status()["judgments"]
    for value in ("A1.txt", Path("A1.txt"), b"A1.txt"):
        with pytest.raises(TypeError, match="summarize\\(\\) paths takes a list"):
            archive.summarize(value)
        with pytest.raises(TypeError, match="import_summaries\\(\\) paths takes a list"):
            archive.import_summaries(value)
    with pytest.raises(TypeError, match="add_statutes\\(\\) paths takes a list"):
        archive.add_statutes("statutes")
    with pytest.raises(TypeError, match="not one string"):
        archive.remove("A1")
    assert archive.status()["judgments"] == before


def test_one_string_for_questions_restrict_or_exclude_is_a_type_error(archive):
    with pytest.raises(TypeError, match="questions takes a list.*not one string"):
        archive.search(DYING_DECLARATION_FACTS, "Whether a dying declaration alone suffices?")
    with pytest.raises(TypeError, match="restrict takes a list"):
        archive.search(DYING_DECLARATION_FACTS, restrict="A1")
    with pytest.raises(TypeError, match="exclude takes a list"):
        archive.search(DYING_DECLARATION_FACTS, exclude="A1")
    with pytest.raises(TypeError, match="restrict takes a list.*not int"):
        archive.search(DYING_DECLARATION_FACTS, restrict=1)
    assert [h.judgment_id for h in archive.search(DYING_DECLARATION_FACTS, restrict={"A1"}).hits] == [
        "A1"
    ]  # a set is fine


def test_many_passes_collections_through():
    generator = (p for p in ["a"])
    assert (
        many(generator, "x", "['a']") is generator
        and many(None, "x", "[]") is None
        and many(("a",), "x", "[]") == ("a",)
    )
