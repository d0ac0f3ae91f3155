"""``hedge serve``'s HTTP endpoint for operators (``[server] metrics_address``).

- ``GET /metrics``: the server's Prometheus registry (text format, or OpenMetrics when the
  scraper asks for it in ``Accept``; :mod:`hedge.server.prometheus`).
- ``GET /health``: ``200`` and ``{"status": "ok", ...}`` while the server accepts connections
  and its default policy builds; ``503`` and ``{"status": "unavailable", "problems": [...]}``
  otherwise (for a load balancer, systemd or a monitoring probe).

A port of its own, plain HTTP, no authentication: it tells counts and policy names, never job
ids or tokens. Bind it to a monitoring network (or 127.0.0.1 behind a proxy), not to AMs.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from hedge.errors import HedgeError

log = logging.getLogger("hedge.server")

# () -> problems (empty: healthy) and facts for the JSON body
HealthCheck = Callable[[], tuple[list[str], dict[str, object]]]


class _Handler(BaseHTTPRequestHandler):
    server: _EndpointServer

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
            self._send(200, content_type, encoder(self.server.registry))
        elif path == "/health":
            problems, facts = self.server.health()
            body = {"status": "unavailable" if problems else "ok", **facts}
            if problems:
                body["problems"] = problems
            self._send(503 if problems else 200, "application/json",
                       json.dumps(body).encode() + b"\n")
        else:
            self._send(404, "text/plain; charset=utf-8", b"not found: try /metrics or /health\n")

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - base signature
        log.debug("event=http %s", format % args)  # a scrape every 15 s is not news


class _EndpointServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], registry: CollectorRegistry,
                 health: HealthCheck) -> None:
        self.registry, self.health = registry, health
        self.address_family = _family(address[0])
        super().__init__(address, _Handler)


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _bind_error(address: tuple[str, int], exc: OSError, where: str) -> HedgeError:
    host, port = address
    if isinstance(exc, socket.gaierror):
        why = f"unknown host ({exc.strerror})"
    elif exc.errno == errno.EADDRINUSE:
        why = f"port {port} is in use (another process, or a hedge serve already running)"
    elif exc.errno == errno.EACCES:
        why = f"port {port} needs privileges (use a port above 1023)"
    else:
        why = f"cannot listen there: {exc.strerror or exc}"
    return HedgeError(f"{where} = '{host}:{port}': {why}")


def check_bindable(address: tuple[str, int], where: str = "metrics_address") -> None:
    """HedgeError (one line) when ``address`` cannot be listened on now (``--check``)."""
    try:
        with socket.socket(_family(address[0]), socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does
            sock.bind(address)
            sock.listen(1)
    except OSError as exc:
        raise _bind_error(address, exc, where) from None


class MetricsEndpoint:
    """The HTTP endpoint on its own thread; ``start`` raises HedgeError if it cannot bind."""

    def __init__(self, address: tuple[str, int], registry: CollectorRegistry,
                 health: HealthCheck) -> None:
        self.address, self.registry, self.health = address, registry, health
        self._server: _EndpointServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1] if self._server else self.address[1]

    def start(self) -> None:
        try:
            self._server = _EndpointServer(self.address, self.registry, self.health)
        except OSError as exc:
            raise _bind_error(self.address, exc, "metrics_address") from None
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="hedge-http", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            with contextlib.suppress(OSError):
                self._server.server_close()
            self._server = None
