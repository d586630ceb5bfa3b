"""The `aqgr serve`, `aqgr mcp` and `aqgr statutes` commands (registered on the main typer app).

FastAPI, uvicorn and the MCP SDK are imported only when a command runs, so `aqgr --help`
stays instant; a missing one fails with the install command (`pip install 'aqgr[serve]'`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from aqgr.foundation.errors import AqgrError, MissingDependencyError


def _need(module: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise MissingDependencyError(module, "serve")


def _fail(exc: Exception) -> None:
    from aqgr.interfaces.invocation import _fail as fail

    fail(exc)


def _say(message: str) -> None:
    """A message on stderr, through the plain console (control characters in paths shown escaped)."""
    from aqgr.interfaces.invocation import _err

    _err().print(message, soft_wrap=True)


def _open(ctx: typer.Context, home: Path | None):
    """The archive as every other command opens it (global options: provider, model, engines)."""
    from aqgr.interfaces.invocation import open_archive

    return open_archive(ctx, home)


def register(app: typer.Typer, home_option) -> None:
    @app.command()
    def serve(
        ctx: typer.Context,
        home: Path | None = home_option,
        host: str = typer.Option(
            "127.0.0.1",
            help="Address to bind. Loopback by default; another address needs --api-key (or --allow-unauthenticated).",
        ),
        port: int = typer.Option(8765, help="Port to listen on."),
        api_key: str | None = typer.Option(
            None,
            "--api-key",
            envvar="AQGR_SERVE_API_KEY",
            help="Require this key on /api/ (X-API-Key header or 'Authorization: Bearer').",
        ),
        allow_unauthenticated: bool = typer.Option(
            False, "--allow-unauthenticated", help="Bind a non-loopback address without an API key."
        ),
        max_facts_chars: int = typer.Option(20_000, help="Facts longer than this get 413."),
        max_k: int = typer.Option(50, help="Most judgments one request may ask for."),
        cors_origin: list[str] | None = typer.Option(
            None, "--cors-origin", help="Allow cross-origin requests from this origin (repeat). Closed by default."
        ),
        allowed_host: list[str] | None = typer.Option(
            None,
            "--allowed-host",
            envvar="AQGR_SERVE_ALLOWED_HOSTS",
            help="Also answer requests for this host name (repeat), e.g. the name a team uses for the server; '*' answers any (no DNS-rebinding protection). Always answered: 127.0.0.1, localhost, ::1 and the bound address.",
        ),
        max_body_bytes: int = typer.Option(100_000, help="Request bodies over this size get 413."),
        read_timeout: float = typer.Option(
            10.0, "--read-timeout", help="Seconds a request's headers and body may take to arrive (else 408)."
        ),
        max_searches: int = typer.Option(
            8, help="Searches running at once; more wait up to 15 s in a queue, then get 503 with Retry-After."
        ),
    ) -> None:
        """Serve the HTTP API and the issue-first web page over the archive (http://127.0.0.1:8765/)."""
        from aqgr.interfaces.server.config import ServeConfig, is_loopback

        try:
            _need("fastapi")
            _need("uvicorn")
        except AqgrError as exc:
            _fail(exc)
        if api_key and (not all(" " <= ch <= "~" for ch in api_key) or api_key != api_key.strip()):
            _fail(
                ValueError(
                    "the API key (--api-key / AQGR_SERVE_API_KEY) must be printable ASCII without leading or trailing spaces: "
                    "clients send it in an HTTP header, where any other character arrives changed, so it could never match"
                )
            )
        if not is_loopback(host) and not api_key and not allow_unauthenticated:
            _fail(
                ValueError(
                    f"binding {host} exposes the archive beyond this machine: set an API key (--api-key or AQGR_SERVE_API_KEY), or pass --allow-unauthenticated"
                )
            )
        import uvicorn

        from aqgr.interfaces.server.app import create_app
        from aqgr.interfaces.server.limits import uvicorn_options

        hosts = tuple(
            h for value in allowed_host or () for h in value.replace(",", " ").split()
        )  # the env var: comma- or space-separated
        try:
            config = ServeConfig(
                host=host,
                port=port,
                api_key=api_key or None,
                max_facts_chars=max_facts_chars,
                max_k=max_k,
                cors_origins=tuple(cors_origin or ()),
                allowed_hosts=hosts,
                max_body_bytes=max_body_bytes,
                read_timeout_seconds=read_timeout,
                max_searches=max_searches,
            )
        except ValueError as exc:  # pydantic's ValidationError: a limit out of range
            _fail(exc)
        _say(f"aqgr serving {home or 'the default archive'} on http://{host}:{port}/ (OpenAPI: /openapi.json)")
        uvicorn.run(
            create_app(config=config, archive=_open(ctx, home)),
            host=host,
            port=port,
            log_level="info",
            **uvicorn_options(config),
        )

    @app.command()
    def mcp(ctx: typer.Context, home: Path | None = home_option) -> None:
        """Run the MCP server over stdio (tools: search precedents, candidate questions, judgment summaries, statutes)."""
        try:
            _need("mcp")
        except AqgrError as exc:
            _fail(exc)
        from aqgr.interfaces.mcp_server import run

        run(archive=_open(ctx, home))

    @app.command()
    def statutes(
        ctx: typer.Context,
        paths: list[Path] | None = typer.Argument(
            None,
            help="Statute files or folders of .txt files: 'Title: ...' then 'Desc: ...', or a title line then the text.",
        ),
        correspondence: list[Path] | None = typer.Option(
            None,
            "--correspondence",
            help="A section correspondence table between an old and a new code (CSV: old_act, old_section, "
            "new_act, new_section, subject, note), or a folder of them; repeat for more. Replaces the archive's rows for the code pairs it holds.",
        ),
        home: Path | None = home_option,
    ) -> None:
        """Add statutes to the archive (searched with the same legal questions as the judgments, and
        through the archive's judgments that quote them), and/or section correspondence tables
        (old code <-> new code: a search then matches either code's sections and shows both)."""
        from aqgr.pipeline.statutes import StatuteCollection

        if not paths and not correspondence:
            _fail(AqgrError("give statute files or folders, or --correspondence FILE (or both)"))
        archive = _open(ctx, home)
        if correspondence:
            from aqgr.foundation.console import console as make_console

            try:
                report = archive.add_correspondence(correspondence)
            except AqgrError as exc:
                _fail(exc)
            err = make_console(stderr=True)
            for problem in report.problems:
                err.print(f"skipped: {problem}")
            loaded = ", ".join(f"{pair}: {n} rows" for pair, n in report.pairs.items())
            _say(
                f"correspondence loaded ({loaded}; {len(report.problems)} line(s) skipped) -> "
                f"{archive.settings.home / 'statutes' / 'correspondence.json'}"
            )
        if not paths:
            return
        collection = StatuteCollection(archive.settings)
        try:
            count = archive.add_statutes(paths)
        except AqgrError as exc:
            _fail(exc)
        quoting = len(collection.links())
        _say(
            f"{count} statutes indexed -> {archive.settings.home / 'statutes'}; {quoting} judgments of the archive quote them"
        )
