#!/usr/bin/env bash
# Shows that the client-over-stored-files fuzz target finds issue 23's finding 1 by itself once its
# fix is removed (Docs/Reliability.md, "A client over stored files").
#
#   Scripts/fuzz-finding-1.sh [--restarts N] [--inputs R]
#
#   --restarts N  at most N runs, with libFuzzer seeds 1…N (default 100)
#   --inputs R    inputs per run (default 300)
#
# It checks out HEAD into a git worktree at .build/fuzz-finding-1 (removed at the end), applies
# Fuzz/regressions/client-over-stored-files-finding-1-fix-removed.patch (the range check of a stored
# `failedAttempts` and the saturating count both undone), builds the target there with
# Scripts/fuzz.sh, and first replays the crashing input to show the build traps. Then it fuzzes from
# the near-miss input alone (one item whose count is one below `Int.max`, and one 400 answer; it
# does not trap): libFuzzer's mutations must find the count that overflows. Each run starts afresh
# from that input: within one long run the corpus grows to hundreds of inputs within seconds and
# the near-miss is picked ever more rarely, so short restarts give the mutations more chances on it.
# It stops at the first run that crashes with the overflow and prints its seed, its input count and
# the mutations that led there. Exit status: 0 when a run found it, 1 when none did.
set -euo pipefail
cd "$(dirname "$0")/.."
restarts=100
inputs=300
while (($#)); do
    case "$1" in
        --restarts) restarts=${2:?--restarts needs a number}; shift 2 ;;
        --inputs) inputs=${2:?--inputs needs a number}; shift 2 ;;
        *) sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
root=$PWD
tree=$root/.build/fuzz-finding-1
work=$(mktemp -d)
cleanup() {
    git -C "$root" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
    rm -rf "$work"
}
trap cleanup EXIT
git worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
git worktree add --detach -q "$tree" HEAD
git -C "$tree" apply "$root/Fuzz/regressions/client-over-stored-files-finding-1-fix-removed.patch"
(cd "$tree" && Scripts/fuzz.sh client-over-stored-files --build-only)
binary=$tree/.build/fuzz/bin/client-over-stored-files
export SWIFT_BACKTRACE=enable=no

status=0
"$binary" Fuzz/regressions/client-over-stored-files-failed-attempts-overflow >"$work/replay.log" 2>&1 || status=$?
if ! grep -q "arithmetic overflow" "$work/replay.log"; then
    echo "fuzz-finding-1: the build without the fix does not trap on the crashing input (exit $status)" >&2
    exit 1
fi
echo "without the fix, the crashing input traps (exit $status, arithmetic overflow)"

for ((seed = 1; seed <= restarts; seed++)); do
    rm -rf "$work/corpus" "$work/artifacts"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp Fuzz/regressions/client-over-stored-files-one-below-failed-attempts-overflow "$work/corpus/"
    status=0
    "$binary" -seed="$seed" -runs="$inputs" -detect_leaks=0 -timeout=10 -rss_limit_mb=2048 -max_len=600 \
        -dict=Fuzz/client-over-stored-files.dict -artifact_prefix="$work/artifacts/" "$work/corpus" \
        >"$work/run.log" 2>&1 || status=$?
    if grep -q "arithmetic overflow" "$work/run.log"; then
        echo "found in run $seed of $restarts (libFuzzer seed $seed), exit $status:"
        grep -m1 -o "Swift runtime failure: arithmetic overflow" "$work/run.log" || true
        grep -E "^(MS:|#[0-9]+)" "$work/run.log" | tail -2
        echo "the crashing input:"
        cat "$work"/artifacts/crash-* | head -c 600
        echo
        echo "inputs run before it, in all runs: $(((seed - 1) * inputs)) + the last run's"
        exit 0
    fi
    if ((status != 0)); then
        echo "fuzz-finding-1: run $seed failed otherwise (exit $status):" >&2
        tail -20 "$work/run.log" >&2
        exit 1
    fi
done
echo "not found in $restarts runs of $inputs inputs"
exit 1
