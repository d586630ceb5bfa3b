"""The public surface: Archive offers the user's verbs, options are typed keywords, and every
name a user needs is importable from `aqgr`."""

import inspect
import typing

import pytest

import aqgr
from aqgr.llm.config import ProviderConfig, ProviderOptions
from aqgr.pipeline.config import ArchiveOptions

VERBS = {
    "home",
    "settings",
    "close",
    "summarize",
    "summaries",
    "summary",
    "text",
    "texts",
    "status",
    "check",
    "damaged_summaries",
    "export_summaries",
    "import_summaries",
    "build_index",
    "remove",
    "link_citations",
    "link_statutes",
    "add_statutes",
    "add_correspondence",
    "correspondence",
    "citations",
    "citations_of",
    "search",
    "candidate_questions",
    "search_statutes",
    "open_searcher",
    "model_usage",
}


def test_archive_offers_the_users_verbs_and_keeps_its_plumbing_private():
    public = {name for name in dir(aqgr.Archive) if not name.startswith("_")}
    assert public | {"settings"} == VERBS  # settings: set per instance


def test_options_are_typed_keywords_not_a_bag():
    """Archive(...) and Settings.resolve(...) take the same options, declared once (ArchiveOptions):
    every key typed, listed by help(); the provider's keys are ProviderConfig's fields."""
    own = {"database_url", "summarizer", "question_generator", "explainer", "treatment", "index", "search"}
    for function in (aqgr.Archive.__init__, aqgr.Settings.resolve):
        parameters = inspect.signature(function).parameters
        assert parameters["llm"].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters["options"].annotation == "Unpack[ArchiveOptions]"
    keys = set(typing.get_type_hints(ArchiveOptions))
    assert keys == own | set(ProviderConfig.model_fields)
    assert set(typing.get_type_hints(ProviderOptions)) == set(ProviderConfig.model_fields)
    search = inspect.signature(aqgr.Archive.search).parameters
    assert {"restrict", "exclude"} <= set(search) and not any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in search.values()
    )


def test_an_unknown_option_is_refused(tmp_path):
    with pytest.raises(TypeError, match="max_tokens"):
        aqgr.Archive(tmp_path, max_tokens=5)


def test_the_archive_closes_its_database(tmp_path):
    with aqgr.Archive(tmp_path / "home") as archive:
        assert archive.status()["judgments"] == 0
    assert archive.status()["judgments"] == 0  # reopened on use after close
