import Foundation
import SegmentsDomain
import SegmentsData

extension SegmentsUserContext {
    /// Merges default reporting segments for this user (<doc:Behaviour#V1>): the keys `country`,
    /// `browser`, `devices`, `source`, `campaign` and `visitorType` are set, keys not given keep
    /// their value, unknown keys are logged as a warning and ignored. Persisted before returning;
    /// never throws.
    ///
    /// - Returns: the user's visitor segments after the call.
    @discardableResult
    public func setDefaultSegments(_ segments: [String: String]) -> VisitorSegments {
        client.visitorSegments.setDefaultSegments(segments, forVisitor: userId)
    }

    /// Appends custom segment ids for this user, skipping ids already present (<doc:Behaviour#V2>).
    /// Persisted before returning; never throws.
    ///
    /// - Returns: the user's visitor segments after the call.
    @discardableResult
    public func setCustomSegments(_ segmentIds: [String]) -> VisitorSegments {
        client.visitorSegments.setCustomSegments(segmentIds, forVisitor: userId)
    }

    /// This user's visitor segments (empty until set).
    public var visitorSegments: VisitorSegments {
        client.visitorSegments.segments(forVisitor: userId)
    }

    /// This user's later visitor segment changes: one element per `setDefaultSegments` or
    /// `setCustomSegments` call (<doc:Behaviour#V3>). A reader that falls more than
    /// ``VisitorSegmentsRegistry/changeBufferSize`` changes behind loses the oldest unread ones.
    public func visitorSegmentChanges() -> AsyncStream<VisitorSegmentsChange> {
        client.visitorSegments.changes(forVisitor: userId)
    }
}
