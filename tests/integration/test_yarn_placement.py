"""A copy that launches on the NodeManager of its original moves (``hedge.placement.move``,
off by default; ``org.hedge.shim.CopyPlacement``).

A stock MapReduce AM asks for a copy's container as for its original's, with no regard to
where the original runs (MAPREDUCE-7169), so a copy can land beside the attempt it is meant
to outrun. The shim kills such a copy as it launches, with rescheduling: the AM's next
attempt of the task asks for a container anywhere. On a cluster of one NodeManager every copy
lands beside its original, so the test knows what must happen: the straggler's copy is moved
``hedge.placement.max.moves`` (2) times, then left where it is (there is no other node), and
the job still ends well before its straggler would have. Whether a moved copy lands on
another node is up to the ResourceManager; the process cluster's test
(``test_process_cluster.py``, two NodeManagers on two hosts) checks the count hedge serve
keeps of where copies landed against the job's own record.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.integration.plugin_support import ServeProcess, write_token
from tests.integration.yarn_cluster import (
    MiniYarn,
    expected_output,
    hedge_settings,
    require_cluster_side,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.yarn]

VERSION = "3.4.1"


@pytest.fixture(scope="module")
def one_node(tmp_path_factory: pytest.TempPathFactory):
    require_cluster_side(VERSION)
    cluster = MiniYarn(VERSION, tmp_path_factory.mktemp("yarn-placement"),
                       nodemanagers=1).start()
    yield cluster
    cluster.stop()


def test_a_copy_beside_its_original_is_moved_then_left_there(
        one_node: MiniYarn, tmp_path: Path) -> None:
    token = write_token(tmp_path / "token")
    serve = ServeProcess(token, tmp_path / "serve.log", policy="none").start()
    try:
        settings = {**hedge_settings(serve.port, token, "hadoop"),
                    "hedge.placement.move": "true"}
        run = one_node.run_job(settings)
    finally:
        serve.stop()
    assert run.succeeded, run.client_log[-3000:]
    assert run.output == expected_output()
    log = run.am_log()
    moved = re.findall(r"hedge: copy attempt_\w+_m_000000_(\d+) launched on (\S+), the "
                       r"NodeManager of another attempt of its task: killed", log)
    # the copy (attempt 1) and the AM's next attempt in its place (2) were moved; the third
    # (3) launched beside the straggler again and was left there
    assert [int(attempt) for attempt, _ in moved] == [1, 2], log[-4000:]
    assert len({node for _, node in moved}) == 1
    assert ("copies moved off their original's NodeManager 2, left there after 2 moves 1"
            in log), log[-4000:]
    assert run.attempt_status(0, 1) == "KILLED" and run.attempt_status(0, 2) == "KILLED"
    assert run.attempt_status(0, 3) == "SUCCEEDED", run.summary["attempts"]
    # the job did not wait for its straggler: attempt 3 won above, and the whole job took
    # less than the straggler's own work (6 x 10 s). No tighter bound: two moves cost two
    # container starts, and on a loaded CI machine the job took 46 s
    assert run.seconds < 60, run.seconds
