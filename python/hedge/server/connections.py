"""Connection hygiene for ``hedge serve``'s two listeners: caps, authentication deadline,
TLS and one rate-limited log line per failed connection.

Both listeners (Py4J and the data channel) admit a connection through a
:class:`ConnectionGate`: at most ``max_connections`` open (more are refused) and
``max_unauthenticated`` not yet authenticated (a new one evicts the oldest: an AM
authenticates within milliseconds, so a flood of silent sockets cannot lock it out). A connection must
authenticate (Py4J: the shared token; data channel: a session's secret) within
``auth_timeout`` seconds or it is closed. With ``[server] tls_cert``/``tls_key`` both channels
speak TLS only; a plain client is refused.

Every failure is one line ``event=connection_failed channel=.. peer=IP:PORT reason='..'``,
at most :data:`LINES_PER_MINUTE` per channel and kind of failure; the rest are counted and
reported as one ``event=connection_failed_suppressed`` line. py4j's own accept loop would log a
12-line traceback per bad connection and does its TLS handshake in the accept thread (one
silent client stalls every other, one failed handshake ends the loop):
:class:`GuardedPythonServer` replaces it.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from copy import copy
from dataclasses import dataclass, field
from pathlib import Path

from py4j.clientserver import ClientServer, ClientServerConnection, PythonServer
from py4j.java_gateway import server_connection_started, server_started, server_stopped

from hedge.errors import HedgeError

log = logging.getLogger("hedge.server")

LINES_PER_MINUTE = 10
TLS_RECORD_HANDSHAKE = b"\x16"  # first byte of every TLS ClientHello
# py4j's answers to its authentication command (protocol.OUTPUT_VOID_COMMAND and
# ERROR_RETURN_MESSAGE); "!xhedge: <why>" is a refusal the shim shows as the server's reason
_AUTH_OK = b"!yv\n"
_AUTH_WRONG_TOKEN = b"!xn\n"
_LINE_LIMIT = 4096  # an authentication line longer than this is not py4j's


class Refused(Exception):
    """A connection refused before it authenticated; ``kind`` groups it for rate limiting."""

    def __init__(self, kind: str, reason: str, reply: bytes = b"") -> None:
        super().__init__(reason)
        self.kind, self.reason, self.reply = kind, reason, reply


@dataclass
class _Window:
    start: float
    lines: int = 0
    suppressed: int = 0


class FailureLog:
    """One warning line per failed connection, at most ``limit`` per ``window`` seconds for
    each (channel, kind); the excess is reported once as a count when the window ends."""

    def __init__(self, limit: int = LINES_PER_MINUTE, window: float = 60.0,
                 clock=time.monotonic,  # noqa: ANN001 - injectable for tests
                 count: Callable[[str, str], None] | None = None) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self.count = count  # (channel, kind) of every failure, logged or not (/metrics)
        self._windows: dict[tuple[str, str], _Window] = {}
        self._lock = threading.Lock()

    def failed(self, channel: str, peer: tuple, kind: str, reason: str) -> None:
        if self.count is not None:
            self.count(channel, kind)
        now = self.clock()
        with self._lock:
            self._roll(now, (channel, kind))
            window = self._windows.setdefault((channel, kind), _Window(now))
            if window.lines >= self.limit:
                window.suppressed += 1
                return
            window.lines += 1
        log.warning("event=connection_failed channel=%s peer=%s reason=%r", channel,
                    _peer(peer), reason)

    def flush(self) -> None:
        """Report the windows that have ended (the housekeeping thread calls this)."""
        with self._lock:
            now = self.clock()
            for key in list(self._windows):
                self._roll(now, key)

    def _roll(self, now: float, key: tuple[str, str]) -> None:
        window = self._windows.get(key)
        if window is None or now - window.start < self.window:
            return
        del self._windows[key]
        if window.suppressed:
            log.warning("event=connection_failed_suppressed channel=%s kind=%s count=%d "
                        "window_s=%.0f", key[0], key[1], window.suppressed, self.window)


def _peer(peer: tuple) -> str:
    return f"{peer[0]}:{peer[1]}" if len(peer) >= 2 else str(peer)


@dataclass
class ConnectionGate:
    """Counts one listener's connections; ``admit`` refuses beyond the caps."""

    channel: str
    max_connections: int
    max_unauthenticated: int
    auth_timeout: float
    failures: FailureLog
    tls: ssl.SSLContext | None = None
    open: int = 0
    # connections still authenticating, oldest first (by id of the accepted socket)
    _pending: dict[int, socket.socket] = field(default_factory=dict, repr=False)
    _evicted: set[int] = field(default_factory=set, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def unauthenticated(self) -> int:
        return len(self._pending)

    def admit(self, sock: socket.socket) -> str | None:
        """None when the accepted ``sock`` may proceed (counted), else why it is refused.
        At ``max_unauthenticated`` the oldest waiting connection is shut down instead."""
        with self._lock:
            if self.open >= self.max_connections:
                return (f"too many connections: {self.open} open, the limit is "
                        f"[limits] max_connections = {self.max_connections}")
            if len(self._pending) >= self.max_unauthenticated:
                key, oldest = next(iter(self._pending.items()))
                del self._pending[key]
                self._evicted.add(key)
                with contextlib.suppress(OSError):  # its thread sees the end and logs it
                    oldest.shutdown(socket.SHUT_RDWR)
            self.open += 1
            self._pending[id(sock)] = sock
            return None

    def authenticated(self, sock: socket.socket) -> None:
        with self._lock:
            self._pending.pop(id(sock), None)

    def release(self, sock: socket.socket) -> None:
        with self._lock:
            self.open -= 1
            self._pending.pop(id(sock), None)
            self._evicted.discard(id(sock))

    def failed(self, sock: socket.socket, peer: tuple, kind: str, reason: str) -> None:
        """Log the failure of the connection accepted as ``sock`` (before its release)."""
        with self._lock:
            evicted = id(sock) in self._evicted
        if evicted:
            kind, reason = "evicted", (
                "closed while authenticating to admit a newer connection: "
                f"[limits] max_unauthenticated = {self.max_unauthenticated} were waiting")
        self.failures.failed(self.channel, peer, kind, reason)

    def refuse(self, sock: socket.socket, peer: tuple, reason: str, reply: bytes = b"") -> None:
        """Close a connection refused at accept time (never blocks the accepting thread)."""
        try:
            if reply and self.tls is None:
                sock.setblocking(False)
                sock.send(reply)
        except OSError:
            pass  # the peer is gone already: nothing to tell
        finally:
            self.failures.failed(self.channel, peer, "refused", reason)
            sock.close()

    def secure(self, sock: socket.socket, refusal: bytes = b"") -> socket.socket:
        """``sock`` ready to authenticate: the deadline set, TLS negotiated when configured.

        Raises :class:`Refused` for a peer that closes, stays silent, or speaks plain text to
        a TLS listener (answered with ``refusal`` in plain text) or TLS to a plain one.
        """
        sock.settimeout(self.auth_timeout)
        try:
            first = sock.recv(1, socket.MSG_PEEK)
        except TimeoutError:
            raise Refused("timeout", f"nothing received within the {self.auth_timeout:g} s "
                          "[limits] auth_timeout") from None
        if not first:
            raise Refused("closed", "closed by the peer before authenticating")
        if self.tls is None:
            if first == TLS_RECORD_HANDSHAKE:
                raise Refused("tls_mismatch", "a TLS client on a plain listener: give hedge "
                              "serve [server] tls_cert and tls_key, or set the client's "
                              "hedge.controlplane.tls=false")
            return sock
        if first != TLS_RECORD_HANDSHAKE:
            raise Refused("tls_mismatch", "a plain (non-TLS) client on a TLS listener: set "
                          "hedge.controlplane.tls=true and a CA on the client", refusal)
        key = id(sock)
        try:
            wrapped = self.tls.wrap_socket(sock, server_side=True)
        except TimeoutError:
            raise Refused("timeout", f"TLS handshake not finished within the "
                          f"{self.auth_timeout:g} s [limits] auth_timeout") from None
        except (ssl.SSLError, OSError) as exc:
            raise Refused("tls_handshake", f"TLS handshake failed: {exc}") from None
        with self._lock:  # eviction shuts down the socket that owns the descriptor now
            if key in self._pending:
                self._pending[key] = wrapped
        return wrapped


def reply_and_close(sock: socket.socket, reply: bytes) -> None:
    """Send a last line (best effort) and close without resetting the peer's read."""
    try:
        if reply:
            sock.sendall(reply)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    finally:
        sock.close()


# --- TLS ------------------------------------------------------------------------------------
def server_tls_context(cert: str, key: str, where: str = "") -> ssl.SSLContext:
    """A TLS server context from PEM files (HedgeError naming the file and what is wrong);
    ``where`` prefixes the setting's name (the settings file and section)."""
    where = f"{where} " if where else ""
    _check_pem(cert, f"{where}tls_cert", ("-----BEGIN CERTIFICATE-----",),
               "a PEM certificate (-----BEGIN CERTIFICATE-----)")
    _check_pem(key, f"{where}tls_key", ("PRIVATE KEY-----",),
               "a PEM private key (-----BEGIN PRIVATE KEY----- or -----BEGIN RSA/EC PRIVATE "
               "KEY-----) without a passphrase")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2  # Java 8 speaks 1.2
    try:
        context.load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise HedgeError(f"{where}tls_cert = {cert}, tls_key = {key}: cannot be used together "
                         f"({exc.reason or exc}); expected the certificate and its own "
                         "private key") from None
    return context


def _check_pem(path: str, what: str, markers: tuple[str, ...], expected: str) -> None:
    try:
        text = Path(path).read_bytes()[:1 << 20].decode("ascii", "replace")
    except OSError as exc:
        raise HedgeError(f"{what} = {path}: cannot read it: {exc.strerror}") from None
    if not all(marker in text for marker in markers):
        raise HedgeError(f"{what} = {path}: not {expected}")


# --- Py4J -----------------------------------------------------------------------------------
def py4j_authenticate(stream, sock: socket.socket, token: str) -> None:  # noqa: ANN001
    """Read py4j's authentication command (``A``, the token, ``e``) and accept it; raises
    :class:`Refused` (whose reply answers a wrong token the way py4j does)."""
    command = stream.readline(_LINE_LIMIT)
    if command != b"A\n":
        raise Refused("protocol", "not a py4j client: expected its authentication command, "
                      f"received {command[:40]!r}")
    client_token = stream.readline(_LINE_LIMIT).rstrip(b"\n")
    stream.readline(_LINE_LIMIT)  # the command's end marker
    if not hmac.compare_digest(client_token, token.encode()):
        raise Refused("wrong_token", "wrong token: a client's hedge.controlplane.token.file "
                      "does not hold this server's token", _AUTH_WRONG_TOKEN)
    sock.sendall(_AUTH_OK)


class GuardedPythonServer(PythonServer):
    """py4j's Python server with hedge's accept loop: each connection is admitted by the
    gate, secured and authenticated in its own thread under the deadline, then served by
    py4j's connection code in that same thread."""

    gate: ConnectionGate

    def run(self) -> None:
        token = self.python_parameters.auth_token
        # the connection is authenticated here, so py4j must not expect the command again
        self._authenticated_parameters = copy(self.python_parameters)
        self._authenticated_parameters.auth_token = None
        with self.lock:
            self.is_shutdown = False
        listener = self.server_socket  # shutdown() sets the attribute to None
        listener.listen(128)
        server_started.send(self, server=self)
        while not self.is_shutdown:
            try:
                readable, _, _ = select.select([listener], [], [], 1.0)
                if self.is_shutdown:
                    break
                if not readable:
                    continue
                sock, peer = listener.accept()
            except (OSError, ValueError) as exc:  # closed by shutdown(), or out of descriptors
                if self.is_shutdown:
                    break
                self.gate.failures.failed(self.gate.channel, ("-", "-"), "accept",
                                          f"accept failed: {exc}")
                time.sleep(0.1)
                continue
            refused = self.gate.admit(sock)
            if refused:
                self.gate.refuse(sock, peer, refused, b"!xhedge: " + refused.encode() + b"\n")
                continue
            threading.Thread(target=self._serve, args=(sock, peer, token),
                             name="hedge-py4j-conn", daemon=True).start()
        server_stopped.send(self, server=self)

    def _serve(self, accepted: socket.socket, peer: tuple, token: str) -> None:
        sock = accepted
        try:
            refusal = (b"!xhedge: this control plane requires TLS: set "
                       b"hedge.controlplane.tls=true and hedge.controlplane.tls.ca.file\n")
            sock = self.gate.secure(sock, refusal)
            stream = sock.makefile("rb")
            py4j_authenticate(stream, sock, token)
        except Refused as exc:  # logged first: the line is written when the peer sees the end
            self.gate.failed(accepted, peer, exc.kind, exc.reason)
            reply_and_close(sock, exc.reply)
        except (OSError, ValueError) as exc:  # reset, timed out mid-line, closed by shutdown
            self.gate.failed(accepted, peer, "io", f"failed before authenticating: {exc!r}")
            reply_and_close(sock, b"")
        else:
            self.gate.authenticated(accepted)
            sock.settimeout(None)  # an authenticated AM may stay quiet for a whole job
            self._run_connection(sock, stream)
        finally:
            self.gate.release(accepted)

    def _run_connection(self, sock: socket.socket, stream) -> None:  # noqa: ANN001
        connection = ClientServerConnection(
            self.java_parameters, self._authenticated_parameters, self.gateway_property,
            self.gateway_client, python_server=self)
        connection.init_socket_from_python_server(sock, stream)
        with self.lock:
            if self.is_shutdown:
                reply_and_close(sock, b"")
                return
            self.connections.add(connection)
        server_connection_started.send(self, connection=connection)
        connection.run()  # py4j's command loop, in this thread; it closes the socket


def guarded_client_server(gate: ConnectionGate, **kwargs) -> ClientServer:  # noqa: ANN003
    """A py4j ClientServer whose Python server is a :class:`GuardedPythonServer`."""

    class _GuardedClientServer(ClientServer):
        def _create_callback_server(self, callback_server_parameters):  # noqa: ANN001, ANN202
            server = GuardedPythonServer(self._gateway_client, self.java_parameters,
                                         self.python_parameters, self.gateway_property)
            server.gate = gate
            return server

    return _GuardedClientServer(**kwargs)
