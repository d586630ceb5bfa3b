"""`aqgr serve`: an HTTP API and the issue-first web page over one archive.

    from aqgr.interfaces.server import create_app, ServeConfig
    app = create_app("my-archive", ServeConfig(api_key="..."))

Needs the `serve` extra (`pip install 'aqgr[serve]'`): FastAPI and uvicorn. Importing
`aqgr` or running `aqgr --help` never imports this package.
"""

from aqgr.interfaces.server.config import ServeConfig

__all__ = ["ServeConfig", "create_app"]


def create_app(*args, **kwargs):
    """The FastAPI app (see `aqgr.interfaces.server.app.create_app`)."""
    from aqgr.interfaces.server.app import create_app as _create_app

    return _create_app(*args, **kwargs)
