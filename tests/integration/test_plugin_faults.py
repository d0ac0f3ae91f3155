"""Fail-safe: the AM harness keeps going when the control plane dies, stalls, lies or refuses.

Each job has a planted straggler (task 5, 4x slower). Whatever the fault, the job must
complete, the shim must switch to Hadoop-default speculation within one scan (the straggler is
still copied, by the fallback), and the outage must be logged once, not every scan.
"""

from __future__ import annotations

import os
import time

import pytest

from hedge.server import wire
from hedge.server.service import ControlPlaneService, ServerConfig
from tests.integration.plugin_support import (
    ServeProcess,
    harness_args,
    require_harness,
    run_harness,
    run_harness_with_pauses,
    write_token,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

JOB = ("--maps", "12", "--straggler", "5:4", "--work", "15")


@pytest.fixture()
def token(tmp_path):
    require_harness()
    return write_token(tmp_path / "token")


def assert_completed_with_fallback_copy(run) -> None:
    done = run.done()
    assert len(done) == 1 and done[0]["completed"] == "true", run.stdout[-1500:]
    assert int(done[0]["fallback_copies"]) >= 1
    assert 5 in [task for _, task in run.copies()]


def test_server_killed_mid_job_falls_back_within_one_scan(token, tmp_path) -> None:
    serve = ServeProcess(token, tmp_path / "serve.log").start()
    try:
        run = run_harness_with_pauses(
            harness_args(f"127.0.0.1:{serve.port}", token, *JOB, "--pause-at", "2"),
            on_pause=lambda t: serve.kill())
    finally:
        serve.stop()
    assert run.health()[0] == (1.0, True)
    assert (3.0, False) in run.health()  # the first scan after the kill
    assert_completed_with_fallback_copy(run)
    assert run.stderr.count("unavailable (") == 1, run.stderr[-2000:]


def test_server_restarted_mid_job_is_reconnected(token, tmp_path) -> None:
    serve = ServeProcess(token, tmp_path / "serve.log").start()
    ports = (serve.port, serve.data_port)

    def on_pause(t: int) -> None:
        if t == 2:
            serve.kill()
        else:  # same ports, as an operator's restart would keep them
            serve.port, serve.data_port = ports
            serve.start()

    try:
        run = run_harness_with_pauses(
            harness_args(f"127.0.0.1:{serve.port}", token, *JOB, "--pause-at", "2",
                         "--pause-at", "8"), on_pause)
    finally:
        serve.stop()
    health = run.health()
    assert health[:2] == [(1.0, True), (3.0, False)], health
    back = [t for t, healthy in health[2:] if healthy]
    assert back and 9.0 <= back[0] <= 12.0, health  # back-off max is 2 s in these tests
    assert "is back" in run.stderr
    assert run.done()[0]["completed"] == "true"
    assert [task for _, task in run.copies()] == [5]  # by hedge (straggler seen after restart)
    assert "event=open session=1 " in (tmp_path / "serve.log").read_text()


class FaultyService(ControlPlaneService):
    """A real control plane whose scan answers are slow or broken."""

    def __init__(self, token: str, fault: str) -> None:
        super().__init__(ServerConfig(port=0, token=token, policy="static"))
        self.fault = fault

    def answer(self, session, header, body):
        seq = wire.REQUEST.unpack_from(header)[3]
        if self.fault == "slow":
            time.sleep(0.5)
            return super().answer(session, header, body)
        if self.fault == "garbage":
            return os.urandom(64)
        # well-formed frame, impossible content: a task index outside the job
        from hedge.model import Actions
        return wire.encode_response(seq, Actions(speculate_task=[999]))


@pytest.mark.parametrize("fault", ["slow", "garbage", "out-of-range"])
def test_slow_or_invalid_answers_fall_back(token, fault) -> None:
    service = FaultyService(token.read_text().strip(), fault)
    service.start()
    try:
        run = run_harness(harness_args(f"127.0.0.1:{service.port}", token, *JOB,
                                       conf={"hedge.controlplane.deadline.ms": "200",
                                             "hedge.controlplane.backoff.initial.ms": "5000",
                                             "hedge.controlplane.backoff.max.ms": "5000"}))
    finally:
        service.stop()
    assert run.health()[0][1] is False or (2.0, False) in run.health(), run.health()
    assert_completed_with_fallback_copy(run)
    assert run.stderr.count("unavailable (") == 1, run.stderr[-2000:]
    if fault == "slow":
        assert "200 ms deadline" in run.stderr, run.stderr[-1500:]


def test_wrong_token_is_refused(token, tmp_path) -> None:
    service = ControlPlaneService(ServerConfig(port=0, token="the-right-token-0123456789",
                                               policy="static"))
    service.start()
    try:
        run = run_harness(harness_args(f"127.0.0.1:{service.port}", token, *JOB))
    finally:
        service.stop()
    assert len(service.sessions) == 0 and service.metrics.opened == 0
    assert all(not healthy for _, healthy in run.health())
    assert_completed_with_fallback_copy(run)


def test_chronos_resume_is_refused_with_the_reason(token) -> None:
    service = ControlPlaneService(ServerConfig(port=0, token=token.read_text().strip(),
                                               policy="static"))
    service.start()
    try:
        run = run_harness(harness_args(f"127.0.0.1:{service.port}", token, *JOB,
                                       conf={"hedge.policy": "chronos-resume"}))
    finally:
        service.stop()
    assert "control plane refused job" in run.stderr
    reason = run.stderr.split("control plane refused job", 1)[1].splitlines()[0]
    assert "chronos-resume" in reason
    assert "cannot drive a live ApplicationMaster" in reason and "partial" in reason, reason
    assert_completed_with_fallback_copy(run)


class KillingService(ControlPlaneService):
    """A control plane whose 'policy' copies task 5, then retires its original attempt once:
    with a copy of task 5 in the same answer (a restart: the AM's new attempt is that copy)
    when ``restart``, else alone."""

    def __init__(self, token: str, restart: bool) -> None:
        super().__init__(ServerConfig(port=0, token=token, policy="static"))
        self.restart = restart
        self.attempts_of_5: list[int] = []
        self.killed = False

    def answer(self, session, header, body):
        from hedge.model import Actions

        request = wire.decode_request(header, body)
        session._merge(request)
        session._update_nodes(request)
        a = session.snapshot(request).attempts
        mine = a.task == 5
        self.attempts_of_5.append(int(mine.sum()))
        if mine.sum() >= 2 and not self.killed:
            self.killed = True
            original = a.attempt[mine & ~a.speculative]
            actions = Actions(speculate_task=[5] if self.restart else [], kill_attempt=original)
        elif len(self.attempts_of_5) == 3:
            actions = Actions(speculate_task=[5])
        else:
            actions = Actions()
        return wire.encode_response(request.seq, actions)


def killing_run(token, restart: bool):
    service = KillingService(token.read_text().strip(), restart)
    service.start()
    try:
        return service, run_harness(harness_args(f"127.0.0.1:{service.port}", token, *JOB))
    finally:
        service.stop()


def test_a_kill_with_a_copy_is_sent_alone_and_the_ams_new_attempt_is_the_copy(token) -> None:
    service, run = killing_run(token, restart=True)
    kills = [line for line in run.lines if line.startswith("KILL ")]
    assert len(kills) == 1 and kills[0].endswith("_m_000005_0"), run.stdout[-1500:]
    # the AM (here its harness, as TaskImpl does) starts the new attempt; the shim asks for
    # no copy besides: one COPY line (the first copy), one RESTART
    assert [line.split()[0] for line in run.lines
            if line.startswith(("COPY ", "RESTART ")) and line.endswith("task=5")] == \
        ["COPY", "RESTART"], run.stdout[-1500:]
    assert run.done()[0]["completed"] == "true" and run.done()[0]["kills"] == "1"
    # two attempts while both ran, then Hadoop's state (KILLED, no event) dropped the original
    assert 2 in service.attempts_of_5


def test_a_lone_kill_is_held_since_the_am_would_restart_the_attempt(token) -> None:
    service, run = killing_run(token, restart=False)
    assert not [line for line in run.lines if line.startswith(("KILL ", "RESTART "))]
    assert run.done()[0]["completed"] == "true" and run.done()[0]["kills"] == "0"
    assert "held" in run.stderr + run.stdout, (run.stderr + run.stdout)[-1500:]
