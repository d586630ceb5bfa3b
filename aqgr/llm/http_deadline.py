"""One HTTP model call's total time, not each socket read's.

An HTTP client's timeout bounds each socket operation, not the call: a server that sends a byte a
second never trips it (one call held 297 s at a 5 s timeout). `post_within` sends a request on its
own connection and shuts that connection's socket down when the deadline passes, wherever the call
is then (connecting, sending, waiting for the headers, reading the body): the call ends at the
deadline, as `timeout`. Only the HTTP providers use it (httpx comes with their extra); the
per-task deadlines are in aqgr/llm/deadline.py.
"""

from __future__ import annotations

import socket
import threading


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
