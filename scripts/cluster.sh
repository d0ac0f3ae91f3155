#!/usr/bin/env bash
# A pseudo-distributed Hadoop cluster with hedge: NameNode, DataNode, ResourceManager, two
# NodeManagers, JobHistoryServer and `hedge serve`, each a process of its own on the loopback
# interface, from the Maven-resolved jars of `make shim` (logic: scripts/pseudo_cluster.py).
#
#   scripts/cluster.sh up [--ports standard|auto] [--port NAME=PORT]   start (and format HDFS)
#   scripts/cluster.sh wordcount   examples WordCount with hedge's ImKP partitioner, checked
#   scripts/cluster.sh terasort    examples teragen + terasort + teravalidate
#   scripts/cluster.sh sleep [--speculation POLICY|hadoop-default|off]   hedge's straggler job
#   scripts/cluster.sh history     hedge nodes rank on the JobHistoryServer's REST API
#   scripts/cluster.sh status      each daemon's state
#   scripts/cluster.sh down        stop everything it started (idempotent)
#
# Global options before the command: --dir DIR (work dir; $HEDGE_CLUSTER_DIR, default
# out/cluster), --hadoop 3.3.6|3.4.1 ($HEDGE_HADOOP_VERSION, default 3.4.1); `-h` after a
# command lists its options. Python: $HEDGE_PYTHON, else .venv/bin/python (make setup).
#
# scripts/cluster.sh --docker up|wordcount|terasort|history|down: the docker-compose cluster
# (docker/docker-compose.yml) instead; it needs a Docker engine and its images.
set -euo pipefail
case $0 in */*) ROOT=${0%/*}/.. ;; *) ROOT=.. ;; esac  # no dirname: PATH may lack it
if [[ ${1:-} != --docker ]]; then  # (no cd: a relative --dir is the caller's)
  PY=${HEDGE_PYTHON:-$ROOT/.venv/bin/python}
  [[ -x $PY ]] || { echo "cluster: $PY not found: run make setup (or set HEDGE_PYTHON)" >&2; exit 1; }
  exec "$PY" "$ROOT/scripts/pseudo_cluster.py" "$@"
fi
shift
cd "$ROOT"

# ---- the docker-compose cluster ----
COMPOSE=()
HADOOP_IMAGE=${HEDGE_HADOOP_IMAGE:-apache/hadoop:3.3.6}
PYTHON_IMAGE=${HEDGE_PYTHON_IMAGE:-python:3.11-slim}
EXAMPLES=/opt/hadoop/share/hadoop/mapreduce/hadoop-mapreduce-examples-3.3.6.jar

die() { echo "cluster: $*" >&2; exit 1; }

preflight() {
  command -v docker >/dev/null || die "the docker client is not installed (apt-get install docker.io)"
  docker info >/dev/null 2>&1 || die "no Docker engine is running (start dockerd, or check DOCKER_HOST)"
  local image
  for image in "$HADOOP_IMAGE" "$PYTHON_IMAGE"; do
    docker image inspect "$image" >/dev/null 2>&1 && continue
    timeout 60 docker pull -q "$image" >/dev/null 2>&1 || die "image $image is not present \
locally and could not be pulled: no image registry is reachable from this machine. On a \
machine with registry access run 'docker pull $image' (or set HEDGE_HADOOP_IMAGE / \
HEDGE_PYTHON_IMAGE to images you have), then rerun."
  done
  [[ -f java-shim/target/hedge-shim-0.1.0.jar ]] || die "build the shim first: make shim"
  if docker compose version >/dev/null 2>&1; then COMPOSE=(docker compose)
  elif command -v docker-compose >/dev/null; then COMPOSE=(docker-compose)
  else die "neither 'docker compose' nor 'docker-compose' is installed"; fi
  COMPOSE+=(-f docker/docker-compose.yml)
}

secrets() {
  mkdir -p docker/secrets docker/work
  [[ -s docker/secrets/token ]] || head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > docker/secrets/token
  touch docker/secrets/blacklist
}

in_rm() { "${COMPOSE[@]}" exec -T resourcemanager "$@"; }

case "${1:-}" in
  up)
    preflight; secrets
    "${COMPOSE[@]}" up -d
    echo "cluster: up; ResourceManager http://localhost:8088, JobHistory http://localhost:19888" ;;
  wordcount)
    preflight
    in_rm hdfs dfs -mkdir -p /in
    in_rm hdfs dfs -put -f /opt/hadoop/README.txt /in/
    in_rm hdfs dfs -rm -r -f /out-wordcount
    in_rm yarn jar /opt/hadoop/share/hadoop/mapreduce/lib/hedge-shim.jar org.hedge.tools.WordCount \
      /in /out-wordcount 4 ;;
  terasort)
    preflight
    in_rm hdfs dfs -rm -r -f /teragen /terasort
    in_rm yarn jar "$EXAMPLES" teragen 1000000 /teragen
    in_rm yarn jar "$EXAMPLES" terasort /teragen /terasort ;;
  history)
    preflight
    mkdir -p docker/work/history
    in_rm hdfs dfs -copyToLocal -f /tmp/hadoop-yarn/staging/history/done /work/history ;;
  down)
    preflight
    "${COMPOSE[@]}" down -v ;;
  *)
    sed -n '2,21p' scripts/cluster.sh; exit 2 ;;
esac
