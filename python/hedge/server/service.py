"""The control-plane service behind ``hedge serve``.

Two listening sockets:

- **Py4J** (``address``): the shim's ``ControlPlane`` interface, authenticated with the
  shared token (Py4J's ``auth_token``). ``open(job, policy, params)`` creates a session and
  returns its id, a random per-session secret and the data port; ``close(id)`` ends it.
  ``mapping(name)`` serves an ImKP mapping file to a map task (``[imkp] mappings``;
  :mod:`hedge.server.mappings`).
- **data channel** (``data_port``): raw TCP, ``TCP_NODELAY``. A connection first presents a
  session id and its secret (obtainable only through authenticated Py4J), then exchanges one
  request/response frame per scan (:mod:`hedge.server.wire`). Py4J's text protocol would
  base64 every payload; the measurements in issue 9 and ``docs/wire-format.md`` show why the
  bulk data goes around it.

Every scan is decided in its connection's thread; a bad frame or a failing policy gets a
rejection for that scan (the AM falls back for it) and never touches other sessions.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import logging
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field, replace

import numpy as np

from hedge.errors import HedgeError
from hedge.model import ClusterFacts
from hedge.policy import available, create
from hedge.server import wire
from hedge.server.connections import (
    ConnectionGate,
    FailureLog,
    Refused,
    guarded_client_server,
    server_tls_context,
)
from hedge.server.data_channel import DataServer, read_exact
from hedge.server.endpoint import MetricsEndpoint
from hedge.server.mappings import MappingDirectory
from hedge.server.metrics import Metrics
from hedge.server.session import (
    Limits,
    PolicyAnswerError,
    SessionLimitError,
    SessionRegistry,
    parse_params,
    policy_params,
    split_container,
    split_resourcemanager,
)
from hedge.server.utilisation import RM_FROM_JOBS, ResourceManagers, UtilisationPoller

log = logging.getLogger("hedge.server")


@dataclass
class ServerConfig:
    """Everything ``hedge serve`` needs (from the settings file and the command line)."""

    host: str = "127.0.0.1"
    port: int = 25334
    data_port: int = 0  # 0: any free port (announced to clients by open())
    token: str = ""
    policy: str = "adaptive"
    # server-side parameter defaults per policy ([policy.<name>] sections), as text
    policy_defaults: dict[str, dict[str, str]] = field(default_factory=dict)
    allowed_policies: tuple[str, ...] = ()  # empty: every registered policy
    limits: Limits = field(default_factory=Limits)
    metrics_interval: float = 60.0
    nodes_status: str = ""  # JSON status of `hedge nodes watch` (node levels, blacklist)
    # ResourceManager web address (http://rm:8088) polled for node utilisation and free
    # slots; "" = the one each job's AM names, "off" = none (hedge.server.utilisation)
    resourcemanager: str = RM_FROM_JOBS
    rm_poll_interval: float = 10.0  # seconds between polls
    rm_max_age: float = 60.0  # seconds after which the last good poll counts as unknown
    # (MB, vcores) of the slot the RM's capacity is counted in when an AM knows no slots
    rm_container: tuple[int, int] = (1024, 1)
    imkp_mappings: str = ""  # directory of ImKP mapping files served by name; "" = off
    # HTTP /metrics and /health (hedge.server.endpoint); None = off
    metrics_address: tuple[str, int] | None = None
    # connection hygiene, per listener (Py4J, data channel): hedge.server.connections
    auth_timeout: float = 5.0  # seconds a new connection has to authenticate
    max_connections: int = 1024  # open connections (an AM holds 1-3 Py4J + 1 data)
    max_unauthenticated: int = 64  # connections still authenticating
    tls_cert: str = ""  # PEM certificate (chain) of the server; "" with tls_key "": plain TCP
    tls_key: str = ""  # PEM private key of tls_cert, without a passphrase


class ClusterView:
    """Cluster facts for a session's nodes: slots as the AM reports them, node levels and
    the blacklist from the node analyzer's status file when one is configured, and per-node
    CPU/memory utilisation from the ResourceManager's last good poll when one is configured
    (:mod:`hedge.server.utilisation`; read without waiting, empty when unknown or stale).
    Where the AM knows no slots (hedge's shim on YARN), the RM's poll counts them, in
    containers of ``container`` (MB, vcores)."""

    def __init__(self, nodes_status: str = "", utilisation: UtilisationPoller | None = None,
                 container: tuple[int, int] = (1024, 1)) -> None:
        self._view = None
        self.utilisation = utilisation
        self.container = container
        if nodes_status:
            from hedge.nodes.view import NodeView
            self._view = NodeView.from_status(nodes_status)

    def polling(self, utilisation: UtilisationPoller | None) -> ClusterView:
        """This view with ``utilisation`` as its ResourceManager (one job's)."""
        if utilisation is self.utilisation:
            return self
        view = copy.copy(self)  # shares the node view: one status file read for all jobs
        view.utilisation = utilisation
        return view

    def __call__(self, nodes: list[str], total_slots: int, free_slots: int,
                 container: tuple[int, int] | None = None) -> ClusterFacts:
        fields: dict[str, object] = {}
        if self._view is not None:
            self._view.refresh()
            fields = self._view.cluster_fields(nodes)
        if self.utilisation is not None:
            fields.update(self.utilisation.fields(nodes))
            counted = (self.utilisation.slots(*(container or self.container))
                       if total_slots <= 0 else None)
            if counted is not None:
                total_slots, free_slots = counted
        return ClusterFacts(total_slots=max(total_slots, 0), free_slots=max(free_slots, 0),
                            **fields)


class EntryPoint:
    """What the shim calls through Py4J (implements org.hedge.shim.ControlPlane)."""

    class Java:
        implements = ["org.hedge.shim.ControlPlane"]

    def __init__(self, service: ControlPlaneService) -> None:
        self._service = service

    def open(self, job_id: str, policy: str, params: str) -> str:
        """``OK <session> <secret hex> <data port> <wire version>`` or ``ERROR <why>``."""
        try:
            return self._service.open(str(job_id), str(policy), str(params))
        except HedgeError as exc:
            reason = "limit" if isinstance(exc, SessionLimitError) else "refused"
            self._service.metrics.session(opened=False, reason=reason)
            log.warning("event=refused job=%s policy=%s reason=%r", job_id, policy, str(exc))
            return f"ERROR {exc}"
        except Exception as exc:  # noqa: BLE001 - one bad request must not kill the server
            self._service.metrics.session(opened=False, reason="internal")
            log.exception("event=open_failed job=%s", job_id)
            return f"ERROR internal error: {type(exc).__name__}: {exc}"

    def close(self, session_id: str) -> None:
        try:
            self._service.close(int(session_id))
        except ValueError:
            log.warning("event=close_bad_id session=%r", session_id)

    def mapping(self, name: str) -> bytes:
        """The ImKP mapping file ``name`` (starts with ``HEDGEIMK``), or the UTF-8 bytes of
        ``ERROR <why>`` when it is refused: Py4J hands Java a ``byte[]`` either way, and the
        partitioner fails its task with the reason instead of a Python traceback."""
        try:
            return self._service.mapping(str(name))
        except HedgeError as exc:
            log.warning("event=imkp_refused name=%r reason=%r", name, str(exc))
            return f"ERROR {exc}".encode()
        except Exception as exc:  # noqa: BLE001 - one bad request must not kill the server
            log.exception("event=imkp_failed name=%r", name)
            return f"ERROR internal error: {type(exc).__name__}: {exc}".encode()


def _head(values, n: int = 10) -> str:
    """A list for the log, cut after n items (a decision may name thousands of tasks)."""
    items = [int(v) for v in values[:n]]
    more = f",+{len(values) - n}" if len(values) > n else ""
    return "[" + ",".join(map(str, items)) + more + "]"


def _collect_if_due() -> None:
    """Run the cyclic collector's due generation now, between scans (after the answer left).

    Automatic collection is disabled at start-up: it would otherwise fire inside whichever
    decision happened to cross the allocation threshold. Same thresholds and generations as
    CPython's automatic trigger, only at a moment no AM is waiting.
    """
    counts, thresholds = gc.get_count(), gc.get_threshold()
    due = [gen for gen in range(3) if thresholds[gen] and counts[gen] >= thresholds[gen]]
    if due:
        gc.collect(due[-1])


def _unblock_connections(gateway) -> None:  # noqa: ANN001 - py4j ClientServer
    """Shut down the sockets of open Py4J connections before py4j closes them.

    py4j's ``close`` closes a connection's stream while the connection's reader thread is
    blocked in ``readline`` holding that stream's lock, so one idle client (a JVM keeps its
    pooled connections open) would hang the whole shutdown. A socket shut down first gives
    the reader end-of-file, and the connection then closes itself."""
    server = gateway.get_callback_server()
    for connection in list(getattr(server, "connections", ()) if server else ()):
        sock = getattr(connection, "socket", None)
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed by its peer
                sock.shutdown(socket.SHUT_RDWR)


class ControlPlaneService:
    """Sessions, metrics, the Py4J server and the data-channel server."""

    def __init__(self, config: ServerConfig) -> None:
        if len(config.token) < 16:
            raise HedgeError("auth token: expected at least 16 characters (the token file "
                             "holds the shared secret)")
        self.config = config
        self.metrics = Metrics()
        self.resourcemanagers = ResourceManagers(config.resourcemanager,
                                                 config.rm_poll_interval, config.rm_max_age)
        self.utilisation = self.resourcemanagers.configured
        self.cluster_view = ClusterView(config.nodes_status, self.utilisation,
                                        config.rm_container)
        self.sessions = SessionRegistry(config.limits, self.cluster_view)
        self.metrics.exported.track_sessions(lambda: len(self.sessions))
        self.endpoint = (MetricsEndpoint(config.metrics_address, self.metrics.exported.registry,
                                         self.health) if config.metrics_address else None)
        self.mappings = (MappingDirectory(config.imkp_mappings) if config.imkp_mappings
                         else None)
        self._gateway = None
        self._data: DataServer | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        # connection failures of both listeners, rate-limited; each counted for /metrics
        self.failures = FailureLog(count=self.metrics.exported.connection_failed)

    # --- sessions -----------------------------------------------------------------------
    def open(self, job_id: str, policy: str, params_text: str) -> str:
        name = policy or self.config.policy
        allowed = self.config.allowed_policies
        if allowed and name not in allowed:
            raise HedgeError(f"policy '{name}' is not allowed on this server "
                             f"(allowed: {', '.join(allowed)})")
        raw = dict(self.config.policy_defaults.get(name, {}))
        raw.update(parse_params(params_text))
        container, raw = split_container(raw, self.config.rm_container)
        address, raw = split_resourcemanager(raw)
        rm = self.resourcemanagers.for_job(job_id, address)
        session = self.sessions.open(job_id, name, policy_params(name, raw), container,
                                     cluster=self.cluster_view.polling(rm))
        self.metrics.session(opened=True, policy=name)
        log.info("event=open session=%d job=%s policy=%s params=%s container=%dMBx%d rm=%s",
                 session.session_id, job_id, name, raw, *container,
                 rm.address if rm is not None else "none")
        return (f"OK {session.session_id} {session.secret.hex()} {self.data_port} "
                f"{wire.VERSION}")

    def close(self, session_id: int) -> None:
        session = self.sessions.close(session_id)
        if session is not None:
            ended, finished = session.outcomes, session.ended.facts()
            # finished: the tasks whose winner (task, node, start, end) the server learned;
            # a task that ends after the AM's last scan is not among them
            log.info("event=close session=%d job=%s scans=%d copies=%d rejected=%d "
                     "copies_won=%d copies_lost=%d originals_lost=%d wasted_s=%.1f "
                     "finished=%d finished_node_unknown=%d copies_placed=%d "
                     "copies_on_original_node=%d",
                     session_id, session.job_id, session.scans, session.copies,
                     session.rejected, ended.copies_won, ended.copies_lost,
                     ended.originals_lost, ended.wasted_s, len(finished),
                     int(np.count_nonzero(finished.node < 0)), session.placement.placed,
                     session.placement.on_original_node)
            note = session.policy.job_note()  # e.g. hedge-auto: tasks left to their skew
            if note:
                log.info("event=policy_note session=%d job=%s policy=%s note=%r", session_id,
                         session.job_id, session.policy_name, note)

    # --- ImKP mappings ------------------------------------------------------------------
    def mapping(self, name: str) -> bytes:
        """A validated mapping file of ``[imkp] mappings`` by plain name (HedgeError: why not)."""
        if self.mappings is None:
            raise HedgeError("this control plane serves no ImKP mappings ([imkp] mappings is "
                             "not set in its settings file, nor --imkp-mappings given); set "
                             "it, or give the job hedge.imkp.mapping (a file) instead")
        data = self.mappings.fetch(name)
        log.info("event=imkp_fetch name=%s bytes=%d", name, len(data))
        return data

    # --- data channel -------------------------------------------------------------------
    def serve_connection(self, sock: socket.socket, authenticated=None) -> None:  # noqa: ANN001
        """Serve one data connection: its hello, then its frames until the peer closes.

        ``authenticated()`` runs once the hello named a live session with its secret (the
        listener then lifts the authentication deadline)."""
        try:
            hello = read_exact(sock, wire.HELLO.size)
        except TimeoutError:
            raise Refused("timeout", "no session hello within the [limits] auth_timeout") \
                from None
        if hello is None:
            raise Refused("closed", "closed by the peer before its session hello")
        magic, version, _, session_id, secret = wire.HELLO.unpack(hello)
        session = None
        if magic == wire.HELLO_MAGIC and version == wire.VERSION:
            session = self.sessions.authenticate(session_id, bytes(secret))
        sock.sendall(wire.HELLO_REPLY.pack(b"HDGA", 0 if session else 1))
        if session is None:
            why = ("unknown session or secret" if magic == wire.HELLO_MAGIC
                   else "not a hedge data-channel hello")
            raise Refused("session", f"{why} (session {session_id})")
        if authenticated is not None:
            authenticated()
        max_body = self.config.limits.max_body_bytes
        buffer = bytearray(64 << 10)  # grows to the largest frame of the connection
        while not self._stop.is_set():
            header = read_exact(sock, wire.REQUEST.size)
            if header is None:
                return
            magic, _, _, seq, body_len = wire.REQUEST.unpack_from(header)[:5]
            if magic != wire.REQUEST_MAGIC or body_len > max_body:
                self.metrics.exported.rejected.labels("frame").inc()
                log.warning("event=frame_refused session=%d job=%s bytes=%d limit=%d",
                            session.session_id, session.job_id, body_len, max_body)
                sock.sendall(wire.encode_rejection(seq, f"frame refused: {body_len} bytes "
                                                   f"(limit {max_body}) or bad magic"))
                return  # cannot resynchronise: drop the connection, keep the session
            if body_len > len(buffer):
                buffer = bytearray(max(body_len, 2 * len(buffer)))
            body = read_exact(sock, body_len, buffer) if body_len else bytearray()
            if body is None:
                return
            sock.sendall(self.answer(session, bytes(header), body))
            _collect_if_due()

    def answer(self, session, header: bytes, body: bytearray | memoryview) -> bytes:
        """The response frame for one request frame (never raises).

        The response carries this thread's CPU time for the decision, so the client can tell
        time spent working from time spent waiting for a core (docs/wire-format.md).
        """
        t0, c0 = time.perf_counter(), time.thread_time()
        seq = wire.REQUEST.unpack_from(header)[3]
        fallbacks, request, before = 0, None, replace(session.outcomes)
        try:
            request = wire.decode_request(header, body)
            fallbacks = request.fallbacks
            actions = session.decide(request)
            cpu = time.thread_time() - c0
            out = wire.encode_response(seq, actions, cpu_seconds=cpu)
            self.metrics.scan(time.perf_counter() - t0, actions.copies_requested,
                              len(actions.kill_attempt), fallbacks, cpu_seconds=cpu,
                              policy=session.policy_name,
                              ended=session.outcomes.since(before))
            if actions.copies_requested or len(actions.kill_attempt):
                log.info("event=decision session=%d job=%s seq=%d tasks=%s copies=%d kills=%s"
                         "%s", session.session_id, session.job_id, seq,
                         _head(actions.speculate_task), actions.copies_requested,
                         _head(actions.kill_attempt),
                         f" why={actions.why!r}" if actions.why else "")
            return out
        except HedgeError as exc:
            message = str(exc)
            reason = ("malformed" if request is None else
                      "policy_answer" if isinstance(exc, PolicyAnswerError) else "invalid")
        except Exception as exc:  # noqa: BLE001 - a failing policy must not kill the server
            log.exception("event=policy_error session=%d job=%s", session.session_id,
                          session.job_id)
            message = f"internal error in policy '{session.policy_name}': {exc!r}"
            reason = "policy_error"
        session.rejected += 1
        self.metrics.scan(time.perf_counter() - t0, fallbacks=fallbacks, rejected=reason,
                          policy=session.policy_name, ended=session.outcomes.since(before))
        log.warning("event=rejected session=%d job=%s seq=%d reason=%r", session.session_id,
                    session.job_id, seq, message)
        return wire.encode_rejection(seq, message)

    # --- lifecycle ----------------------------------------------------------------------
    @property
    def data_port(self) -> int:
        return self._data.server_address[1] if self._data else self.config.data_port

    @property
    def port(self) -> int:
        if self._gateway is None:
            return self.config.port
        return self._gateway.get_callback_server().get_listening_port()

    def _gate(self, channel: str, tls: ssl.SSLContext | None) -> ConnectionGate:
        cfg = self.config
        return ConnectionGate(channel, cfg.max_connections, cfg.max_unauthenticated,
                              cfg.auth_timeout, self.failures, tls)

    @property
    def metrics_port(self) -> int | None:
        return self.endpoint.port if self.endpoint else None

    def start(self) -> None:
        from py4j.clientserver import JavaParameters, PythonParameters

        cfg = self.config
        available()  # import every policy module now, not inside the first client's deadline
        if self.endpoint is not None:
            self.endpoint.start()  # first: a taken port stops the start before anything runs
        tls = server_tls_context(cfg.tls_cert, cfg.tls_key) if cfg.tls_cert else None
        self._data = DataServer((cfg.host, cfg.data_port), self, self._gate("data", tls))
        self._spawn(self._data.serve_forever, "hedge-data")
        self._gateway = guarded_client_server(
            self._gate("py4j", tls),
            java_parameters=JavaParameters(auth_token=cfg.token, eager_load=False),
            python_parameters=PythonParameters(
                address=cfg.host, port=cfg.port, auth_token=cfg.token, daemonize=True,
                daemonize_connections=True),
            python_server_entry_point=EntryPoint(self),
        )
        self._spawn(self._housekeeping, "hedge-metrics")
        self.resourcemanagers.start()  # own threads: a scan never waits for an RM
        # Everything imported so far lives for the whole process: keep it out of the cyclic
        # collector's scans, which otherwise add multi-millisecond pauses to random decisions.
        gc.freeze()
        gc.disable()  # collections run between scans instead (_collect_if_due)
        log.info("event=listening py4j=%s:%d data=%s:%d policy=%s tls=%s", cfg.host,
                 self.port, cfg.host, self.data_port, cfg.policy, "on" if tls else "off")

    def _spawn(self, target, name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _housekeeping(self) -> None:
        while not self._stop.wait(self.config.metrics_interval):
            _collect_if_due()  # garbage of Py4J calls when no scans arrive
            for session in self.sessions.reap():
                self.metrics.exported.sessions_reaped.inc()
                log.info("event=reaped session=%d job=%s idle_s>%.0f", session.session_id,
                         session.job_id, self.config.limits.idle_timeout)
            log.info(self.metrics.line(len(self.sessions)))
            self.failures.flush()

    def health(self) -> tuple[list[str], dict[str, object]]:
        """For ``/health``: (problems, facts); no problems while both listeners run and the
        default policy builds with its server-side parameters."""
        cfg, problems = self.config, []
        py4j = self._gateway.get_callback_server() if self._gateway else None
        if self._stop.is_set():
            problems.append("stopping")
        thread = getattr(py4j, "thread", None)
        if py4j is None or py4j.is_shutdown or thread is None or not thread.is_alive():
            problems.append("py4j listener not running")
        if not any(t.name == "hedge-data" and t.is_alive() for t in self._threads):
            problems.append("data channel listener not running")
        try:
            create(cfg.policy, **policy_params(cfg.policy, cfg.policy_defaults.get(cfg.policy, {})))
        except Exception as exc:  # noqa: BLE001 - any failure makes the server unhealthy
            problems.append(f"default policy '{cfg.policy}' does not build: {exc}")
        return problems, {"policy": cfg.policy, "sessions": len(self.sessions),
                          "py4j_port": self.port, "data_port": self.data_port}

    def stop(self) -> None:
        self._stop.set()
        gc.enable()
        if self.endpoint is not None:
            self.endpoint.stop()
        self.resourcemanagers.stop()
        if self._data is not None:
            self._data.shutdown()
            self._data.server_close()
        if self._gateway is not None:
            _unblock_connections(self._gateway)
            self._gateway.shutdown()
