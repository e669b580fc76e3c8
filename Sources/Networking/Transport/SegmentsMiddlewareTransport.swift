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
