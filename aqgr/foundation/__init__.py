"""The foundation: what every layer may use, and what imports nothing else of aqgr.

Holds the catalogue of errors (`errors`), the versioned-name registries (`registry`), the checks
on text from outside (`inputs`), where aqgr's own data lies (`paths`), the command line's plain-text
consoles (`console`), the per-request caps (`caps`), safe output files (`targets`) and the SQLite cache files (`sqlite_cache`).

Its modules import only each other (and the standard library or third-party packages), never a
higher room or stage. Nothing is imported here, so `import aqgr.foundation.errors` stays light.
"""
