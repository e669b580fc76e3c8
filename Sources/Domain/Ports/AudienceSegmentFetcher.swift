/// Where qualified audience segments come from: the backend port of the audience loader.
///
/// The SDK ships `ODPAudienceSegmentFetcher` (Optimizely Data Platform GraphQL); implement it to
/// plug in another audience service. Implementations throw ``SegmentsError``: `.invalidIdentifier`
/// when the backend does not know the user, any other code for a failed fetch (<doc:Behaviour#O4>).
public protocol AudienceSegmentFetcher: Sendable {
    /// The names among `candidates` that `identifier` qualifies for, in the backend's order.
    ///
    /// An unknown user without an error is `[]`. Callers never pass an empty `candidates`.
    func fetchQualifiedSegments(for identifier: AudienceIdentifier, candidates: [String]) async throws -> [String]

    /// The same request, told the options of the fetch that sent it (<doc:Behaviour#O1>: every form
    /// forwards the options). The loader always calls this one; the cache options are already
    /// carried out by then, so a backend rarely needs them, but a test double can record them. The
    /// default ignores `options` and calls ``fetchQualifiedSegments(for:candidates:)``.
    func fetchQualifiedSegments(
        for identifier: AudienceIdentifier, candidates: [String], options: Set<AudienceSegmentOption>
    ) async throws -> [String]
}

extension AudienceSegmentFetcher {
    /// Ignores `options`: calls ``fetchQualifiedSegments(for:candidates:)``.
    public func fetchQualifiedSegments(
        for identifier: AudienceIdentifier, candidates: [String], options: Set<AudienceSegmentOption>
    ) async throws -> [String] {
        try await fetchQualifiedSegments(for: identifier, candidates: candidates)
    }
}
