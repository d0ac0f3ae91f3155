"""``hedge serve``: run the control plane the Java shim talks to (``--check``: verify only)."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from dataclasses import replace

import click

from hedge.errors import HedgeError

# the settings (and through them the service, the policies and numpy) are imported by the
# command: `hedge serve --help` needs none of them

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def _check_cluster(config) -> str:
    """The ``[cluster]`` line of ``--check``: settings and one probe of the ResourceManager.

    An unreachable RM is a warning, not an error: the server runs without utilisation (the
    adaptive rule's resource term then counts as 0) until the RM answers.
    """
    from hedge.server.utilisation import RM_FROM_JOBS, RM_OFF, UtilisationPoller

    if config.resourcemanager == RM_OFF:
        return "cluster utilisation: off ([cluster] resourcemanager = off)"
    if config.resourcemanager == RM_FROM_JOBS:
        return ("cluster utilisation: from the ResourceManager each job's AM names (no "
                "[cluster] resourcemanager), polled once a job names it")

    poller = UtilisationPoller(config.resourcemanager, config.rm_poll_interval,
                               config.rm_max_age)
    head = (f"cluster utilisation: {poller.url} every {config.rm_poll_interval:g} s, "
            f"max age {config.rm_max_age:g} s")
    try:
        record = poller.fetch()
    except HedgeError as exc:
        click.echo(f"hedge: warning: resourcemanager not answering now: {exc}", err=True)
        return f"{head}: not reachable now (the server starts anyway)"
    mb, vcores = config.rm_container
    total, free = record.slots(mb, vcores)
    return (f"{head}: {record.running} RUNNING node(s), {record.measured} of them "
            f"with measured utilisation (others: allocation); slots of {mb} MB and {vcores} "
            f"vcore(s): {free} free of {total}")


def _check_metrics(config) -> str:
    """The ``metrics_address`` line of ``--check``: off, or free to listen on now."""
    if config.metrics_address is None:
        return "metrics endpoint: off (no [server] metrics_address)"
    from hedge.server.endpoint import check_bindable

    check_bindable(config.metrics_address)
    host, port = config.metrics_address
    return f"metrics endpoint: http://{host}:{port}/metrics and /health (port free now)"


def _check_imkp(config) -> str:
    """The ``[imkp]`` line of ``--check``: the mappings directory and what it serves now."""
    if not config.imkp_mappings:
        return "imkp mappings: off (no [imkp] mappings)"
    from hedge.server.mappings import MappingDirectory

    served = MappingDirectory(config.imkp_mappings)
    names = served.names()
    shown = ", ".join(names[:5]) + (f", +{len(names) - 5}" if len(names) > 5 else "")
    return (f"imkp mappings: {served.directory} ({len(names)} mapping file(s)"
            f"{': ' + shown if names else ''})")


@click.command("serve")
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Settings file (conf/hedge.ini format).")
@click.option("--address", help="host:port of the Py4J endpoint [127.0.0.1:25334].")
@click.option("--data-port", type=click.IntRange(0, 65535),
              help="Port of the scan data channel [any free].")
@click.option("--token-file", type=click.Path(dir_okay=False),
              help="File holding the shared auth token (required).")
@click.option("--policy", help="Default policy for jobs that do not name one [adaptive].")
@click.option("--metrics-interval", type=float, help="Seconds between metrics lines [60].")
@click.option("--imkp-mappings", type=click.Path(file_okay=False),
              help="Directory of ImKP mapping files map tasks may fetch by name [off].")
@click.option("--tls-cert", type=click.Path(dir_okay=False),
              help="PEM certificate: both channels speak TLS only (with --tls-key) [off].")
@click.option("--tls-key", type=click.Path(dir_okay=False),
              help="PEM private key of --tls-cert, without a passphrase.")
@click.option("--metrics-address",
              help="host:port of HTTP /metrics (Prometheus) and /health [off].")
@click.option("--check", is_flag=True, help="Verify the configuration and token, then exit.")
@click.option("--log-level", default="INFO", show_default=True,
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]))
def serve(config_file: str | None, address: str | None, data_port: int | None,
          token_file: str | None, policy: str | None, metrics_interval: float | None,
          imkp_mappings: str | None, tls_cert: str | None, tls_key: str | None,
          metrics_address: str | None, check: bool, log_level: str) -> None:
    """Serve speculation decisions to MapReduce ApplicationMasters (one session per job)."""
    from hedge.server.settings import (
        check_config,
        load_settings,
        parse_address,
        read_token,
        token_warnings,
    )

    config, file_token = load_settings(config_file)
    if address:
        host, port = parse_address(address, "--address")
        config = replace(config, host=host, port=port)
    if data_port is not None:
        config = replace(config, data_port=data_port)
    if policy:
        config = replace(config, policy=policy)
    if metrics_interval is not None:
        config = replace(config, metrics_interval=metrics_interval)
    if imkp_mappings is not None:
        config = replace(config, imkp_mappings=imkp_mappings)
    if metrics_address is not None:
        config = replace(config, metrics_address=parse_address(
            metrics_address, "--metrics-address") if metrics_address.strip() else None)
    if tls_cert is not None or tls_key is not None:
        config = replace(config, tls_cert=tls_cert or "", tls_key=tls_key or "")
    token_path = token_file or file_token
    if token_path is None:
        raise HedgeError("no token file: pass --token-file or set [server] token_file (the "
                         "control plane refuses to run without authentication)")
    config = replace(config, token=read_token(token_path))
    check_config(config)
    if check:
        for warning in token_warnings(token_path):
            click.echo(f"hedge: warning: {warning}", err=True)
        click.echo(f"config OK: py4j {config.host}:{config.port}, data port "
                   f"{config.data_port or 'any'}, policy {config.policy} "
                   f"{config.policy_defaults.get(config.policy) or ''}".rstrip())
        click.echo(_check_cluster(config))
        click.echo(_check_imkp(config))
        click.echo(_check_metrics(config))
        click.echo(f"tls: {config.tls_cert} (key {config.tls_key})" if config.tls_cert
                   else "tls: off (no [server] tls_cert; token and snapshots travel in clear)")
        return
    logging.basicConfig(level=log_level, format=LOG_FORMAT, stream=sys.stderr)
    # py4j logs every connection at INFO, numba every compiled function's bytecode at
    # DEBUG; keep the log about hedge's own events
    for noisy in ("py4j", "numba"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING,
                                              logging.getLevelName(log_level)))
    from hedge.server.service import ControlPlaneService

    service = ControlPlaneService(config)
    service.start()
    from hedge.server.warmup import warm_policies

    warm_policies()  # the policies' compiled code, before the first job's first scan
    # one machine-readable line on stdout: scripts and tests read the bound ports from it
    http = (f" metrics={config.metrics_address[0]}:{service.metrics_port}"
            if config.metrics_address else "")
    click.echo(f"hedge serve: listening py4j={config.host}:{service.port} "
               f"data={config.host}:{service.data_port}{http}", nl=True)
    sys.stdout.flush()
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    service.stop()
