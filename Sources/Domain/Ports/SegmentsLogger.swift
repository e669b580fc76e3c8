/// How much the SDK logs, from nothing to everything: `warning` by default; failures are logged at
/// `warning` or `error`, never only at `verbose` (<doc:Behaviour#L2>).
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Nothing.
    case none
    /// Failures that lose data or stop a feature.
    case error
    /// Failures the SDK recovers from, and misconfiguration.
    case warning
    /// Everything, including customer ids.
    case verbose

    /// Orders by detail: `none < error < warning < verbose`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level's name.
    public var description: String {
        switch self {
        case .none: "none"
        case .error: "error"
        case .warning: "warning"
        case .verbose: "verbose"
        }
    }
}

/// Where the SDK's log lines go (<doc:Behaviour#L3>): the one protocol to implement to receive them.
/// The live ones are `SinkSegmentsLogger` (a settable level in front of another logger) and
/// `ConsoleSegmentsLogger` (prints to standard output); tests use `RecordingLogger` from
/// `SegmentsTesting`. The facade's `Exponea.logger` is the Exponea SDK's `Logger` class.
public protocol SegmentsLogger: Sendable {
    /// The most detailed level written; lines above it are dropped. The core reads it to decide
    /// whether customer ids may appear in a line (<doc:Behaviour#P4>).
    var logLevel: LogLevel { get }
    /// Writes one line at `level`, if `level` is enabled.
    func log(_ level: LogLevel, _ message: String)
}

extension SegmentsLogger {
    /// Whether lines at `level` are written.
    public func isEnabled(_ level: LogLevel) -> Bool {
        level != .none && level <= logLevel
    }
}
