/// Where segments come from: the backend port of the segmentation engine.
///
/// The SDK ships ``SegmentRepository`` implementations for Bloomreach Engagement (the default)
/// and Optimizely ODP; implement it to plug in any other backend. Implementations throw
/// ``SegmentsError`` (other errors are wrapped as `.network`), and use ``SegmentsError/isTransient``
/// to tell the engine whether retrying can help.
public protocol SegmentRepository: Sendable {
    /// Fetches every category of segments of `customer` (identified by its cookie).
    ///
    /// A category absent from the answer means no segments in it. A malformed answer must throw
    /// (`.invalidResponse`), never return "no segments".
    func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory

    /// Links the customer's hard ids to its cookie, so the backend computes segments for the
    /// identified customer (<doc:Behaviour#C4>). Called only for customers with hard ids.
    func linkCustomerIds(_ customer: CustomerIds) async throws
}
