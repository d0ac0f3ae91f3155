"""Blacklisting: cap and dwell, atomic publishing, the watcher's last-good rule, the
NodeManager health script, NodeView, and the 'hedge nodes' CLI end to end."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hedge.cli import main
from hedge.errors import HedgeError
from hedge.nodes.blacklist import Blacklister, publish, read_blacklist
from hedge.nodes.history import CSV_COLUMNS
from hedge.nodes.synthetic import synthetic_history
from hedge.nodes.view import NodeView
from hedge.nodes.watch import Watcher

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "hedge-health-check.sh"


def test_cap_limits_listed_fraction_by_score():
    b = Blacklister(max_fraction=0.2, min_dwell=0)
    listed = b.update(["a", "b", "c"], {"a": 1.0, "b": 3.0, "c": 2.0}, n_nodes=10, now=0)
    assert listed == ["b", "c"]  # floor(0.2 * 10) = 2, highest scores
    assert b.update(["a"], {}, n_nodes=4, now=1) == []  # floor(0.8) = 0: nobody


def test_dwell_keeps_nodes_listed_and_released_nodes_out():
    b = Blacklister(max_fraction=0.5, min_dwell=100)
    assert b.update(["a"], {}, n_nodes=10, now=0) == ["a"]
    assert b.update([], {}, n_nodes=10, now=50) == ["a"]       # held by dwell
    assert b.update(["b"], {}, n_nodes=10, now=120) == ["b"]   # a released at 120
    assert b.update(["a", "b"], {}, n_nodes=10, now=150) == ["b"]  # a cooling down
    assert b.update(["a", "b"], {}, n_nodes=10, now=221) == ["a", "b"]


def test_cap_prefers_held_then_still_wanted_then_new():
    b = Blacklister(max_fraction=0.2, min_dwell=100)
    b.update(["a", "b"], {}, n_nodes=10, now=0)
    # at 150 a and b are past dwell; b is still wanted, c is new with a higher score
    assert b.update(["b", "c"], {"c": 9.0}, n_nodes=10, now=150) == ["b", "c"]
    assert b.update(["c", "d"], {"d": 9.0}, n_nodes=5, now=160) == ["c"]  # cap 1, c held


def test_bad_settings_are_rejected():
    with pytest.raises(HedgeError, match="max_fraction = 1.5"):
        Blacklister(max_fraction=1.5)


def test_publish_is_atomic_and_readable(tmp_path):
    path = tmp_path / "sub" / "blacklist"
    publish(path, ["n2", "n1"], now=0)
    text = path.read_text()
    assert text.startswith("# hedge node blacklist, 1970-01-01T00:00:00Z, 2 node(s)\n")
    assert read_blacklist(path) == ["n1", "n2"]
    publish(path, [], now=0)
    assert read_blacklist(path) == []
    assert [p.name for p in path.parent.iterdir()] == ["blacklist"]  # no temp files left


def run_script(blacklist: Path, host: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), str(blacklist)], capture_output=True,
                          text=True, env={**os.environ, "HEDGE_HOSTNAME": host, **env},
                          timeout=10)


def test_health_script_reports_error_only_for_listed_host(tmp_path):
    path = tmp_path / "blacklist"
    publish(path, ["worker-3", "worker-7"])
    listed = run_script(path, "worker-7")
    assert listed.returncode == 0
    assert listed.stdout.startswith("ERROR hedge: node worker-7 is blacklisted")
    healthy = run_script(path, "worker-1")
    assert healthy.returncode == 0 and "ERROR" not in healthy.stdout
    prefix = run_script(path, "worker")  # no partial matches
    assert "ERROR" not in prefix.stdout
    missing = run_script(tmp_path / "absent", "worker-7")
    assert missing.returncode == 0 and missing.stdout == ""


def test_health_script_ignores_stale_file(tmp_path):
    path = tmp_path / "blacklist"
    publish(path, ["worker-7"])
    old = path.stat().st_mtime - 7200
    os.utime(path, (old, old))
    stale = run_script(path, "worker-7", HEDGE_BLACKLIST_MAX_AGE="3600")
    assert "ERROR" not in stale.stdout and "ignored" in stale.stdout
    fresh = run_script(path, "worker-7", HEDGE_BLACKLIST_MAX_AGE="86400")
    assert fresh.stdout.startswith("ERROR")


@pytest.fixture
def history_csv(tmp_path) -> tuple[Path, set[str]]:
    s = synthetic_history(n_nodes=30, n_periods=1, period_days=4, day_seconds=3600.0,
                          jobs_per_day=10, seed=4, initial_weak=0.1)
    path = tmp_path / "history.csv"
    cols = s.history.to_pydict()
    lines = [",".join(CSV_COLUMNS)]
    lines += [",".join(str(cols[c][i]) for c in CSV_COLUMNS) for i in range(s.history.num_rows)]
    path.write_text("\n".join(lines) + "\n")
    return path, set(s.nodes[s.weak[0]])


def test_watcher_publishes_then_keeps_last_good_set_on_failure(tmp_path, history_csv):
    source, weak = history_csv
    out, status = tmp_path / "blacklist", tmp_path / "status.json"
    watcher = Watcher(source=str(source), out=out, status=status,
                      blacklister=Blacklister(max_fraction=0.2, min_dwell=0))
    first = watcher.step(now=1000.0)
    assert first.ok and set(first.blacklist) == weak and read_blacklist(out) == first.blacklist
    view = NodeView.from_status(status)
    assert view.blacklist() == first.blacklist
    names = sorted(view.levels())
    fields = view.cluster_fields(names + ["unknown-node"])
    assert fields["node_level"][-1] == -1
    assert sorted(np.array(names)[fields["blacklist"]]) == first.blacklist
    assert all(fields["node_level"][i] == 0 for i in fields["blacklist"])

    source.write_text("job,task,attempt,node,start,end,state\nj,t,a,n,0,oops,SUCCEEDED\n")
    failed = watcher.step(now=2000.0)
    assert not failed.ok and "keeping the last good blacklist" in failed.message
    assert read_blacklist(out) == first.blacklist  # untouched
    doc = json.loads(status.read_text())
    assert doc["blacklist"] == first.blacklist and "oops" in doc["last_error"]
    assert doc["time"] == 1000.0

    source.write_text("job,task,attempt,node,start,end,state\n")  # empty fetch
    assert not watcher.step(now=3000.0).ok
    assert read_blacklist(out) == first.blacklist


def test_watcher_with_an_mlna_model(tmp_path):
    from hedge.nodes.mlna import MLNA, MLNAParams

    s = synthetic_history(n_nodes=20, n_periods=4, period_days=5, day_seconds=3600.0, seed=3,
                          initial_weak=0.2, p_recover=0.0, p_become_weak=0.0)
    path = tmp_path / "h.csv"
    cols = s.history.to_pydict()
    path.write_text("\n".join([",".join(CSV_COLUMNS)] + [
        ",".join(str(cols[c][i]) for c in CSV_COLUMNS) for i in range(s.history.num_rows)]))
    model = MLNA(MLNAParams(period_days=5, day_seconds=3600.0, n_estimators=30)).fit(s.history)
    watcher = Watcher(source=str(path), out=tmp_path / "bl", status=tmp_path / "st.json",
                      blacklister=Blacklister(max_fraction=0.5, min_dwell=0), model=model)
    result = watcher.step(now=3.5 * s.period_seconds)
    assert result.ok and set(result.blacklist) == set(s.nodes[s.weak[3]])
    assert json.loads((tmp_path / "st.json").read_text())["method"] == "ml-na"


def test_watcher_with_nothing_published_yet(tmp_path):
    watcher = Watcher(source=str(tmp_path / "missing.csv"), out=tmp_path / "bl",
                      status=tmp_path / "st.json")
    result = watcher.step(now=0.0)
    assert not result.ok and "(none published yet)" in result.message
    assert not (tmp_path / "bl").exists()


def test_nodeview_rejects_foreign_status(tmp_path):
    path = tmp_path / "status.json"
    path.write_text(json.dumps({"format": "other", "version": 1}))
    with pytest.raises(HedgeError, match="'format'/'version'"):
        NodeView.from_status(path)


def test_cli_rank_train_predict_watch(tmp_path, history_csv, capsys):
    source, weak = history_csv
    assert main(["nodes", "rank", str(source), "--json", "--weak", "level0"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["weak"]) == weak and doc["nodes"][0]["level"] == 0
    assert main(["nodes", "rank", str(source), "--halves"]) == 0
    assert "level sizes" in capsys.readouterr().out

    s = synthetic_history(n_nodes=20, n_periods=3, period_days=5, day_seconds=3600.0, seed=2)
    hist = tmp_path / "three.csv"
    cols = s.history.to_pydict()
    hist.write_text("\n".join([",".join(CSV_COLUMNS)] + [
        ",".join(str(cols[c][i]) for c in CSV_COLUMNS) for i in range(s.history.num_rows)]))
    model = tmp_path / "model.json"
    args = ["--period-days", "5", "--day-seconds", "3600", "--n-estimators", "20"]
    assert main(["nodes", "train", str(hist), "-o", str(model), *args]) == 0
    capsys.readouterr()
    assert main(["nodes", "predict", str(hist), "--model", str(model), "--json"]) == 0
    predicted = json.loads(capsys.readouterr().out)
    assert len(predicted["nodes"]) == 20
    assert all(0 <= r["p_weak"] <= 1 for r in predicted["nodes"])

    out = tmp_path / "bl"
    assert main(["nodes", "watch", str(source), "--out", str(out), "--iterations", "1",
                 "--interval", "1", "--max-fraction", "0.5", "--weak", "level0"]) == 0
    assert set(read_blacklist(out)) == weak
    assert json.loads((tmp_path / "bl.json").read_text())["last_error"] is None


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("job,task,attempt,node,start,end,state\nj,t,a,n,5,1,SUCCEEDED\n")
    assert main(["nodes", "rank", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.csv:2: field 'end'" in err
    junk = tmp_path / "model.json"
    junk.write_text("{}")
    assert main(["nodes", "predict", str(bad), "--model", str(junk)]) == 2
    assert "field 'format'" in capsys.readouterr().err


def test_watcher_never_publishes_names_outside_the_cluster(tmp_path, history_csv, caplog):
    source, weak = history_csv
    stale = sorted(weak)[0]
    cluster = {f"node{i:03d}" for i in range(30)} - {stale}
    watcher = Watcher(source=str(source), out=tmp_path / "bl", status=tmp_path / "st.json",
                      blacklister=Blacklister(max_fraction=0.2, min_dwell=0),
                      weak_policy="level0", known_nodes=frozenset(cluster))
    with caplog.at_level("WARNING"):
        result = watcher.step(now=0.0)
    assert result.ok and set(result.blacklist) == weak - {stale}
    assert f"not cluster nodes and are not published: {stale}" in caplog.text
