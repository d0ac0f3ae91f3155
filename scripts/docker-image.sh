#!/usr/bin/env bash
# Builds the docker cluster's images without any image registry:
#   hedge-base:bookworm  a debootstrapped Debian bookworm root file system (Java 17 JRE, Python 3),
#                        brought in with `docker import`;
#   hedge-hadoop:latest  hedge-base plus Hadoop's Maven-resolved jars, the hedge shim jar,
#                        hedge's Python package with its dependencies, and the jobs and health
#                        script of scripts/cluster.sh --docker, from docker/Dockerfile.
# Idempotent: hedge-base is built only when the image is missing (HEDGE_REBUILD_BASE=1 forces
# it); hedge-hadoop is rebuilt with docker's layer cache, so unchanged inputs cost seconds.
# Needs: root (debootstrap), a running Docker engine, and `make shim` done (the shim jar and
# $HEDGE_CACHE/hadoop/$HADOOP_VERSION.classpath). Debian's mirror and PyPI are the only
# network sources; nothing is pulled from a registry and nothing is installed at container start.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HEDGE_CACHE=${HEDGE_CACHE:-$HOME/.cache/hedge}
HADOOP_VERSION=${HADOOP_VERSION:-3.4.1}
HEDGE_VERSION=${HEDGE_VERSION:-0.1.0}
BASE_IMAGE=${HEDGE_BASE_IMAGE:-hedge-base:bookworm}
HADOOP_IMAGE=${HEDGE_HADOOP_IMAGE:-hedge-hadoop:latest}
SUITE=bookworm
# procps: /bin/kill and ps, which a NodeManager runs to signal and inspect its containers.
BASE_PACKAGES=${HEDGE_BASE_PACKAGES:-openjdk-17-jre-headless,python3,python3-venv,procps}
STAGE=$ROOT/docker/stage            # the build context (gitignored)
CLASSPATH_FILE=$HEDGE_CACHE/hadoop/$HADOOP_VERSION.classpath
SHIM_JAR=$ROOT/java-shim/target/hedge-shim-$HEDGE_VERSION.jar
EXAMPLES_JAR=$HEDGE_CACHE/hadoop/hadoop-mapreduce-examples-3.3.6.jar  # hedge.javaenv.examples_jar()
CLUSTER_JAR=$ROOT/java-shim/cluster/target/hedge-cluster-$HEDGE_VERSION.jar

die() { echo "docker-image.sh: $*" >&2; exit 1; }
log() { echo "docker-image.sh: $*" >&2; }

# The Debian mirror apt uses here (first non-security .../debian URI), unless given.
debian_mirror() {
    if [ -n "${HEDGE_DEBIAN_MIRROR:-}" ]; then echo "$HEDGE_DEBIAN_MIRROR"; return; fi
    local f uri
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        uri=$(sed -n -e 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
                     -e 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' "$f" \
              | grep -E '/debian/?$' | head -n1 || true)
        if [ -n "$uri" ]; then echo "$uri"; return; fi
    done
    echo http://deb.debian.org/debian
}

command -v docker >/dev/null || die "no docker client on PATH (apt-get install docker.io)"
docker info >/dev/null 2>&1 \
    || die "no Docker engine is running (as root: dockerd >/var/log/dockerd.log 2>&1 &)"
# A newer client without the buildx plugin would warn and fall back; ask for the classic builder.
docker buildx version >/dev/null 2>&1 || export DOCKER_BUILDKIT=0
[ -f "$CLASSPATH_FILE" ] || die "missing $CLASSPATH_FILE: run make shim first"
[ -f "$SHIM_JAR" ] || die "missing $SHIM_JAR: run make shim first"
[ -f "$EXAMPLES_JAR" ] || die "missing $EXAMPLES_JAR: run make shim first"
[ -f "$CLUSTER_JAR" ] || die "missing $CLUSTER_JAR: run make shim first"

# --- hedge-base ---------------------------------------------------------------------------------
ROOTFS=
cleanup_rootfs() {  # debootstrap mounts /proc and /sys inside the target: never delete through one
    [ -n "$ROOTFS" ] || return 0
    local m
    for m in $(awk -v r="$ROOTFS/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do
        umount -l "$m" || true
    done
    rm -rf --one-file-system "$ROOTFS"
    ROOTFS=
}
trap cleanup_rootfs EXIT

build_base() {
    [ "$(id -u)" = 0 ] || die "building $BASE_IMAGE needs root (debootstrap)"
    command -v debootstrap >/dev/null || die "no debootstrap (apt-get install -y debootstrap)"
    local mirror t0 t1 java_home logf
    mirror=$(debian_mirror)
    ROOTFS=$(mktemp -d "${TMPDIR:-/var/tmp}/hedge-base.XXXXXX")
    logf=$ROOTFS.log
    log "debootstrap $SUITE from $mirror into $ROOTFS (packages: $BASE_PACKAGES; log: $logf)"
    t0=$(date +%s)
    debootstrap --variant=minbase --include="$BASE_PACKAGES" "$SUITE" "$ROOTFS" "$mirror" \
        >"$logf" 2>&1 || { tail -n 20 "$logf" >&2; die "debootstrap failed (log: $logf)"; }
    t1=$(date +%s); log "debootstrap took $((t1 - t0)) s"
    rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
    java_home=$(readlink -f "$ROOTFS/usr/bin/java"); java_home=${java_home#"$ROOTFS"}
    java_home=${java_home%/bin/java}
    [ -n "$java_home" ] && [ -x "$ROOTFS$java_home/bin/java" ] || die "no java in the root file system"
    # An imported image has no environment at all: give it PATH, JAVA_HOME and a UTF-8 locale.
    tar -C "$ROOTFS" --numeric-owner -c . | docker import \
        --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        --change "ENV JAVA_HOME=$java_home" --change "ENV LANG=C.UTF-8" \
        --message "debootstrap --variant=minbase --include=$BASE_PACKAGES $SUITE $mirror" \
        - "$BASE_IMAGE" >/dev/null
    t0=$(date +%s); log "docker import took $((t0 - t1)) s"
    cleanup_rootfs; rm -f "$logf"
}

if [ "${HEDGE_REBUILD_BASE:-0}" = 1 ] || ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    build_base
else
    log "$BASE_IMAGE exists (HEDGE_REBUILD_BASE=1 rebuilds it)"
fi
docker run --rm "$BASE_IMAGE" java -version >/dev/null 2>&1 || die "$BASE_IMAGE cannot run java -version"

# --- the build context ----------------------------------------------------------------------------
# stage/hadoop/lib: the jars of the Maven-resolved classpath, flattened (their file names are
# unique); stage/hadoop/classpath: the same jars in the same order, as paths in the image.
log "staging the build context in $STAGE"
mkdir -p "$STAGE/hadoop"
rm -rf "$STAGE/hadoop/lib.new"; mkdir "$STAGE/hadoop/lib.new"
cp_list=()
while IFS= read -r jar; do
    [ -n "$jar" ] || continue
    [ -f "$jar" ] || die "$CLASSPATH_FILE names a missing jar: $jar (run make shim)"
    name=$(basename "$jar")
    [ ! -e "$STAGE/hadoop/lib.new/$name" ] || die "two jars named $name on the classpath"
    # Hard links when the cache is on the same file system; docker reads them as plain files.
    ln "$jar" "$STAGE/hadoop/lib.new/$name" 2>/dev/null || cp -p "$jar" "$STAGE/hadoop/lib.new/$name"
    cp_list+=("/opt/hadoop/lib/$name")
done < <(tr ':' '\n' <"$CLASSPATH_FILE")
rm -rf "$STAGE/hadoop/lib"; mv "$STAGE/hadoop/lib.new" "$STAGE/hadoop/lib"
(IFS=:; echo "${cp_list[*]}") >"$STAGE/hadoop/classpath.new"
cmp -s "$STAGE/hadoop/classpath.new" "$STAGE/hadoop/classpath" 2>/dev/null \
    && rm "$STAGE/hadoop/classpath.new" || mv "$STAGE/hadoop/classpath.new" "$STAGE/hadoop/classpath"
cmp -s "$SHIM_JAR" "$STAGE/hedge-shim.jar" 2>/dev/null || cp "$SHIM_JAR" "$STAGE/hedge-shim.jar"
# The jobs of scripts/cluster.sh --docker (fixed names in the image) and the health script.
mkdir -p "$STAGE/jobs"
stage_file() {  # SRC DEST: copy when it differs (an unchanged file keeps docker's cache)
    cmp -s "$1" "$2" 2>/dev/null || cp -p "$1" "$2"
}
stage_file "$EXAMPLES_JAR" "$STAGE/jobs/hadoop-mapreduce-examples.jar"
stage_file "$CLUSTER_JAR" "$STAGE/jobs/hedge-cluster.jar"
stage_file "$ROOT/scripts/hedge-health-check.sh" "$STAGE/hedge-health-check.sh"
chmod 755 "$STAGE/hedge-health-check.sh"

# hedge's wheel (stage/hedge) and its dependencies' wheels (stage/wheels), kept apart so that a
# change to hedge reinstalls only hedge. The wheels are built by this machine's Python, so its
# minor version must be the image's (Debian's 3.11). SOURCE_DATE_EPOCH makes hedge's wheel
# byte-identical for unchanged sources, so docker's cache holds.
if [ -x "$ROOT/.venv/bin/python" ]; then PY=$ROOT/.venv/bin/python; else PY=python3; fi
pyver='import sys; print("%d.%d" % sys.version_info[:2])'
host_py=$("$PY" -c "$pyver"); image_py=$(docker run --rm "$BASE_IMAGE" python3 -c "$pyver")
[ "$host_py" = "$image_py" ] || die "wheels built by Python $host_py would not fit the image's Python $image_py"
rm -rf "$STAGE/wheels.new" "$STAGE/hedge.new"; mkdir "$STAGE/wheels.new" "$STAGE/hedge.new"
(cd "$ROOT" && SOURCE_DATE_EPOCH=315532800 "$PY" -m pip wheel -q --no-deps -w "$STAGE/hedge.new" .) \
    >"$STAGE/pip.log" 2>&1 || { tail -n 20 "$STAGE/pip.log" >&2; die "pip wheel . failed"; }
"$PY" -m pip wheel -q -w "$STAGE/wheels.new" "$STAGE"/hedge.new/hedge-*.whl >>"$STAGE/pip.log" 2>&1 \
    || { tail -n 20 "$STAGE/pip.log" >&2; die "pip wheel of hedge's dependencies failed"; }
rm -f "$STAGE"/wheels.new/hedge-*.whl
for d in wheels hedge; do  # keep the old files (and so docker's cache) when nothing changed
    if diff -rq "$STAGE/$d.new" "$STAGE/$d" >/dev/null 2>&1; then
        rm -rf "$STAGE/$d.new"
    else
        rm -rf "${STAGE:?}/$d"; mv "$STAGE/$d.new" "$STAGE/$d"
    fi
done

# --- hedge-hadoop ---------------------------------------------------------------------------------
t0=$(date +%s)
docker build -t "$HADOOP_IMAGE" --build-arg BASE="$BASE_IMAGE" \
    -f "$ROOT/docker/Dockerfile" "$STAGE" >"$STAGE/build.log" 2>&1 \
    || { tail -n 30 "$STAGE/build.log" >&2; die "docker build failed (log: $STAGE/build.log)"; }
t1=$(date +%s); log "docker build took $((t1 - t0)) s"

version=$(docker run --rm "$HADOOP_IMAGE" \
    sh -c 'java -cp "$(cat /opt/hadoop/classpath)" org.apache.hadoop.util.VersionInfo' | sed -n 1p) || true
[ "$version" = "Hadoop $HADOOP_VERSION" ] \
    || die "$HADOOP_IMAGE: VersionInfo says '$version', not Hadoop $HADOOP_VERSION"
docker run --rm "$HADOOP_IMAGE" hedge --help >/dev/null || die "$HADOOP_IMAGE: hedge --help failed"
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^(${BASE_IMAGE}|${HADOOP_IMAGE}) " >&2 || true
log "ready: $BASE_IMAGE, $HADOOP_IMAGE"
