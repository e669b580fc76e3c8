#!/usr/bin/env bash
# Builds the DocC documentation of the RealtimeSegments library (the facade and everything it
# re-exports) into .build/docs/RealtimeSegments.doccarchive. Run from anywhere in the repository.
#
#   Scripts/build-docs.sh
#   docc preview Sources/Facade/RealtimeSegments.docc \
#       --additional-symbol-graph-dir .build/docs/symbol-graphs     # to browse it locally
#
# Any DocC warning (e.g. an unresolved symbol link) fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."

out=.build/docs
scratch="$out/scratch"          # its own build directory: the symbol-graph flags would otherwise
                                # invalidate the normal build in .build
all_graphs="$out/all-symbol-graphs"
graphs="$out/symbol-graphs"
archive="$out/RealtimeSegments.doccarchive"
log="$out/docc.log"

swift_bin="$(command -v swift)"
docc="${DOCC:-$(command -v docc || true)}"
if [[ -z "$docc" && -x "$(dirname "$(readlink -f "$swift_bin")")/docc" ]]; then
    docc="$(dirname "$(readlink -f "$swift_bin")")/docc"
fi
if [[ -z "$docc" ]] && command -v xcrun >/dev/null; then
    docc="$(xcrun --find docc)"
fi
[[ -n "$docc" ]] || { echo "error: docc not found; set DOCC=/path/to/docc" >&2; exit 1; }

rm -rf "$graphs" "$archive"
mkdir -p "$all_graphs" "$graphs"

# 1. Symbol graphs of the RealtimeSegments target and the modules it depends on. They are written
#    when a module compiles, so an up-to-date build keeps the previous ones; without them, rebuild.
build_graphs() {
    swift build --scratch-path "$scratch" --target RealtimeSegments \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$all_graphs"
}
build_graphs
if ! compgen -G "$all_graphs/RealtimeSegments*.symbols.json" >/dev/null; then
    rm -rf "$scratch"
    build_graphs
fi

# 2. Only the RealtimeSegments graphs: they already contain the symbols of the @_exported
#    modules, so the other modules' graphs would only add duplicate modules to the archive.
cp "$all_graphs"/RealtimeSegments*.symbols.json "$graphs"/

# 3. The archive.
"$docc" convert Sources/Facade/RealtimeSegments.docc \
    --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name RealtimeSegments --fallback-bundle-identifier com.realtimesegments.RealtimeSegments \
    --output-path "$archive" 2>&1 | tee "$log"

if grep -qE "^(warning|error):" "$log"; then
    echo "error: docc reported $(grep -cE '^(warning|error):' "$log") diagnostic(s); see $log" >&2
    exit 1
fi
echo "Documentation: $archive"
