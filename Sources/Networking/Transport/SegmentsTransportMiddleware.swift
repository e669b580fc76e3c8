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

/// A transport wrapped in middleware: itself a ``SegmentsTransport``.
///
/// `middlewares[0]` sees the request first and the response last; the wrapped transport sends
/// what the last middleware passes on.
public struct SegmentsMiddlewareTransport: SegmentsTransport {
    /// The transport that finally sends the request.
    public let transport: any SegmentsTransport
    /// The middlewares, outermost first.
    public let middlewares: [any SegmentsTransportMiddleware]

    /// Wraps `transport` in `middlewares`, outermost first.
    public init(transport: any SegmentsTransport, middlewares: [any SegmentsTransportMiddleware]) {
        self.transport = transport
        self.middlewares = middlewares
    }

    /// Passes `request` through the middlewares in order to the transport.
    public func send(_ request: SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse {
        try await send(request, through: middlewares[...])
    }

    private func send(
        _ request: SegmentsHTTPRequest, through remaining: ArraySlice<any SegmentsTransportMiddleware>
    ) async throws -> SegmentsHTTPResponse {
        guard let middleware = remaining.first else {
            return try await transport.send(request)
        }
        let rest = remaining.dropFirst()
        return try await middleware.intercept(request) { passed in
            try await self.send(passed, through: rest)
        }
    }
}

extension SegmentsTransport {
    /// This transport wrapped in `middlewares`; `middlewares[0]` sees each request first.
    public func withMiddlewares(_ middlewares: [any SegmentsTransportMiddleware]) -> SegmentsMiddlewareTransport {
        SegmentsMiddlewareTransport(transport: self, middlewares: middlewares)
    }
}
