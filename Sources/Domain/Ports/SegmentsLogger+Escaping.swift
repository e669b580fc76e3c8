/// Log lines carry text the SDK does not control — category and segment names from the server,
/// error texts — and end up in terminals, log files and CI output. A control character in them
/// could forge a second line (`\r`, `\n`), move the cursor, recolour or retitle a terminal (`ESC`),
/// or reorder what a reader sees (Unicode bidirectional overrides). ``LogLineEscaping`` writes each
/// such character as a visible escape (`\u{1B}`), so a line is always one line of plain text.
package enum LogLineEscaping {
    /// `message` with every control character escaped: C0 (U+0000–U+001F) as `\n`, `\r`, `\t` or
    /// `\u{…}`, DEL (U+007F), C1 (U+0080–U+009F), the line and paragraph separators
    /// (U+2028, U+2029) and the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
    /// U+2066–U+2069) as `\u{…}`. Everything else, the backslash included, is kept, so escaping
    /// twice changes nothing.
    package static func escaped(_ message: String) -> String {
        guard message.unicodeScalars.contains(where: needsEscape) else { return message }
        var result = ""
        result.reserveCapacity(message.utf8.count + 16)
        for scalar in message.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result
    }

    /// Whether `scalar` is written as an escape.
    package static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}

/// A ``SegmentsLogger`` that escapes control characters (``LogLineEscaping``) before handing each
/// line to the logger it wraps. Every logger given to a `SegmentsRuntime`-built client is
/// wrapped in one, so a line is escaped once, where it leaves the SDK, whatever logger the app
/// plugged in.
package struct EscapingSegmentsLogger: SegmentsLogger {
    /// The app's logger.
    package let base: any SegmentsLogger

    /// `logger` wrapped, unless it escapes already.
    package static func wrapping(_ logger: any SegmentsLogger) -> any SegmentsLogger {
        logger is EscapingSegmentsLogger ? logger : EscapingSegmentsLogger(base: logger)
    }

    private init(base: any SegmentsLogger) {
        self.base = base
    }

    /// The wrapped logger's level.
    package var logLevel: LogLevel { base.logLevel }

    /// Writes the escaped line to the wrapped logger.
    package func log(_ level: LogLevel, _ message: String) {
        base.log(level, LogLineEscaping.escaped(message))
    }
}
