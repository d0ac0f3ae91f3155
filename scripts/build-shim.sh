#!/usr/bin/env bash
# Build java-shim/target/hedge-shim-<version>.jar: the one build users and CI run.
#
# 1. fetch the verified Hadoop jars into the hedge cache (no-op when complete);
# 2. put the jars the pom compiles against, and Py4J's jar from the venv's py4j wheel, into a
#    Maven local repository inside the cache, under their real Maven Central coordinates with
#    minimal poms (the jars' embedded poms name parents that are not available offline);
# 3. mvn package with java-shim/maven-settings.xml (every repository mirrored to Debian's
#    /usr/share/maven-repo for plugins and JUnit 5); runs the JUnit tests too, against the
#    full Hadoop 2.7.3 runtime set.
# Usage: scripts/build-shim.sh [extra mvn args]   (env: HEDGE_CACHE, PYTHON)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
CACHE=${HEDGE_CACHE:-$HOME/.cache/hedge}
REPO="$CACHE/m2"
H273="$CACHE/hadoop/2.7.3"

"$PYTHON" scripts/fetch_hadoop_jars.py
PY4J_JAR=$("$PYTHON" -c 'import glob, sys; print(glob.glob(sys.prefix + "/share/py4j/py4j*.jar")[0])')

# install_jar GROUP ARTIFACT VERSION FILE: local-repo layout, rewritten only when it differs.
install_jar() {
  local dir="$REPO/${1//.//}/$2/$3"
  mkdir -p "$dir"
  if ! cmp -s "$4" "$dir/$2-$3.jar"; then
    cp "$4" "$dir/$2-$3.jar.tmp" && mv "$dir/$2-$3.jar.tmp" "$dir/$2-$3.jar"
  fi
  printf '<project><modelVersion>4.0.0</modelVersion><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version></project>\n' \
    "$1" "$2" "$3" > "$dir/$2-$3.pom"
}

for artifact in hadoop-common hadoop-annotations hadoop-auth hadoop-hdfs \
    hadoop-mapreduce-client-core hadoop-mapreduce-client-common hadoop-mapreduce-client-app \
    hadoop-yarn-api hadoop-yarn-common; do
  install_jar org.apache.hadoop "$artifact" 2.7.3 "$H273/$artifact-2.7.3.jar"
done
install_jar commons-logging commons-logging 1.1.3 "$H273/commons-logging-1.1.3.jar"
install_jar com.google.guava guava 14.0.1 "$H273/guava-14.0.1.jar"
install_jar com.google.protobuf protobuf-java 2.5.0 "$H273/protobuf-java-2.5.0.jar"
install_jar log4j log4j 1.2.17 "$H273/log4j-1.2.17.jar"
install_jar net.sf.py4j py4j 0.10.9.9 "$PY4J_JAR"

# JUnit tests run against the whole verified Hadoop 2.7.3 runtime (the minimal poms above carry
# no transitive dependencies; against Maven Central the real poms would bring them).
TEST_CP=$(ls "$H273"/*.jar | paste -sd, -)
cd java-shim
mvn -B -q -s maven-settings.xml -Dmaven.repo.local="$REPO" \
  -Dmaven.test.additionalClasspath="$TEST_CP" package "$@"
ls -l target/hedge-shim-*.jar | grep -v original
