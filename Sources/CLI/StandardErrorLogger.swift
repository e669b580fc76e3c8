import Foundation
import RealtimeSegments

/// Log lines go to standard error, so standard output holds only the command's own output (the
/// JSON of `segments fetch`, the lines of `segments track`). `SinkSegmentsLogger` has escaped their
/// control characters already.
struct StandardErrorLogSink: LogSink {
    func write(_ level: LogLevel, _ message: String) {
        FileHandle.standardError.write(Data("[RealtimeSegments] \(level): \(message)\n".utf8))
    }
}
