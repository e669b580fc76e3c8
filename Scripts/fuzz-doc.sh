#!/usr/bin/env bash
# Regenerates the table of fuzzing campaigns in Docs/Reliability.md from the committed records in
# Docs/Fuzz.json, so every figure there comes from a run's log (Scripts/fuzz-summary.sh), never
# typed by hand. Runs no fuzzer: cheap enough for CI.
#
#   Scripts/fuzz-doc.sh           # rewrite the table in place
#   Scripts/fuzz-doc.sh --check   # exit 1 when Docs/Reliability.md is out of date
#
# The table sits between `<!-- generated: fuzz -->` and `<!-- end generated: fuzz -->`, one row per
# record, in the file's order. A record is one line of Docs/Fuzz.json's `runs`: the line
# Scripts/fuzz.sh writes as .build/fuzz/logs/<target>.json after a run, pasted whole; a record
# with a `source` was transcribed from a run that predates the records (shown with a mark).
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C

# shellcheck source=Scripts/generated-region.sh
source Scripts/generated-region.sh

records=Docs/Fuzz.json
doc=Docs/Reliability.md
CHECK=false
[[ ${1:-} == --check ]] && CHECK=true

# jget is mutate.sh's JSON field reader (Scripts/mutation-json.awk): one record a line.
table=$(awk "$(cat Scripts/mutation-json.awk)"'
function thousands(n,    out) {
    if (n == "" || n == "null") return "—"
    out = ""
    while (length(n) > 3) { out = "," substr(n, length(n) - 2) out; n = substr(n, 1, length(n) - 3) }
    return n out
}
function value(s, k,    v) { v = jget(s, k); return (v == "" || v == "null") ? "" : v }
function size(s) { sub(/Kb$/, " KB", s); sub(/Mb$/, " MB", s); return s }
BEGIN {
    print "| target | inputs | time | exec/s | coverage (`cov:` edges / `ft:` features) | corpus at the end | peak RSS | crashes, hangs, leaks | seed | code |"
    print "|---|---|---|---|---|---|---|---|---|---|"
}
/"target": / {
    t = value($0, "target"); commit = value($0, "commit"); seed = value($0, "seed")
    corpus = value($0, "corpusInputs") == "" ? "—" : thousands(value($0, "corpusInputs")) " inputs, " size(value($0, "corpusSize"))
    rss = value($0, "peakRSSMB") == "" ? "—" : thousands(value($0, "peakRSSMB")) " MB"
    ft = value($0, "features") == "" ? "—" : thousands(value($0, "features"))
    mark = value($0, "source") == "" ? "" : " ¹"
    printf "| `%s`%s | %s | %s s | %s | %s / %s | %s | %s | %s | %s | %s |\n", t, mark, thousands(value($0, "inputs")), \
        thousands(value($0, "seconds")), thousands(value($0, "execPerSecond")), thousands(value($0, "coverage")), ft, \
        corpus, rss, value($0, "crashes"), seed == "" ? "—" : seed, commit == "" ? "—" : "`" commit "`"
    if (mark != "") transcribed = 1
}
END {
    if (transcribed) {
        print ""
        print "¹ Transcribed into `Docs/Fuzz.json` from the summary the run printed: these campaigns predate the"
        print "records, and their logs (and seeds) were not kept."
    }
}' "$records")

out=$(mktemp)
TABLE="$table" generated_region "$doc" fuzz "<!-- from Scripts/fuzz-doc.sh and Docs/Fuzz.json: do not edit by hand -->" >"$out"
CHECK=$CHECK write_or_check "$doc" "$out" Scripts/fuzz-doc.sh
