"""`hedge serve --metrics-address` as a process, driven by the real Java shim (AM harness):
/metrics counts what the AM saw, /health answers, and nothing listens after SIGTERM."""

from __future__ import annotations

import json
import re
import socket
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.plugin_support import (
    ServeProcess,
    harness_args,
    require_harness,
    run_harness,
    write_token,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def scrape(port: int) -> dict[tuple[str, str], float]:
    """/metrics samples by (name, policy label or "")."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    return {(s.name, s.labels.get("policy", "")): s.value
            for family in text_string_to_metric_families(text) for s in family.samples
            if not s.labels.keys() - {"policy"}}


def test_a_harness_job_moves_the_counters_by_what_the_am_saw(tmp_path) -> None:
    require_harness()
    token = write_token(tmp_path / "token")
    serve = ServeProcess(token, tmp_path / "serve.log", policy="static",
                         extra=("--metrics-address", "127.0.0.1:0")).start()
    try:
        port = int(re.search(r"metrics=[\d.]+:(\d+)", serve.listening).group(1))
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
            assert response.status == 200 and json.load(response)["status"] == "ok"
        before = scrape(port)
        assert before[("hedge_sessions_open", "")] == 0
        run = run_harness(harness_args(f"127.0.0.1:{serve.port}", token, "--maps", "12",
                                       "--straggler", "5:4"))
        done = run.done()[0]
        after = scrape(port)
    finally:
        serve.stop()
    assert [task for _, task in run.copies()] == [5] and done["fallback_copies"] == "0"
    scans = after[("hedge_scans_total", "static")]
    assert scans == after[("hedge_decision_latency_seconds_count", "static")] > 0
    assert after[("hedge_sessions_opened_total", "static")] == 1
    assert after[("hedge_sessions_open", "")] == 0  # the AM closed its session at the end
    assert after[("hedge_copies_requested_total", "static")] == int(done["copies"]) == 1
    assert after[("hedge_kills_requested_total", "static")] == int(done["kills"]) == 0
    assert after.get(("hedge_client_fallbacks_total", "static"), 0) == 0
    # the copy won (wire version 2 reports each ended attempt's final state); the original,
    # killed when its copy succeeded, is the job's wasted container time
    assert after[("hedge_copies_won_total", "static")] == 1
    assert after[("hedge_copies_lost_total", "static")] == 0
    wasted = after[("hedge_wasted_attempt_seconds_total", "static")]
    close = re.search(r"event=close .* copies_won=1 copies_lost=0 originals_lost=1 "
                      r"wasted_s=([\d.]+)", serve.log.read_text())
    assert wasted > 0 and close and float(close.group(1)) == pytest.approx(wasted, abs=0.05)
    assert "event=rejected" not in serve.log.read_text()  # every scan was answered
    with pytest.raises(ConnectionRefusedError):  # SIGTERM closed the endpoint with the rest
        socket.create_connection(("127.0.0.1", port), timeout=2)
