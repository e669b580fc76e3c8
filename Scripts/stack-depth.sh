#!/usr/bin/env bash
# Measures how deeply nested a JSON text each of the SDK's and the emulator's JSON paths survives on
# a 512 KiB thread stack (Apple's secondary threads), in debug and release builds, and writes the
# figures of the "Stack depth" section of Docs/Reliability.md (see Behaviour P9).
#
#   Scripts/stack-depth.sh           # measure, write Docs/StackDepth.json, regenerate the doc section
#   Scripts/stack-depth.sh --doc     # regenerate the doc section from the committed JSON only
#   Scripts/stack-depth.sh --check   # exit 1 when the doc section is out of date with the JSON
#
# Each probe is one `segments-bench stack-probe PATH SHAPE DEPTH` process: it runs the path on a
# 512 KiB thread and exits 0, or dies of a stack overflow (a signal), or exits 3 when the path
# itself refused the depth. A binary search between 3 and 4096 levels finds the deepest text that
# finishes; a path that finishes 4096 levels is reported as 4096 ("at least"). Linux only (bash 4).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=Scripts/generated-region.sh
source Scripts/generated-region.sh
json=Docs/StackDepth.json
doc=Docs/Reliability.md
ceiling=4096
paths=(json-decoder json-serialization upload-body-encoder journal-reader journal-writer emulator-decoder emulator-encoder)
shapes=(object array)

# 0: finished; 1: stack overflow (signal); 2: refused by the path.
probe() {
    local status=0
    "$bench" stack-probe "$1" "$2" "$3" 2>/dev/null || status=$?
    if ((status == 0)); then return 0; fi
    if ((status == 3)); then return 2; fi
    if ((status >= 128)); then return 1; fi
    echo "error: stack-probe $1 $2 $3 exited with $status" >&2
    exit 1
}

# Prints "DEPTH STOP": the deepest depth that finished and what stopped the next one
# (overflow, refused, or ceiling).
deepest() {
    local path=$1 shape=$2 good=3 bad=$((ceiling + 1)) stop=ceiling middle status
    probe "$path" "$shape" "$ceiling" && { echo "$ceiling ceiling"; return; } || status=$?
    stop=$([[ $status == 1 ]] && echo overflow || echo refused)
    while ((bad - good > 1)); do
        middle=$(((good + bad) / 2))
        if probe "$path" "$shape" "$middle"; then good=$middle; else
            status=$?
            bad=$middle
            stop=$([[ $status == 1 ]] && echo overflow || echo refused)
        fi
    done
    echo "$good $stop"
}

measure() {
    ulimit -c 0
    local lines=() configuration path shape result limits
    for configuration in debug release; do
        swift build -c "$configuration" --product segments-bench >&2
        bench=.build/$configuration/segments-bench
        for path in "${paths[@]}"; do
            for shape in "${shapes[@]}"; do
                read -r depth stop < <(deepest "$path" "$shape")
                echo "$configuration $path $shape: $depth ($stop)" >&2
                lines+=("    {\"configuration\": \"$configuration\", \"path\": \"$path\", \"shape\": \"$shape\", \"deepest\": $depth, \"stoppedBy\": \"$stop\"}")
            done
        done
    done
    limits=$("$bench" stack-probe limits)
    {
        echo "{"
        echo "  \"stackBytes\": 524288,"
        echo "  \"machine\": \"$(uname -sm), $(nproc) cores, $(swift --version 2>&1 | head -1 | sed 's/"/\\"/g')\","
        echo "  \"date\": \"$(date -u +%Y-%m-%d)\","
        echo "  \"limits\": $limits,"
        echo "  \"runs\": ["
        local IFS=$'\n'
        printf '%s\n' "${lines[@]}" | sed '$!s/$/,/'
        echo "  ]"
        echo "}"
    } >"$json"
}

# The Markdown section, from the JSON alone.
render() {
    awk '
        /"machine":/ { sub(/^[^:]*: "/, ""); sub(/",$/, ""); machine = $0 }
        /"date":/ { sub(/^[^:]*: "/, ""); sub(/",$/, ""); date = $0 }
        /"limits":/ {
            line = $0
            while (match(line, /"[A-Za-z]+": *[0-9]+/)) {
                pair = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
                split(pair, kv, /": */); key = substr(kv[1], 2); limit[key] = kv[2] + 0
            }
        }
        /"configuration":/ {
            match($0, /"configuration": "[a-z]+"/); c = substr($0, RSTART + 18, RLENGTH - 19)
            match($0, /"path": "[a-z-]+"/); p = substr($0, RSTART + 9, RLENGTH - 10)
            match($0, /"shape": "[a-z]+"/); s = substr($0, RSTART + 10, RLENGTH - 11)
            match($0, /"deepest": [0-9]+/); d = substr($0, RSTART + 11, RLENGTH - 11) + 0
            match($0, /"stoppedBy": "[a-z]+"/); b = substr($0, RSTART + 14, RLENGTH - 15)
            if (!(p in seen)) { seen[p] = 1; order[++n] = p }
            cell[p, c, s] = d (b == "ceiling" ? "+" : (b == "refused" ? " (refused)" : ""))
            if (!((p, c) in low) || d < low[p, c]) low[p, c] = d
        }
        END {
            printf "Deepest JSON text (levels of nesting) each path finished on a 512 KiB thread stack, nested objects / nested arrays; `+`: the search ceiling. Measured %s on %s.\n\n", date, machine
            print "| path | limit | debug | release | margin (debug, worst shape) |"
            print "|---|---:|---:|---:|---:|"
            for (i = 1; i <= n; i++) {
                p = order[i]
                l = "—"
                if (p == "json-decoder") l = limit["eventProperties"]
                if (p == "upload-body-encoder" || p == "journal-reader" || p == "journal-writer") l = limit["envelope"]
                if (p == "emulator-decoder" || p == "emulator-encoder") l = limit["emulator"]
                m = (l == "—") ? "—" : sprintf("%.1f×", low[p, "debug"] / l)
                printf "| `%s` | %s | %s / %s | %s / %s | %s |\n", p, l, cell[p, "debug", "object"], cell[p, "debug", "array"], cell[p, "release", "object"], cell[p, "release", "array"], m
            }
            printf "\nLimits: event properties %d levels, stored or sent texts (journal line, upload body) %d, the emulator %d.\n", limit["eventProperties"], limit["envelope"], limit["emulator"]
        }
    ' "$json"
}

# The doc with the section regenerated from the JSON, in a new temporary file.
regenerated() {
    local out
    out=$(mktemp)
    TABLE="$(render)" generated_region "$doc" stack-depth "<!-- from Scripts/stack-depth.sh: do not edit by hand -->" >"$out"
    echo "$out"
}

case "${1:-}" in
    --check) CHECK=true write_or_check "$doc" "$(regenerated)" "Scripts/stack-depth.sh --doc" ;;
    --doc) write_or_check "$doc" "$(regenerated)" Scripts/stack-depth.sh ;;
    "") measure; write_or_check "$doc" "$(regenerated)" Scripts/stack-depth.sh ;;
    *) echo "usage: $0 [--doc|--check]" >&2; exit 2 ;;
esac
