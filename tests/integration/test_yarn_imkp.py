"""ImkpPartitioner on YARN with HDFS: MiniMRYarnCluster + MiniDFSCluster, real containers.

WordCount (no combiner: a reducer's input records are the word occurrences routed to it)
reads its input from HDFS and its mapping either from an ``hdfs://`` path or shipped with
``-files``. Each reducer's REDUCE_INPUT_RECORDS counter (from the job's history) must equal
the load the mapping predicts, every key must sit on its mapped reducer, and the counts must
equal HashPartitioner's.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from hedge.imkp.build import BuildSettings, build_to_file
from tests.integration.hadoop_job import read_reducer_outputs, tokenize
from tests.integration.test_imkp_wordcount import HASH, IMKP, assert_follows, zipf_text
from tests.integration.yarn_cluster import MiniYarn, reducer_input_records

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.yarn]

VERSION = "3.4.1"
REDUCERS = 4


@pytest.fixture(scope="module")
def job(yarn_cluster, tmp_path_factory: pytest.TempPathFactory):
    """The cluster with HDFS, the input and mapping uploaded, and the local copies."""
    cluster: MiniYarn = yarn_cluster(VERSION, dfs=True)
    local = tmp_path_factory.mktemp("imkp")
    (local / "in").mkdir()
    text = zipf_text(60_000, 1.1)
    (local / "in" / "z.txt").write_text(text, encoding="utf-8")
    mapping = build_to_file([str(local / "in")], BuildSettings(reducers=REDUCERS),
                            local / "job.imkp")
    cluster.fs("-mkdir", "-p", "/imkp/in")
    cluster.fs("-put", str(local / "in" / "z.txt"), "/imkp/in/z.txt")
    cluster.fs("-put", str(local / "job.imkp"), "/imkp/job.imkp")
    return cluster, local, mapping, text


def wordcount(cluster: MiniYarn, local: Path, name: str, partitioner: str,
              options: list[str]) -> tuple[dict[int, Counter], dict[int, int]]:
    """Run WordCount on YARN into /imkp/NAME; per-reducer outputs and input-record counters."""
    work = local / name
    work.mkdir()  # the client's folder: a -files link name must not resolve here by accident
    result = cluster.client("org.hedge.tools.WordCount",
                            [*options, "/imkp/in", f"/imkp/{name}", str(REDUCERS), partitioner],
                            cwd=work)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    job_id = re.search(r"Job (job_\d+_\d+) completed successfully", log)[1]
    cluster.fs("-get", f"/imkp/{name}", str(work / "out"))
    history = cluster.history_file(job_id)
    return read_reducer_outputs(work / "out", REDUCERS), reducer_input_records(history)


def test_mapping_from_an_hdfs_path(job) -> None:
    cluster, local, mapping, text = job
    uri = cluster.default_fs.rstrip("/") + "/imkp/job.imkp"
    assert uri.startswith("hdfs://")
    outputs, records = wordcount(cluster, local, "by-hdfs", IMKP,
                                 ["-D", f"hedge.imkp.mapping={uri}"])
    loads = assert_follows(outputs, mapping)
    assert [records[r] for r in range(REDUCERS)] == loads == mapping.loads.tolist()

    hashed, _ = wordcount(cluster, local, "by-hash", HASH, [])
    assert sum(outputs.values(), Counter()) == sum(hashed.values(), Counter()) \
        == Counter(tokenize(text))


def test_mapping_shipped_with_files(job) -> None:
    cluster, local, mapping, _ = job
    outputs, records = wordcount(cluster, local, "by-files", IMKP,
                                 ["-files", str(local / "job.imkp"),
                                  "-D", "hedge.imkp.mapping=job.imkp"])
    assert [records[r] for r in range(REDUCERS)] == assert_follows(outputs, mapping) \
        == mapping.loads.tolist()
