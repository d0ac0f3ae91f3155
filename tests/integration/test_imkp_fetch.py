"""ImkpPartitioner fetching its mapping from a live `hedge serve` over Py4J (LocalJobRunner).

The job sets ``hedge.imkp.mapping.fetch=job.imkp`` and no ``hedge.imkp.mapping``; the mapping
lives in the server's ``--imkp-mappings`` directory, written there by ``hedge imkp build``.
Every map task fetches it once (the server logs one ``event=imkp_fetch`` per task), the
per-reducer outputs equal the loads the mapping predicts and the job run with the file, and
a refused name or a wrong token fails the job with the partitioner's message.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hedge import javaenv
from hedge.imkp.mapfile import read_mapping
from tests.integration.hadoop_job import require_java_side, run_wordcount
from tests.integration.plugin_support import REPO, ServeProcess, write_token
from tests.integration.test_imkp_wordcount import IMKP, assert_follows, run_failing, zipf_text

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REDUCERS = 4
MAP_TASKS = 3  # one input file each


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A running `hedge serve --imkp-mappings DIR` whose DIR holds job.imkp for in/."""
    require_java_side(javaenv.HADOOP_VERSIONS[-1])
    root = tmp_path_factory.mktemp("fetch")
    inputs = root / "in"
    inputs.mkdir()
    for i, exponent in enumerate((0.6, 1.0, 1.3)):
        (inputs / f"z{i}.txt").write_text(zipf_text(20_000, exponent, seed=i), encoding="utf-8")
    mappings = root / "mappings"
    mappings.mkdir()
    built = subprocess.run(
        [sys.executable, "-m", "hedge.cli", "imkp", "build", str(inputs), "--reducers",
         str(REDUCERS), "-o", str(mappings / "job.imkp"), "--no-progress"],
        capture_output=True, text=True, cwd=REPO, timeout=120)
    assert built.returncode == 0, built.stderr
    token = write_token(root / "token")
    serve = ServeProcess(token, root / "serve.log",
                         extra=("--imkp-mappings", str(mappings))).start()
    yield root, serve, token, read_mapping(mappings / "job.imkp")
    serve.stop()


def fetch_conf(serve: ServeProcess, token: Path, name: str = "job.imkp") -> list[str]:
    return ["-D", f"hedge.imkp.mapping.fetch={name}",
            "-D", f"hedge.controlplane.address=127.0.0.1:{serve.port}",
            "-D", f"hedge.controlplane.token.file={token}"]


def fetches(serve: ServeProcess) -> int:
    return serve.log.read_text().count("event=imkp_fetch name=job.imkp ")


@pytest.mark.parametrize("version", javaenv.HADOOP_VERSIONS)
def test_fetched_mapping_routes_like_the_file_once_per_map_task(served, version: str) -> None:
    root, serve, token, mapping = served
    require_java_side(version)
    before = fetches(serve)
    out = root / f"out-fetch-{version}"
    fetched = run_wordcount(version, root / "in", out, REDUCERS, IMKP, fetch_conf(serve, token))
    assert fetches(serve) - before == MAP_TASKS  # one fetch per task, none per record
    assert_follows(fetched, mapping)
    if version == javaenv.HADOOP_VERSIONS[-1]:
        from_file = run_wordcount(version, root / "in", root / "out-file", REDUCERS, IMKP,
                                  ["-D", f"hedge.imkp.mapping={root / 'mappings' / 'job.imkp'}"])
        assert fetched == from_file


def test_refused_name_and_wrong_token_fail_the_job_with_the_reason(served) -> None:
    root, serve, token, _ = served
    version = javaenv.HADOOP_VERSIONS[-1]
    log = run_failing(version, root, fetch_conf(serve, token, "../job.imkp"), REDUCERS)
    assert (f"hedge.imkp.mapping.fetch=../job.imkp: the control plane at 127.0.0.1:"
            f"{serve.port} refused it: mapping name '../job.imkp' refused: expected a plain "
            "file name") in log
    log = run_failing(version, root, fetch_conf(serve, token, "other.imkp"), REDUCERS)
    assert "refused it: mapping 'other.imkp' not found in the control plane's mappings" in log

    wrong = write_token(root / "wrong-token")
    log = run_failing(version, root, fetch_conf(serve, wrong), REDUCERS)
    assert (f"hedge.imkp.mapping.fetch=job.imkp: the control plane at 127.0.0.1:{serve.port} "
            f"refused the token in hedge.controlplane.token.file = {wrong}") in log
