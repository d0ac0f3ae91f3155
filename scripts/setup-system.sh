#!/usr/bin/env bash
# Install the Debian packages hedge needs: a JDK and Maven (Maven itself fetches the Hadoop,
# Py4J, JUnit jars and its plugins from Maven Central). Does nothing when they are present.
set -euo pipefail
PACKAGES=(openjdk-17-jdk-headless maven)
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
((${#missing[@]} == 0)) && exit 0
if [[ $(id -u) -ne 0 ]]; then
  echo "setup-system: missing Debian packages: ${missing[*]}; install them as root:" >&2
  echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "setup-system: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
