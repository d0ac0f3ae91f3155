"""TLS between the shim and `hedge serve` (AM harness, Hadoop 2.7.3): a job over TLS gets its
straggler copied; every mismatch (plain client and TLS server, TLS client and plain server,
untrusted certificate) is one clear AM line and the fallback still copies the straggler."""

from __future__ import annotations

import pytest

from tests.integration.plugin_support import (
    ServeProcess,
    harness_args,
    require_harness,
    run_harness,
    write_token,
)
from tests.tls_support import make_certificate

pytestmark = [pytest.mark.integration, pytest.mark.slow]

JOB = ("--maps", "12", "--straggler", "5:4")


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    require_harness()
    folder = tmp_path_factory.mktemp("tls")
    cert, key = make_certificate(folder)
    token = write_token(folder / "token")
    serve = ServeProcess(token, folder / "serve.log", policy="static",
                         extra=("--tls-cert", str(cert), "--tls-key", str(key))).start()
    yield serve, token, cert, folder
    serve.stop()


def tls_conf(ca) -> dict[str, str]:  # noqa: ANN001
    return {"hedge.controlplane.tls": "true", "hedge.controlplane.tls.ca.file": str(ca)}


def assert_fell_back(run) -> None:  # noqa: ANN001
    done = run.done()
    assert done[0]["completed"] == "true" and int(done[0]["fallback_copies"]) >= 1, run.stdout
    assert 5 in [task for _, task in run.copies()]


def test_a_job_over_tls_gets_its_straggler_copied(tls_server) -> None:
    serve, token, cert, _ = tls_server
    run = run_harness(harness_args(f"127.0.0.1:{serve.port}", token, *JOB,
                                   conf=tls_conf(cert)))
    assert [task for _, task in run.copies()] == [5], run.stdout
    assert run.done()[0]["fallback_copies"] == "0"
    assert all(healthy for _, healthy in run.health())
    log = serve.log.read_text()
    assert "tls=on" in log and "event=decision" in log and "tasks=[5]" in log


def test_a_plain_client_is_refused_by_a_tls_server_and_falls_back(tls_server) -> None:
    serve, token, _, _ = tls_server
    run = run_harness(harness_args(f"127.0.0.1:{serve.port}", token, *JOB))
    assert_fell_back(run)
    assert run.stderr.count("unavailable (") == 1, run.stderr[-2000:]
    assert ("hedge serve refused the connection: this control plane requires TLS: set "
            "hedge.controlplane.tls=true") in run.stderr
    assert "wrong token" not in run.stderr
    assert "a plain (non-TLS) client on a TLS listener" in serve.log.read_text()


def test_a_tls_client_with_the_wrong_ca_fails_clearly(tls_server) -> None:
    serve, token, _, folder = tls_server
    other, _ = make_certificate(folder, "other-ca")
    run = run_harness(harness_args(f"127.0.0.1:{serve.port}", token, *JOB,
                                   conf=tls_conf(other)))
    assert_fell_back(run)
    assert run.stderr.count("unavailable (") == 1, run.stderr[-2000:]
    assert f"TLS handshake with hedge serve at 127.0.0.1:{serve.port} failed (" in run.stderr
    assert f"signed by a CA in hedge.controlplane.tls.ca.file = {other}" in run.stderr
    assert "TLS handshake failed" in serve.log.read_text()  # the server's side of it


def test_a_tls_client_against_a_plain_server_fails_clearly(tmp_path) -> None:
    require_harness()
    cert, _ = make_certificate(tmp_path)
    token = write_token(tmp_path / "token")
    serve = ServeProcess(token, tmp_path / "serve.log").start()
    try:
        run = run_harness(harness_args(f"127.0.0.1:{serve.port}", token, *JOB,
                                       conf=tls_conf(cert)))
    finally:
        serve.stop()
    assert_fell_back(run)
    assert "TLS handshake with hedge serve at" in run.stderr
    assert "must run with [server] tls_cert and tls_key" in run.stderr
    assert "a TLS client on a plain listener" in (tmp_path / "serve.log").read_text()
