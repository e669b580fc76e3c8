#!/usr/bin/env bash
# Mutation testing without dependencies (Docs/Reliability.md, "Mutation testing").
#
#   Scripts/mutate.sh [--files PATH]... [--sample N] [--seed S] [--list] [--scratch DIR] [--test-timeout S]
#
#   --files P     source files or folders to mutate, repeatable (default: Sources/Domain,
#                 Sources/Data, Sources/Persistence and Sources/Networking)
#   --sample N    mutants to run, drawn at random from every mutation site (default 40; 0 = all)
#   --seed S      seed of the draw (default 1): the same seed and files give the same mutants
#   --list        print the drawn mutants and run nothing
#   --scratch DIR where the mutated copy and its build live (default .build-mutate)
#   --build-timeout S / --test-timeout S   per mutant (defaults 900 / 60); a test run that times
#                 out counts as killed (a hang is a failure the suite's time limits report)
#
# Each mutant is ONE textual change on one line of a copy of the repository (your working tree is
# never touched): negate a condition (`if c` → `if !(c)`, `guard c` → `guard !(c)`), `<` ↔ `<=`,
# `>` ↔ `>=`, `==` ↔ `!=`, `&&` ↔ `||`, delete a statement, change a constant (an integer
# literal n → n + 1, `true` ↔ `false`), or return early (a Void function returns at its first
# line). The copy is rebuilt (`swift build --build-tests`), the unit tests of the mutated module
# run (Domain: SegmentsDomainTests and SegmentsDataTests; Data: SegmentsDataTests; Persistence:
# SegmentsPersistenceTests; Networking: SegmentsNetworkingTests), and the file is restored before
# the next mutant — also on Ctrl-C or any error (trap). Each result is printed as
#   killed | survived | build-failed | timeout(killed)   file:line  operator  mutated line
# then a score per module: killed ÷ (killed + survived), build failures left out.
set -euo pipefail
script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$script")/.."
root=$PWD

files=()
sample=40
seed=1
list_only=false
scratch=.build-mutate
build_timeout=900
test_timeout=60
usage() { sed -n '4,15p' "$script" | sed 's/^# \{0,1\}//'; }
while (($#)); do
    case "$1" in
        --files) files+=("${2:?--files needs a path}"); shift 2 ;;
        --sample) sample=${2:?--sample needs a number}; shift 2 ;;
        --seed) seed=${2:?--seed needs a number}; shift 2 ;;
        --list) list_only=true; shift ;;
        --scratch) scratch=${2:?--scratch needs a folder}; shift 2 ;;
        --build-timeout) build_timeout=${2:?}; shift 2 ;;
        --test-timeout) test_timeout=${2:?}; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "mutate.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done
((${#files[@]})) || files=(Sources/Domain Sources/Data Sources/Persistence Sources/Networking)

# The module a source file belongs to, and the test targets that judge its mutants.
module_of() {
    case "$1" in
        Sources/Domain/*) echo Domain ;;
        Sources/Data/*) echo Data ;;
        Sources/Persistence/*) echo Persistence ;;
        Sources/Networking/*) echo Networking ;;
        *) echo "mutate.sh: $1 is outside Sources/Domain, Data, Persistence and Networking" >&2; return 1 ;;
    esac
}
tests_of() {
    case "$1" in
        Domain) echo '^(SegmentsDomainTests|SegmentsDataTests)\.' ;;
        Data) echo '^SegmentsDataTests\.' ;;
        Persistence) echo '^SegmentsPersistenceTests\.' ;;
        Networking) echo '^SegmentsNetworkingTests\.' ;;
    esac
}

# Every mutation site as `file<TAB>line<TAB>operator`. The awk program below is also the one that
# applies a mutation (mode=apply), so listing and applying never disagree. String literals and
# comments are blanked before matching, so only code is mutated.
read -r -d '' MUTATOR <<'AWK' || true
function code_of(s,    out, i, c, inq, esc) {
    out = ""; inq = 0; esc = 0
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (inq) { out = out "_"; if (esc) esc = 0; else if (c == "\\") esc = 1; else if (c == "\"") inq = 0; continue }
        if (c == "\"") { inq = 1; out = out "_"; continue }
        if (c == "/" && substr(s, i + 1, 1) == "/") { while (i <= length(s)) { out = out " "; i++ }; break }
        out = out c
    }
    return out
}
function balanced(s,    i, c, depth) {
    depth = 0
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "(" || c == "[" || c == "{") depth++
        if (c == ")" || c == "]" || c == "}") { depth--; if (depth < 0) return 0 }
    }
    return depth == 0
}
# Position of the first match of regex r in the code part of the line, or 0.
function at(code, r) { return match(code, r) ? RSTART : 0 }
# Applies operator op to line s (code is s with strings blanked); "" when op has no site here.
function mutate(s, code, op,    p, t, rest, n) {
    if (op == "negate-if") {
        if (!match(code, /^[ \t]*(\} else )?if [^{]*\{[ \t]*$/)) return ""
        if (code ~ /if (let|var|case) / || code ~ /, *(let|var|case) /) return ""
        p = index(code, "if ") + 3; t = index(code, "{")
        while (substr(s, t - 1, 1) == " ") t--
        return substr(s, 1, p - 1) "!(" substr(s, p, t - p) ")" substr(s, t)
    }
    if (op == "negate-guard") {
        if (!match(code, /^[ \t]*guard [^{]* else *\{/)) return ""
        if (code ~ /guard (let|var|case) / || code ~ /, *(let|var|case) /) return ""
        p = index(code, "guard ") + 6; t = index(code, " else")
        return substr(s, 1, p - 1) "!(" substr(s, p, t - p) ")" substr(s, t)
    }
    if (op == "lt-le") { if (!(p = at(code, " < "))) return ""; return substr(s, 1, p - 1) " <= " substr(s, p + 3) }
    if (op == "le-lt") { if (!(p = at(code, " <= "))) return ""; return substr(s, 1, p - 1) " < " substr(s, p + 4) }
    if (op == "gt-ge") { if (!(p = at(code, " > "))) return ""; return substr(s, 1, p - 1) " >= " substr(s, p + 3) }
    if (op == "ge-gt") { if (!(p = at(code, " >= "))) return ""; return substr(s, 1, p - 1) " > " substr(s, p + 4) }
    if (op == "eq-ne") { if (!(p = at(code, " == "))) return ""; return substr(s, 1, p - 1) " != " substr(s, p + 4) }
    if (op == "ne-eq") { if (!(p = at(code, " != "))) return ""; return substr(s, 1, p - 1) " == " substr(s, p + 4) }
    if (op == "and-or") { if (!(p = at(code, " && "))) return ""; return substr(s, 1, p - 1) " || " substr(s, p + 4) }
    if (op == "or-and") { if (!(p = at(code, " \\|\\| "))) return ""; return substr(s, 1, p - 1) " && " substr(s, p + 4) }
    if (op == "true-false") { if (!(p = at(code, "[^A-Za-z0-9_.]true([^A-Za-z0-9_]|$)"))) return ""; return substr(s, 1, p) "false" substr(s, p + 5) }
    if (op == "false-true") { if (!(p = at(code, "[^A-Za-z0-9_.]false([^A-Za-z0-9_]|$)"))) return ""; return substr(s, 1, p) "true" substr(s, p + 6) }
    if (op == "constant") {
        if (code ~ /^[ \t]*(case |@|#)/) return ""
        if (!(p = at(code, "[^A-Za-z0-9_.$][0-9]+([^A-Za-z0-9_.]|$)"))) return ""
        rest = substr(code, p + 1); match(rest, /^[0-9]+/); n = substr(rest, 1, RLENGTH)
        return substr(s, 1, p) (n + 1) substr(s, p + 1 + RLENGTH)
    }
    if (op == "delete") {
        # A whole simple statement on one line: a call or an assignment, nothing that declares,
        # returns, opens or closes a block.
        if (code ~ /^[ \t]*(let|var|return|func|init|deinit|guard|if|else|for|while|repeat|switch|case|default|do|catch|throw|defer|break|continue|fallthrough|import|struct|class|enum|actor|protocol|extension|typealias|public|package|private|fileprivate|internal|static|final|override|mutating|nonisolated|@|#|\}|\{|\)|\]|\.)/) return ""
        if (code ~ /[{}]/ || code ~ /(\(|\[|,|=|\?|:|\|\||&&|\+|-)[ \t]*$/ || !balanced(code)) return ""
        if (code !~ /\)[ \t]*$/ && code !~ /[^=!<>]=[^=]/) return ""
        if (code ~ /^[ \t]*(try |await )*[A-Za-z_]+\($/) return ""
        match(s, /^[ \t]*/)
        return substr(s, 1, RLENGTH) "// mutant: statement deleted: " substr(s, RLENGTH + 1)
    }
    if (op == "return-early") {
        if (!match(code, /^[ \t]*([a-z@]+ )*func [^(]*\(.*\)[^-{]*\{[ \t]*$/)) return ""
        if (code ~ /->/ || code ~ / throws\(|rethrows/) return ""
        return s " return;"
    }
    return ""
}
BEGIN { n_ops = split("negate-if negate-guard lt-le le-lt gt-ge ge-gt eq-ne ne-eq and-or or-and true-false false-true constant delete return-early", ops, " ") }
{
    code = code_of($0)
    if (mode == "list") {
        if (code ~ /^[ \t]*$/) next
        for (i = 1; i <= n_ops; i++) if (mutate($0, code, ops[i]) != "") printf "%s\t%d\t%s\n", FILENAME, FNR, ops[i]
    } else if (mode == "apply") {
        if (FNR == target) { m = mutate($0, code, op); if (m == "") { print "mutate.sh: no site" > "/dev/stderr"; exit 3 }; print m } else print
    }
}
AWK

sources=()
for f in "${files[@]}"; do
    [[ -e $f ]] || { echo "mutate.sh: no such file or folder: $f" >&2; exit 2; }
    while IFS= read -r s; do module_of "$s" >/dev/null && sources+=("$s"); done < <(find "$f" -name '*.swift' | sort)
done
((${#sources[@]})) || { echo "mutate.sh: no Swift files selected" >&2; exit 2; }

# All sites, shuffled by the seed (awk's rand), then the first N.
sites=$(awk -v mode=list "$MUTATOR" "${sources[@]}" |
    awk -v seed="$seed" 'BEGIN { srand(seed) } { printf "%.12f\t%s\n", rand(), $0 }' | sort -k1,1 | cut -f2-)
total=$(printf '%s\n' "$sites" | grep -c . || true)
if ((sample > 0)); then sites=$(printf '%s\n' "$sites" | awk -v n="$sample" 'NR <= n'); fi
echo "mutate.sh: $total mutation sites in ${#sources[@]} files; running $(printf '%s\n' "$sites" | grep -c .) (seed $seed)" >&2

if $list_only; then
    while IFS=$'\t' read -r file line op; do
        mutated=$(awk -v mode=apply -v target="$line" -v op="$op" "$MUTATOR" "$file" | sed -n "${line}p")
        printf '%s:%s\t%s\t%s\n' "$file" "$line" "$op" "$(echo "$mutated" | sed 's/^[ \t]*//')"
    done <<<"$sites"
    exit 0
fi

# A copy of the tracked files (plus uncommitted changes to them) in the scratch folder: mutants are
# applied there, never to the working tree.
copy="$root/$scratch/src"
mkdir -p "$copy"
# Only files whose content differs are copied (with a new modification time), so the copy's build
# stays incremental and a file restored after an earlier run's last mutant is still rebuilt.
staging="$root/$scratch/staging"
rm -rf "$staging" && mkdir -p "$staging"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | (cd "$staging" && tar -xf -)
(cd "$staging" && find . -type f -print0) | while IFS= read -r -d '' f; do
    if ! cmp -s "$staging/$f" "$copy/$f"; then mkdir -p "$(dirname "$copy/$f")" && cp "$staging/$f" "$copy/$f"; fi
done
(cd "$copy" && find . -type f -print0) | while IFS= read -r -d '' f; do
    [[ -e $staging/$f ]] || rm -f "$copy/$f"
done
rm -rf "$staging"
# The copy's manifest keeps only the targets the selected modules' tests need, so a mutant
# rebuilds and links as little as possible (PackageDescription's `targets` and `products` are
# mutable; the lines are appended to the copy's Package.swift only).
declare -A keep=([SegmentsDomain]=1 [SegmentsData]=1 [SegmentsNetworking]=1 [SegmentsPersistence]=1 [SegmentsTesting]=1)
while IFS=$'\t' read -r file _; do
    [[ -n $file ]] || continue
    case $(module_of "$file") in
        Domain) keep[SegmentsDomainTests]=1; keep[SegmentsDataTests]=1 ;;
        Data) keep[SegmentsDataTests]=1 ;;
        Persistence) keep[SegmentsPersistenceTests]=1 ;;
        Networking) keep[SegmentsNetworkingTests]=1; keep[SegmentsEmulator]=1 ;;
    esac
done <<<"$sites"
{
    echo
    echo "// Added by Scripts/mutate.sh in its copy: only what the mutated modules' tests need."
    printf 'let mutateKeeps: Set<String> = [%s]\n' "$(printf '"%s", ' "${!keep[@]}" | sed 's/, $//')"
    echo 'package.targets.removeAll { !mutateKeeps.contains($0.name) }'
    echo 'package.products = []'
} >>"$copy/Package.swift"

current_file=""
backup="$root/$scratch/original.swift"
restore() {
    if [[ -n $current_file && -f $backup ]]; then cp "$backup" "$copy/$current_file"; current_file=""; fi
}
# Builds and test runs go to the background and are waited for, so a signal reaches the trap at
# once; the trap stops the running command (timeout passes the signal to its whole process group)
# before restoring the file.
child=""
run() {
    "$@" &
    child=$!
    local status=0
    wait "$child" || status=$?
    child=""
    return "$status"
}
interrupted() {
    if [[ -n $child ]]; then kill -TERM "$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; fi
    restore
    echo
    echo "mutate.sh: interrupted; every file restored" >&2
    exit 130
}
trap 'restore' EXIT
trap interrupted INT TERM

build() {
    run timeout -k 10 "$build_timeout" swift build --package-path "$copy" --build-tests --scratch-path "$root/$scratch/build" \
        >"$root/$scratch/build.log" 2>&1
}
# The test bundle is run directly (what `swift test --skip-build` runs), so that timeout's signal
# reaches it: swift-test does not pass a signal on to the bundle it started.
unit_tests() {
    run timeout -k 10 "$test_timeout" "$root/$scratch/build/debug/RealtimeSegmentsPackageTests.xctest" \
        --testing-library swift-testing --filter "$1" >"$root/$scratch/test.log" 2>&1
}
echo "mutate.sh: building the unmutated copy" >&2
build || { echo "mutate.sh: the unmutated copy does not build; see $scratch/build.log" >&2; exit 1; }
# Without a mutant the selected tests must pass, or every mutant would count as killed.
declare -A checked=()
while IFS=$'\t' read -r file _; do
    [[ -n $file ]] || continue
    module=$(module_of "$file")
    [[ -n ${checked[$module]:-} ]] && continue
    if ! unit_tests "$(tests_of "$module")"; then
        echo "mutate.sh: the $module tests fail without any mutant; see $scratch/test.log" >&2
        exit 1
    fi
    checked[$module]=1
done <<<"$sites"

declare -A killed=() survived=() failed=()
results="$root/$scratch/results.txt"
: >"$results"
while IFS=$'\t' read -r file line op; do
    [[ -n $file ]] || continue
    module=$(module_of "$file")
    filter=$(tests_of "$module")
    cp "$copy/$file" "$backup"
    current_file=$file
    awk -v mode=apply -v target="$line" -v op="$op" "$MUTATOR" "$backup" >"$copy/$file"
    mutated=$(sed -n "${line}p" "$copy/$file" | sed 's/^[ \t]*//')
    if ! build; then
        outcome=build-failed
        failed[$module]=$((${failed[$module]:-0} + 1))
    else
        status=0
        unit_tests "$filter" || status=$?
        if ((status == 0)); then
            outcome=survived
            survived[$module]=$((${survived[$module]:-0} + 1))
        else
            outcome=killed
            ((status == 124 || status == 137)) && outcome="timeout(killed)"
            killed[$module]=$((${killed[$module]:-0} + 1))
        fi
    fi
    restore
    printf '%-16s %s:%s\t%s\t%s\n' "$outcome" "$file" "$line" "$op" "$mutated" | tee -a "$results"
done <<<"$sites"
echo
echo "module       killed survived build-failed  score (killed / compiling mutants)"
all_k=0 all_s=0
for module in Domain Data Persistence Networking; do
    k=${killed[$module]:-0} s=${survived[$module]:-0} b=${failed[$module]:-0}
    ((k + s + b)) || continue
    all_k=$((all_k + k)) all_s=$((all_s + s))
    printf '%-12s %6d %8d %12d  %s\n' "$module" "$k" "$s" "$b" \
        "$(awk -v k="$k" -v s="$s" 'BEGIN { if (k + s) printf "%.1f%%", 100 * k / (k + s); else print "-" }')"
done
printf '%-12s %6d %8d %12s  %s\n' all "$all_k" "$all_s" "" \
    "$(awk -v k="$all_k" -v s="$all_s" 'BEGIN { if (k + s) printf "%.1f%%", 100 * k / (k + s); else print "-" }')"
echo "results: $scratch/results.txt"
