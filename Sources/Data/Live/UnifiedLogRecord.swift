import SegmentsDomain

/// One log line as the SDK writes it to Apple's unified logging system (<doc:Behaviour#L3>): its
/// log type, the part shown to anyone reading the device's log, and the part marked private.
///
/// The rule, decided here so that Linux builds and tests it: a line's leading marker
/// (`Segments:`, `Tracking:`; <doc:Behaviour#L1>) is public, everything after it is private.
/// The SDK's lines have no structure that tells fixed text from what was put into it, and what is
/// put into it is customer ids (verbose level, <doc:Behaviour#P4>) and text from the server or the
/// app (category and segment names, error texts): so none of it is shown unredacted. Console.app
/// shows such a line as `Segments: <private>`; with Xcode's debugger attached, or a logging profile
/// that reveals private data installed, it shows the whole line.
///
/// The Apple-only `UnifiedSegmentsLogger` forwards the two parts to `os.Logger` (or `os_log`),
/// the public one with `privacy: .public`, the private one with `privacy: .private`.
package struct UnifiedLogRecord: Equatable, Sendable {
    /// The unified logging system's type for a level: `OSLogType.error`, `.default`, `.info`.
    package enum LogType: Equatable, Sendable {
        case error
        case `default`
        case info
    }

    /// The subsystem the SDK's lines are logged under.
    package static let subsystem = "RealtimeSegments"
    /// The category the SDK's lines are logged under.
    package static let category = "Segments"

    /// `.error` for errors, `.default` for warnings, `.info` for verbose lines.
    package let type: LogType
    /// The line's marker, such as `Segments:`; empty when the line has none.
    package let publicText: String
    /// The rest of the line, with its control characters escaped; empty when there is none.
    package let privateText: String

    /// The record of `message` logged at `level`, or `nil` for `.none` (nothing is logged).
    package init?(_ level: LogLevel, _ message: String) {
        switch level {
        case .none: return nil
        case .error: type = .error
        case .warning: type = .default
        case .verbose: type = .info
        }
        let line = LogLineEscaping.escaped(message)
        let marker = Self.marker(of: line)
        publicText = marker
        privateText = String(line.dropFirst(marker.count).drop(while: { $0 == " " }))
    }

    /// The line as a reader sees it without access to private data: the public part, then
    /// `<private>` where the private part is.
    package var redacted: String {
        privateText.isEmpty ? publicText : publicText.isEmpty ? "<private>" : publicText + " <private>"
    }

    /// The line's leading word with its colon (`Segments:`): ASCII letters only, at most 24 of them.
    static func marker(of line: String) -> String {
        let word = line.utf8.prefix { ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }
        guard !word.isEmpty, word.count <= 24, line.utf8.dropFirst(word.count).first == UInt8(ascii: ":") else { return "" }
        return String(line.prefix(word.count + 1))
    }
}

extension SinkSegmentsLogger {
    /// Where ``SinkSegmentsLogger`` hands its lines by default (<doc:Behaviour#L3>): on Apple
    /// platforms the unified logging system (subsystem `RealtimeSegments`, category `Segments`,
    /// everything after the `Segments:` marker private), elsewhere ``ConsoleSegmentsLogger``
    /// (standard output). Assign it to ``sink`` to go back to the default.
    public static var defaultSink: any SegmentsLogger {
        #if canImport(os)
        UnifiedSegmentsLogger()
        #else
        ConsoleSegmentsLogger()
        #endif
    }
}
