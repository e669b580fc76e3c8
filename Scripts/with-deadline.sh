#!/usr/bin/env bash
# Runs a test command with an outer time limit (CI): its output is shown and kept; if the limit
# is reached, the command is ended (SIGTERM, then SIGKILL 30 s later), the tests and suites that
# started but never finished are listed — the ones a deadlock holds — and the exit status is 124.
#
#   Scripts/with-deadline.sh SECONDS COMMAND [ARGUMENTS...]
#
# A suite's own time limit (Hang.timeLimit) records a failure, but a thread blocked forever keeps
# the process alive; this limit ends the run and says where it stood.
set -uo pipefail
limit=$1
shift
log=$(mktemp "${TMPDIR:-/tmp}/with-deadline.XXXXXX")
timeout --kill-after=30 "$limit" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "error: '$*' did not finish within $limit s (deadlock?); started but never finished:" >&2
    # Swift Testing: "◇ Test name() started." / "✔ Test name() passed…" / "✘ Test name() failed…";
    # XCTest: "Test Case 'name' started." / "… passed" / "… failed".
    sed 's/\x1b\[[0-9;]*m//g' "$log" | awk '
        /^[^ ]+ (Test|Suite) .* started\.$/ { name = $0; sub(/^[^ ]+ /, "", name); sub(/ started\.$/, "", name); open[name] = 1; next }
        /^[^ ]+ (Test|Suite) .* (passed|failed|skipped)/ { name = $0; sub(/^[^ ]+ /, "", name); sub(/ (passed|failed|skipped).*$/, "", name); delete open[name]; next }
        /^Test Case .* started\.$/ { name = $0; sub(/ started\.$/, "", name); open[name] = 1; next }
        /^Test Case .* (passed|failed|skipped)/ { name = $0; sub(/ (passed|failed|skipped).*$/, "", name); delete open[name]; next }
        END { for (n in open) print "  " n }
    ' | sort >&2
    echo "(full output: $log)" >&2
    exit 124
fi
rm -f "$log"
exit "$status"
