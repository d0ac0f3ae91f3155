#!/usr/bin/env bash
# NodeManager health script for hedge node blacklisting (NEPAB).
#
# Configure it with yarn.nodemanager.health-checker.script.path (see conf/yarn-site.xml).
# The NodeManager runs it periodically; any output line starting with "ERROR" marks the
# node unhealthy, and the ResourceManager places no new containers on it until the line
# goes away. `hedge nodes watch --out FILE` publishes FILE: one host name per line, '#'
# comments allowed.
#
# Settings (environment, or the first argument for the blacklist path):
#   HEDGE_BLACKLIST          blacklist file (default /var/lib/hedge/blacklist)
#   HEDGE_HOSTNAME           this node's name (default: `hostname -f` and `hostname -s`)
#   HEDGE_BLACKLIST_MAX_AGE  seconds; an older file is ignored, so a dead watcher cannot
#                            keep nodes out forever (default 0 = never stale)
#
# Fails open: a missing, unreadable or stale file leaves the node healthy (no ERROR line),
# and the script always exits 0 so the health checker never treats it as broken.

set -u

list="${1:-${HEDGE_BLACKLIST:-/var/lib/hedge/blacklist}}"
max_age="${HEDGE_BLACKLIST_MAX_AGE:-0}"

if [ -n "${HEDGE_HOSTNAME:-}" ]; then
    names="$HEDGE_HOSTNAME"
else
    names="$(hostname -f 2>/dev/null) $(hostname -s 2>/dev/null) $(hostname 2>/dev/null)"
fi

[ -r "$list" ] || exit 0

if [ "$max_age" -gt 0 ] 2>/dev/null; then
    modified="$(stat -c %Y "$list" 2>/dev/null || echo 0)"
    now="$(date +%s)"
    if [ $((now - modified)) -gt "$max_age" ]; then
        echo "hedge: blacklist $list is older than ${max_age}s; ignored"
        exit 0
    fi
fi

while IFS= read -r line || [ -n "$line" ]; do
    host="${line%%#*}"
    host="${host//[[:space:]]/}"
    [ -n "$host" ] || continue
    for name in $names; do
        if [ "$host" = "$name" ]; then
            echo "ERROR hedge: node $name is blacklisted as weak (listed in $list)"
            exit 0
        fi
    done
done < "$list"
exit 0
