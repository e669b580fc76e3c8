#!/usr/bin/env bash
# Regenerates the generated tables of Docs/Performance.md (and the stored-file memory table of
# Docs/Reliability.md) from committed segments-bench runs, so every figure there comes from a JSON
# file in Docs/, never typed by hand.
#
#   Scripts/performance-doc.sh           # rewrite the tables in place
#   Scripts/performance-doc.sh --check   # exit 1 when a document is out of date
#
# Each table sits between `<!-- generated: NAME -->` and `<!-- end generated: NAME -->`; NAME is
# listed below with the kind of table and the runs it shows (LABEL=FILE, files relative to the
# repository root):
#   results  `segments-bench --markdown-results`: one row per figure of the runs, a later run
#            replacing the benchmarks it re-measured; an `--only LIST` first picks benchmarks.
#            Rows come from the JSON, so a figure added to the benchmarks appears here with its
#            next committed run, without editing this script.
#   compare  `segments-bench --markdown`: the same figures side by side, a column group per run.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=Scripts/generated-region.sh
source Scripts/generated-region.sh
CHECK=false
[[ ${1:-} == --check ]] && CHECK=true

declare -A tables=(
    [results]="results --only 1,2,3,4,5,8,9 record=Docs/Performance.json stored-files=Docs/Performance-StoredFiles.json"
    [lru]="compare before=Docs/Performance-LRU-before.json after=Docs/Performance-LRU.json"
    [callers]="results --only 6,7,10,11 record=Docs/Performance.json"
    [network]="results --only 12 network=Docs/Performance-Network.json"
)
# Docs/Reliability.md states the stored files' memory (Behaviour P7) with benchmark 8's own rows.
declare -A reliability_tables=(
    [stored-files-memory]="results --only 8 stored-files=Docs/Performance-StoredFiles.json"
)

swift build -c release --product segments-bench >&2
bench=.build/release/segments-bench

# Writes (or checks) DOC's tables; $1 is the document, $2 the name of its table array.
render_doc() {
    local doc=$1 out name kind runs only option table
    local -n doc_tables=$2
    out=$(mktemp)
    cp "$doc" "$out"
    for name in $(printf '%s\n' "${!doc_tables[@]}" | sort); do
        read -r kind runs <<<"${doc_tables[$name]}"
        only=()
        if [[ $runs == --only\ * ]]; then
            read -r _ list runs <<<"$runs"
            only=(--only "$list")
        fi
        case $kind in
            results) option=--markdown-results ;;
            compare) option=--markdown ;;
            *) echo "error: unknown table kind '$kind' for $name" >&2; exit 1 ;;
        esac
        # shellcheck disable=SC2086  # the run list is split on purpose
        table=$("$bench" "$option" $runs ${only[@]+"${only[@]}"})
        TABLE="$table" generated_region "$out" "$name" "<!-- from Scripts/performance-doc.sh: do not edit by hand -->" >"$out.next"
        mv "$out.next" "$out"
    done
    CHECK=$CHECK write_or_check "$doc" "$out" Scripts/performance-doc.sh
}

status=0
render_doc Docs/Performance.md tables || status=1
render_doc Docs/Reliability.md reliability_tables || status=1
exit $status
