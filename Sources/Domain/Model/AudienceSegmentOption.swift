/// How one fetch of qualified segments uses the cache (<doc:Behaviour#O2>), as Optimizely's
/// `OptimizelySegmentOption` spells it.
public enum AudienceSegmentOption: String, Hashable, Sendable, CaseIterable {
    /// Neither read nor write the cache: always ask the backend, and keep its answer out of the cache.
    case ignoreCache
    /// Empty the whole cache (every user) before this fetch.
    case resetCache
    /// On failure, clear the context's `qualifiedSegments` (to `nil`) instead of keeping the
    /// previous list.
    case clearOnFailure
}
