# JSON without dependencies: a string's JSON form, and a field of one of the records Scripts/mutate.sh
# writes. The results file holds one run, module or mutant a line, so awk reads it back line by
# line (jget finds `"key": ` outside strings: a quote inside a string is escaped).
function jstr(s,    i, c, out) {
    out = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\" || c == "\"") out = out "\\" c
        else if (c == "\t") out = out "\\t"
        else out = out c
    }
    return "\"" out "\""
}
function jget(s, k,    p, i, c, out) {
    p = index(s, "\"" k "\": ")
    if (!p) return ""
    p += length(k) + 4
    if (substr(s, p, 1) != "\"") { out = substr(s, p); sub(/[,}].*/, "", out); return out }
    out = ""
    for (i = p + 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\") { i++; c = substr(s, i, 1); if (c == "t") c = "\t"; out = out c; continue }
        if (c == "\"") break
        out = out c
    }
    return out
}
function jset(s, k, v,    p, rest) {
    p = index(s, "\"" k "\": ")
    if (!p) return s
    p += length(k) + 4; rest = substr(s, p); match(rest, /^[^,}]*/)
    return substr(s, 1, p - 1) v substr(rest, RLENGTH + 1)
}
function unlisted(s) { sub(/,[ \t]*$/, "", s); sub(/^[ \t]*/, "", s); return s }
