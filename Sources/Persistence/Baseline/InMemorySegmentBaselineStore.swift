import SegmentsDomain

/// Keeps the segment baseline in memory only: for apps that want nothing on disk (every launch
/// then counts all categories as changed on its first fetch, <doc:Behaviour#D3>).
public final class InMemorySegmentBaselineStore: SegmentBaselineStore {
    private let baseline: Locked<SegmentBaseline>

    /// A store holding `baseline`, empty by default.
    public init(baseline: SegmentBaseline = .empty) {
        self.baseline = Locked(baseline)
    }

    /// The stored baseline.
    public func load() -> SegmentBaseline {
        baseline.value
    }

    /// Replaces the stored baseline.
    public func save(_ baseline: SegmentBaseline) {
        self.baseline.withLock { $0 = baseline }
    }
}
