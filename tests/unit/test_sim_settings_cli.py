"""``hedge simulate`` with the user's own settings: ``--policy name:key=value``, ``-D`` and
``--conf`` (hedge.policy.params, hedge.policy.conf, applied through hedge.policy.limits)."""

from __future__ import annotations

import json

import pytest

from hedge.cli import main
from hedge.errors import HedgeError
from hedge.policy.conf import read_site_xml, user_settings
from hedge.policy.params import parse_policy_list, policy_params

SYNTH = "jobs=4,tasks=30,straggler_ratio=0.3"
BASE = ["simulate", "--synthetic", SYNTH, "--cluster", "nodes=10,slots=4", "--quiet"]


def run(tmp_path, capsys, *args: str) -> tuple[int, list[dict], str]:
    js = tmp_path / "t.json"
    code = main([*BASE, "--json", str(js), *args])
    captured = capsys.readouterr()
    rows = json.loads(js.read_text()) if code == 0 else []
    return code, rows, captured.err


def test_policy_parameters_reach_the_policy_and_name_the_row(tmp_path, capsys):
    code, rows, _ = run(tmp_path, capsys, "--policy", "static,static:factor=100")
    assert code == 0
    assert [r["policy"] for r in rows] == ["static", "static:factor=100"]
    assert rows[0]["copies_launched"] > 0  # the check below can fail
    assert rows[1]["copies_launched"] == 0  # nothing is 100 x slower than the rest


def test_the_same_names_as_a_jobs_configuration_with_aliases():
    assert parse_policy_list("none,adaptive:alpha=0.3,beta=0.2,hadoop") == [
        ("none", {}), ("adaptive", {"alpha": "0.3", "beta": "0.2"}), ("hadoop", {})]
    # hedge.adaptive.alpha in a job's configuration and adaptive:alpha=.. mean one parameter
    assert policy_params("adaptive", {"alpha": "0.3", "beta": "0.2"}) == policy_params(
        "adaptive", {"progress.weight": "0.3", "resource_weight": "0.2"}) == {
        "progress_weight": 0.3, "resource_weight": 0.2}


@pytest.mark.parametrize("spec, message", [
    ("adaptive:nonsense=1", "--policy adaptive:nonsense: policy 'adaptive' has no parameter "
                            "'nonsense' (accepted: progress.standard"),
    ("static:factor=fast", "policy parameter '--policy static:factor' = 'fast': expected a "
                           "float value"),
    ("alpha=0.3", "'alpha=0.3' is a parameter but no 'name:' comes before it"),
    ("nosuch:x=1", "unknown policy 'nosuch'"),
    ("static:mapreduce.map.speculative=false", "give it as -D mapreduce.map.speculative="),
    # values of the right type outside their range (hedge.policy.ranges)
    ("hedge-auto:cost_weight=-1", "--policy hedge-auto:cost_weight = -1.0: expected >= 0"),
    ("hedge-auto:lam=2", "--policy hedge-auto:lam = 2.0: expected in [0, 1]"),
    ("hedge-auto:cost_weight=inf", "--policy hedge-auto:cost_weight = inf: expected >= 0"),
    ("late:speculative_cap=1.5", "--policy late:speculative_cap = 1.5: expected in [0, 1]"),
    ("chronos-clone:beta=0.001", "--policy chronos-clone:beta = 0.001: expected in "
                                 "[0.01, 1000] (a Pareto shape"),
    ("window:window=1", "--policy window:window = 1.0: expected in (0, 1) (a fraction of "
                        "the job's fastest task duration"),
])
def test_bad_policy_parameters_are_one_line_exit_2(tmp_path, capsys, spec, message):
    code, _, err = run(tmp_path, capsys, "--policy", spec)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_a_server_names_the_same_mistake_the_same_way():
    with pytest.raises(HedgeError, match=r"^hedge.adaptive.nonsense: policy 'adaptive' has no "
                                         r"parameter 'nonsense' \(accepted: progress.standard"):
        policy_params("adaptive", {"nonsense": "1"})
    with pytest.raises(HedgeError, match=r"^hedge.auto.assumed.busy = 5.0: expected in "
                                         r"\[0, 1\]"):
        policy_params("hedge-auto", {"assumed.busy": "5"})


def test_switching_a_task_type_off_stops_its_copies(tmp_path, capsys):
    code, rows, err = run(tmp_path, capsys, "--policy", "static",
                          "-D", "mapreduce.map.speculative=false")
    assert code == 0 and rows[0]["copies_launched"] == 0  # the workload has maps only
    assert rows[0]["speculation"] == {"mapreduce.map.speculative": "false"}
    assert "speculation: mapreduce.map.speculative=false (-D)" in err


def test_a_mapred_site_file_sets_the_caps_and_minus_d_overrides_it(tmp_path, capsys):
    site = tmp_path / "mapred-site.xml"
    site.write_text("""<?xml version="1.0"?>
<configuration>
  <property><name>mapreduce.framework.name</name><value>yarn</value></property>
  <property>
    <name>mapreduce.job.speculative.minimum-allowed-tasks</name>
    <value>0</value>
  </property>
  <property><name>mapreduce.job.speculative.speculative-cap-running-tasks</name>
    <value>0</value></property>
  <property><name>mapreduce.reduce.speculative</name><value>false</value></property>
</configuration>
""")
    settings = user_settings(str(site), ["mapreduce.reduce.speculative=true"])
    assert settings.skipped == 1  # mapreduce.framework.name: not a speculation setting
    assert settings.origins["mapreduce.job.speculative.minimum-allowed-tasks"] == f"{site}:4"
    assert settings.speculation.minimum_allowed_tasks == 0
    assert settings.speculation.reduce_speculative is True  # -D wins over the file
    # minimum 0, running cap 0, 1 % of a 30-task job = 0.3, rounded down: no copy at all
    code, capped, _ = run(tmp_path, capsys, "--policy", "static", "--conf", str(site))
    code_free, free, _ = run(tmp_path, capsys, "--policy", "static")
    assert code == code_free == 0
    assert capped[0]["copies_launched"] == 0 < free[0]["copies_launched"]


def test_bad_xml_and_unknown_keys_are_one_line_and_real_ones_a_warning(tmp_path, capsys):
    bad = tmp_path / "bad.xml"
    bad.write_text("<configuration>\n<property><name>a</name>\n<value>1</valu>\n</property>\n"
                   "</configuration>\n")
    code, _, err = run(tmp_path, capsys, "--policy", "none", "--conf", str(bad))
    assert code == 2 and f"{bad}:3: not well-formed XML (mismatched tag)" in err
    with pytest.raises(HedgeError, match=f"{tmp_path}/n.xml:2: a <property> without a <name>"):
        (tmp_path / "n.xml").write_text("<configuration>\n<property><value>1</value>"
                                        "</property></configuration>")
        read_site_xml(tmp_path / "n.xml")
    code, _, err = run(tmp_path, capsys, "--policy", "none", "-D",
                       "mapreduce.map.speculativ=false")
    assert code == 2 and "did you mean mapreduce.map.speculative?" in err
    code, _, err = run(tmp_path, capsys, "--policy", "none", "-D",
                       "mapreduce.job.speculative.minimum-allowed-tasks=2.5")
    assert code == 2 and "expected an integer >= 0" in err
    code, rows, err = run(tmp_path, capsys, "--policy", "none", "-D",
                          "mapreduce.job.speculative.retry-after-no-speculate=500")
    assert code == 0 and rows[0]["speculation"] == {}
    assert "retry-after-no-speculate: a real setting hedge does not model" in err
    assert "ignored" in err


def test_spark_settings_set_the_spark_policy(tmp_path, capsys):
    settings = user_settings(None, ["spark.speculation.quantile=0.5",
                                    "spark.speculation.minTaskRuntime=2s",
                                    "spark.speculation.multiplier=3"])
    spark = {"quantile": "0.5", "min_runtime": "2.0", "multiplier": "3.0"}
    assert settings.policy_params == {"spark": spark, "spark-legacy": spark}
    code, rows, err = run(tmp_path, capsys, "--policy", "spark",
                          "-D", "spark.speculation.multiplier=1000")
    assert code == 0
    assert rows[0]["policy"] == "spark:multiplier=1000.0" and rows[0]["copies_launched"] == 0
    code, _, err = run(tmp_path, capsys, "--policy", "none",
                       "-D", "spark.speculation.quantile=0.5")
    assert code == 0 and ("'spark' and 'spark-legacy' policies, which this run does not simulate; "
                         "ignored") in err
    code, _, err = run(tmp_path, capsys, "--policy", "spark-legacy",
                       "-D", "spark.speculation.quantile=0.5")
    assert code == 0 and "ignored" not in err
