"""Fixtures shared by the real-cluster tests: one mini YARN cluster per Hadoop version."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.integration.yarn_cluster import MiniYarn, require_cluster_side


@pytest.fixture(scope="session")
def yarn_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., MiniYarn]]:
    """``yarn_cluster(version, dfs=False)``: that cluster (with HDFS when dfs), started on
    first use, stopped at the end of the session (a start takes 25-40 s of the two cores)."""
    clusters: dict[tuple[str, bool], MiniYarn] = {}

    def get(version: str, dfs: bool = False) -> MiniYarn:
        require_cluster_side(version)
        if (version, dfs) not in clusters:
            name = f"yarn-{version}{'-dfs' if dfs else ''}"
            cluster = MiniYarn(version, tmp_path_factory.mktemp(name), dfs=dfs)
            clusters[version, dfs] = cluster.start()
        return clusters[version, dfs]

    yield get
    for cluster in clusters.values():
        cluster.stop()
