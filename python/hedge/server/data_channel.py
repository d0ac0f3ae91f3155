"""The data channel of ``hedge serve``: raw TCP (or TLS), one request/response frame per scan.

A connection first presents a session id and its secret (obtainable only through
authenticated Py4J); the service's ``serve_connection`` then answers its frames.
This module holds the listening server, the per-connection handler (admission, the
authentication timeout, then the idle timeout) and the exact reads the frames need.
"""

from __future__ import annotations

import logging
import socket
import socketserver
import ssl
import struct
from collections.abc import Callable
from typing import Any, Protocol

from hedge.server.connections import ConnectionGate, Refused

log = logging.getLogger("hedge.server")


class ScanService(Protocol):
    """What the data channel needs of the service (``ControlPlaneService``)."""

    config: Any  # ServerConfig: its limits.idle_timeout

    def serve_connection(self, sock: socket.socket,
                         authenticated: Callable[[], None] | None = None) -> None: ...


class _DataHandler(socketserver.BaseRequestHandler):
    server: DataServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        gate, accepted = self.server.gate, sock
        authenticated = False

        def on_authenticated() -> None:
            nonlocal authenticated
            authenticated = True
            gate.authenticated(accepted)
            _idle_timeout(sock, self.server.service.config.limits.idle_timeout)

        try:
            sock = gate.secure(sock)  # the hello must arrive within the auth timeout
            self.server.service.serve_connection(sock, on_authenticated)
        except Refused as exc:
            gate.failed(accepted, self.client_address, exc.kind, exc.reason)
        except (OSError, ConnectionError) as exc:
            if authenticated:
                log.debug("event=data_connection_closed reason=%r", str(exc))
            else:
                gate.failed(accepted, self.client_address, "io",
                            f"failed before authenticating: {exc!r}")
        finally:
            gate.release(accepted)


def _idle_timeout(sock: socket.socket, idle: float) -> None:
    """The read timeout of an authenticated data connection.

    Plain TCP: blocking socket + kernel receive timeout, so recv(MSG_WAITALL) takes a whole
    frame in one wake-up (a Python-level timeout would poll per chunk); idle peers still time
    out. TLS reads a record at a time anyway: a Python-level timeout.
    """
    if isinstance(sock, ssl.SSLSocket):
        sock.settimeout(idle)
        return
    sock.settimeout(None)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO,
                    struct.pack("ll", int(idle), int(idle % 1 * 1e6)))


class DataServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], service: ScanService,
                 gate: ConnectionGate) -> None:
        self.service = service
        self.gate = gate
        super().__init__(address, _DataHandler)

    def verify_request(self, request, client_address) -> bool:  # noqa: ANN001
        refused = self.gate.admit(request)
        if refused:  # socketserver closes the socket
            self.gate.failures.failed(self.gate.channel, client_address, "refused", refused)
        return refused is None


def read_exact(sock: socket.socket, n: int, buf: bytearray | None = None,
                ) -> bytearray | memoryview | None:
    """Exactly n bytes, or None when the peer closed before the first byte.

    With ``buf`` (at least n bytes) the bytes land in it and a view of them is returned:
    a connection reuses one buffer for every frame instead of allocating (and zeroing) a
    new one per scan; nothing of a frame is kept after its answer (the session copies the
    rows into its table).
    """
    if buf is None:
        buf = bytearray(n)
    view = memoryview(buf)[:n]
    got = 0
    flags = 0 if isinstance(sock, ssl.SSLSocket) else socket.MSG_WAITALL  # TLS takes no flags
    while got < n:
        k = sock.recv_into(view[got:], n - got, flags)
        if k == 0:
            if got == 0:
                return None
            raise ConnectionError(f"peer closed after {got} of {n} bytes")
        got += k
    return view if len(buf) != n else buf
