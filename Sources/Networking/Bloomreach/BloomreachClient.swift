import Foundation
import SegmentsDomain

/// What the Bloomreach adapters share: building requests (URL, headers, authorization), sending
/// them, mapping statuses to ``SegmentsError``, and the stream-mode authorization retry.
struct BloomreachClient: Sendable {
    /// The wait before retrying a request whose stream token was refused (WIRE.md).
    static let authorizationRetryDelay: TimeInterval = 1

    let configuration: BloomreachConfiguration
    let transport: any SegmentsTransport
    let scheduler: any Scheduler
    let clock: any Clock
    let logger: any SegmentsLogger

    /// Sends `endpoint` with `body` and returns the 2xx response.
    ///
    /// In stream mode with a ``StreamAuthorizationProvider``, a 401/403 is reported to the
    /// provider and the request is retried once, after ``authorizationRetryDelay`` on the
    /// scheduler, with the provider's token at that moment.
    ///
    /// - Throws: ``SegmentsError`` for a bad configuration, a failed transport or a non-2xx status.
    func send(_ endpoint: BloomreachEndpoint, body: Data? = nil) async throws -> SegmentsHTTPResponse {
        let provider = streamProvider
        var refusals = 0
        while true {
            let request = try self.request(for: endpoint, body: body, jwt: await provider?.token())
            let response: SegmentsHTTPResponse
            do {
                response = try await transport.send(request)
            } catch {
                throw HTTPStatusMapping.error(forTransportError: error, operation: endpoint.operation)
            }
            guard let failure = HTTPStatusMapping.error(for: response, operation: endpoint.operation, now: clock.now())
            else { return response }
            guard failure.code == .unauthorized, let provider else { throw failure }
            refusals += 1
            await provider.authorizationFailed()
            guard refusals == 1 else { throw failure }
            logger.log(
                .warning,
                "Segments: \(endpoint.operation) was refused (HTTP \(response.status)), retrying once with a refreshed stream token")
            await scheduler.sleep(for: Self.authorizationRetryDelay)
            if Task.isCancelled {
                throw SegmentsError(.cancelled, "\(endpoint.operation) was cancelled", underlying: CancellationError())
            }
        }
    }

    /// The request for `endpoint`: URL per WIRE.md, JSON headers, authorization and user agent.
    func request(for endpoint: BloomreachEndpoint, body: Data?, jwt: String?) throws -> SegmentsHTTPRequest {
        let route = endpoint.route(for: configuration.integration)
        let url = try configuration.validatedBaseURL().appending(path: route.path, query: route.query)
        var headers: SegmentsHTTPHeaders = ["Content-Type": "application/json", "Accept": "application/json"]
        if let authorization = authorizationHeader(jwt: jwt) {
            headers["Authorization"] = authorization
        }
        if let userAgent = configuration.userAgent {
            headers["User-Agent"] = userAgent
        }
        return SegmentsHTTPRequest(
            method: endpoint.method, url: url, headers: headers, body: body, timeout: configuration.requestTimeout)
    }

    /// `Bearer <jwt>` in stream mode when the app provided a JWT, else the static authorization.
    func authorizationHeader(jwt: String?) -> String? {
        if case .stream = configuration.integration, let jwt, !jwt.isEmpty {
            return "Bearer \(jwt)"
        }
        return configuration.authorization.headerValue
    }

    /// The JWT provider, only in stream mode.
    private var streamProvider: (any StreamAuthorizationProvider)? {
        guard case .stream = configuration.integration else { return nil }
        return configuration.streamAuthorization
    }
}
