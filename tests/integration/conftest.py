"""Fixtures shared by the real-cluster tests: one mini YARN cluster per Hadoop version."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.integration.yarn_cluster import MiniYarn, require_cluster_side


@pytest.fixture(scope="session")
def yarn_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], MiniYarn]]:
    """``yarn_cluster(version)``: that version's cluster, started on first use, stopped at
    the end of the session (starting one takes about 25 s of the two cores)."""
    clusters: dict[str, MiniYarn] = {}

    def get(version: str) -> MiniYarn:
        require_cluster_side(version)
        if version not in clusters:
            clusters[version] = MiniYarn(version, tmp_path_factory.mktemp(f"yarn-{version}"))
            clusters[version].start()
        return clusters[version]

    yield get
    for cluster in clusters.values():
        cluster.stop()
