#!/usr/bin/env bash
# Prints the record of one libFuzzer run as one line of JSON, read from the run's log alone, so a
# campaign's row in Docs/Reliability.md comes from its log (Docs/Fuzz.json, Scripts/fuzz-doc.sh),
# never typed by hand.
#
#   Scripts/fuzz-summary.sh TARGET LOG COMMAND
#
#   TARGET   the target's name (Fuzz/TARGET.swift)
#   LOG      the run's log (.build/fuzz/logs/TARGET.log, written by Scripts/fuzz.sh)
#   COMMAND  the command that ran it, as someone would type it again
#
# The figures: inputs and seconds from libFuzzer's `Done N runs in S second(s)` line, exec/s
# and peak RSS from its final stats (`-print_final_stats=1`), coverage and corpus from its last
# status line, the seed from `INFO: Seed:`, crashes from its `Test unit written to` lines. The
# commit is the checkout's (with `+changes` when it has uncommitted changes to Sources/ or Fuzz/).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?target}
log=${2:?log}
command=${3:?command}

field() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
status_line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)
status_value() { grep -o "$1: [^ ]*" <<<"$status_line" | head -1 | cut -d' ' -f2; }
read -r inputs seconds < <(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 \2/p' "$log" | tail -1) || true
corpus=$(status_value corp)
commit=$(git rev-parse --short=10 HEAD)
git diff --quiet HEAD -- Sources Fuzz || commit="$commit+changes"
json() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }
number() { [[ ${1:-} =~ ^[0-9]+([.][0-9]+)?$ ]] && printf '%s' "$1" || printf 'null'; }

printf '{"target": %s, "command": %s, "commit": %s, "date": %s, "machine": %s, "swift": %s, ' \
    "$(json "$target")" "$(json "$command")" "$(json "$commit")" \
    "$(json "$(date -u -r "$log" +%Y-%m-%dT%H:%M:%SZ)")" \
    "$(json "$(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -s)")" \
    "$(json "$(swift --version 2>/dev/null | head -1 | sed 's/ (.*//')")"
printf '"seed": %s, "inputs": %s, "seconds": %s, "execPerSecond": %s, "coverage": %s, "features": %s, ' \
    "$(number "$(sed -n 's/^INFO: Seed: *//p' "$log" | head -1)")" "$(number "${inputs:-}")" "$(number "${seconds:-}")" \
    "$(number "$(field average_exec_per_sec)")" "$(number "$(status_value cov)")" "$(number "$(status_value ft)")"
printf '"corpusInputs": %s, "corpusSize": %s, "peakRSSMB": %s, "crashes": %s}\n' \
    "$(number "${corpus%%/*}")" "$(json "${corpus#*/}")" "$(number "$(field peak_rss_mb)")" \
    "$(grep -c '^Test unit written to' "$log" || true)"
