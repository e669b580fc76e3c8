import Foundation
import SegmentsDomain

/// When queued events are uploaded (<doc:Behaviour#E2>). In every mode but `manual`, what is queued
/// when the app goes to the background is uploaded within background time the SDK asks for
/// (<doc:Behaviour#E7>).
///
/// ``Exponea/FlushingMode`` mirrors it on purpose in the Exponea SDK's spelling, with
/// `.periodic(Int)` in whole seconds instead of `.periodic(seconds:)`.
public enum FlushingMode: Hashable, Sendable {
    /// Upload promptly after each event is queued. The default, and what accurate segments need.
    case immediate
    /// Upload every given number of seconds, and when the app resigns active or goes to the
    /// background.
    case periodic(seconds: TimeInterval)
    /// Upload when the app resigns active or goes to the background (and when asked), as the
    /// Exponea iOS SDK's mode of that name.
    case automatic
    /// Upload only when asked (`flushData()`).
    case manual
}

/// The outcome of a flush: how many queued items were uploaded, or the error that stopped it.
///
/// `SegmentsClient.flush()` reports it. The facade's `Exponea.flushData(completion:)` reports the
/// Exponea SDK's `FlushResult` instead (SPEC X1), made from this value.
public typealias SegmentsFlushResult = Result<Int, SegmentsError>
