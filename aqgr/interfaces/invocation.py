"""One `aqgr` invocation: its state (global model options, the archives it opened), the options
every command shares, and how a command opens its archive and fails. Used by aqgr/interfaces/cli.py and
aqgr/interfaces/serve_cli.py alike, so neither imports the other for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

from aqgr.foundation.console import console, styled
from aqgr.foundation.errors import AqgrError

HomeOption = typer.Option(
    None,
    "--home",
    envvar="AQGR_HOME",
    help="Archive home directory (database, index, caches). Default: the user's data directory.",
)


def _err():
    """The console for messages (stderr). Plain text only: see aqgr/foundation/console.py."""
    return console(stderr=True)


def _out():
    """The console for people-readable data on stdout (search results, citations). Plain text only."""
    return console()


DatabaseOption = typer.Option(
    None,
    "--database-url",
    envvar="AQGR_DATABASE_URL",
    help="SQLAlchemy database URL, e.g. postgresql+psycopg://user@127.0.0.1/aqgr. Default: SQLite aqgr.db in the home.",
)


@dataclass
class Invocation:
    """One `aqgr` invocation's state, kept on the root click context (never in module globals):
    the global model options (`aqgr --provider gemini.v1 search ...`; unset ones fall back to the
    environment, AQGR_PROVIDER, ...) and the archives the command opened."""

    model_options: dict[str, Any] = field(default_factory=dict)
    opened: list = field(default_factory=list)

    def report_model_usage(self) -> None:
        """On stderr after a command: what the model calls cost (nothing when no model was called)."""
        for archive in self.opened:
            for stage, usage in archive.model_usage().items():
                cost = f", cost {usage['cost']:g}" if "cost" in usage else ""
                _err().print(
                    f"model usage ({stage}): {usage['calls']} call(s), {usage['cache_hits']} cached, {usage['retries']} retried, "
                    f"{usage['failures']} failed, {usage['truncated']} cut at the budget; tokens in {usage['input_tokens']}, out {usage['output_tokens']}"
                    + (f", thinking {usage['thinking_tokens']}" if usage["thinking_tokens"] else "")
                    + cost
                )


def open_archive(ctx: typer.Context, home: Path | None, database_url: str | None = None):
    """The archive a command works on, with this invocation's global options applied."""
    from aqgr.archive.home import Archive

    invocation = ctx.find_root().obj
    invocation = invocation if isinstance(invocation, Invocation) else Invocation()
    overrides = {k: v for k, v in invocation.model_options.items() if v is not None}
    if database_url:
        overrides["database_url"] = database_url
    try:
        archive = Archive(home, **overrides)
    except AqgrError as exc:  # a bad --database-url, an unknown engine name
        _fail(exc)
    except ValueError as exc:  # pydantic's ValidationError: an option value out of its range or choices
        from aqgr.foundation.inputs import option_problem
        from aqgr.llm.config import ENV

        _fail(ValueError(option_problem(exc, ENV)))
    invocation.opened.append(archive)
    return archive


def _fail(exc: Exception, code: int = 2) -> None:
    _err().print(styled(("error:", "red"), f" {exc}"), soft_wrap=True)
    raise typer.Exit(code)
