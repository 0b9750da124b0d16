#!/bin/sh
# Installs the Debian packages that some tests and benchmarks need, when they are missing and
# this machine allows it (root, with apt-get): one `apt-get update`, then one install of all
# that is missing. Elsewhere it says what is missing and carries on: the tests that need a
# package skip with the reason.
#
#   tools/system_deps.sh redis-server [package ...]
#
# The Makefile's SYSTEM_DEPS lists them (redis-server: tests/test_celery_fanout.py and
# benches/celery_throughput.py).
set -u

missing=""
for pkg in "$@"; do
    if command -v dpkg-query >/dev/null 2>&1; then
        if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            continue
        fi
    elif command -v "$pkg" >/dev/null 2>&1; then
        continue # not Debian: a command of the package's name will do (redis-server)
    fi
    missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "system_deps.sh: installing$missing"
    # shellcheck disable=SC2086 # one word per package
    if apt-get update -q >/dev/null &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null; then
        exit 0
    fi
    echo "system_deps.sh: could not install$missing; the tests that need them will be skipped" >&2
else
    echo "system_deps.sh: missing$missing (installing needs root and apt-get); the tests that need them will be skipped" >&2
fi
exit 0
