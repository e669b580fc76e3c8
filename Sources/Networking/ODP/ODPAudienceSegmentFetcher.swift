import Foundation
import SegmentsDomain

/// The Optimizely Data Platform adapter: which audience segments a user qualifies for, over
/// GraphQL (<doc:Behaviour#ODP-audiences-query>, <doc:Behaviour#O4>).
///
/// ```swift
/// let odp = ODPAudienceSegmentFetcher(
///     configuration: ODPConfiguration(apiKey: "PUBLIC_KEY"), transport:
///     URLSessionSegmentsTransport(), clock: clock)
/// let qualified = try await odp.fetchQualifiedSegments(userId: "user123", candidates: ["seg-1",
/// "seg-2"])
/// ```
///
/// One `POST {apiHost}/v3/graphql` per call, with `x-api-key` and a 10 s deadline by default.
/// Failures throw ``SegmentsError``:
/// - `.invalidIdentifier`: ODP does not know the user id (both error forms), or the id is empty;
/// - `.invalidConfiguration`: a bad host or key, or an identifier field that is not allowed;
/// - `.httpStatus` / `.unauthorized`: an HTTP status of 400 or more (``SegmentsError/httpStatus``);
/// - `.invalidResponse`: a GraphQL error (its ``ODPGraphQLError`` is the underlying error) or a
///   body that is not the documented shape ("decode error");
/// - `.network`, `.timeout`, `.cancelled`: no answer.
///
/// Every error's ``SegmentsError/reason`` says why as a value (`decode error`, the status, the
/// GraphQL classification, …).
///
/// No candidates answers `[]` without a request; `customer: null` (an unknown user) answers `[]`.
/// An audience node without a `name` and `state` is dropped, the rest of the answer kept, and a
/// warning logged: `Segments: Ignored <n> ODP audience node(s) without name or state`.
public struct ODPAudienceSegmentFetcher: AudienceSegmentFetcher {
    /// The host, key, time-out and allowed fields.
    public let configuration: ODPConfiguration
    private let transport: any SegmentsTransport
    private let clock: any SegmentsClock
    private let logger: (any SegmentsLogger)?

    /// Creates an adapter.
    ///
    /// - Parameters:
    ///   - configuration: the host, key, time-out and allowed identifier fields.
    ///   - transport: sends the requests; wrap it in middleware to sign or measure them.
    ///   - clock: the "now" that an HTTP-date `Retry-After` is measured from.
    ///   - logger: receives `Segments:` warnings (audience nodes dropped as malformed); `nil` logs nothing.
    public init(
        configuration: ODPConfiguration, transport: any SegmentsTransport, clock: any SegmentsClock,
        logger: (any SegmentsLogger)? = nil
    ) {
        self.configuration = configuration
        self.transport = transport
        self.clock = clock
        self.logger = logger
    }

    /// The segments among `candidates` that `userId` qualifies for, in response order; the
    /// identifier field follows the `vuid_` rule (``AudienceIdentifier/init(userId:)``).
    public func fetchQualifiedSegments(userId: String, candidates: [String]) async throws -> [String] {
        try await fetchQualifiedSegments(for: AudienceIdentifier(userId: userId), candidates: candidates)
    }

    /// The segments among `candidates` that `identifier` qualifies for, in response order.
    public func fetchQualifiedSegments(for identifier: AudienceIdentifier, candidates: [String]) async throws -> [String] {
        guard !candidates.isEmpty else { return [] }
        let request = try self.request(for: identifier, candidates: candidates)
        let operation = ODPResponseDecoder.operation
        let response: SegmentsHTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            throw HTTPStatusMapping.error(forTransportError: error, operation: operation)
        }
        if let failure = HTTPStatusMapping.error(for: response, operation: operation, now: clock.now()) {
            throw failure
        }
        let answer = try ODPResponseDecoder.decode(response.body)
        if answer.droppedNodes > 0 {
            logger?.log(.warning, "Segments: Ignored \(answer.droppedNodes) ODP audience node(s) without name or state")
        }
        return answer.qualified
    }

    /// The request for `identifier` and `candidates`: URL, headers, GraphQL body and deadline.
    ///
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` for a bad configuration or a field that
    ///   is not allowed, `.invalidIdentifier` for an empty id.
    package func request(for identifier: AudienceIdentifier, candidates: [String]) throws -> SegmentsHTTPRequest {
        let url = try configuration.endpointURL()
        guard configuration.allows(identifier.field) else {
            throw SegmentsError(
                .invalidConfiguration, "The identifier field '\(identifier.field)' is not allowed in ODP queries")
        }
        guard !identifier.value.isEmpty else {
            throw SegmentsError(.invalidIdentifier, "The user id is empty")
        }
        let headers: SegmentsHTTPHeaders = [
            "Content-Type": "application/json", "Accept": "application/json", "x-api-key": configuration.apiKey,
        ]
        return SegmentsHTTPRequest(
            method: .post, url: url, headers: headers,
            body: try ODPQuery.body(field: identifier.field, userId: identifier.value, audiences: candidates),
            timeout: configuration.requestTimeout)
    }
}
