#!/usr/bin/env bash
# The pseudo-distributed docker cluster with hedge (docker/docker-compose.yml).
#
#   scripts/cluster.sh up          start HDFS, YARN, the JobHistory Server and `hedge serve`
#   scripts/cluster.sh wordcount   run WordCount (hedge's speculator, ImKP partitioner) on it
#   scripts/cluster.sh terasort    run TeraGen + TeraSort with hedge's speculator
#   scripts/cluster.sh history     copy the finished jobs' .jhist files to docker/work/history
#   scripts/cluster.sh down        stop and remove the cluster
#
# Needs a running Docker engine and the images (apache/hadoop, python:3.11-slim) present
# locally or pullable. Where no image registry is reachable (as on hedge's build machines),
# it says so and exits non-zero before starting anything.
set -euo pipefail
cd "$(dirname "$0")/.."
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
    sed -n '2,14p' "$0"; exit 2 ;;
esac
