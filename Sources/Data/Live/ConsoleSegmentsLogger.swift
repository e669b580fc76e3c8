import SegmentsDomain

/// Prints each line to standard output as `[RealtimeSegments] <level>: <message>`, with its
/// control characters escaped (<doc:Behaviour#L1>, <doc:Behaviour#L3>).
///
/// It prints every line it is given: it is the default sink of ``SinkSegmentsLogger`` (which
/// chooses the level) on Linux; on Apple platforms the default sink is the unified logging system
/// (``SinkSegmentsLogger/defaultSink``).
public struct ConsoleSegmentsLogger: SegmentsLogger {
    /// Creates the logger.
    public init() {}

    /// `.verbose`: every line it is given is printed.
    public var logLevel: LogLevel { .verbose }

    /// Prints the line (nothing for `.none`).
    public func log(_ level: LogLevel, _ message: String) {
        if isEnabled(level) { print(Self.line(level, message)) }
    }

    /// The printed text of a line, without its line break: prefixed with the SDK's name and the
    /// level, its control characters escaped. The `segments` command writes its log lines to
    /// standard error in the same form.
    package static func line(_ level: LogLevel, _ message: String) -> String {
        "[RealtimeSegments] \(level): \(LogLineEscaping.escaped(message))"
    }
}
