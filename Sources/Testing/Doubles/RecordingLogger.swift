import SegmentsDomain

/// A ``SegmentsLogger`` that keeps every line it is given, for assertions.
public final class RecordingLogger: SegmentsLogger, Sendable {
    /// One recorded line.
    public struct Entry: Hashable, Sendable {
        /// The line's level.
        public let level: LogLevel
        /// The line's text.
        public let message: String
    }

    private let state: Locked<(level: LogLevel, entries: [Entry])>

    /// A logger writing lines up to `level` (everything by default).
    public init(level: LogLevel = .verbose) {
        state = Locked((level, []))
    }

    /// The most detailed level recorded; settable to test level-dependent output.
    public var logLevel: LogLevel {
        get { state.withLock { $0.level } }
        set { state.withLock { $0.level = newValue } }
    }

    /// Records the line if `level` is enabled.
    public func log(_ level: LogLevel, _ message: String) {
        state.withLock { state in
            if level != .none && level <= state.level { state.entries.append(Entry(level: level, message: message)) }
        }
    }

    /// Every recorded line, oldest first.
    public var entries: [Entry] { state.withLock { $0.entries } }

    /// The text of every recorded line, oldest first.
    public var messages: [String] { entries.map(\.message) }

    /// How many recorded lines equal `message` exactly.
    public func count(of message: String) -> Int {
        entries.filter { $0.message == message }.count
    }

    /// Forgets every recorded line.
    public func clear() {
        state.withLock { $0.entries = [] }
    }
}
