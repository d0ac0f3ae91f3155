"""The shipped configuration snippets: every hedge property means something to the code."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

from hedge.server.session import policy_family, policy_params
from hedge.server.settings import check_config, load_settings

REPO = Path(__file__).resolve().parents[2]
SHIM = REPO / "java-shim" / "src" / "main" / "java"


def properties() -> dict[str, str]:
    root = ET.parse(REPO / "conf" / "mapred-site.xml").getroot()
    return {p.findtext("name"): p.findtext("value") for p in root.iter("property")}


def test_mapred_site_names_real_classes_and_valid_policy_parameters() -> None:
    props = properties()
    for key in ("yarn.app.mapreduce.am.job.speculator.class",
                "yarn.app.mapreduce.am.job.task.estimator.class",
                "mapreduce.job.partitioner.class"):
        source = SHIM / (props[key].replace(".", "/") + ".java")
        assert source.is_file(), (key, props[key])
    java_keys = (SHIM / "org/hedge/shim/HedgeConf.java").read_text()
    for key in props:
        if key.startswith("hedge.controlplane.") or key in ("hedge.policy", "hedge.deadline.ms",
                                                             "hedge.scan.interval.ms",
                                                             "hedge.caps.enforce"):
            assert f'"{key}"' in java_keys, key
    for policy in ("adaptive", "chronos-restart", "hedge-auto"):
        prefix = f"hedge.{policy_family(policy)}."
        raw = {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}
        assert raw, policy
        assert policy_params(policy, raw)  # raises on an unknown name or a bad value


def test_shipped_settings_file_checks_out(tmp_path: Path) -> None:
    config, token_file = load_settings(REPO / "conf" / "hedge.ini")
    assert token_file == "/etc/hedge/token"
    assert (config.port, config.data_port, config.policy) == (25334, 25335, "adaptive")
    check_config(replace(config, token="x" * 16))


def test_policy_family_vectors() -> None:
    """Every registered policy's parameter prefix, as the shim's HedgeConf.paramPrefix must
    compute it too (HedgeConfTest.java reads the same file)."""
    from hedge.policy import available
    from hedge.policy.base import policy_class

    rows = [line.split("\t") for line in (REPO / "tests" / "data" / "policy_family_vectors.tsv")
            .read_text().splitlines() if not line.startswith("#")]
    assert all(prefix == f"hedge.{policy_family(name)}." for name, prefix in rows)
    # hedge's own policies (a test may register one of its own meanwhile)
    shipped = [n for n in available() if policy_class(n).__module__.startswith("hedge.")]
    assert [name for name, _ in rows] == shipped
    assert dict(rows)["hedge-auto"] == "hedge.auto." and dict(rows)["fresh-rate"] == "hedge.fresh."
