#if canImport(os)
import Foundation
import os
import SegmentsDomain

// Forwarding only: UnifiedLogRecord (built and tested on Linux) decides what is private. Not compiled on Linux.
/// Writes each line to Apple's unified logging system (<doc:Behaviour#L3>), so it shows in
/// Console.app and in Xcode's log: `os.Logger` from iOS 14, macOS 11, tvOS 14 and watchOS 7, `os_log`
/// before.
struct UnifiedSegmentsLogger: SegmentsLogger {
    /// `.verbose`: every line it is given is logged.
    var logLevel: LogLevel { .verbose }

    func log(_ level: LogLevel, _ message: String) {
        guard let record = UnifiedLogRecord(level, message) else { return }
        let type: OSLogType = switch record.type {
        case .error: .error
        case .default: .default
        case .info: .info
        }
        if #available(iOS 14, macOS 11, tvOS 14, watchOS 7, *) {
            Logger(subsystem: UnifiedLogRecord.subsystem, category: UnifiedLogRecord.category)
                .log(level: type, "\(record.publicText, privacy: .public) \(record.privateText, privacy: .private)")
        } else {
            let log = OSLog(subsystem: UnifiedLogRecord.subsystem, category: UnifiedLogRecord.category)
            os_log("%{public}@ %{private}@", log: log, type: type, record.publicText, record.privateText)
        }
    }
}
#endif
