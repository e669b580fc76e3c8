import SegmentsDomain

/// A tiny capturing logger for these tests (the shipped one lives in `SegmentsTesting`).
final class LineLog: SegmentsLogger {
    let logLevel: LogLevel
    private let captured = Locked<[(level: LogLevel, message: String)]>([])

    init(level: LogLevel = .verbose) {
        self.logLevel = level
    }

    func log(_ level: LogLevel, _ message: String) {
        guard isEnabled(level) else { return }
        captured.withLock { $0.append((level, message)) }
    }

    /// Every line written.
    var lines: [String] { captured.value.map(\.message) }

    /// The lines at warning level or more severe.
    var problems: [String] {
        captured.value.filter { $0.level == .warning || $0.level == .error }.map(\.message)
    }
}
