"""One HTTP model call's total time, not each socket read's.

An HTTP client's timeout bounds each socket operation, not the call: a server that sends a byte a
second never trips it (one call held 297 s at a 5 s timeout). Each call here goes on its own
connection, and that connection's socket is shut down when the deadline passes, wherever the call
is then (connecting, sending, waiting for the headers, reading the body): the call ends at the
deadline, as a timeout.

* `post_within(client, path, body, seconds)`: one POST on an httpx.Client (`openai.v1`).
* `DeadlineTransport` / `deadline_client()`: an httpx transport (and a client on it) for an SDK
  that sends through httpx (google-genai, `gemini.v1`): each request's own timeout (the SDK's
  per-call timeout) is its whole time, the body's reading included.
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


class CallTimedOut(Exception):
    """`post_within` passed its deadline (the provider turns it into ProviderError 'timeout')."""


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


def post_within(client, path: str, body: dict, seconds: float):
    """`client.post(path, json=body)` (an httpx.Client) that returns or raises within `seconds` of
    wall time: a fresh connection whose socket is shut down at the deadline (CallTimedOut), each
    socket operation also bounded by `seconds`."""
    import httpx

    cutter = Cutter(seconds)
    try:
        request = client.build_request("POST", path, json=body, timeout=httpx.Timeout(seconds), extensions={"trace": cutter.trace})
        response = client.send(request)
        if cutter.fired.is_set():
            raise CallTimedOut()
        return response
    except (httpx.TransportError, OSError) as exc:
        if cutter.fired.is_set():
            raise CallTimedOut() from None
        raise exc
    finally:
        cutter.cancel()


def _request_seconds(timeouts) -> float | None:
    """A request's whole time: the longest of its per-operation timeouts (None: no limit)."""
    if isinstance(timeouts, dict):
        given = [float(v) for v in timeouts.values() if v is not None]
        return max(given) if given else None
    return float(timeouts) if isinstance(timeouts, (int, float)) else None


def deadline_client(**kwargs):
    """An httpx.Client on a DeadlineTransport (what google-genai's `HttpOptions.httpx_client` takes)."""
    import httpx

    return httpx.Client(transport=_transport_class()(), **kwargs)


@functools.cache
def _transport_class():
    import httpx

    class _DeadlineTransport(httpx.BaseTransport):
        """Each request on a connection of its own, its socket shut down when the request's own timeout
        has passed since it was sent, the body's reading included: httpx.ReadTimeout then."""

        def __init__(self, **transport_kwargs):
            if "verify" not in transport_kwargs:  # one TLS context for every call's transport (making one costs ~70 ms)
                import ssl

                import certifi

                transport_kwargs["verify"] = ssl.create_default_context(cafile=certifi.where())
            self._kwargs = transport_kwargs

        def handle_request(self, request):
            seconds = _request_seconds(request.extensions.get("timeout"))
            transport = httpx.HTTPTransport(**self._kwargs)
            if seconds is None:
                return _Owned.wrap(transport.handle_request(request), None, transport, request)
            cutter = Cutter(seconds)
            earlier = request.extensions.get("trace")

            def trace(event, info):
                cutter.trace(event, info)
                if earlier is not None:
                    earlier(event, info)

            request.extensions = {**request.extensions, "trace": trace}
            try:
                response = transport.handle_request(request)
            except (httpx.TransportError, OSError):
                cutter.cancel()
                transport.close()
                if cutter.fired.is_set():
                    raise httpx.ReadTimeout(f"no complete reply within {seconds:g} s", request=request) from None
                raise
            return _Owned.wrap(response, cutter, transport, request)

    class _Owned(httpx.SyncByteStream):
        """A response body that ends its call's deadline and connection when closed, and reads a cut
        connection as httpx.ReadTimeout."""

        def __init__(self, stream, cutter, transport, request):
            self._stream, self._cutter, self._transport, self._request = stream, cutter, transport, request

        @classmethod
        def wrap(cls, response, cutter, transport, request):
            response.stream = cls(response.stream, cutter, transport, request)
            return response

        def __iter__(self):
            try:
                yield from self._stream
            except (httpx.TransportError, OSError):
                if self._cutter is not None and self._cutter.fired.is_set():
                    raise httpx.ReadTimeout(f"no complete reply within {self._cutter.seconds:g} s", request=self._request) from None
                raise

        def close(self):
            try:
                self._stream.close()
            finally:
                if self._cutter is not None:
                    self._cutter.cancel()
                self._transport.close()

    return _DeadlineTransport


def __getattr__(name: str):
    """DeadlineTransport and DeadlineAdapter, made on first use: httpx and requests are imported only then."""
    if name == "DeadlineTransport":
        return _transport_class()
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
                    raise requests.exceptions.ReadTimeout(f"no complete reply within {seconds:g} s", request=request) from None
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
