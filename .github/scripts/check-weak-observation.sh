#!/bin/bash
# Usage: .github/scripts/check-weak-observation.sh BINARY...
#
# The package's floor is iOS 13 / macOS 10.15, and Observation exists from iOS 17 / macOS 14
# (Behaviour M5): a binary that loads it with LC_LOAD_DYLIB fails to launch on an older system
# ("Library not loaded: …libswiftObservation.dylib"). Fails unless every BINARY loads Observation,
# and only with LC_LOAD_WEAK_DYLIB. macOS's bash 3.2 and otool; no GNU tools.
set -eo pipefail
status=0
for binary in "$@"; do
    # `otool -l` prints each load command as "cmd LC_…" then, for a dylib, "name /path (offset n)".
    loads=$(otool -l "$binary" | awk '$1 == "cmd" { cmd = $2 } $1 == "name" && $2 ~ /Observation/ { print cmd, $2 }')
    if [ -z "$loads" ]; then
        echo "::error::$binary does not load Observation: nothing to check (has the build changed?)"
        status=1
        continue
    fi
    echo "$binary:"
    echo "$loads" | sed 's/^/    /'
    if echo "$loads" | grep -v '^LC_LOAD_WEAK_DYLIB ' >/dev/null; then
        echo "::error::$binary loads Observation strongly; it would not launch before iOS 17 / macOS 14"
        status=1
    fi
done
exit "$status"
