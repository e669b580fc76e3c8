import SegmentsDomain

/// Text from outside — a request target sent to `segments serve`, names in a server's answer
/// printed by `segments fetch` — made safe for the developer's terminal. The characters escaped
/// are those the SDK's log lines escape (`LogLineEscaping`): C0, DEL and C1 controls, which could
/// move the cursor, rewrite lines or retitle the window, the line and paragraph separators, and the
/// bidirectional controls (U+202E and its kin), which reorder what a reader sees.
enum TerminalText {
    /// `text` as one line of plain text: each such character as `\u{…}`, and a backslash as `\\`,
    /// so an escape the client typed cannot pass for one this wrote.
    static func line(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                result += "\\\\"
            } else if LogLineEscaping.needsEscape(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `json` (an encoder's output) with each such character that the encoder left as it is written
    /// as a JSON escape (`\u202E`): the same JSON value, with nothing invisible in it. The encoder
    /// escapes C0 inside strings itself; the line breaks and spaces of pretty printing are kept.
    static func json(_ json: String) -> String {
        var result = ""
        for scalar in json.unicodeScalars {
            if scalar.value >= 0x7F, LogLineEscaping.needsEscape(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
