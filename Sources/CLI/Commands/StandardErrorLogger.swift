import Foundation
import RealtimeSegments
import SegmentsData

/// Log lines go to standard error, so standard output holds only the command's own output (the
/// JSON of `segments fetch`, the lines of `segments track`). It writes every line it is given, in
/// the form ``ConsoleSegmentsLogger`` prints; the `SinkSegmentsLogger` in front of it chooses the level.
struct StandardErrorLogger: SegmentsLogger {
    var logLevel: LogLevel { .verbose }

    func log(_ level: LogLevel, _ message: String) {
        guard isEnabled(level) else { return }
        FileHandle.standardError.write(Data((ConsoleSegmentsLogger.line(level, message) + "\n").utf8))
    }
}
