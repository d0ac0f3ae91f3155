"""The control plane's settings file (``conf/hedge.ini``) and the shared token file.

    [server]
    address = 127.0.0.1:25334      # Py4J port the shim connects to (hedge.controlplane.address)
    data_port = 25335              # scan data channel (0: any free port; told to clients)
    token_file = /etc/hedge/token  # shared secret, also named by hedge.controlplane.token.file
    policy = adaptive              # default policy (a job's hedge.policy overrides it)
    allowed_policies =             # comma list; empty: all registered policies
    metrics_interval = 60          # seconds between hedge.metrics log lines
    nodes_status =                 # JSON status written by `hedge nodes watch` (optional)
    metrics_address =              # host:port of HTTP /metrics and /health; empty: off
    tls_cert =                     # PEM certificate: both channels speak TLS only (with tls_key)
    tls_key =                      # PEM private key of tls_cert (no passphrase)

    [cluster]
    resourcemanager =              # RM web address (http://rm:8088) polled for node utilisation
                                   # and free slots; empty: the one each job's AM names; off
    poll_interval = 10             # seconds between polls (1..3600)
    max_age = 60                   # seconds a poll stays valid (poll_interval..86400)
    container_mb = 1024            # the slot size the RM's free capacity is counted in
    container_vcores = 1

    [imkp]
    mappings =                     # directory of ImKP mapping files map tasks may fetch by
                                   # name (hedge.imkp.mapping.fetch); empty: off

    [limits]
    max_sessions = 1000
    max_rows = 200000
    max_nodes = 100000
    max_copies = 16
    idle_timeout = 900
    auth_timeout = 5               # seconds a new connection has to authenticate
    max_connections = 1024         # open connections per listener (Py4J, data channel)
    max_unauthenticated = 64       # connections per listener still authenticating

    [policy.adaptive]              # server-side defaults for a policy's parameters
    progress.standard = 0.5

Every value is checked; a bad one raises HedgeError naming the file, section and key.
"""

from __future__ import annotations

import configparser
import math
import os
import stat
from dataclasses import replace
from pathlib import Path

from hedge.errors import HedgeError
from hedge.policy import available
from hedge.server.connections import server_tls_context
from hedge.server.mappings import check_directory
from hedge.server.service import ServerConfig
from hedge.server.session import Limits, policy_params
from hedge.server.utilisation import RM_FROM_JOBS, RM_OFF, parse_resourcemanager

_SERVER_KEYS = {"address", "data_port", "token_file", "policy", "allowed_policies",
                "metrics_interval", "nodes_status", "metrics_address", "tls_cert", "tls_key"}
# [limits] keys of the listeners (ServerConfig), beside the session limits (Limits)
_CONNECTION_LIMITS = {"auth_timeout": (float, 0.1, 3600.0, "seconds"),
                      "max_connections": (int, 1, 100000, "an integer"),
                      "max_unauthenticated": (int, 1, 100000, "an integer")}


def parse_address(text: str, where: str = "address") -> tuple[str, int]:
    """``host:port`` -> (host, port)."""
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise HedgeError(f"{where} = {text!r}: expected host:port with a port in 0..65535")
    return host, int(port)


def read_token(path: str | Path) -> str:
    """The shared secret in ``path`` (whitespace stripped); at least 16 characters."""
    path = Path(path)
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise HedgeError(f"{path}: cannot read the token file: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise HedgeError(f"{path}: byte {exc.start}: not UTF-8 text, expected one token of at "
                         "least 16 characters (e.g. head -c 24 /dev/urandom | base64)") from None
    if len(token) < 16 or any(c.isspace() for c in token):
        raise HedgeError(f"{path}: expected one token of at least 16 characters without "
                         "spaces")
    return token


def token_warnings(path: str | Path) -> list[str]:
    mode = os.stat(path).st_mode
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        return [f"{path}: readable by group/others (chmod 600 recommended)"]
    return []


def _number(parser: configparser.ConfigParser, file: Path, section: str, key: str,
            kind: type, default: float, low: float = 0.0, high: float = math.inf,
            unit: str = "") -> float:
    """A numeric key of type ``kind`` in [low, high] (``default`` when absent or empty);
    ``unit`` names what the value measures in the message (default: the type)."""
    text = parser.get(section, key, fallback="").strip()
    if not text:
        return default
    what = unit or ("an integer" if kind is int else "a number")
    expected = (f"{what} in [{low:g}, {high:g}]" if high < math.inf
                else f"{what} >= {low:g}")
    try:
        value = kind(text)
    except ValueError:
        value = math.nan
    if not low <= value <= high:
        raise HedgeError(f"{file}: [{section}] {key} = {text!r}: expected {expected}")
    return value


_CLUSTER_KEYS = {"resourcemanager", "poll_interval", "max_age", "container_mb",
                 "container_vcores"}


def _cluster_settings(parser: configparser.ConfigParser, file: Path,
                      config: ServerConfig) -> ServerConfig:
    """The ``[cluster]`` section: ResourceManager polling for node utilisation and slots."""
    if not parser.has_section("cluster"):
        return config
    unknown = set(parser["cluster"]) - _CLUSTER_KEYS
    if unknown:
        raise HedgeError(f"{file}: [cluster] unknown key(s) {sorted(unknown)}, expected "
                         f"{sorted(_CLUSTER_KEYS)}")
    rm = parser["cluster"].get("resourcemanager", RM_FROM_JOBS).strip()
    rm = RM_OFF if rm.lower() == RM_OFF else rm
    if rm not in (RM_FROM_JOBS, RM_OFF):
        rm = parse_resourcemanager(rm, f"{file}: [cluster] resourcemanager",
                                   ", empty (the one each job's AM names) or off")
    interval = _number(parser, file, "cluster", "poll_interval", float, 10.0, 1.0, 3600.0,
                       "seconds")
    max_age = _number(parser, file, "cluster", "max_age", float, max(60.0, interval),
                      interval, 86400.0, "seconds")
    container_mb = _number(parser, file, "cluster", "container_mb", int, 1024, 1, 10**7, "MB")
    container_vcores = _number(parser, file, "cluster", "container_vcores", int, 1, 1, 10**4,
                               "vcores")
    return replace(config, resourcemanager=rm, rm_poll_interval=interval, rm_max_age=max_age,
                   rm_container=(container_mb, container_vcores))


def _imkp_settings(parser: configparser.ConfigParser, file: Path,
                   config: ServerConfig) -> ServerConfig:
    """The ``[imkp]`` section: the directory of mapping files served by name."""
    if not parser.has_section("imkp"):
        return config
    unknown = set(parser["imkp"]) - {"mappings"}
    if unknown:
        raise HedgeError(f"{file}: [imkp] unknown key(s) {sorted(unknown)}, expected "
                         "['mappings']")
    directory = parser["imkp"].get("mappings", "").strip()
    if directory:
        check_directory(directory, f"{file}: [imkp] mappings")
    return replace(config, imkp_mappings=directory)


def load_settings(path: str | Path | None) -> tuple[ServerConfig, str | None]:
    """(config without the token, token file path) from a settings file (None: defaults)."""
    config = ServerConfig()
    if path is None:
        return config, None
    file = Path(path)
    parser = configparser.ConfigParser(inline_comment_prefixes=("#", ";"))
    try:
        with file.open(encoding="utf-8") as handle:
            parser.read_file(handle)
    except OSError as exc:
        raise HedgeError(f"{file}: cannot read the settings file: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise HedgeError(f"{file}: byte {exc.start}: not UTF-8 text, expected a settings file "
                         "like conf/hedge.ini") from None
    except configparser.Error as exc:
        raise HedgeError(f"{file}: not a valid settings file: {exc.message}") from None
    for section in parser.sections():
        if section not in ("server", "limits", "cluster", "imkp") \
                and not section.startswith("policy."):
            raise HedgeError(f"{file}: unknown section [{section}], expected [server], "
                             "[limits], [cluster], [imkp] or [policy.<name>]")
    server = parser["server"] if parser.has_section("server") else {}
    unknown = set(server) - _SERVER_KEYS
    if unknown:
        raise HedgeError(f"{file}: [server] unknown key(s) {sorted(unknown)}, expected "
                         f"{sorted(_SERVER_KEYS)}")
    if server.get("address"):
        host, port = parse_address(server["address"], f"{file}: [server] address")
        config = replace(config, host=host, port=port)
    limits = Limits()
    if parser.has_section("limits"):
        kinds = {"max_sessions": int, "max_rows": int, "max_nodes": int, "max_copies": int,
                 "idle_timeout": float}
        unknown = set(parser["limits"]) - set(kinds) - set(_CONNECTION_LIMITS)
        if unknown:
            raise HedgeError(f"{file}: [limits] unknown key(s) {sorted(unknown)}, expected "
                             f"{sorted({*kinds, *_CONNECTION_LIMITS})}")
        limits = Limits(**{k: _number(parser, file, "limits", k, kind, getattr(limits, k))
                           for k, kind in kinds.items()})
        config = replace(config, **{
            key: kind(_number(parser, file, "limits", key, kind, getattr(config, key), low,
                              high, unit))
            for key, (kind, low, high, unit) in _CONNECTION_LIMITS.items()})
    allowed = tuple(p.strip() for p in server.get("allowed_policies", "").split(",")
                    if p.strip())
    config = replace(
        config,
        data_port=int(_number(parser, file, "server", "data_port", int, 0, 0, 65535,
                              "a port")),
        policy=server.get("policy", config.policy).strip() or config.policy,
        allowed_policies=allowed,
        metrics_interval=_number(parser, file, "server", "metrics_interval", float, 60.0),
        nodes_status=server.get("nodes_status", "").strip(),
        metrics_address=_metrics_address(server, file),
        limits=limits,
    )
    config = _tls_settings(server, file, config)
    config = _cluster_settings(parser, file, config)
    config = _imkp_settings(parser, file, config)
    defaults = {section.removeprefix("policy."): dict(parser[section])
                for section in parser.sections() if section.startswith("policy.")}
    for name, raw in defaults.items():
        _check_policy_section(file, name, raw)
    config = replace(config, policy_defaults=defaults)
    return config, (server.get("token_file", "").strip() or None)


def _tls_settings(server, file: Path, config: ServerConfig) -> ServerConfig:  # noqa: ANN001
    """``[server] tls_cert`` and ``tls_key``: both or neither; each a readable PEM file."""
    cert = server.get("tls_cert", "").strip()
    key = server.get("tls_key", "").strip()
    if bool(cert) != bool(key):
        given, missing = ("tls_cert", "tls_key") if cert else ("tls_key", "tls_cert")
        raise HedgeError(f"{file}: [server] {given} is set but {missing} is not: TLS needs the "
                         "certificate (tls_cert) and its private key (tls_key), or neither")
    if cert:
        server_tls_context(cert, key, f"{file}: [server]")
    return replace(config, tls_cert=cert, tls_key=key)


def _metrics_address(server, file: Path) -> tuple[str, int] | None:  # noqa: ANN001
    """``[server] metrics_address``: host:port of /metrics and /health; empty: off."""
    text = server.get("metrics_address", "").strip()
    return parse_address(text, f"{file}: [server] metrics_address") if text else None


def _check_policy_section(file: Path, name: str, raw: dict[str, str]) -> None:
    """A ``[policy.<name>]`` section names a policy and parameters it accepts, with values
    it can be built with (a job of that policy would otherwise be refused, or fail scans)."""
    from hedge.policy import create

    where = f"{file}: [policy.{name}]"
    if name not in available():
        raise HedgeError(f"{where}: unknown policy '{name}', expected one of: "
                         f"{', '.join(available())}")
    try:
        create(name, **policy_params(name, raw))
    except HedgeError as exc:
        raise HedgeError(f"{where}: {exc}") from None


def check_config(config: ServerConfig) -> list[str]:
    """Problems that would stop the server or its sessions (HedgeError on the first)."""
    names = available()
    for name in (config.policy, *config.allowed_policies):
        if name not in names:
            raise HedgeError(f"policy '{name}': unknown, expected one of: {', '.join(names)}")
    if config.allowed_policies and config.policy not in config.allowed_policies:
        raise HedgeError(f"default policy '{config.policy}' is not in allowed_policies")
    # build the default policy once with its configured parameters
    from hedge.policy import create
    create(config.policy, **policy_params(config.policy,
                                          config.policy_defaults.get(config.policy, {})))
    if not 0 < config.metrics_interval < math.inf:
        raise HedgeError(f"metrics interval = {config.metrics_interval}: expected seconds > 0")
    if config.nodes_status and not Path(config.nodes_status).is_file():
        raise HedgeError(f"nodes_status = {config.nodes_status}: file not found")
    if config.imkp_mappings:
        check_directory(config.imkp_mappings)
    if bool(config.tls_cert) != bool(config.tls_key):
        raise HedgeError("TLS needs both a certificate and its key ([server] tls_cert and "
                         "tls_key, or --tls-cert and --tls-key)")
    if config.tls_cert:
        server_tls_context(config.tls_cert, config.tls_key, "")
    return []
