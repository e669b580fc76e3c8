# Sourced by the Scripts/*-doc.sh scripts, which keep generated tables in the documents: one way
# to put a table between a document's markers, and one way to write the result or check it.
#
#   generated_region FILE NAME NOTE    # FILE with $TABLE between `<!-- generated: NAME -->` and
#                                      # `<!-- end generated: NAME -->` (a NOTE line first, when
#                                      # not empty), on standard output
#   write_or_check DOC NEW SCRIPT      # with $CHECK=true: exit 1 (naming SCRIPT) when NEW differs
#                                      # from DOC; otherwise NEW replaces DOC. NEW is removed.

generated_region() {
    local file=$1 begin="<!-- generated: $2 -->" end="<!-- end generated: $2 -->" note=$3
    grep -qF "$begin" "$file" || { echo "error: $file has no '$begin' marker" >&2; return 1; }
    NOTE="$note" awk -v begin="$begin" -v end="$end" '
        $0 == begin { print; if (ENVIRON["NOTE"] != "") print ENVIRON["NOTE"]; print ENVIRON["TABLE"]; skip = 1; next }
        $0 == end { skip = 0 }
        !skip { print }
    ' "$file"
}

write_or_check() {
    local doc=$1 new=$2 script=$3
    if [[ ${CHECK:-false} == true ]]; then
        if ! diff -u "$doc" "$new"; then
            rm -f "$new"
            echo "error: $doc is out of date; run $script" >&2
            return 1
        fi
        rm -f "$new"
    else
        cat "$new" >"$doc" && rm -f "$new"
        echo "updated $doc" >&2
    fi
}
