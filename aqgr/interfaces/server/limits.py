"""What keeps one careless or hostile client from harming the server or its users.

* `HostCheck` (ASGI middleware): only the hosts the server was started for are answered
  (loopback names, the bound address, `--allowed-host` additions). A web page on another
  site cannot read the archive through the user's browser by pointing its own name at
  127.0.0.1 (DNS rebinding): its requests carry its own name in `Host` and get 400.
* `SearchGate`: at most `max_searches` searches (and question or statute searches) run at
  once; up to `max_waiting_searches` more wait at most `search_wait_seconds` for a turn,
  without holding a worker thread; beyond that, 503 with `Retry-After`.
* `read_timeout_protocol`: uvicorn's h11 protocol with a deadline: a request's headers and
  body must arrive within `read_timeout_seconds` of the connection (or of the previous
  answer on a kept-alive connection), else 408 and the connection is closed. Clients
  trickling a byte every few seconds no longer hold connections open. The same protocol answers
  a request that is not valid HTTP (400) and the connection cap (503, `max_connections`) in the
  API's `{error, detail}` shape, and at the cap closes the connection idle longest to make room,
  so one client's idle sockets cannot lock everyone else out until their deadline.
The body size limit is `BodyLimit` in app.py; defaults are in config.py.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from typing import TypeVar

from aqgr.interfaces.server.config import LOOPBACK_HOSTS, ServeConfig

T = TypeVar("T")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def host_name(header: str) -> str:
    """The host of a Host header, without port, brackets or a trailing dot, lowercased."""
    value = header.strip().lower()
    if value.startswith("["):
        value = value[1:].split("]", 1)[0]
    elif value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value.rstrip(".")


def allowed_hosts(config: ServeConfig) -> frozenset[str] | None:
    """The Host names this server answers; None when any is allowed ('*' among --allowed-host)."""
    extra = {host_name(h) for h in config.allowed_hosts}
    if "*" in extra:
        return None
    hosts = {host_name(h) for h in LOOPBACK_HOSTS} | extra
    bound = host_name(config.host)
    if bound in WILDCARD_HOSTS:  # every interface: this machine's own name too
        hosts.add(host_name(socket.gethostname()))
    else:
        hosts.add(bound)
    return frozenset(hosts)


def _json_response(status: int, error: str, detail: str, headers: dict[str, str] | None = None):
    async def respond(scope, receive, send) -> None:
        body = json.dumps({"error": error, "detail": detail}).encode()
        extra = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    *extra,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return respond


class HostCheck:
    """ASGI middleware: 400 host_not_allowed for a Host header the server was not started for."""

    def __init__(self, app, hosts: frozenset[str] | None):
        self.app, self.hosts = app, hosts

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket") or self.hosts is None:
            return await self.app(scope, receive, send)
        given = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        if host_name(given) in self.hosts:
            return await self.app(scope, receive, send)
        shown = ", ".join(sorted(self.hosts))
        detail = (
            f"this server answers only for the hosts it was started for ({shown}); the request was for "
            f"{given[:100]!r}. Use one of those, or restart it with --allowed-host NAME (AQGR_SERVE_ALLOWED_HOSTS)"
        )
        await _json_response(400, "host_not_allowed", detail)(scope, receive, send)


class Busy(Exception):
    """Every search slot is taken and the queue is full (or the wait ran out): 503 with Retry-After."""

    def __init__(self, retry_after: int, detail: str):
        self.retry_after, self.detail = retry_after, detail
        super().__init__(detail)


class SearchGate:
    """At most `running` heavy requests at once, `waiting` more queued for `wait_seconds` at most."""

    def __init__(self, running: int, waiting: int, wait_seconds: float):
        self.running, self.waiting, self.wait_seconds = running, waiting, wait_seconds
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None
        self.queued = 0

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # one per event loop (a test client may start several)
            self._loop, self._slots, self.queued = loop, asyncio.Semaphore(self.running), 0
        return self._slots

    def _retry_after(self) -> int:
        return max(1, min(30, round(self.wait_seconds / 2) or 1))

    async def run(self, fn: Callable[[], T]) -> T:
        """`fn()` in a worker thread once a slot is free; Busy when none frees up in time."""
        import anyio

        slots = self._semaphore()
        if slots.locked():
            if self.queued >= self.waiting:
                raise Busy(
                    self._retry_after(),
                    f"the server is busy: {self.running} searches running and {self.queued} waiting; retry in a few seconds",
                )
            self.queued += 1
            try:
                await asyncio.wait_for(slots.acquire(), timeout=self.wait_seconds)
            except TimeoutError:
                raise Busy(
                    self._retry_after(),
                    f"the server is busy: no search slot freed up within {self.wait_seconds:g} s; retry in a few seconds",
                ) from None
            finally:
                self.queued -= 1
        else:
            await slots.acquire()
        try:
            return await anyio.to_thread.run_sync(fn)
        finally:
            slots.release()


def _raw_answer(status: int, reason: str, error: str, detail: str) -> bytes:
    """A whole HTTP/1.1 answer in the API's error shape that closes the connection (written to the socket as is)."""
    body = json.dumps({"error": error, "detail": detail}).encode()
    return b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s" % (
        status,
        reason.encode(),
        len(body),
        body,
    )


def read_timeout_protocol(seconds: float) -> type:
    """uvicorn's h11 protocol, closing a connection whose request is not read within `seconds` (408)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    answer = _raw_answer(
        408, "Request Timeout", "request_timeout", f"the request did not arrive within {seconds:g} s: send it in one go"
    )
    evicted = _raw_answer(
        408,
        "Request Timeout",
        "idle_connection_closed",
        "the connection sent nothing while the server was at its "
        "connection limit, and was closed to make room: send the request when the connection is opened",
    )
    invalid = _raw_answer(
        400,
        "Bad Request",
        "invalid_http",
        "the request is not valid HTTP/1.1 (request line, headers or framing): send a well-formed request",
    )
    full = _json_response(
        503,
        "too_many_connections",
        "the server has as many open connections as it accepts: retry in a few seconds",
        headers={"Retry-After": "2", "Connection": "close"},
    )

    class ReadTimeoutH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _idle_since: float | None = None  # when this connection last became idle (no request in progress, none begun)

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            # the connection cap is applied here (in the API's error shape), not by uvicorn (plain text)
            self._cap, self.limit_concurrency = self.limit_concurrency, None
            self._app = self.app
            self.app = self._capped

        async def _capped(self, scope, receive, send) -> None:
            cap = self._cap
            # as uvicorn counts: this connection among the connections, this request's task among the tasks
            if cap is not None and (len(self.connections) >= cap or len(self.tasks) - 1 >= cap):
                await full(scope, receive, send)
                return
            await self._app(scope, receive, send)

        def data_received(self, data: bytes) -> None:
            self._idle_since = None
            super().data_received(data)

        def send_400_response(self, msg: str) -> None:  # uvicorn's is plain text
            if not self.transport.is_closing():
                self.transport.write(invalid)
            self.transport.close()

        def _make_room(self) -> None:
            """At the connection limit, close the connection idle longest (one that has sent nothing
            since it was opened or last answered): one client holding idle sockets cannot lock
            everyone else out until their read deadline."""
            if self._cap is None or len(self.connections) < self._cap:
                return
            idle = [c for c in self.connections if c is not self and getattr(c, "_idle_since", None) is not None]
            if idle:
                oldest = min(idle, key=lambda c: c._idle_since)
                oldest._idle_since = None
                if not oldest.transport.is_closing():
                    oldest.transport.write(evicted)
                oldest.transport.close()

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._timed_out)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._idle_since = self.loop.time()
            self._make_room()
            self._arm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            cycle = self.cycle
            if cycle is not None and not cycle.more_body and not cycle.response_complete:
                self._disarm()  # the whole request is in: the answer may take its time

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._idle_since = self.loop.time()
                self._arm()  # the next request on this connection gets the same deadline

        def _timed_out(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            cycle = self.cycle
            if cycle is not None and not cycle.more_body and not cycle.response_complete:
                return  # read in full; being answered
            if cycle is None or cycle.response_complete or not cycle.response_started:
                self.transport.write(answer)
            if cycle is not None:
                cycle.disconnected = True
                cycle.message_event.set()
            self.transport.close()

    return ReadTimeoutH11Protocol


def uvicorn_options(config: ServeConfig) -> dict:
    """The uvicorn settings that carry the limits of `config` (for uvicorn.run / uvicorn.Config)."""
    return {
        "http": read_timeout_protocol(config.read_timeout_seconds),
        "limit_concurrency": config.max_connections,
        "timeout_keep_alive": 5,
        "server_header": False,
    }
