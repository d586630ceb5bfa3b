"""One HTTP model call's total time, not each socket read's.

An HTTP client's timeout bounds each socket operation, not the call: a server that sends a byte a
second never trips it (one call held 297 s at a 5 s timeout). Each call here goes on its own
connection, and that connection's socket is shut down when the deadline passes, wherever the call
is then (connecting, sending, waiting for the headers, reading the body): the call ends at the
deadline, as a timeout.

* `deadline_client()` (a `DeadlineClient`): an httpx client on which each request's own timeout
  (the provider's per-call timeout) is its whole time, the body's reading included: `openai.v1`
  sends on one, and google-genai (`gemini.v1`) is handed one.
* `DeadlineAdapter`: the same for requests' sessions (google-generativeai's REST transport,
  `gemini-legacy.v1`), each request's `timeout` its whole time.

Only the HTTP providers use it (httpx comes with their extra); the per-task deadlines are in
aqgr/llm/deadline.py.
"""

from __future__ import annotations

import contextvars
import functools
import socket
import threading


class Cutter:
    """Shuts down, once `seconds` have passed, every socket handed to `add` (then and later)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.fired = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, seconds), self._expire)
        self._timer.daemon = True
        self._timer.start()

    def add(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            if self.fired.is_set():
                _cut(sock)

    def trace(self, event: str, info: dict) -> None:
        """An httpcore trace callback: the socket of each connection made."""
        if event == "connection.connect_tcp.complete":
            stream = info.get("return_value")
            self.add(stream.get_extra_info("socket") if stream is not None else None)

    def _expire(self) -> None:
        with self._lock:
            self.fired.set()
            for sock in self._sockets:
                _cut(sock)

    def cancel(self) -> None:
        self._timer.cancel()


def _request_seconds(timeouts) -> float | None:
    """A request's whole time: the longest of its per-operation timeouts (None: no limit)."""
    if isinstance(timeouts, dict):
        given = [float(v) for v in timeouts.values() if v is not None]
        return max(given) if given else None
    return float(timeouts) if isinstance(timeouts, (int, float)) else None


def deadline_client(**kwargs):
    """An httpx.Client whose every request on a connection of its own (no kept-alive one) is cut when
    the request's own timeout (the provider's per-call timeout) has passed since it was sent, the body's
    reading included: httpx.ReadTimeout then. What google-genai's `HttpOptions.httpx_client` takes;
    the environment's proxies apply as for any httpx client."""
    import httpx

    return _client_class()(limits=httpx.Limits(max_keepalive_connections=0), **kwargs)


@functools.cache
def _client_class():
    import httpx

    class DeadlineClient(httpx.Client):
        def send(self, request, *, stream: bool = False, **kwargs):
            seconds = _request_seconds(request.extensions.get("timeout"))
            if seconds is None:
                return super().send(request, stream=stream, **kwargs)
            cutter = Cutter(seconds)
            earlier = request.extensions.get("trace")

            def trace(event, info):
                cutter.trace(event, info)
                if earlier is not None:
                    earlier(event, info)

            request.extensions = {**request.extensions, "trace": trace}
            late = httpx.ReadTimeout(f"no complete reply within {seconds:g} s", request=request)
            response = None
            try:
                response = super().send(request, stream=True, **kwargs)
                if not stream:
                    response.read()
            except (httpx.TransportError, OSError):
                cutter.cancel()
                if response is not None:
                    response.close()
                if cutter.fired.is_set():
                    raise late from None
                raise
            if stream:  # the deadline goes on while the caller reads the body; closing the response ends it
                close = response.close

                def close_and_cancel() -> None:
                    cutter.cancel()
                    close()

                response.close = close_and_cancel
                return response
            cutter.cancel()
            if cutter.fired.is_set():  # cut as the body ended: what was read may be short
                response.close()
                raise late
            return response

    return DeadlineClient


def __getattr__(name: str):
    """DeadlineClient and DeadlineAdapter, made on first use: httpx and requests are imported only then."""
    if name == "DeadlineClient":
        return _client_class()
    if name == "DeadlineAdapter":
        return _adapter_class()
    raise AttributeError(name)


_CALL: contextvars.ContextVar[Cutter | None] = contextvars.ContextVar("aqgr_http_call", default=None)


@functools.cache
def _adapter_class():
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class _Watched:
        def connect(self):
            super().connect()
            cutter = _CALL.get()
            if cutter is not None:
                cutter.add(getattr(self, "sock", None))

    class _Plain(_Watched, HTTPConnection):
        pass

    class _Secure(_Watched, HTTPSConnection):
        pass

    class _PlainPool(HTTPConnectionPool):
        ConnectionCls = _Plain

    class _SecurePool(HTTPSConnectionPool):
        ConnectionCls = _Secure

    class _DeadlineAdapter(HTTPAdapter):
        """A requests adapter whose each request goes on a fresh connection, shut down when the request's
        `timeout` has passed since it was sent, the body's reading included (requests.ReadTimeout then)."""

        def init_poolmanager(self, *args, **kwargs):
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": _PlainPool, "https": _SecurePool}

        def send(self, request, stream=False, timeout=None, **kwargs):
            seconds = _request_seconds(timeout if not isinstance(timeout, tuple) else dict(enumerate(timeout)))
            if seconds is None:
                return super().send(request, stream=stream, timeout=timeout, **kwargs)
            self.poolmanager.clear()  # no kept-alive connection: the one this call makes is the one watched
            cutter = Cutter(seconds)
            token = _CALL.set(cutter)
            try:
                response = super().send(request, stream=stream, timeout=timeout, **kwargs)
                if not stream:
                    response.content  # noqa: B018 - the body is read inside the deadline
                if cutter.fired.is_set():
                    raise requests.exceptions.ReadTimeout(f"no complete reply within {seconds:g} s", request=request)
                return response
            except (requests.exceptions.RequestException, OSError):
                if cutter.fired.is_set():
                    raise requests.exceptions.ReadTimeout(
                        f"no complete reply within {seconds:g} s", request=request
                    ) from None
                raise
            finally:
                _CALL.reset(token)
                cutter.cancel()

    return _DeadlineAdapter


def _cut(sock: socket.socket) -> None:
    """Wake any thread blocked on the socket (close alone does not) and end the connection."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
