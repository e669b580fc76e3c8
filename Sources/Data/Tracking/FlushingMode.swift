import Foundation

/// When queued events are uploaded (SPEC E2).
public enum FlushingMode: Hashable, Sendable {
    /// Upload promptly after each event is queued. The default, and what accurate segments need.
    case immediate
    /// Upload every given number of seconds.
    case periodic(seconds: TimeInterval)
    /// Upload only when asked (`flushData()`).
    case manual
}
