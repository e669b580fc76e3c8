/// The HTTP seam of the SDK: sends one request and returns the whole response.
///
/// Every backend adapter (the Bloomreach and ODP repositories and the Bloomreach uploader) talks to
/// the network only through this protocol, so an app can route the SDK's traffic through its own
/// HTTP stack, and tests can answer without a network (`RecordingTransport` in `SegmentsTesting`).
///
/// ## What an implementation must do
/// - Send `request` as given (method, URL, headers, body) and return the response for *any*
///   status: a 404 or a 503 is a response, not an error. The adapters map statuses to
///   ``SegmentsError`` themselves (<doc:Behaviour#Status-handling>).
/// - Throw only when there is no response: ``SegmentsError`` with `.network` (no connection,
///   connection lost), `.timeout` (``SegmentsHTTPRequest/timeout`` elapsed) or `.invalidResponse`
///   (a body over your size cap); other errors are treated as `.network`.
/// - Honour task cancellation where the stack allows it.
///
/// ## Plugging in your own transport
/// ```swift
/// struct AppTransport: SegmentsTransport {
///     let client: MyHTTPClient
///     func send(_ request: SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse {
///         let reply = try await client.perform(method: request.method.rawValue, url: request.url,
///                                              headers: Array(request.headers), body: request.body)
///         return SegmentsHTTPResponse(status: reply.status, headers: SegmentsHTTPHeaders(reply.headers),
///                                     body: reply.body)
///     }
/// }
/// ```
/// The default is ``URLSessionSegmentsTransport`` (10 s time-out, 1 MiB response cap).
///
/// ## Adding middleware (signing, metrics, logging)
/// Write a ``SegmentsTransportMiddleware`` and wrap any transport with it:
/// ```swift
/// let transport = URLSessionSegmentsTransport()
///     .withMiddlewares([SigningMiddleware(key: key), MetricsMiddleware()])
/// ```
/// The request passes through the middlewares in array order; the response comes back through
/// them in reverse order (see ``SegmentsMiddlewareTransport``).
public protocol SegmentsTransport: Sendable {
    /// Sends `request` and returns the response, whatever its status; throws only when no
    /// response arrived.
    func send(_ request: SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse
}
