#!/usr/bin/env bash
# Builds and runs the libFuzzer targets in Fuzz/ (Docs/Reliability.md, "Fuzzing").
#
#   Scripts/fuzz.sh [target|all] [--runs N] [--seconds S] [--seed S] [--fresh] [-- libFuzzer flags…]
#
#   target       one of the names in TARGETS below, or `all` (the default)
#   --runs N     inputs per target (default 1000000; `--runs 20000` is the CI smoke run)
#   --seconds S  stop a target after S seconds instead (with --runs: whichever comes first)
#   --seed S     libFuzzer's random seed (default: libFuzzer picks one); the summary prints the seed
#   --fresh      start from the committed seeds only: empty .build/fuzz/corpus/<target>/ first
#   --build-only compile the targets, run nothing
#
# A campaign is reproduced by the same command with the same --seed and --fresh, on the same code
# (one process, no -jobs); the seed of every run is in the summary and in .build/fuzz/logs/.
#
# The package's modules are compiled with swiftc as separate static modules, instrumented for
# libFuzzer (edge coverage, comparison tracing) and AddressSanitizer, into .build/fuzz; each
# harness Fuzz/<target>.swift (plus Fuzz/Support/*.swift) is linked against the modules it needs.
# A run starts from the committed seeds in Fuzz/corpus/<target>/ and keeps what it finds in
# .build/fuzz/corpus/<target>/; a crashing input is saved as .build/fuzz/artifacts/<target>/crash-*
# and reproduced with `SWIFT_BACKTRACE=enable=no .build/fuzz/bin/<target> <file>`. Each run's record
# (Scripts/fuzz-summary.sh) is written as .build/fuzz/logs/<target>.json beside its log; a campaign
# worth keeping is added to Docs/Fuzz.json. Exit status: 0 when no target crashed.
set -euo pipefail
script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$script")/.."

# name → the package modules its harness imports, dependencies first. Adding a target is one
# line here plus Fuzz/<name>.swift (with an `@_cdecl("LLVMFuzzerTestOneInput")` function) and a
# few seed files in Fuzz/corpus/<name>/.
TARGETS=(
    "segments-decoder   SegmentsDomain SegmentsNetworking"
    "stored-files       SegmentsDomain SegmentsPersistence"
    "http-parser        SegmentsEmulator"
    "odp-decoder        SegmentsDomain SegmentsNetworking"
    "url-and-retry-after SegmentsDomain SegmentsNetworking"
    "json-encodings     SegmentsDomain SegmentsNetworking SegmentsPersistence SegmentsEmulator"
    "client-over-stored-files SegmentsDomain SegmentsData SegmentsNetworking SegmentsPersistence SegmentsTesting RealtimeSegments"
)

# target → libFuzzer flags of its own. client-over-stored-files: no leak check after each input.
# A whole client leaves more allocations than it frees on most inputs (runtime and dispatch
# caches), so libFuzzer would run the input again and scan the heap with LeakSanitizer after
# nearly every one, about four times the cost of the input itself; the same decoders are
# leak-checked per input by stored-files, and growth still meets -rss_limit_mb. Inputs of at most
# 600 bytes (seeds are cut there): a longer journal costs more uploads per input, and the smoke
# run took over 8 minutes with the default length; a later `-- -max_len=N` overrides it.
target_flags() {
    case "$1" in
        client-over-stored-files) echo "-detect_leaks=0 -max_len=600" ;;
    esac
}

# module → its source folder (as in Package.swift).
module_path() {
    case "$1" in
        SegmentsDomain) echo Sources/Domain ;;
        SegmentsData) echo Sources/Data ;;
        SegmentsNetworking) echo Sources/Networking ;;
        SegmentsPersistence) echo Sources/Persistence ;;
        SegmentsEmulator) echo Sources/Emulator ;;
        SegmentsTesting) echo Sources/Testing ;;
        RealtimeSegments) echo Sources/Facade ;;
        *) echo "fuzz.sh: no source folder known for module $1" >&2; return 1 ;;
    esac
}

usage() { sed -n '4,16p' "$script" | sed 's/^# \{0,1\}//'; }

invocation="Scripts/fuzz.sh $*"
selected=all
runs=""
seconds=""
build_only=false
seed=""
fresh=false
extra=()
while (($#)); do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
        --build-only) build_only=true; shift ;;
        --seed) seed=${2:?--seed needs a number}; shift 2 ;;
        --fresh) fresh=true; shift ;;
        -h | --help) usage; exit 0 ;;
        --) shift; extra=("$@"); break ;;
        -*) echo "fuzz.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) selected=$1; shift ;;
    esac
done
if [[ -z $runs && -z $seconds ]]; then runs=1000000; fi

names=()
for entry in "${TARGETS[@]}"; do
    read -r name _ <<<"$entry"
    if [[ $selected == all || $selected == "$name" ]]; then names+=("$name"); fi
done
if ((${#names[@]} == 0)); then
    echo "fuzz.sh: unknown target '$selected'; targets: $(for e in "${TARGETS[@]}"; do read -r n _ <<<"$e"; printf '%s ' "$n"; done)" >&2
    exit 2
fi

export PATH="/opt/swift/usr/bin:$PATH"
# A Swift runtime trap (an overflow, a fatalError) must reach libFuzzer's own handler: Swift's
# backtracer (on by default on Linux since Swift 5.9) otherwise takes the signal, trips
# AddressSanitizer in its memory server, and can leave the run waiting on its helper process.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}
root=.build/fuzz
mkdir -p "$root/modules" "$root/bin"

# SwiftPM passes the package identity (the checkout folder's name, lowercased, as an identifier)
# as -package-name; `package` declarations are visible across modules compiled with the same one.
package_name=$(basename "$PWD" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9_]/_/g')
# -sanitize=fuzzer on a compile-only step instruments for coverage (inline 8-bit counters, PC
# table, comparison tracing) without linking libFuzzer's main; the harness link adds it.
# -enable-testing lets harnesses reach internal decoders with `@testable import`.
swift_flags=(-O -g -parse-as-library -enable-testing -package-name "$package_name"
    -sanitize=fuzzer,address -use-ld=lld -I "$root/modules" -L "$root/modules")

# Compiles one module unless its library is newer than its sources, this script and the
# libraries of the modules it builds on (the rest of the arguments): a module compiled against an
# older layout of a type it uses (a struct of SegmentsDomain, say) would crash at run time.
build_module() {
    local module=$1 dir library sources dependency stale=""
    shift
    dir=$(module_path "$module")
    library="$root/modules/lib$module.a"
    for dependency in "$@"; do
        [[ $root/modules/lib$dependency.a -nt $library ]] && stale=yes
    done
    if [[ -f $library && -z $stale && -z $(find "$dir" "$script" -newer "$library" -print -quit) ]]; then return; fi
    echo "fuzz.sh: compiling $module" >&2
    mapfile -t sources < <(find "$dir" -name '*.swift' | sort)
    swiftc "${swift_flags[@]}" -emit-library -static -emit-module -module-name "$module" \
        -emit-module-path "$root/modules/$module.swiftmodule" -o "$library" "${sources[@]}"
}

# Links one harness against its modules unless the binary is up to date.
build_target() {
    local name=$1; shift
    local binary="$root/bin/$name" libraries=() module newer=""
    local built=()
    for module in "$@"; do
        build_module "$module" ${built[@]+"${built[@]}"}
        built+=("$module")
        libraries+=("-l$module")
        [[ $root/modules/lib$module.a -nt $binary ]] && newer=yes
    done
    if [[ -f $binary && -z $newer && -z $(find "Fuzz/$name.swift" Fuzz/Support "$script" -newer "$binary" -print -quit) ]]; then
        return
    fi
    echo "fuzz.sh: linking $name" >&2
    swiftc "${swift_flags[@]}" -module-name "FuzzTarget" "Fuzz/$name.swift" Fuzz/Support/*.swift \
        "${libraries[@]}" -o "$binary"
}

for entry in "${TARGETS[@]}"; do
    read -r name modules <<<"$entry"
    for wanted in "${names[@]}"; do
        # shellcheck disable=SC2086 # the module list is meant to split
        [[ $wanted == "$name" ]] && build_target "$name" $modules
    done
done
$build_only && exit 0

# Runs one target; prints its summary row.
run_target() {
    local name=$1 log="$root/logs/$1.log" started finished status=0
    local corpus="$root/corpus/$name" artifacts="$root/artifacts/$name/"
    if $fresh; then rm -rf "$corpus"; fi
    mkdir -p "$corpus" "$artifacts" "$root/logs"
    local flags=(-artifact_prefix="$artifacts" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048)
    [[ -n $seed ]] && flags+=(-seed="$seed")
    [[ -n $runs ]] && flags+=(-runs="$runs")
    [[ -n $seconds ]] && flags+=(-max_total_time="$seconds")
    [[ -f Fuzz/$name.dict ]] && flags+=(-dict="Fuzz/$name.dict")
    local own=()
    read -r -a own <<<"$(target_flags "$name")"
    flags+=(${own[@]+"${own[@]}"})
    started=$(date +%s.%N)
    "$root/bin/$name" "${flags[@]}" ${extra[@]+"${extra[@]}"} "$corpus" "Fuzz/corpus/$name" >"$log" 2>&1 || status=$?
    finished=$(date +%s.%N)
    local executed coverage rate crashes used_seed
    executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    crashes=$(find "$artifacts" -newermt "@${started%.*}" -type f | wc -l)
    used_seed=$(sed -n 's/^INFO: Seed: *//p' "$log" | head -1)
    printf '%-24s %12s %9.1f %9s %6s %8s %12s\n' "$name" "${executed:-?}" "$(awk -v a="$started" -v b="$finished" 'BEGIN { print b - a }')" \
        "${rate:-?}" "${coverage:-?}" "$crashes" "${used_seed:-?}"
    # The run's record, for Docs/Fuzz.json when it is a campaign to keep (Scripts/fuzz-doc.sh).
    Scripts/fuzz-summary.sh "$name" "$log" "$invocation" >"$root/logs/$name.json" || true
    if ((status != 0)); then
        echo "fuzz.sh: $name failed (exit $status); log: $log" >&2
        grep -m1 -E 'ERROR: |Fatal error|fuzz invariant' "$log" >&2 || tail -20 "$log" >&2
        return 1
    fi
}

echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
printf '%-24s %12s %9s %9s %6s %8s %12s\n' target inputs seconds exec/s cov crashes seed
failed=0
for name in "${names[@]}"; do run_target "$name" || failed=1; done
exit $failed
