"""The archive: judgments, their summaries, an index over them, and the work of keeping them.

Holds the public front door (`home.Archive`), the database (`store`), batch summarisation and the
work ledger many workers share (`batch`, `workqueue`, `renames`), export and import (`transfer`),
the shared provider quota (`quota`), the citation graph inside an archive (`citations`), keeping
the index up to date (`indexer`) and `aqgr check` (`health`).

It may import `aqgr.pipeline`, the stages below it (`aqgr.summarizer`, `aqgr.retrieval`, `aqgr.llm`,
`aqgr.schemas`) and `aqgr.foundation`, never `aqgr.eval` or `aqgr.interfaces`. Nothing is imported
here: `from aqgr.archive import Archive` loads `home` on first use (PEP 562).
"""

__all__ = ["Archive"]


def __getattr__(name: str):
    if name == "Archive":
        from aqgr.archive.home import Archive

        globals()["Archive"] = Archive
        return Archive
    raise AttributeError(f"module 'aqgr.archive' has no attribute {name!r}")
