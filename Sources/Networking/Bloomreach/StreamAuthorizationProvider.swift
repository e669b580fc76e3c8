/// Supplies the JWT of a Bloomreach Data Hub stream integration and hears when it was refused.
///
/// In stream mode every request carries `Authorization: Bearer <token()>` when the provider
/// returns a token (otherwise the configuration's static ``BloomreachAuthorization``). When the
/// backend answers 401 or 403, the SDK calls ``authorizationFailed()`` so the app can refresh its
/// token, waits 1 s, asks ``token()`` again and retries the request once. A second refusal is
/// reported again and fails the request with ``SegmentsError`` `.unauthorized`.
///
/// ```swift
/// actor AppTokens: StreamAuthorizationProvider {
///     private var jwt: String?
///     func token() async -> String? { jwt }
///     func authorizationFailed() async { jwt = try? await myBackend.refreshSegmentsJWT() }
/// }
/// ```
public protocol StreamAuthorizationProvider: Sendable {
    /// The current JWT, or `nil` when the app has none.
    func token() async -> String?
    /// Tells the app that the backend refused the last token (HTTP 401 or 403).
    func authorizationFailed() async
}
