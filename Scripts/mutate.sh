#!/usr/bin/env bash
# Mutation testing without dependencies (Docs/Reliability.md, "Mutation testing").
#
#   Scripts/mutate.sh [--files PATH]... [--per-module N | --sample N] [--seed S] [--json FILE] [--list]
#   Scripts/mutate.sh --rerun FILE [--only OUTCOMES]
#   Scripts/mutate.sh --json FILE --merge FILE...
#
#   --files P       source files or folders to mutate, repeatable (default: Sources/Domain, Data,
#                   Persistence, Networking and Facade)
#   --per-module N  N mutants drawn at random from each module's sites (all of them when it has
#                   fewer); the default, with N = 200
#   --sample N      instead: N mutants drawn from all the sites together (0 = every site)
#   --seed S        seed of the draw (default 1): the same seed, files and awk give the same mutants
#   --json FILE     the results file, rewritten after every mutant (default .build-mutate/results.json)
#   --list          print the drawn mutants and run nothing
#   --rerun FILE    judge again the mutants of an earlier results FILE, at the code as it is now, and
#                   update FILE: each mutant is found by its original line's text (the nearest such
#                   line to where it was), so it still works when lines moved; one that is no
#                   longer there is recorded as `gone`
#   --only LIST     with --rerun: only the mutants whose outcome is in LIST (comma-separated, e.g.
#                   survived or survived,timeout)
#   --merge FILE... one results file (--json) from several, e.g. of runs made side by side with
#                   different --files and --scratch: their runs and mutants, renumbered
#   --resume        go on with a run that stopped (its --json FILE; the same other options): the
#                   mutants it judged are kept, the others run
#   --scratch DIR   where the mutated copy and its build live (default .build-mutate)
#   --build-timeout S / --test-timeout S   per mutant (defaults 900 / auto: three times the
#                   module's unmutated test run, at least 20 s); a test run that times out counts
#                   as killed (a hang is a failure the suite's time limits report)
#
# Each mutant is ONE textual change on one line of a copy of the repository (your working tree is
# never touched): negate a condition (`if c` → `if !(c)`, `guard c` → `guard !(c)`), `<` ↔ `<=`,
# `>` ↔ `>=`, `==` ↔ `!=`, `&&` ↔ `||`, delete a statement, change a constant (an integer
# literal n → n + 1, `true` ↔ `false`), or return early (a Void function returns at its first
# line). The copy is rebuilt (`swift build --build-tests`), the tests of the mutated module run
# (Domain: SegmentsDomainTests and SegmentsDataTests; Data: SegmentsDataTests; Persistence:
# SegmentsPersistenceTests; Networking: SegmentsNetworkingTests; Facade: RealtimeSegmentsTests and
# ExponeaCompatibilityTests), and the file is restored before the next mutant — also on Ctrl-C
# or any error (trap). Each result is printed as
#   killed | timeout | survived | build-failed   file:line  operator  mutated line
# then a score per module: killed (time-outs included) ÷ (killed + survived); mutants that do not
# compile are left out. Scripts/mutation-doc.sh turns a results file into Docs/Reliability.md's table.
set -euo pipefail
script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
command_line="Scripts/mutate.sh$(printf ' %q' "$@")"
cd "$(dirname "$script")/.."
root=$PWD

files=()
per_module=200
sample=""
seed=1
list_only=false
json=""
rerun=""
only=""
scratch=.build-mutate
build_timeout=900
test_timeout=auto
merge=()
resume=false
usage() { sed -n '4,31p' "$script" | sed 's/^# \{0,1\}//'; }
while (($#)); do
    case "$1" in
        --files) files+=("${2:?--files needs a path}"); shift 2 ;;
        --per-module) per_module=${2:?--per-module needs a number}; sample=""; shift 2 ;;
        --sample) sample=${2:?--sample needs a number}; shift 2 ;;
        --seed) seed=${2:?--seed needs a number}; shift 2 ;;
        --json) json=${2:?--json needs a file}; shift 2 ;;
        --list) list_only=true; shift ;;
        --resume) resume=true; shift ;;
        --rerun) rerun=${2:?--rerun needs a results file}; shift 2 ;;
        --only) only=${2:?--only needs outcomes}; shift 2 ;;
        --merge) shift; while (($#)) && [[ $1 != --* ]]; do merge+=("$1"); shift; done ;;
        --scratch) scratch=${2:?--scratch needs a folder}; shift 2 ;;
        --build-timeout) build_timeout=${2:?}; shift 2 ;;
        --test-timeout) test_timeout=${2:?}; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "mutate.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done
((${#files[@]})) || files=(Sources/Domain Sources/Data Sources/Persistence Sources/Networking Sources/Facade)
[[ -z $only || -n $rerun ]] || { echo "mutate.sh: --only goes with --rerun" >&2; exit 2; }
if [[ -n $rerun ]]; then
    [[ -f $rerun ]] || { echo "mutate.sh: no such results file: $rerun" >&2; exit 2; }
    json=$rerun
fi
[[ -n $json ]] || json=$scratch/results.json
case $scratch in /*) scratch_dir=$scratch ;; *) scratch_dir=$root/$scratch ;; esac
modules_in_order=(Domain Data Persistence Networking Facade)

# The module a source file belongs to (its folder under Sources), and the tests that judge its
# mutants: the module's own test target (Domain's also by SegmentsDataTests, the engine that uses
# its policies). End-to-end tests elsewhere do not count, so a mutant only they notice survives:
# its test belongs in the module's own target.
module_of() {
    case "$1" in
        Sources/Domain/*) echo Domain ;;
        Sources/Data/*) echo Data ;;
        Sources/Persistence/*) echo Persistence ;;
        Sources/Networking/*) echo Networking ;;
        Sources/Facade/*) echo Facade ;;
        *) echo "mutate.sh: $1 is outside Sources/Domain, Data, Persistence, Networking and Facade" >&2; return 1 ;;
    esac
}
tests_of() {
    case "$1" in
        Domain) echo '^(SegmentsDomainTests|SegmentsDataTests)\.' ;;
        Data) echo '^SegmentsDataTests\.' ;;
        Persistence) echo '^SegmentsPersistenceTests\.' ;;
        Networking) echo '^SegmentsNetworkingTests\.' ;;
        Facade) echo '^(RealtimeSegmentsTests|ExponeaCompatibilityTests)\.' ;;
    esac
}
# The slow part of a module's tests, run only when the rest passed (the verdict is the same, and
# most killed mutants are told in a second instead of ten): Networking's loopback integration
# suite, serialized, takes about 9 of its 9.5 s; Facade's simulation campaign about 27 of its 33 s.
slow_of() {
    case "$1" in
        Networking) echo '^SegmentsNetworkingTests\.LiveIntegrationTests' ;;
        Facade) echo '^RealtimeSegmentsTests\.SpecSimulationTests' ;;
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
        # A parameter with a default value (`name: Type = value`) is no statement.
        if (code ~ /^[ \t]*[A-Za-z_][A-Za-z0-9_]*: /) return ""
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

# JSON without dependencies (Scripts/mutation-json.awk, shared with Scripts/mutation-doc.sh).
JSONLIB=$(cat "$(dirname "$script")/mutation-json.awk")
export LC_ALL=C

now() { printf '%s' "${EPOCHREALTIME:-$SECONDS}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

started=$(now)
mkdir -p "$scratch_dir"
commit=$(git rev-parse --short=10 HEAD)
# Judged code that is not a commit is said so: a commit with uncommitted changes to the package.
[[ -z $(git status --porcelain -- Sources Tests Package.swift) ]] || commit="$commit+uncommitted"
date_started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
machine="$(uname -sm), $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') cores"
swift_version=$(swift --version 2>/dev/null | grep -m1 -o 'Swift version [^ ]*' || echo unknown)
judged="$scratch_dir/judged.jsonl"
old=/dev/null
if [[ -n $rerun ]]; then old="$scratch_dir/rerun-before.json"; cp "$rerun" "$old"; fi
olds=("$old")
new_run=1
site_counts=""
declare -A limit_of=()

# The results file: the runs (an earlier file's, then this one), each module's counts and score,
# and every mutant with the run and commit that judged it; a mutant judged again keeps its first
# outcome (firstOutcome, firstRun, firstCommit). Rewritten after every mutant, so a stopped run
# leaves its results so far (the run then says "complete": false).
write_json() { # complete
    local limits="" m tests=""
    for m in "${modules_in_order[@]}"; do
        [[ -n ${limit_of[$m]:-} ]] && limits="$limits${limits:+, }$m ${limit_of[$m]} s"
        tests="$tests$m=$(tests_of "$m") "
    done
    mkdir -p "$(dirname "$json")"
    COMMAND="$command_line" COMMIT="$commit" DATE="$date_started" MACHINE="$machine" SWIFT="$swift_version" \
        LIMITS="$limits" TESTS="$tests" SITES="$site_counts" \
        awk -v complete="$1" -v seconds="$(awk -v a="$(since "$started")" -v b="${before:-0}" 'BEGIN { printf "%.1f", a + b }')" -v order="${modules_in_order[*]}" -v judged="$judged" \
            -v new_run="$new_run" "$JSONLIB"'
        # Earlier results files: their runs and mutants, renumbered after the files before them.
        FILENAME != judged && FNR == 1 { run_base = nr; id_base = max_id }
        FILENAME != judged && index($0, "{\"run\": ") { line = unlisted($0); runs[++nr] = jset(line, "run", jget(line, "run") + run_base) }
        FILENAME != judged && index($0, "{\"module\": ") { sites[jget($0, "module")] = jget($0, "sites") }
        FILENAME != judged && index($0, "{\"id\": ") {
            line = unlisted($0); id = jget(line, "id") + id_base; if (id > max_id) max_id = id
            line = jset(jset(line, "id", id), "run", jget(line, "run") + run_base)
            if (jget(line, "firstRun") != "") line = jset(line, "firstRun", jget(line, "firstRun") + run_base)
            oldm[++no] = line
        }
        FILENAME == judged { id = jget($0, "id"); new[id] = $0; order_new[++nn] = id }
        END {
            n = split(ENVIRON["SITES"], s, " ")
            for (i = 1; i <= n; i++) { split(s[i], kv, "="); sites[kv[1]] = kv[2] }
            n = split(ENVIRON["TESTS"], s, " ")
            for (i = 1; i <= n; i++) { p = index(s[i], "="); tests[substr(s[i], 1, p - 1)] = substr(s[i], p + 1) }
            if (new_run) runs[++nr] = "{\"run\": " nr ", \"command\": " jstr(ENVIRON["COMMAND"]) ", \"commit\": " jstr(ENVIRON["COMMIT"]) \
                ", \"date\": " jstr(ENVIRON["DATE"]) ", \"machine\": " jstr(ENVIRON["MACHINE"]) ", \"swift\": " jstr(ENVIRON["SWIFT"]) \
                ", \"testTimeLimits\": " jstr(ENVIRON["LIMITS"]) ", \"judged\": " nn ", \"seconds\": " seconds ", \"complete\": " complete "}"
            # A mutant judged again keeps its first judgement.
            if (no) {
                for (i = 1; i <= no; i++) {
                    line = oldm[i]; id = jget(line, "id")
                    if (id in new) {
                        first = jget(line, "firstOutcome") != "" \
                            ? ", \"firstOutcome\": " jstr(jget(line, "firstOutcome")) ", \"firstRun\": " jget(line, "firstRun") ", \"firstCommit\": " jstr(jget(line, "firstCommit")) \
                            : ", \"firstOutcome\": " jstr(jget(line, "outcome")) ", \"firstRun\": " jget(line, "run") ", \"firstCommit\": " jstr(jget(line, "commit"))
                        line = new[id]; sub(/\}$/, first "}", line)
                    }
                    mutants[i] = line
                }
                nm = no
            } else { for (i = 1; i <= nn; i++) mutants[i] = new[order_new[i]]; nm = nn }
            for (i = 1; i <= nm; i++) {
                m = jget(mutants[i], "module"); o = jget(mutants[i], "outcome"); count[m]++
                if (o == "killed" || o == "timeout") killed[m]++
                if (o == "timeout") timeouts[m]++
                if (o == "survived") survived[m]++
                if (o == "build-failed") failed[m]++
                if (o == "gone") gone[m]++
            }
            print "{"
            print "  \"tool\": \"Scripts/mutate.sh\","
            print "  \"score\": \"killed / (killed + survived); a time-out counts as killed; mutants that do not compile and mutants whose line is gone are left out\","
            print "  \"runs\": ["
            for (i = 1; i <= nr; i++) print "    " runs[i] (i < nr ? "," : "")
            print "  ],"
            print "  \"modules\": ["
            k = split(order, mo, " "); first_m = 1
            for (i = 1; i <= k; i++) {
                m = mo[i]; if (!(m in count)) continue
                run_ = killed[m] + survived[m]
                printf "%s    {\"module\": %s, \"tests\": %s, \"sites\": %d, \"mutants\": %d, \"killed\": %d, \"timeouts\": %d, \"survived\": %d, \"buildFailed\": %d, \"gone\": %d, \"score\": %s}", \
                    (first_m ? "" : ",\n"), jstr(m), jstr(tests[m]), sites[m], count[m], killed[m], timeouts[m], survived[m], failed[m], gone[m], \
                    (run_ ? sprintf("%.1f", 100 * killed[m] / run_) : "null")
                first_m = 0
            }
            print ""
            print "  ],"
            print "  \"mutants\": ["
            for (i = 1; i <= nm; i++) print "    " mutants[i] (i < nm ? "," : "")
            print "  ]"
            print "}"
        }' "${olds[@]}" "$judged" >"$json.next"
    mv "$json.next" "$json"
}
summary() {
    awk "$JSONLIB"'
        BEGIN { print "module       killed (time-outs) survived build-failed gone  score (killed / compiling mutants)" }
        index($0, "{\"module\": ") {
            printf "%-12s %6d %11s %8d %12d %4d  %s\n", jget($0, "module"), jget($0, "killed"), "(" jget($0, "timeouts") ")", \
                jget($0, "survived"), jget($0, "buildFailed"), jget($0, "gone"), (jget($0, "score") == "null" ? "-" : jget($0, "score") "%")
        }' "$json"
    echo "results: $json"
}

if ((${#merge[@]})); then
    olds=("${merge[@]}") new_run=0 judged=/dev/null
    write_json true
    summary
    exit 0
fi

sources=()
for f in "${files[@]}"; do
    [[ -e $f ]] || { echo "mutate.sh: no such file or folder: $f" >&2; exit 2; }
    while IFS= read -r s; do module_of "$s" >/dev/null && sources+=("$s"); done < <(find "$f" -name '*.swift' | sort)
done
((${#sources[@]})) || { echo "mutate.sh: no Swift files selected" >&2; exit 2; }

# The mutants to run, one a line: id, file, line, operator.
if [[ -z $rerun ]]; then
    all_sites=$(awk -v mode=list "$MUTATOR" "${sources[@]}")
    site_counts=$(printf '%s\n' "$all_sites" | awk -F'\t' '{ split($1, p, "/"); n[p[2]]++ } END { for (m in n) printf "%s=%d ", m, n[m] }')
    if [[ -n $sample ]]; then limit_all=$sample limit_each=0; else limit_all=0 limit_each=$per_module; fi
    # Shuffled by the seed (awk's rand), the first N overall or of each module kept, then sorted by
    # module and file (consecutive mutants in one file make the incremental build recompile less).
    sites=$(printf '%s\n' "$all_sites" |
        awk -v seed="$seed" 'BEGIN { srand(seed) } { printf "%.12f\t%s\n", rand(), $0 }' | sort -k1,1 | cut -f2- |
        awk -F'\t' -v all="$limit_all" -v each="$limit_each" '
            { split($1, p, "/"); m = p[2] }
            (all == 0 || ++n <= all) && (each == 0 || ++k[m] <= each)' |
        awk -F'\t' -v order="${modules_in_order[*]}" '
            BEGIN { n = split(order, o, " "); for (i = 1; i <= n; i++) rank[o[i]] = i }
            { split($1, p, "/"); print rank[p[2]] "\t" $0 }' |
        sort -t "$(printf '\t')" -k1,1n -k2,2 -k3,3n -k4,4 | cut -f2- | awk '{ print NR "\t" $0 }')
    echo "mutate.sh: $(printf '%s\n' "$all_sites" | grep -c .) mutation sites in ${#sources[@]} files ($site_counts); running $(printf '%s\n' "$sites" | grep -c .) (seed $seed)" >&2
else
    # Each mutant of the results file at the line whose text is its original line, the nearest to
    # where it was; line 0 when no line has that text any more.
    sites=$(awk -v only="$only" "$JSONLIB"'
        BEGIN { n = split(only, o, ","); for (i = 1; i <= n; i++) wanted[o[i]] = 1 }
        index($0, "{\"id\": ") {
            if (only != "" && !(jget($0, "outcome") in wanted)) next
            file = jget($0, "file"); old = jget($0, "line") + 0; text = jget($0, "original")
            best = 0; bd = 0; ln = 0
            while ((getline l < file) > 0) { ln++; if (l == text) { d = ln - old; if (d < 0) d = -d; if (!best || d < bd) { best = ln; bd = d } } }
            close(file)
            print jget($0, "id") "\t" file "\t" best "\t" jget($0, "operator")
        }' "$rerun")
    echo "mutate.sh: judging again $(printf '%s\n' "$sites" | grep -c .) mutants of $rerun${only:+ (outcome $only)}" >&2
fi
[[ -n $sites ]] || { echo "mutate.sh: no mutants selected" >&2; exit 2; }

if $list_only; then
    while IFS=$'\t' read -r id file line op; do
        if ((line == 0)); then printf '%s\t%s\t%s\tgone: its line is no longer there\n' "$id" "$file" "$op"; continue; fi
        if ! mutated=$(awk -v mode=apply -v target="$line" -v op="$op" "$MUTATOR" "$file" 2>/dev/null | sed -n "${line}p"); then
            printf '%s\t%s:%s\t%s\tgone: the operator no longer applies to its line\n' "$id" "$file" "$line" "$op"; continue
        fi
        printf '%s\t%s:%s\t%s\t%s\n' "$id" "$file" "$line" "$op" "$(echo "$mutated" | sed 's/^[ \t]*//')"
    done <<<"$sites"
    exit 0
fi

# A copy of the tracked files (plus uncommitted changes to them) in the scratch folder: mutants are
# applied there, never to the working tree.
mkdir -p "$scratch_dir"
copy="$scratch_dir/src"
mkdir -p "$copy"
# Only files whose content differs are copied (with a new modification time), so the copy's build
# stays incremental and a file restored after an earlier run's last mutant is still rebuilt.
staging="$scratch_dir/staging"
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
declare -A selected=()
while IFS=$'\t' read -r _ file _; do
    module=$(module_of "$file")
    selected[$module]=1
    case $module in
        Domain) keep[SegmentsDomainTests]=1; keep[SegmentsDataTests]=1 ;;
        Data) keep[SegmentsDataTests]=1 ;;
        Persistence) keep[SegmentsPersistenceTests]=1 ;;
        Networking) keep[SegmentsNetworkingTests]=1; keep[SegmentsEmulator]=1 ;;
        Facade) keep[RealtimeSegments]=1; keep[RealtimeSegmentsTests]=1; keep[SegmentsEmulator]=1
            keep[SegmentsCommandLine]=1; keep[ExponeaCompatibilityTests]=1
            keep[segments]=1 ;;
    esac
done <<<"$sites"
{
    echo
    echo "// Added by Scripts/mutate.sh in its copy: only what the mutated modules' tests need."
    printf 'let mutateKeeps: Set<String> = [%s]\n' "$(printf '"%s"\n' "${!keep[@]}" | sort | paste -sd, - | sed 's/,/, /g')"
    echo 'package.targets.removeAll { !mutateKeeps.contains($0.name) }'
    echo 'package.products = []'
} >>"$copy/Package.swift"

current_file=""
backup="$scratch_dir/original.swift"
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
build() {
    run timeout -k 10 "$build_timeout" swift build --package-path "$copy" --build-tests --scratch-path "$scratch_dir/build" \
        >"$scratch_dir/build.log" 2>&1
}
# The test bundle is run directly (what `swift test --skip-build` runs), so that timeout's signal
# reaches it: swift-test does not pass a signal on to the bundle it started.
unit_tests() { # filter, time limit, other options
    run timeout -k 10 "$2" "$scratch_dir/build/debug/RealtimeSegmentsPackageTests.xctest" \
        --testing-library swift-testing --filter "$1" "${@:3}" >"$scratch_dir/test.log" 2>&1
}
# A module's tests: the quick ones, then the slow ones when the quick ones pass.
judge() { # module, time limit
    local slow
    slow=$(slow_of "$1")
    if [[ -z $slow ]]; then unit_tests "$(tests_of "$1")" "$2"; return; fi
    unit_tests "$(tests_of "$1")" "$2" --skip "$slow" || return
    unit_tests "$slow" "$2"
}

interrupted() {
    if [[ -n $child ]]; then kill -TERM "$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; fi
    restore
    write_json false
    echo
    echo "mutate.sh: interrupted; every file restored; results so far in $json" >&2
    exit 130
}
trap 'restore' EXIT
trap interrupted INT TERM

echo "mutate.sh: building the unmutated copy" >&2
build || { echo "mutate.sh: the unmutated copy does not build; see $scratch/build.log" >&2; exit 1; }
# Without a mutant the selected tests must pass, or every mutant would count as killed; how long
# they take sets the time limit of a mutant's test run (--test-timeout auto).
for module in "${modules_in_order[@]}"; do
    [[ -n ${selected[$module]:-} ]] || continue
    t0=$(now)
    if ! judge "$module" 600; then
        echo "mutate.sh: the $module tests fail without any mutant; see $scratch/test.log" >&2
        exit 1
    fi
    took=$(since "$t0")
    if [[ $test_timeout == auto ]]; then
        limit_of[$module]=$(awk -v t="$took" 'BEGIN { l = int(3 * t + 0.999); print (l < 20 ? 20 : l) }')
    else
        limit_of[$module]=$test_timeout
    fi
    echo "mutate.sh: $module tests pass without a mutant in $took s; time limit per mutant ${limit_of[$module]} s" >&2
done

# Resuming: the mutants judged before stay, with the time they took.
declare -A done_ids=()
before=0
: >"$judged"
if $resume; then
    [[ -f $json && -z $rerun ]] || { echo "mutate.sh: --resume needs the stopped run's --json file" >&2; exit 2; }
    awk "$JSONLIB"'index($0, "{\"id\": ") { print unlisted($0) }' "$json" >"$judged"
    while read -r id; do done_ids[$id]=1; done < <(awk "$JSONLIB"'{ print jget($0, "id") }' "$judged")
    before=$(awk "$JSONLIB"'index($0, "{\"run\": ") { print jget($0, "seconds") }' "$json" | tail -n 1)
    date_started=$(awk "$JSONLIB"'index($0, "{\"run\": ") { print jget($0, "date") }' "$json" | tail -n 1)
    echo "mutate.sh: resuming: ${#done_ids[@]} mutants were judged already" >&2
fi
count=$(printf '%s\n' "$sites" | grep -c .)
index=0
while IFS=$'\t' read -r id file line op; do
    index=$((index + 1))
    [[ -z ${done_ids[$id]:-} ]] || continue
    module=$(module_of "$file")
    t0=$(now)
    original="" mutated="" failing=""
    if ((line == 0)); then
        outcome=gone
        original=$(OLD="$old" ID="$id" awk "$JSONLIB"'index($0, "{\"id\": " ENVIRON["ID"] ",") { print jget($0, "original") }' "$old")
    else
        cp "$copy/$file" "$backup"
        current_file=$file
        original=$(sed -n "${line}p" "$backup")
        if ! awk -v mode=apply -v target="$line" -v op="$op" "$MUTATOR" "$backup" >"$copy/$file" 2>/dev/null; then
            outcome=gone # the line is there but the operator no longer applies to it
        else
            mutated=$(sed -n "${line}p" "$copy/$file")
            if ! build; then
                outcome=build-failed
            else
                status=0
                judge "$module" "${limit_of[$module]}" || status=$?
                if ((status == 0)); then outcome=survived
                elif ((status == 124 || status == 137)); then outcome=timeout
                else
                    outcome=killed
                    # The tests that failed (the first three), so a test added for a mutant is seen killing it.
                    failing=$(sed 's/\x1b\[[0-9;]*m//g' "$scratch_dir/test.log" | sed -n 's/^[^ ]* Test \(.*\) failed after .*$/\1/p' | grep -v '^run with ' |
                        sort -u | head -n 3 | paste -sd, - | sed 's/,/, /g' || true)
                fi
            fi
        fi
        restore
    fi
    ORIGINAL="$original" MUTATED="$mutated" FAILING="$failing" awk -v id="$id" -v module="$module" -v file="$file" -v line="$line" -v op="$op" \
        -v outcome="$outcome" -v commit="$commit" -v seconds="$(since "$t0")" -v run_of="$(grep -c '{"run": ' "$old" || true)" "$JSONLIB"'
        BEGIN {
            printf "{\"id\": %d, \"module\": %s, \"file\": %s, \"line\": %d, \"operator\": %s, \"outcome\": %s, \"run\": %d, \"commit\": %s, \"seconds\": %s, \"failing\": %s, \"original\": %s, \"mutated\": %s}\n", \
                id, jstr(module), jstr(file), line, jstr(op), jstr(outcome), run_of + 1, jstr(commit), seconds, jstr(ENVIRON["FAILING"]), jstr(ENVIRON["ORIGINAL"]), jstr(ENVIRON["MUTATED"])
        }' >>"$judged"
    write_json false
    printf '%-12s %4d/%d %s:%s\t%s\t%s\n' "$outcome" "$index" "$count" "$file" "$line" "$op" "$(echo "$mutated" | sed 's/^[ \t]*//')"
done <<<"$sites"
write_json true
echo
summary
