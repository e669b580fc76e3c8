import Foundation
import SegmentsDomain

/// The default ``SegmentRepository``: real-time segments from Bloomreach Engagement, for a project
/// or a Data Hub stream: it links the customer's hard ids and fetches the segments, per
/// <doc:Behaviour#Requests> and <doc:Behaviour#Segment-answers>.
///
/// ```swift
/// let repository = BloomreachSegmentRepository(
///     configuration: BloomreachConfiguration(integration: .project(token: "TOKEN"), authorization: .token("KEY")),
///     transport: URLSessionSegmentsTransport(), scheduler: scheduler, clock: clock, logger: logger)
/// let segments = try await repository.fetchSegments(for: customer)
/// ```
///
/// Failures throw ``SegmentsError``: `.invalidConfiguration` (bad base URL, empty token),
/// `.missingCookie`, `.network`, `.timeout`, `.httpStatus` (transient or not per
/// ``SegmentsError/isTransient``, with ``SegmentsError/retryAfter`` from `Retry-After`),
/// `.unauthorized`, `.invalidResponse` (a malformed 2xx body), `.cancelled`.
package struct BloomreachSegmentRepository: SegmentRepository {
    private let sender: BloomreachRequestSender

    /// Creates a repository.
    ///
    /// - Parameters:
    ///   - configuration: the integration, base URL and authorization.
    ///   - transport: sends the requests; wrap it in middleware to sign or measure them.
    ///   - scheduler: times the 1 s wait before an authorization retry.
    ///   - clock: the "now" that an HTTP-date `Retry-After` is measured from.
    ///   - logger: receives `Segments:` warnings (e.g. a segment dropped for a missing id).
    package init(
        configuration: BloomreachConfiguration, transport: any SegmentsTransport, scheduler: any SegmentsScheduler,
        clock: any SegmentsClock, logger: any SegmentsLogger
    ) {
        sender = BloomreachRequestSender(
            configuration: configuration, transport: transport, scheduler: scheduler, clock: clock, logger: logger)
    }

    /// Fetches every category of segments for the customer's cookie: `GET …/segments?cookie={cookie}`.
    ///
    /// Categories are kept as the backend names them, unknown ones included; a category absent
    /// from the answer means no segments in it.
    package func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory {
        let cookie = try Self.cookie(of: customer)
        let response = try await sender.send(.segments(cookie: cookie))
        return try BloomreachSegmentsDecoder.decode(response.body, logger: sender.logger)
    }

    /// Links the customer's hard ids to its cookie: `POST …/cookies/{cookie}/link-ids` with
    /// `{"external_ids": {…}}`. Does nothing for a customer without hard ids.
    ///
    /// A failed request throws `.linkFailed` wrapping the request's error, with its HTTP status and
    /// `Retry-After`, so ``SegmentsError/isTransient`` follows the cause (<doc:Behaviour#C4>).
    package func linkCustomerIds(_ customer: CustomerIds) async throws {
        let cookie = try Self.cookie(of: customer)
        guard customer.hasHardIds else { return }
        let body = try BloomreachBodies.linkIds(customer)
        do {
            _ = try await sender.send(.linkIds(cookie: cookie), body: body)
        } catch let error as SegmentsError {
            switch error.code {
            case .network, .timeout, .httpStatus, .unauthorized, .invalidResponse:
                throw SegmentsError(
                    .linkFailed, "Linking customer ids failed: \(error.message)", httpStatus: error.httpStatus,
                    retryAfter: error.retryAfter, underlying: error)
            default:
                throw error
            }
        }
    }

    private static func cookie(of customer: CustomerIds) throws -> String {
        guard let cookie = customer.cookie, !cookie.isEmpty else {
            throw SegmentsError(.missingCookie, "The customer has no cookie")
        }
        return cookie
    }
}
