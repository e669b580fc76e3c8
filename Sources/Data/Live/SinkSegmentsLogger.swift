import Foundation
import SegmentsDomain

/// Where log lines end up (<doc:Behaviour#L3>). The default prints to standard output.
public protocol LogSink: Sendable {
    /// Writes one line that passed the level filter.
    func write(_ level: LogLevel, _ message: String)
}

/// Prints each line to standard output as `[RealtimeSegments] <level>: <message>`.
public struct ConsoleLogSink: LogSink {
    /// Creates the sink.
    public init() {}

    /// Prints the line.
    public func write(_ level: LogLevel, _ message: String) {
        print("[RealtimeSegments] \(level): \(message)")
    }
}

/// A ``SegmentsLogger`` with a settable level and a pluggable sink (<doc:Behaviour#L2>,
/// <doc:Behaviour#L3>).
///
/// `Exponea.logger` is one of these; give a ``SegmentsClient`` its own through its options.
public final class SinkSegmentsLogger: SegmentsLogger, Sendable {
    private let state: Locked<(level: LogLevel, sink: any LogSink)>

    /// A logger writing lines up to `level` to `sink`.
    public init(level: LogLevel = .warning, sink: any LogSink = ConsoleLogSink()) {
        state = Locked((level, sink))
    }

    /// The most detailed level written: `.none`, `.error`, `.warning` (default) or `.verbose`.
    public var logLevel: LogLevel {
        get { state.withLock { $0.level } }
        set { state.withLock { $0.level = newValue } }
    }

    /// Where lines go.
    public var sink: any LogSink {
        get { state.withLock { $0.sink } }
        set { state.withLock { $0.sink = newValue } }
    }

    /// Writes the line to the sink when `level` is enabled, with its control characters escaped
    /// (`\u{1B}`, `\n`; <doc:Behaviour#L1>), so text from a server cannot forge lines or drive a
    /// terminal.
    public func log(_ level: LogLevel, _ message: String) {
        let (enabled, sink) = state.withLock { ($0.level >= level && level != .none, $0.sink) }
        if enabled { sink.write(level, LogLineEscaping.escaped(message)) }
    }
}
