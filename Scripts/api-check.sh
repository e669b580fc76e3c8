#!/usr/bin/env bash
# The API-break check: compares the public API of every module a user can import with the API of
# the baseline commit recorded in .ci/api-baseline, and fails on any break that is not listed in
# .ci/api-breakage-allowlist.txt. Run by .ci/run; run it yourself before pushing an API change.
#
#   Scripts/api-check.sh                    # against .ci/api-baseline
#   Scripts/api-check.sh --baseline REV     # against another commit (a trial; CI uses the file)
#
# What is compared. The modules of the library products (RealtimeSegments, SegmentsTesting,
# SegmentsEmulator) and every module they depend on (SegmentsDomain, SegmentsData,
# SegmentsNetworking, SegmentsPersistence): SwiftPM puts those on a user's import path, and
# RealtimeSegments re-exports them. `swift package diagnose-api-breaking-changes` alone compares
# only the modules named in a library product (it makes no baseline for the others, and a
# module's API dump holds its own declarations only, not what it re-exports), so this script
#   1. builds the baseline commit itself (a `git archive` copy in .build-api/baseline-src, built in
#      .build-api/baseline-build: the working tree and .build are never touched) and dumps the API
#      of every module with swift-api-digester into .build-api/baselines/<commit>/ (kept: later
#      runs against the same baseline skip this step);
#   2. runs `swift package diagnose-api-breaking-changes` on the working tree with that baseline
#      directory, every module as --targets, and the allowlist (the working tree is built in
#      .build-api: .build is never touched);
#   3. checks what the digester does not see: a public module that is gone, an `@_exported
#      import` that is gone or narrowed (e.g. RealtimeSegments no longer re-exporting all of
#      SegmentsDomain: code that only imports RealtimeSegments stops compiling), and a public
#      declaration that became `package`. `package` declarations, which the digester dumps too,
#      are left out of the baseline: changing them never counts as a break.
#
# When it fails. Each break is printed as one line ("API breakage: …"). If the break is a mistake,
# restore the declaration. If it is deliberate, the same commit that makes it adds each line,
# exactly, to .ci/api-breakage-allowlist.txt and a line under "Unreleased" in CHANGELOG.md.
# Moving the baseline to a newer commit (which empties the allowlist) is a commit of its own
# (Docs/Releasing.md).
#
# Exit status: 0 when every break is listed, 1 when one is not, 2 when the check could not run.
#
# A clone without the baseline commit (a shallow CI clone): the script fetches it (`git fetch
# --unshallow`, then the commit itself from the first remote) and stops with an error if it is
# still missing. Needs git, jq and a Swift toolchain with swift-api-digester (SWIFT_API_DIGESTER=
# overrides where it is looked for). Apple platforms: the dump passes the macOS SDK (`xcrun`);
# that path is untested here (Linux CI).
set -euo pipefail
script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$script")/.."

baseline_file=.ci/api-baseline
allowlist=.ci/api-breakage-allowlist.txt
scratch=.build-api
baseline_src="$scratch/baseline-src"
baseline_build="$scratch/baseline-build"
started=$SECONDS

die() { echo "error: $*" >&2; exit 2; }
usage() { sed -n '6,7p' "$script" | sed 's/^# \{0,1\}//'; }

base=""
base_source=$baseline_file
while (($#)); do
    case "$1" in
        --baseline) base="${2:?--baseline needs a commit}"; base_source="--baseline"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done

command -v jq >/dev/null || die "jq not found (it reads \`swift package describe\`)"
[[ -f $allowlist ]] || die "$allowlist is missing (it may hold only comments)"

# 1. The baseline commit, present in this clone.
if [[ -z $base ]]; then
    base=$(grep -vE '^[[:space:]]*(#|$)' "$baseline_file" | head -n 1 | tr -d '[:space:]')
    [[ $base =~ ^[0-9a-f]{40}$ ]] || die "$baseline_file must hold a full 40-digit commit hash (found '$base')"
fi
have_base() { git cat-file -e "$base^{commit}" 2>/dev/null; }
if ! have_base; then
    echo "api-check: the baseline $base is not in this clone; fetching it" >&2
    if [[ $(git rev-parse --is-shallow-repository) == true ]]; then
        git fetch --quiet --unshallow || true
    fi
    remote=$(git remote | head -n 1)
    if ! have_base && [[ -n $remote ]]; then
        git fetch --quiet "$remote" "$base" || true
    fi
    have_base || die "the API baseline $base (from $base_source) is not in this clone, and fetching it failed.
  Fetch the history (git fetch --unshallow, or git fetch origin $base) and run again. If that
  commit is gone from the repository's history, move the baseline (Docs/Releasing.md)."
fi
base=$(git rev-parse "$base^{commit}")
short=$(git rev-parse --short "$base")

# The tools.
swift_real=$(readlink -f "$(command -v swift)")
digester="${SWIFT_API_DIGESTER:-}"
if [[ -z $digester && -x "$(dirname "$swift_real")/swift-api-digester" ]]; then
    digester="$(dirname "$swift_real")/swift-api-digester"
fi
if [[ -z $digester ]] && command -v xcrun >/dev/null; then
    digester="$(xcrun --find swift-api-digester)"
fi
[[ -n $digester && -x $digester ]] || die "swift-api-digester not found; set SWIFT_API_DIGESTER=/path/to/it"
sdk_args=()
if command -v xcrun >/dev/null; then
    sdk_args=(-sdk "$(xcrun --sdk macosx --show-sdk-path)")
fi
# The dumps are keyed by the toolchain and by how they are made (a change below re-dumps).
toolchain=$(swift --version 2>&1; echo "dumps: package declarations removed (v2)")

# swift-api-digester dumps `package` declarations too (marked "isInternal"). Users cannot reach
# them, so they are no part of the promise: they are removed from the baseline's dumps, which
# makes the digester see them as additions (never breaks) on the current side.
public_only() {
    jq 'walk(if type == "object" and has("children")
             then .children |= map(select(.isInternal != true)) else . end)' "$1" >"$1.public" &&
        mv "$1.public" "$1"
}
# The declarations of a dump, one "usr<TAB>module.printedName" per line (with `internal` = the
# ones marked "isInternal" only, else the public ones).
declarations() {
    jq -r --arg which "$2" '
        def decls($prefix):
            (.children // [])[] | select(has("declKind")) as $d
            | ($prefix + "." + $d.printedName) as $name
            | ({usr: $d.usr, internal: ($d.isInternal == true), name: $name}, ($d | decls($name)));
        (.ABIRoot // .) as $root | $root | decls($root.name // "")
        | select(.usr != null and (if $which == "internal" then .internal else (.internal | not) end))
        | "\(.usr)\t\(.name)"' "$1" | sort -u
}

# The public modules of the package at $1, one "name<TAB>source path" per line: the Swift targets
# of its library products and every target those depend on.
public_modules() {
    swift package --package-path "$1" --scratch-path "$2" describe --type json | jq -r '
        (.targets | map({key: .name, value: .}) | from_entries) as $t
        | def closure($seen; $todo):
            if ($todo | length) == 0 then $seen
            elif ($seen | any(. == $todo[0])) then closure($seen; $todo[1:])
            else closure($seen + [$todo[0]]; $todo[1:] + ($t[$todo[0]].target_dependencies // []))
            end;
          closure([]; [.products[] | select(.type | has("library")) | .targets[]])
        | map(select($t[.].module_type == "SwiftTarget")) | sort[]
        | "\(.)\t\($t[.].path)"'
}

# The `@_exported import`s of those modules, one "module<TAB>item" per line: the item is a module
# ("SegmentsDomain": all of it) or a declaration ("SegmentsDomain.Segment": `import struct …`).
reexports() {
    local root=$1 modules=$2 name path
    while IFS=$'\t' read -r name path; do
        [[ -d "$root/$path" ]] || continue
        grep -rhE '^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*@_exported[[:space:]]' --include='*.swift' "$root/$path" |
            sed -nE 's/^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*@_exported[[:space:]]+(@[A-Za-z_]+[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?import[[:space:]]+((typealias|struct|class|enum|protocol|let|var|func)[[:space:]]+)?([A-Za-z_][A-Za-z0-9_.]*).*/\7/p' |
            sed "s/^/$name"$'\t'"/" || true
    done <"$modules" | sort -u
}

# 2. The baseline's API, dumped once per baseline commit and toolchain.
baselines="$scratch/baselines"
bdir="$baselines/$base"
if [[ ! -f "$bdir/complete" || "$(cat "$bdir/toolchain" 2>/dev/null)" != "$toolchain" ]]; then
    echo "api-check: building the baseline $short in $baseline_build" >&2
    rm -rf "$bdir" "$baseline_src"
    mkdir -p "$bdir" "$baseline_src"
    git archive "$base" | tar -x -C "$baseline_src"
    public_modules "$baseline_src" "$baseline_build" >"$bdir/modules.tsv"
    while IFS=$'\t' read -r name _; do
        swift build --package-path "$baseline_src" --scratch-path "$baseline_build" --target "$name" </dev/null >&2 ||
            die "the baseline $short does not build (module $name); see the output above"
    done <"$bdir/modules.tsv"
    bin=$(swift build --package-path "$baseline_src" --scratch-path "$baseline_build" --show-bin-path)
    module_dir="$bin/Modules"; [[ -d $module_dir ]] || module_dir=$bin
    while IFS=$'\t' read -r name _; do
        "$digester" -dump-sdk -compiler-style-diags -I "$module_dir" ${sdk_args[@]+"${sdk_args[@]}"} \
            -module "$name" -o "$bdir/$name.json" </dev/null >&2 || true
        [[ -s "$bdir/$name.json" ]] || die "swift-api-digester could not dump the baseline API of $name"
        public_only "$bdir/$name.json" || die "could not filter the baseline API of $name (jq)"
    done <"$bdir/modules.tsv"
    reexports "$baseline_src" "$bdir/modules.tsv" >"$bdir/reexports.tsv"
    printf '%s\n' "$toolchain" >"$bdir/toolchain"
    touch "$bdir/complete"
    rm -rf "$baseline_src"   # the dumps are all later runs need; the build stays for the next baseline
fi

# 3. What the digester does not see: modules and re-exports that are gone.
current="$scratch/current"
mkdir -p "$current"
public_modules . "$scratch" >"$current/modules.tsv"
reexports . "$current/modules.tsv" >"$current/reexports.tsv"
cut -f1 "$bdir/modules.tsv" | sort >"$current/base-names"
cut -f1 "$current/modules.tsv" | sort >"$current/names"
own_breaks=$(
    comm -23 "$current/base-names" "$current/names" |
        sed 's/.*/API breakage: module & can no longer be imported/'
    # A re-export is kept when the same item, or all of its module, is still re-exported.
    awk -F'\t' 'NR == FNR { now[$1 "\t" $2] = 1; next }
        {
            item = $2; whole = item; sub(/\..*/, "", whole)
            if ((($1 "\t" item) in now) || (($1 "\t" whole) in now)) next
            if (item == whole) print "API breakage: " $1 " no longer re-exports all of module " item
            else print "API breakage: " $1 " no longer re-exports " item
        }' "$current/reexports.tsv" "$bdir/reexports.tsv"
)
# The allowlist as swift-api-digester reads it: trimmed lines, "//" comments and blank lines skipped.
allowed=$(sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//' "$allowlist" | grep -vE '^(//|$)' || true)
unlisted_own=$(grep -vxF -f <(printf '%s\n' "$allowed") <<<"$own_breaks" | grep . || true)
comm -13 "$current/base-names" "$current/names" | sed 's/.*/api-check: new module &: nothing to compare/' >&2

# 4. The digester, on the modules that exist on both sides.
targets=()
while read -r name; do targets+=("$name"); done < <(comm -12 "$current/base-names" "$current/names")
log="$current/diagnose.log"
set +e
swift package --scratch-path "$scratch" diagnose-api-breaking-changes "$base" \
    --baseline-dir "$baselines" --breakage-allowlist-path "$allowlist" \
    --targets "${targets[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
digester_breaks=$(grep -E 'API breakage: ' "$log" | sed -E 's/^[[:space:]]*(💔[[:space:]]*)?//' || true)

# 5. What the digester does not see either: a public declaration that became `package` (it is
#    still in the current dump, as "isInternal"). Dump the current modules and compare.
current_bin=$(swift build --scratch-path "$scratch" --show-bin-path)
current_modules="$current_bin/Modules"; [[ -d $current_modules ]] || current_modules=$current_bin
narrowed=""
for name in "${targets[@]}"; do
    "$digester" -dump-sdk -compiler-style-diags -I "$current_modules" ${sdk_args[@]+"${sdk_args[@]}"} \
        -module "$name" -o "$current/$name.json" </dev/null >/dev/null 2>&1 || true
    [[ -s "$current/$name.json" ]] || continue
    narrowed+=$(join -t $'\t' <(declarations "$bdir/$name.json" public) <(declarations "$current/$name.json" internal) |
        cut -f2 | sed 's/.*/API breakage: & is no longer public/')$'\n'
done
unlisted_narrowed=$(grep -vxF -f <(printf '%s\n' "$allowed") <<<"$narrowed" | grep . || true)
if [[ -n $unlisted_narrowed ]]; then
    printf '\n%s\n' "$unlisted_narrowed"
    unlisted_own=$(printf '%s\n%s\n' "$unlisted_own" "$unlisted_narrowed" | grep . || true)
fi
if [[ -n $unlisted_own ]]; then
    printf '\n%s\n' "$unlisted_own"
fi

breaks=$(printf '%s\n%s\n' "$digester_breaks" "$unlisted_own" | grep . || true)
elapsed=$((SECONDS - started))
if [[ -n $breaks ]]; then
    cat >&2 <<EOF

error: the public API breaks the baseline $short ($base_source) in $(wc -l <<<"$breaks") place(s):
$(sed 's/^/    /' <<<"$breaks")

If a break is a mistake, restore the declaration. If it is deliberate, add each line above,
exactly (without the indentation), to $allowlist and describe the change under
"Unreleased" in CHANGELOG.md, in the same commit. Moving the baseline is a commit of its own
(Docs/Releasing.md).
EOF
    exit 1
fi
if ((status != 0)); then
    die "swift package diagnose-api-breaking-changes failed (exit $status) without reporting a break; see its output above (a build error?)"
fi
echo "api-check: no unlisted API breaks against the baseline $short (${#targets[@]} modules, ${elapsed} s)"
