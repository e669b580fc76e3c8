import SegmentsDomain

/// One call that changed a visitor's segments, as ``VisitorSegmentsRegistry/changes(forVisitor:)``
/// tells it (<doc:Behaviour#V3>): exactly one per call, even when the values stayed the same.
public struct VisitorSegmentsChange: Hashable, Sendable {
    /// Which call made the change.
    public enum Kind: Hashable, Sendable {
        /// `setDefaultSegments(_:forVisitor:)`.
        case defaultSegments
        /// `setCustomSegments(_:forVisitor:)`.
        case customSegments
    }

    /// The visitor.
    public let visitorId: String
    /// Which call made the change.
    public let kind: Kind
    /// The visitor's segments after the call.
    public let segments: VisitorSegments

    /// Creates a change.
    public init(visitorId: String, kind: Kind, segments: VisitorSegments) {
        self.visitorId = visitorId
        self.kind = kind
        self.segments = segments
    }
}
