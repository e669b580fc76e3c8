/// Persists the reporting segments of every visitor (<doc:Behaviour#V3>, <doc:Behaviour#P1>).
///
/// Implementations never throw from reads: a missing or unreadable record is `nil` (and logged),
/// so start-up never fails on storage (<doc:Behaviour#P2>). The owner serializes calls.
public protocol VisitorSegmentsStore: Sendable {
    /// The stored segments of `visitorId`, or `nil` when there are none or they could not be read.
    func segments(forVisitor visitorId: String) -> VisitorSegments?
    /// Replaces the stored segments of `visitorId`, durably, before returning.
    func save(_ segments: VisitorSegments, forVisitor visitorId: String) throws
}
