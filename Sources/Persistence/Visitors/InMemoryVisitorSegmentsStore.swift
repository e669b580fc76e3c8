import SegmentsDomain

/// Keeps visitor segments in memory only: for apps that want nothing on disk (segments then end
/// with the process).
public final class InMemoryVisitorSegmentsStore: VisitorSegmentsStore {
    private let visitors: Locked<[String: VisitorSegments]>

    /// A store holding `visitors`, or nothing.
    public init(_ visitors: [String: VisitorSegments] = [:]) {
        self.visitors = Locked(visitors)
    }

    /// The stored segments of `visitorId`, or `nil`.
    public func segments(forVisitor visitorId: String) -> VisitorSegments? {
        visitors.withLock { $0[visitorId] }
    }

    /// Replaces the stored segments of `visitorId`.
    public func save(_ segments: VisitorSegments, forVisitor visitorId: String) {
        visitors.withLock { $0[visitorId] = segments }
    }
}
