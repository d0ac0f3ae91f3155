#!/usr/bin/env bash
# Build hedge's Java side from Maven Central: the one build users and CI run (make shim).
#
# 1. java-shim/target/hedge-shim-<version>.jar: compiled against Hadoop 2.7.3 (provided),
#    Py4J shaded in; `mvn package` runs the JUnit tests on the same 2.7.3 classpath;
# 2. java-shim/cluster/target/hedge-cluster-<version>.jar: the mini-cluster test bed (3.4.1);
# 3. one runtime classpath per tested Hadoop version, $HEDGE_CACHE/hadoop/<version>.classpath
#    (':'-separated absolute jar paths, read by hedge.javaenv): 2.7.3 from java-shim/pom.xml,
#    3.3.6 and 3.4.1 from java-shim/cluster/pom.xml;
# 4. $HEDGE_CACHE/hadoop/hadoop-mapreduce-examples-3.3.6.jar: the examples jobs (wordcount,
#    teragen/terasort, ...) scripts/cluster.sh runs, on 3.3.6 and 3.4.1 alike (Maven Central
#    has no hadoop-mapreduce-examples 3.4.0 or 3.4.1; the jar uses only the stable MapReduce
#    API, and its dependencies are on every 3.x classpath above).
# Maven's local repository is $HEDGE_CACHE/m2 (default cache ~/.cache/hedge), with strict
# checksums. Everything up to date is skipped: a jar newer than its pom and sources, a
# classpath file whose pom, version and scope are unchanged and whose jars are all present.
# Extra arguments go to both `mvn package` runs and force them (e.g. -DskipTests).
# Usage: scripts/build-shim.sh [extra mvn args]   (env: HEDGE_CACHE)
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${HEDGE_CACHE:-$HOME/.cache/hedge}
MVN=(mvn -B -q -C "-Dmaven.repo.local=$CACHE/m2")
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' python/hedge/__init__.py)

# package MODULE ARTIFACT [mvn args]: `mvn package` unless the jar is newer than pom and src/.
package() {
  local module=$1 jar="$1/target/$2-$VERSION.jar"
  shift 2
  if (($# == 0)) && [[ -f $jar ]] &&
      [[ -z $(find "$module/pom.xml" "$module/src" -newer "$jar" -print -quit 2>/dev/null) ]]; then
    return
  fi
  "${MVN[@]}" -f "$module/pom.xml" package "$@"
  [[ -f $jar ]] || { echo "build-shim: mvn package did not write $jar" >&2; exit 1; }
  echo "build-shim: built $jar"
}

# classpath POM HADOOP_VERSION SCOPE: write $CACHE/hadoop/<version>.classpath atomically.
# The key (sha256 of the pom, the version and the scope) is stored beside it; a changed key or
# a listed jar that has gone (a pruned Maven repository) means the file is written again.
classpath() {
  local pom=$1 version=$2 scope=$3
  local out="$CACHE/hadoop/$version.classpath"
  local key
  key="$(sha256sum <"$pom" | cut -d' ' -f1) hadoop.version=$version includeScope=$scope"
  if [[ -f $out && -f $out.key && $(<"$out.key") == "$key" ]] && all_present "$out"; then
    return
  fi
  mkdir -p "$CACHE/hadoop"
  # -DincludeScope (not -Dmdep.includeScope: the plugin ignores that name and would list
  # every scope, JUnit included)
  "${MVN[@]}" -f "$pom" dependency:build-classpath "-Dhadoop.version=$version" \
    "-DincludeScope=$scope" "-Dmdep.outputFile=$out.tmp"
  mv "$out.tmp" "$out"
  printf '%s\n' "$key" >"$out.key.tmp" && mv "$out.key.tmp" "$out.key"
  echo "build-shim: wrote $out ($(tr ':' '\n' <"$out" | wc -l) jars)"
}

# examples HADOOP_VERSION: copy hadoop-mapreduce-examples from Maven Central (checksums
# checked) into $CACHE/hadoop/ unless it is there already.
examples() {
  local version=$1
  local out="$CACHE/hadoop/hadoop-mapreduce-examples-$version.jar"
  [[ -f $out ]] && return
  mkdir -p "$CACHE/hadoop"
  "${MVN[@]}" -f java-shim/cluster/pom.xml dependency:copy \
    "-Dartifact=org.apache.hadoop:hadoop-mapreduce-examples:$version:jar" \
    "-DoutputDirectory=$CACHE/hadoop"
  [[ -f $out ]] || { echo "build-shim: dependency:copy did not write $out" >&2; exit 1; }
  echo "build-shim: copied $out"
}

all_present() {
  local jar
  while IFS= read -r -d ':' jar; do
    [[ -f $jar ]] || return 1
  done < <(tr -d '\n' <"$1"; printf ':')
}

package java-shim hedge-shim "$@"
package java-shim/cluster hedge-cluster "$@"
# provided: Hadoop 2.7.3 and its transitive dependencies, not Py4J (the shim jar bundles it)
classpath java-shim/pom.xml 2.7.3 provided
classpath java-shim/cluster/pom.xml 3.3.6 runtime
classpath java-shim/cluster/pom.xml 3.4.1 runtime
examples 3.3.6
