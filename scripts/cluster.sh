#!/usr/bin/env bash
# A pseudo-distributed Hadoop cluster with hedge: NameNode, DataNode, ResourceManager, two
# NodeManagers, JobHistoryServer and `hedge serve`, each a process of its own on the loopback
# interface, from the Maven-resolved jars of `make shim` (logic: scripts/pseudo_cluster.py).
#
#   scripts/cluster.sh up [--ports standard|auto] [--port NAME=PORT]   start (and format HDFS)
#   scripts/cluster.sh wordcount   examples WordCount with hedge's ImKP partitioner, checked
#   scripts/cluster.sh terasort    examples teragen + terasort + teravalidate
#   scripts/cluster.sh sleep [--speculation POLICY|hadoop-default|off|cluster]  straggler job
#   scripts/cluster.sh history     hedge nodes rank on the JobHistoryServer's REST API
#   scripts/cluster.sh up --plain  Hadoop alone (no hedge): to follow the README's steps
#   scripts/cluster.sh restart NAME...   stop and start daemons (nodemanager-1 nodemanager-2)
#   scripts/cluster.sh status      each daemon's state
#   scripts/cluster.sh down        stop everything it started (idempotent)
#
# Global options before the command: --dir DIR (work dir; $HEDGE_CLUSTER_DIR, default
# out/cluster), --hadoop 3.3.6|3.4.1 ($HEDGE_HADOOP_VERSION, default 3.4.1); `-h` after a
# command lists its options. Python: $HEDGE_PYTHON, else .venv/bin/python (make setup).
#
# scripts/cluster.sh --docker up [--build]|sleep|wordcount|terasort|history|status|down: the
# same daemons and jobs, each daemon and client in a container of the hedge-hadoop image
# (host network, the work dir mounted at its own path; default work dir out/cluster-docker).
# `up` builds the images with scripts/docker-image.sh when missing (--build: always).
set -euo pipefail
case $0 in */*) ROOT=${0%/*}/.. ;; *) ROOT=.. ;; esac  # no dirname: PATH may lack it
if [[ $# -eq 0 ]]; then
  sed -n '2,24p' "$ROOT/scripts/cluster.sh"; exit 2
fi
PY=${HEDGE_PYTHON:-$ROOT/.venv/bin/python}  # (no cd: a relative --dir is the caller's)
[[ -x $PY ]] || { echo "cluster: $PY not found: run make setup (or set HEDGE_PYTHON)" >&2; exit 1; }
exec "$PY" "$ROOT/scripts/pseudo_cluster.py" "$@"
