import Foundation
import SegmentsDomain

/// What the Bloomreach adapters share: building requests (URL, headers, authorization), sending
/// them, mapping statuses to ``SegmentsError``, and the authorization retry of a token provider.
struct BloomreachRequestSender: Sendable {
    /// The wait before a request whose provided token was refused (401 or 403) is sent once more
    /// with the provider's current token (<doc:Behaviour#Status-handling>).
    static let authorizationRetryDelay: TimeInterval = 1

    let configuration: BloomreachConfiguration
    let transport: any SegmentsTransport
    let scheduler: any SegmentsScheduler
    let clock: any SegmentsClock
    let logger: any SegmentsLogger
    /// The configuration's base URL, validated once: parsing it took a few tens of microseconds
    /// of every request (benchmark 5). A configuration that fails validation fails every request
    /// with the same error, as before.
    private let baseURL: Result<BaseURL, any Error>

    init(
        configuration: BloomreachConfiguration, transport: any SegmentsTransport, scheduler: any SegmentsScheduler,
        clock: any SegmentsClock, logger: any SegmentsLogger
    ) {
        self.configuration = configuration
        self.transport = transport
        self.scheduler = scheduler
        self.clock = clock
        self.logger = logger
        baseURL = Result { try configuration.validatedBaseURL() }
    }

    /// Sends `endpoint` with `body` and returns the 2xx response.
    ///
    /// With a ``BloomreachAuthorizationProvider`` (project or stream mode), each attempt asks it
    /// for its token; a 401/403 is reported to the provider and the request is retried once, after
    /// ``authorizationRetryDelay`` on the scheduler, with the provider's token at that moment.
    ///
    /// - Throws: ``SegmentsError`` for a bad configuration, a provider that threw, a failed
    ///   transport or a non-2xx status.
    func send(_ endpoint: BloomreachEndpoint, body: Data? = nil) async throws -> SegmentsHTTPResponse {
        let provider = configuration.authorizationProvider
        var refusals = 0
        while true {
            var token: String?
            if let provider { token = try await Self.token(from: provider, operation: endpoint.operation) }
            let request = try self.request(for: endpoint, body: body, token: token)
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
                "Segments: \(endpoint.operation) was refused (HTTP \(response.status)), retrying once with a refreshed token")
            await scheduler.sleep(for: Self.authorizationRetryDelay)
            if Task.isCancelled {
                throw HTTPStatusMapping.cancelled(endpoint.operation)
            }
        }
    }

    /// The provider's token; a ``SegmentsError`` it throws passes through, anything else becomes
    /// `.unauthorized` (`.cancelled` for a cancellation), its message naming only the error's type
    /// (<doc:Behaviour#P4>). A token with a control character is `.unauthorized` too
    /// (<doc:Behaviour#P7>).
    private static func token(
        from provider: any BloomreachAuthorizationProvider, operation: String
    ) async throws -> String? {
        let token: String?
        do {
            token = try await provider.token()
        } catch let error as SegmentsError {
            throw error
        } catch is CancellationError {
            throw HTTPStatusMapping.cancelled(operation)
        } catch {
            throw SegmentsError(
                .unauthorized, "\(operation) was not sent: the authorization provider failed (\(type(of: error)))",
                underlying: error)
        }
        // A control character would split or void the header (see Behaviour P7): nothing is sent,
        // and `.unauthorized` keeps queued events as any refused credential does.
        if let token, let forbidden = HeaderValueRules.firstForbidden(in: token) {
            throw SegmentsError(
                .unauthorized, "\(operation) was not sent: the authorization provider's token contains a control character (\(forbidden))")
        }
        return token
    }

    /// The request for `endpoint`: its URL in this integration, JSON headers, authorization and user
    /// agent (<doc:Behaviour#Requests>).
    func request(for endpoint: BloomreachEndpoint, body: Data?, token: String?) throws -> SegmentsHTTPRequest {
        let route = endpoint.route(for: configuration.integration)
        let url = try baseURL.get().appending(path: route.path, query: route.query)
        var headers: SegmentsHTTPHeaders = ["Content-Type": "application/json", "Accept": "application/json"]
        if let authorization = authorizationHeader(token: token) {
            headers["Authorization"] = authorization
        }
        if let userAgent = configuration.userAgent {
            headers["User-Agent"] = userAgent
        }
        return SegmentsHTTPRequest(
            method: endpoint.method, url: url, headers: headers, body: body, timeout: configuration.requestTimeout)
    }

    /// `Bearer <token>` when the provider gave a token, in either mode; else the static authorization.
    func authorizationHeader(token: String?) -> String? {
        if let token, !token.isEmpty {
            return "Bearer \(token)"
        }
        return configuration.authorization.headerValue
    }
}
