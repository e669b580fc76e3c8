import Foundation
import SegmentsDomain

/// When queued events are uploaded (see Behaviour E2).
public enum FlushingMode: Hashable, Sendable {
    /// Upload promptly after each event is queued. The default, and what accurate segments need.
    case immediate
    /// Upload every given number of seconds.
    case periodic(seconds: TimeInterval)
    /// Upload only when asked (`flushData()`).
    case manual
}

/// The outcome of a flush: how many queued items were uploaded, or the error that stopped it.
///
/// The one flush outcome of the package: `SegmentsClient.flush()` and `Exponea.flushData(completion:)`
/// report it.
public typealias FlushResult = Result<Int, SegmentsError>
