"""hedge's speculator inside a real MRAppMaster on a real YARN cluster (MiniMRYarnCluster).

Each job has an injected straggler (attempt 0 of map 0 works 20x slower while reporting
progress). A ResourceManager, two NodeManagers and a JobHistoryServer run the job; the AM and
every task are container JVMs; a real ``hedge serve`` decides. For each policy the job's own
counters, completion events, AM log and the server's decision log must show that hedge (not
the fallback) copied the straggler, the copy won, the straggler was killed, the output is the
same as with speculation off and the job ended well before the straggler would have.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hedge.traces import read_attempts
from tests.integration.plugin_support import ServeProcess, write_token
from tests.integration.yarn_cluster import (
    CLUSTER_VERSIONS,
    JobRun,
    MiniYarn,
    expected_output,
    hedge_settings,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.yarn]

# Policies each Hadoop version runs: every policy on the newest, the default rule on the other.
POLICIES = {"3.4.1": ("hadoop", "late", "adaptive"), "3.3.6": ("hadoop",)}
MATRIX = [(v, p) for v in CLUSTER_VERSIONS for p in POLICIES[v]]
# "Well before the straggler would have": at most this share of the job time without copies.
WELL_BEFORE = 0.75


@pytest.fixture(scope="module")
def token(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_token(tmp_path_factory.mktemp("token") / "token")


def serving(token: Path, tmp_path_factory: pytest.TempPathFactory, name: str,
            extra: tuple[str, ...] = ()):
    """A `hedge serve` for a module's jobs; each job names its policy (hedge.policy)."""
    server = ServeProcess(token, tmp_path_factory.mktemp(name) / "serve.log",
                          policy="none", extra=extra).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def serve(token: Path, tmp_path_factory: pytest.TempPathFactory):
    yield from serving(token, tmp_path_factory, "serve")


@pytest.fixture(scope="module")
def baselines(yarn_cluster) -> dict[str, JobRun]:
    """Per version, the same job with speculation off (run once, on first use)."""
    runs: dict[str, JobRun] = {}

    class Lazy(dict):
        def __missing__(self, version: str) -> JobRun:
            run = yarn_cluster(version).run_job({"mapreduce.map.speculative": "false"})
            runs[version] = run
            self[version] = run
            return run

    return Lazy()


def decisions(serve: ServeProcess, job_id: str) -> list[str]:
    """The server's decision lines for one job."""
    return [line for line in serve.log.read_text().splitlines()
            if "event=decision" in line and f"job={job_id} " in line]


def assert_no_fallback_in_am(run: JobRun, port: int, policy: str) -> None:
    log = run.am_log()
    assert f"control plane 127.0.0.1:{port}, policy {policy}" in log, log[-3000:]
    for symptom in ("not usable", "refused job", "unavailable (", "Hadoop-default speculation"):
        assert symptom not in log, f"AM log says {symptom!r}"


@pytest.mark.parametrize("version", CLUSTER_VERSIONS)
def test_without_speculation_the_straggler_decides_the_job_time(yarn_cluster, baselines,
                                                                version: str) -> None:
    run = baselines[version]
    assert run.succeeded, run.client_log[-3000:]
    assert run.output == expected_output()
    assert run.counter("TOTAL_LAUNCHED_MAPS") == 4
    assert run.seconds > 55, "the straggler works 60 s; the job cannot end before it"


@pytest.mark.parametrize(("version", "policy"), MATRIX)
def test_hedge_copies_the_straggler_in_a_real_application_master(
        yarn_cluster, serve, token, baselines, version: str, policy: str) -> None:
    cluster: MiniYarn = yarn_cluster(version)
    run = cluster.run_job(hedge_settings(serve.port, token, policy))
    assert run.succeeded, run.client_log[-3000:]

    # hedge decided the copy: the server's decision log names map 0, the AM never fell back.
    # A policy may also copy a peer, alone or in the same decision (LATE flagged map 3 once
    # while its JVM was still starting; adaptive once decided tasks=[0,3]).
    lines = decisions(serve, run.job_id)
    decided = [re.search(r"tasks=\[([\d,]+)\] copies=(\d+) ", line) for line in lines]
    assert lines and all(decided), lines
    assert 0 in {int(task) for m in decided for task in m[1].split(",")}, lines
    assert_no_fallback_in_am(run, serve.port, policy)
    ((sent, fallback),) = run.speculator_totals()
    # a copy for a task that has finished by the time it is applied is not sent
    assert fallback == 0 and 1 <= sent <= sum(int(m[2]) for m in decided)

    # the copy (attempt 1) won; the straggler (attempt 0) was killed, by the job's own record
    assert run.attempt_status(0, 1) == "SUCCEEDED"
    assert 4 < run.counter("TOTAL_LAUNCHED_MAPS") <= 4 + sent
    assert run.counter("NUM_KILLED_MAPS") >= 1
    history = cluster.history_file(run.job_id)
    attempts = read_attempts(history).to_pylist()
    straggler = [a for a in attempts if a["attempt"].endswith("_m_000000_0")]
    assert [a["state"] for a in straggler] == ["KILLED"]

    # same output as without speculation, well before the straggler would have ended
    baseline = baselines[version]
    assert run.output == baseline.output == expected_output()
    assert run.seconds < WELL_BEFORE * baseline.seconds, (run.seconds, baseline.seconds)


@pytest.mark.parametrize("version", CLUSTER_VERSIONS)
def test_policy_none_launches_no_copy(yarn_cluster, serve, token, version: str) -> None:
    run = yarn_cluster(version).run_job(hedge_settings(serve.port, token, "none"))
    assert run.succeeded, run.client_log[-3000:]
    assert decisions(serve, run.job_id) == []
    assert_no_fallback_in_am(run, serve.port, "none")
    assert run.speculator_totals() == [(0, 0)]
    assert run.counter("TOTAL_LAUNCHED_MAPS") == 4
    assert run.output == expected_output()
    assert re.search(rf"event=open session=\d+ job={run.job_id} policy=none ",
                     serve.log.read_text())


@pytest.fixture(scope="module")
def tls_serve(token: Path, tmp_path_factory: pytest.TempPathFactory):
    """A `hedge serve` that takes TLS only, its certificate made for 127.0.0.1 (openssl)."""
    from tests.tls_support import make_certificate

    folder = tmp_path_factory.mktemp("tls-serve")
    cert, key = make_certificate(folder)
    server = ServeProcess(token, folder / "serve.log", policy="none",
                          extra=("--tls-cert", str(cert), "--tls-key", str(key))).start()
    yield server, cert
    server.stop()


def test_a_real_job_over_tls_gets_its_straggler_copied_by_hedge(yarn_cluster, tls_serve,
                                                                  token) -> None:
    serve, cert = tls_serve
    settings = {**hedge_settings(serve.port, token, "hadoop"),
                "hedge.controlplane.tls": "true", "hedge.controlplane.tls.ca.file": str(cert)}
    run = yarn_cluster("3.4.1").run_job(settings)
    assert run.succeeded, run.client_log[-3000:]
    assert "tls=on" in serve.log.read_text()
    lines = decisions(serve, run.job_id)
    assert any(re.search(r"tasks=\[[\d,]*\b0\b", line) for line in lines), lines
    # A fresh AM JVM's first TLS handshake (class loading, key exchange) while the AM starts
    # took over the 1 s deadline here once: a scan before any task ran went to the fallback,
    # the next one found hedge serve back. More than that would be a real failure.
    log = run.am_log()
    assert f"control plane 127.0.0.1:{serve.port}, policy hadoop" in log, log[-3000:]
    assert log.count("unavailable (") <= 1 and "not usable" not in log, log[-3000:]
    assert log.count("unavailable (") == log.count(" is back;")
    ((sent, fallback),) = run.speculator_totals()
    assert fallback == 0 and sent >= 1
    assert run.attempt_status(0, 1) == "SUCCEEDED"
    assert run.output == expected_output()


# hedge-auto judges a task type from the job's own tasks only when it has six or more of them
# (fewer lean on what the cluster's other jobs pooled, pool_small): its jobs here have eight
# maps. Its belief about whether copies pay is the cluster's (pool_races: one per hedge
# serve), so it gets a server of its own, and what one job teaches the next is part of the
# test.
AUTO_MAPS = 8
# the first hedge-auto job's straggler: 120 s of work, 40 records of 75 ms at 40x (its
# peers: 3 s)
STRAGGLER_120S = {"hedge.test.records": "40", "hedge.test.record.ms": "75",
                  "hedge.test.straggler.slowdown": "40"}


def no_copy_reasons(serve: ServeProcess) -> list[str]:
    """hedge-auto's last reasons not to copy (its server logs them at debug level)."""
    return [line for line in serve.log.read_text().splitlines()
            if "hedge.policy.auto no copy" in line][-40:]


@pytest.fixture(scope="module")
def auto_serve(token: Path, tmp_path_factory: pytest.TempPathFactory):
    # at debug level the server's log has hedge-auto's reason for every copy it did not make
    yield from serving(token, tmp_path_factory, "auto-serve", ("--log-level", "DEBUG"))


def map_attempts(cluster: MiniYarn, run: JobRun, task: int) -> dict[int, str]:
    """Attempt number -> final state of one map task's attempts, from the job's .jhist."""
    suffix = f"_m_{task:06d}_"
    return {int(a["attempt"].rsplit("_", 1)[1]): a["state"]
            for a in read_attempts(cluster.history_file(run.job_id)).to_pylist()
            if suffix in a["attempt"]}


def speculator_line(run: JobRun) -> str:
    match = re.search(r"hedge: speculator stopped; .*", run.am_log())
    assert match, run.am_log()[-3000:]
    return match[0]


# No scan may fall back (assert_no_fallback_in_am): in a clean clone this holds only because
# hedge serve's warm-up runs hedge-auto through a session too (hedge.server.simulated_am); the
# simulator's warm-up alone left the first judge to compile, past the 1 s deadline.
def test_hedge_auto_copies_a_straggler_then_replaces_a_copy_as_slow_as_its_original(
        yarn_cluster, auto_serve, token) -> None:
    cluster: MiniYarn = yarn_cluster("3.4.1")
    settings = {**hedge_settings(auto_serve.port, token, "hedge-auto"),
                "hedge.test.maps": str(AUTO_MAPS)}

    # 1. A slow original: one copy, which wins (and teaches the cluster that copies pay).
    # The straggler works 40x its peers' 3 s (120 s, in steps of 3 s). hedge-auto weighs a
    # copy against the type's median run time, JVM start-up included: on a loaded 2-core
    # machine the peers took 37-42 s, so a 60 s straggler looked under 3x slower and, with
    # half its slowness taken as its own work (the prior), a copy was not worth its slot
    # (benefit 7.3 s, cost 8.2 s): right for the policy, no test of the copy path.
    first = cluster.run_job({**settings, **STRAGGLER_120S})
    assert first.succeeded, first.client_log[-3000:]
    assert_no_fallback_in_am(first, auto_serve.port, "hedge-auto")
    lines = decisions(auto_serve, first.job_id)
    assert any(re.search(r"tasks=\[0\] copies=1 ", line) for line in lines), (
        lines, no_copy_reasons(auto_serve))
    assert map_attempts(cluster, first, 0) == {0: "KILLED", 1: "SUCCEEDED"}
    assert first.counter("TOTAL_LAUNCHED_MAPS") == AUTO_MAPS + 1
    assert first.output == expected_output(AUTO_MAPS, records=40)
    # without a copy that wins the job cannot end before its original's 120 s of work (no
    # tighter bound: the attempts above show the copy won, and a loaded CI machine adds
    # container starts' worth of seconds; test_yarn_placement's 0.75x bound failed so)
    assert first.seconds < 120, first.seconds

    # 2. The copy is as slow as its original (attempts 0 and 1 both work 10x slower: 100 s
    # each, in steps of 5 s): hedge-auto judges the race again and answers with a new copy
    # and a kill of the copy that would end later (recopy). The AM starts a new attempt in
    # place of every attempt it kills, so the shim sends the kill alone and that new attempt is
    # the copy: one attempt more, not two.
    slow = {"hedge.test.straggler.attempts": "2", "hedge.test.straggler.slowdown": "10",
            "hedge.test.records": "20", "hedge.test.record.ms": "500"}
    second = cluster.run_job({**settings, **slow})
    assert second.succeeded, second.client_log[-3000:]
    assert_no_fallback_in_am(second, auto_serve.port, "hedge-auto")
    lines = decisions(auto_serve, second.job_id)
    recopies = [line for line in lines if re.search(r"tasks=\[0\] copies=1 kills=\[\d+\]", line)]
    assert len(recopies) == 1, (lines, no_copy_reasons(auto_serve))
    assert map_attempts(cluster, second, 0) == {0: "KILLED", 1: "KILLED", 2: "SUCCEEDED"}
    assert second.counter("TOTAL_LAUNCHED_MAPS") == AUTO_MAPS + 2
    assert re.search(r"copies 2 \(fallback 0\), kills 1 \(held 0\)", speculator_line(second))
    assert second.output == expected_output(AUTO_MAPS, records=20)
    # without a copy that wins the job cannot end before its original's 100 s of work
    assert second.seconds < 100, second.seconds


def test_window_learns_every_finished_task_and_its_node_from_the_shim(
        yarn_cluster, serve, token) -> None:
    """window plans from the job's finished tasks and the nodes they ran on
    (``JobFacts.finished``). It sleeps until a completion, then scans only at its windows'
    ends, so an attempt can start and end between two of its scans: the shim sends every
    ended attempt with its task and node (wire version 3), and the server's close line counts
    the finished tasks it learned. Maps 1-3 end within seconds, long before the AM's last
    scan: the server learns all three, each with its node. (Map 0 and the reduce may end
    after the AM's last scan, and a close line cannot count those: seen 3. window copied
    nothing here: it plans on the free slots hedge serve counts from the RM's REST API, which
    MiniYARN does not serve; test_process_cluster.py shows it copying on a real RM.)"""
    # the job's map container travels with its parameters (the slot size hedge serve would
    # count an RM's free capacity in); 1,024 MB is MapReduce's default, set here to be sent
    settings = {**hedge_settings(serve.port, token, "window"), "mapreduce.map.memory.mb": "1024"}
    run = yarn_cluster("3.4.1").run_job(settings)
    assert run.succeeded, run.client_log[-3000:]
    assert_no_fallback_in_am(run, serve.port, "window")
    assert re.search(rf"event=open session=\d+ job={run.job_id} policy=window .* "
                     r"container=1024MBx1\b", serve.log.read_text())
    close = re.search(rf"event=close session=\d+ job={run.job_id} .* finished=(\d+) "
                      r"finished_node_unknown=(\d+)", serve.log.read_text())
    assert close, serve.log.read_text()[-3000:]
    assert int(close[1]) >= 3 and int(close[2]) == 0, close[0]
    assert run.output == expected_output()
