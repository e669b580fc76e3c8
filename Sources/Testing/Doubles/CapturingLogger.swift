import SegmentsDomain

/// A ``SegmentsLogger`` that keeps every line it is given, for assertions.
public final class CapturingLogger: SegmentsLogger, Sendable {
    /// One captured line.
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

    /// The most detailed level captured; settable to test level-dependent output.
    public var logLevel: LogLevel {
        get { state.withLock { $0.level } }
        set { state.withLock { $0.level = newValue } }
    }

    /// Captures the line if `level` is enabled.
    public func log(_ level: LogLevel, _ message: String) {
        state.withLock { state in
            if level != .none && level <= state.level { state.entries.append(Entry(level: level, message: message)) }
        }
    }

    /// Every captured line, oldest first.
    public var entries: [Entry] { state.withLock { $0.entries } }

    /// The text of every captured line, oldest first.
    public var messages: [String] { entries.map(\.message) }

    /// How many captured lines equal `message` exactly.
    public func count(of message: String) -> Int {
        entries.filter { $0.message == message }.count
    }

    /// Forgets every captured line.
    public func clear() {
        state.withLock { $0.entries = [] }
    }
}
