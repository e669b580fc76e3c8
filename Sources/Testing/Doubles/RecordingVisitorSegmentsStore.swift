import SegmentsDomain

/// A ``VisitorSegmentsStore`` in memory that counts saves and can be made to fail, for tests.
public final class RecordingVisitorSegmentsStore: VisitorSegmentsStore, Sendable {
    private let state: Locked<(visitors: [String: VisitorSegments], saves: Int, failure: SegmentsError?)>

    /// A store holding `visitors`.
    public init(_ visitors: [String: VisitorSegments] = [:]) {
        state = Locked((visitors, 0, nil))
    }

    /// The stored segments of `visitorId`.
    public func segments(forVisitor visitorId: String) -> VisitorSegments? {
        state.withLock { $0.visitors[visitorId] }
    }

    /// Replaces the stored segments, or throws the failure set by ``failSaves(with:)``.
    public func save(_ segments: VisitorSegments, forVisitor visitorId: String) throws {
        try state.withLock { state in
            state.saves += 1
            if let failure = state.failure { throw failure }
            state.visitors[visitorId] = segments
        }
    }

    /// Every stored visitor.
    public var visitors: [String: VisitorSegments] { state.withLock { $0.visitors } }

    /// How many times `save` was called.
    public var saveCount: Int { state.withLock { $0.saves } }

    /// Makes every later save throw `error` (or succeed again with `nil`).
    public func failSaves(with error: SegmentsError?) { state.withLock { $0.failure = error } }
}
