import Foundation
import SegmentsDomain

/// A ``SegmentsLogger`` with a settable level that hands the lines it lets through to another
/// logger, its sink (<doc:Behaviour#L2>, <doc:Behaviour#L3>). By default the sink is
/// ``defaultSink``: Apple's unified logging system on Apple platforms, standard output
/// (``ConsoleSegmentsLogger``) elsewhere.
///
/// `Exponea.logger` writes to ``defaultSink`` by default; give a ``SegmentsClient`` one of these
/// through its options, or any other ``SegmentsLogger``.
public final class SinkSegmentsLogger: SegmentsLogger, Sendable {
    private let state: Locked<(level: LogLevel, sink: any SegmentsLogger)>

    /// A logger handing lines up to `level` to `sink`.
    public init(level: LogLevel = .warning, sink: any SegmentsLogger = SinkSegmentsLogger.defaultSink) {
        state = Locked((level, sink))
    }

    /// The most detailed level written: `.none`, `.error`, `.warning` (default) or `.verbose`.
    public var logLevel: LogLevel {
        get { state.withLock { $0.level } }
        set { state.withLock { $0.level = newValue } }
    }

    /// Where lines go: the sink's `log(_:_:)` is given every line that passes ``logLevel`` (and
    /// filters by its own `logLevel` too, so a sink that keeps everything it is given reports
    /// `.verbose`).
    public var sink: any SegmentsLogger {
        get { state.withLock { $0.sink } }
        set {
            // The replaced sink is the app's object: released after the lock (its deinit may log).
            let replaced = state.withLock { state -> any SegmentsLogger in
                defer { state.sink = newValue }
                return state.sink
            }
            withExtendedLifetime(replaced) {}
        }
    }

    /// Hands the line to the sink when `level` is enabled, with its control characters escaped
    /// (`\u{1B}`, `\n`; <doc:Behaviour#L1>), so text from a server cannot forge lines or drive a
    /// terminal.
    public func log(_ level: LogLevel, _ message: String) {
        let (enabled, sink) = state.withLock { ($0.level >= level && level != .none, $0.sink) }
        if enabled { sink.log(level, LogLineEscaping.escaped(message)) }
    }
}
