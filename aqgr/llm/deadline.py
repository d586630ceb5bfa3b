"""Deadlines of model calls: one call's total time, and one task's (a judgment, a search).

* Per call: an HTTP client's timeout bounds each socket operation, not the call: a server that
  sends a byte a second never trips it (one call held 297 s at a 5 s timeout). `post_within`
  sends a request on its own connection and shuts that connection's socket down when the
  deadline passes, wherever the call is then (connecting, sending, waiting for the headers,
  reading the body): the call ends at the deadline, as `timeout`.
* Per task: `task("judgment")` / `task("search")` marks the work of one judgment (aqgr/batch.py) or one search
  (aqgr/search.py); every model call inside it ends by the task's deadline, retries and their
  waits included (`LLMClient.complete` asks `task_left()`), so a hung server holds a judgment
  or a search slot for at most that long, not for every retry of every call.
"""

from __future__ import annotations

import contextvars
import socket
import threading
import time
from contextlib import contextmanager
from typing import Iterator

# (monotonic start, what) of the task this thread works on: "judgment" or "search"
_TASK: contextvars.ContextVar[tuple[float, str] | None] = contextvars.ContextVar("aqgr_model_task", default=None)
TASKS = ("judgment", "search")  # each has its time in the provider's configuration: `<what>_timeout_s`


@contextmanager
def task(what: str) -> Iterator[None]:
    """Mark the work of one judgment or one search: every model call inside ends within that task's
    time (`ProviderConfig.judgment_timeout_s`, `search_timeout_s`) from now. Nested: the outer task stands."""
    if what not in TASKS:
        raise ValueError(f"unknown model task {what!r}; one of {', '.join(TASKS)}")
    token = _TASK.set((time.monotonic(), what)) if _TASK.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _TASK.reset(token)


def task_left(config) -> tuple[float, float, str] | None:
    """(seconds left, seconds given, what) of the current task under `config` (a ProviderConfig), or
    None outside a task."""
    found = _TASK.get()
    if found is None:
        return None
    start, what = found
    given = float(getattr(config, f"{what}_timeout_s"))
    return start + given - time.monotonic(), given, what


class CallTimedOut(Exception):
    """`post_within` passed its deadline (the provider turns it into ProviderError 'timeout')."""


def post_within(client, path: str, body: dict, seconds: float):
    """`client.post(path, json=body)` (an httpx.Client) that returns or raises within `seconds` of
    wall time: a fresh connection whose socket is shut down at the deadline (CallTimedOut), each
    socket operation also bounded by `seconds`."""
    import httpx

    sockets: list[socket.socket] = []
    fired = threading.Event()
    lock = threading.Lock()

    def trace(event: str, info: dict) -> None:
        if event == "connection.connect_tcp.complete":
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if sock is not None:
                with lock:
                    sockets.append(sock)
                    if fired.is_set():
                        _cut(sock)

    def expire() -> None:
        with lock:
            fired.set()
            for sock in sockets:
                _cut(sock)

    timer = threading.Timer(max(0.0, seconds), expire)
    timer.daemon = True
    timer.start()
    try:
        request = client.build_request("POST", path, json=body, timeout=httpx.Timeout(seconds), extensions={"trace": trace})
        response = client.send(request)
        if fired.is_set():
            raise CallTimedOut()
        return response
    except (httpx.TransportError, OSError) as exc:
        if fired.is_set():
            raise CallTimedOut() from None
        raise exc
    finally:
        timer.cancel()


def _cut(sock: socket.socket) -> None:
    """Wake any thread blocked on the socket (close alone does not) and end the connection."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
