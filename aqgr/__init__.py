"""aqgr: Augmented Question-guided Retrieval of precedents over structured summaries.

The public API. Names are resolved lazily (PEP 562), so `import aqgr` loads no model,
no torch, no faiss, no provider SDK, and the lower layers (`summarizer`, `retrieval`)
can use `aqgr.errors` and `aqgr.registry` without importing the whole API.
"""

from importlib import import_module

__version__ = "0.1.0"

_EXPORTS = {
    "Archive": "aqgr.archive",
    "BatchReport": "aqgr.batch",
    "SearchOptions": "aqgr.config",
    "Settings": "aqgr.config",
    "AqgrError": "aqgr.errors",
    "BatchInterrupted": "aqgr.errors",
    "ConfigError": "aqgr.errors",
    "DatabaseDamagedError": "aqgr.errors",
    "DatasetError": "aqgr.errors",
    "EmptyArchiveError": "aqgr.errors",
    "FactsTooShortError": "aqgr.errors",
    "IndexBusyError": "aqgr.errors",
    "IndexLockedError": "aqgr.errors",
    "IndexMismatchError": "aqgr.errors",
    "InvalidModelOutputError": "aqgr.errors",
    "InvalidFilterError": "aqgr.errors",
    "InvalidTextError": "aqgr.errors",
    "LeaseLostError": "aqgr.errors",
    "MissingDependencyError": "aqgr.errors",
    "NoCitationGraphError": "aqgr.errors",
    "NoFiltersError": "aqgr.errors",
    "NoIndexError": "aqgr.errors",
    "NoStatutesError": "aqgr.errors",
    "ProviderError": "aqgr.errors",
    "ReadError": "aqgr.errors",
    "SafetyBlockError": "aqgr.errors",
    "StoreError": "aqgr.errors",
    "SummarizeError": "aqgr.errors",
    "SummaryValidationError": "aqgr.errors",
    "UnknownJudgmentError": "aqgr.errors",
    "UnknownNameError": "aqgr.errors",
    "WriteError": "aqgr.errors",
    "IndexSpec": "aqgr.retrieval.index",
    "Facets": "aqgr.schemas.filters",
    "Filters": "aqgr.schemas.filters",
    "CandidateQuestion": "aqgr.schemas.results",
    "CitedJudgment": "aqgr.schemas.results",
    "Hit": "aqgr.schemas.results",
    "JudgmentCitations": "aqgr.schemas.results",
    "SearchResult": "aqgr.schemas.results",
    "SCHEMA_VERSION": "aqgr.schemas.summary",
    "StructuredSummary": "aqgr.schemas.summary",
    "SummarySlots": "aqgr.schemas.summary",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'aqgr' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
