/// A step around every request of a ``SegmentsTransport``: signing, metrics, logging, fault
/// injection.
///
/// A middleware receives the request and `next`, the rest of the chain. It may change the request
/// before calling `next`, inspect or change the response after it, retry by calling `next` again,
/// or answer without calling `next` at all.
///
/// ```swift
/// struct SigningMiddleware: SegmentsTransportMiddleware {
///     let key: SigningKey
///     func intercept(
///         _ request: SegmentsHTTPRequest,
///         next: @Sendable (SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse
///     ) async throws -> SegmentsHTTPResponse {
///         var signed = request
///         signed.headers["X-Signature"] = key.signature(of: request.body ?? Data())
///         return try await next(signed)
///     }
/// }
/// ```
///
/// Middleware sees the `Authorization` header: never log its value (``SegmentsHTTPHeaders``'s
/// `description` hides it).
public protocol SegmentsTransportMiddleware: Sendable {
    /// Handles `request`, calling `next` to pass it on down the chain.
    func intercept(
        _ request: SegmentsHTTPRequest,
        next: @Sendable (SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse
    ) async throws -> SegmentsHTTPResponse
}
