#!/usr/bin/env bash
# Regenerates the mutation-testing section of Docs/Reliability.md from the committed results of
# Scripts/mutate.sh (Docs/Mutation.json) and the reasons given for its survivors
# (Docs/MutationSurvivors.tsv), so every figure there comes from a committed run, never typed by
# hand. Runs no mutant: cheap enough for CI.
#
#   Scripts/mutation-doc.sh           # rewrite the section in place
#   Scripts/mutation-doc.sh --check   # exit 1 when Docs/Reliability.md is out of date, a survivor
#                                     # has no reason, or a reason names no mutant of the results
#
# The section sits between `<!-- generated: mutation -->` and `<!-- end generated: mutation -->`.
#
# Docs/MutationSurvivors.tsv has one line per survivor: file, operator and the mutated line's
# original text (trimmed), TAB-separated, then why it survives. A reason starting with
# `equivalent:` says why no test can tell the mutant from the code; anything else (e.g. `not
# killed:`) explains a survivor that stays one. Lines starting with `#` are comments.
# Identical lines of one file mutated by the same operator share one line (the key is the text). A survivor
# that a later test kills needs no line: `mutate.sh --rerun` records the tests that failed with it.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C

results=Docs/Mutation.json
reasons=Docs/MutationSurvivors.tsv
doc=Docs/Reliability.md
CHECK=false
[[ ${1:-} == --check ]] && CHECK=true
# shellcheck source=Scripts/generated-region.sh
source Scripts/generated-region.sh

# jget and the other JSON helpers are mutate.sh's (Scripts/mutation-json.awk).
JSONLIB=$(cat "$(dirname "$0")/mutation-json.awk")
read -r -d '' DOCLIB <<'AWK' || true
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
# Inline code in a Markdown table cell: a pipe must be escaped even inside backticks.
function code(s) { gsub(/\|/, "\\|", s); return "`" s "`" }
function cell(s) { gsub(/\|/, "\\|", s); return s }
function pct(a, b) { return b ? sprintf("%.1f%%", 100 * a / b) : "–" }
function key(file, op, original) { return file "\t" op "\t" trim(original) }
AWK
LIB="$JSONLIB"$'\n'"$DOCLIB"

agree=0
table=$(awk -F'\t' -v results="$results" "$LIB"'
    # The reasons file first: key (file, operator, trimmed original) → reason.
    FILENAME != results {
        if ($0 ~ /^#/ || $0 ~ /^[ \t]*$/) next
        if (NF != 4) { printf "%s:%d: expected 4 TAB-separated fields, found %d\n", FILENAME, FNR, NF > "/dev/stderr"; bad = 1; next }
        k = key($1, $2, $3); reason[k] = $4; reason_line[k] = FNR; next
    }
    index($0, "{\"run\": ") { nr++; run_cmd[nr] = jget($0, "command"); run_commit[nr] = jget($0, "commit"); run_date[nr] = jget($0, "date")
        run_machine[nr] = jget($0, "machine"); run_swift[nr] = jget($0, "swift"); run_judged[nr] = jget($0, "judged")
        run_seconds[nr] = jget($0, "seconds"); run_complete[nr] = jget($0, "complete"); run_limits[nr] = jget($0, "testTimeLimits") }
    index($0, "{\"module\": ") { m = jget($0, "module"); mods[++nmod] = m; tests[m] = jget($0, "tests"); sites[m] = jget($0, "sites") }
    index($0, "{\"id\": ") {
        m = jget($0, "module"); o = jget($0, "outcome"); f = jget($0, "file"); op = jget($0, "operator")
        k = key(f, op, jget($0, "original"))
        drawn[m]++
        if (o == "killed" || o == "timeout") killed[m]++
        if (o == "timeout") timeouts[m]++
        if (o == "build-failed") failed[m]++
        if (o == "gone") gone[m]++
        first = jget($0, "firstOutcome")
        where = code(f ":" jget($0, "line")) " " op
        change = code(trim(jget($0, "mutated")))
        if (o == "survived") {
            survived[m]++
            if (!(k in reason)) { printf "%s: survivor without a reason in %s: %s\t%s\t%s\n", results, "'"$reasons"'", f, op, trim(jget($0, "original")) > "/dev/stderr"; bad = 1; r = "(no reason given)" }
            else r = reason[k]
            used[k] = 1
            if (r ~ /^equivalent:/) { equivalent[m]++; neq++; eq_rows[neq] = "| " where " | " change " | " cell(substr(r, 13)) " |" }
            else { nsurv++; surv_rows[nsurv] = "| " where " | " change " | " cell(r) " |" }
        } else if (first == "survived") {
            # Killed since: the tests that failed come from the run that judged it again.
            r = jget($0, "failing"); if (r == "") r = "–"
            if (k in reason) { r = r " (" reason[k] ")"; used[k] = 1 }
            nlater++; later_rows[nlater] = "| " where " | " change " | " o " (run " jget($0, "run") ", " code(jget($0, "commit")) ") | " cell(r) " |"
        }
    }
    END {
        for (k in reason) if (!(k in used)) { printf "%s:%d: names no survivor of %s\n", "'"$reasons"'", reason_line[k], results > "/dev/stderr"; bad = 1 }
        print "<!-- from Scripts/mutation-doc.sh (Docs/Mutation.json, Docs/MutationSurvivors.tsv): do not edit by hand -->"
        print ""
        for (i = 1; i <= nr; i++) {
            printf "Run %d, %s at commit %s on %s (%s), %d mutants in %d min%s:\n\n", i, run_date[i], code(run_commit[i]), run_machine[i], run_swift[i], \
                run_judged[i], int(run_seconds[i] / 60 + 0.5), (run_complete[i] == "true" ? "" : " (stopped before the end)")
            print "```sh"
            print run_cmd[i]
            print "```"
            print ""
        }
        print "| module | judged by | sites | mutants | build failed | compiling | killed (by time-out) | survived | of which equivalent | score: killed ÷ compiling | without the equivalents |"
        print "|---|---|---|---|---|---|---|---|---|---|---|"
        for (i = 1; i <= nmod; i++) {
            m = mods[i]; c = killed[m] + survived[m]
            printf "| %s | %s | %d | %d | %d | %d | %d (%d) | %d | %d | **%s** | %s |\n", m, code(tests[m]), sites[m], drawn[m], failed[m], c, \
                killed[m], timeouts[m], survived[m], equivalent[m], pct(killed[m], c), pct(killed[m], c - equivalent[m])
            tk += killed[m]; ts += survived[m]; te += equivalent[m]; tf += failed[m]; td += drawn[m]; tt += timeouts[m]; tsites += sites[m]
        }
        printf "| **all** | | %d | %d | %d | %d | %d (%d) | %d | %d | **%s** | %s |\n", tsites, td, tf, tk + ts, tk, tt, ts, te, pct(tk, tk + ts), pct(tk, tk + ts - te)
        print ""
        print "A mutant is one change on one line (the operator, then the line as mutated). *Killed*: a test of"
        print "the module failed, or the run exceeded its time limit (a hang). *Compiling*: killed + survived."
        print "The score counts every survivor; the last column leaves out the equivalent mutants listed below"
        print "(no test can tell them from the code), so the two columns differ by exactly that list."
        for (i = 1; i <= nmod; i++) ngone += gone[mods[i]]
        if (ngone) printf "%d mutants are *gone* (their line changed since they were drawn) and counted nowhere.\n", ngone
        if (nlater) {
            print ""
            print "Survivors of an earlier run that a test added since kills, each judged again by `--rerun`:"
            print ""
            print "| mutant | as mutated | now | the tests that failed with it |"
            print "|---|---|---|---|"
            for (i = 1; i <= nlater; i++) print later_rows[i]
        }
        if (neq) {
            print ""
            print "Equivalent mutants (survivors no test can kill):"
            print ""
            print "| mutant | as mutated | why no test can tell |"
            print "|---|---|---|"
            for (i = 1; i <= neq; i++) print eq_rows[i]
        }
        if (nsurv) {
            print ""
            print "Survivors that are not equivalent:"
            print ""
            print "| mutant | as mutated | why it survives |"
            print "|---|---|---|"
            for (i = 1; i <= nsurv; i++) print surv_rows[i]
        }
        exit bad
    }' "$reasons" "$results") || agree=$?

out=$(mktemp)
TABLE="$table" generated_region "$doc" mutation "" >"$out"
CHECK=$CHECK write_or_check "$doc" "$out" Scripts/mutation-doc.sh
if ((agree != 0)); then echo "error: $results and $reasons disagree (see above)" >&2; exit 1; fi
