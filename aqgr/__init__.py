"""aqgr: Augmented Question-guided Retrieval of precedents over structured summaries.

The public API. Names are resolved lazily (PEP 562), so `import aqgr` loads no model,
no torch, no faiss, no provider SDK, and the lower layers (`summarizer`, `retrieval`)
can use `aqgr.foundation.errors` and `aqgr.foundation.registry` without importing the whole API.
"""

from importlib import import_module

__version__ = "0.1.0"

_EXPORTS = {
    "Archive": "aqgr.archive.home",
    "BatchReport": "aqgr.archive.batch",
    "SearchOptions": "aqgr.pipeline.config",
    "Settings": "aqgr.pipeline.config",
    "AqgrError": "aqgr.foundation.errors",
    "BatchInterrupted": "aqgr.foundation.errors",
    "ConfigError": "aqgr.foundation.errors",
    "DatabaseDamagedError": "aqgr.foundation.errors",
    "DatasetError": "aqgr.foundation.errors",
    "EmptyArchiveError": "aqgr.foundation.errors",
    "FactsTooShortError": "aqgr.foundation.errors",
    "IndexBuildingError": "aqgr.foundation.errors",
    "IndexBusyError": "aqgr.foundation.errors",
    "IndexLockedError": "aqgr.foundation.errors",
    "IndexMismatchError": "aqgr.foundation.errors",
    "IndexUnavailableError": "aqgr.foundation.errors",
    "InvalidModelOutputError": "aqgr.foundation.errors",
    "InvalidFilterError": "aqgr.foundation.errors",
    "InvalidTextError": "aqgr.foundation.errors",
    "LeaseLostError": "aqgr.foundation.errors",
    "MissingDependencyError": "aqgr.foundation.errors",
    "NoCitationGraphError": "aqgr.foundation.errors",
    "NoFiltersError": "aqgr.foundation.errors",
    "NoIndexError": "aqgr.foundation.errors",
    "NoStatutesError": "aqgr.foundation.errors",
    "ProviderError": "aqgr.foundation.errors",
    "ReadError": "aqgr.foundation.errors",
    "SafetyBlockError": "aqgr.foundation.errors",
    "StoreError": "aqgr.foundation.errors",
    "SummarizeError": "aqgr.foundation.errors",
    "SummaryValidationError": "aqgr.foundation.errors",
    "UnknownJudgmentError": "aqgr.foundation.errors",
    "UnknownNameError": "aqgr.foundation.errors",
    "WriteError": "aqgr.foundation.errors",
    "IndexSpec": "aqgr.retrieval.spec",
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
