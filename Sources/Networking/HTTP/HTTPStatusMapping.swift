import Foundation
import SegmentsDomain

/// Turns what a transport produced into ``SegmentsError`` by the status rules of the wire format
/// (<doc:Behaviour#Status-handling>): 2xx succeeds; no answer, 408, 429 and 5xx are transient; 401
/// and 403 are authorization failures; every other status is permanent.
package enum HTTPStatusMapping {
    /// The error for `response`, or `nil` for a 2xx.
    ///
    /// - 3xx → `.httpStatus`, permanent: redirects are never followed (<doc:Behaviour#P6>), so a
    ///   redirect that reaches here was refused and nothing was sent to its `Location`;
    /// - 401, 403 → `.unauthorized` (permanent);
    /// - 408, 429, 5xx → `.httpStatus`, transient through ``SegmentsError/isTransient``;
    /// - any other status → `.httpStatus`, permanent.
    ///
    /// A parsable `Retry-After` header becomes ``SegmentsError/retryAfter``, measured from `now`.
    /// `operation` names the request in the message (e.g. `Fetching segments`); it must not carry
    /// customer ids or credentials, because failures are logged at warning level (<doc:Behaviour#P4>).
    package static func error(for response: SegmentsHTTPResponse, operation: String, now: Date) -> SegmentsError? {
        guard !response.isSuccess else { return nil }
        let status = response.status
        let retryAfter = response.headers["Retry-After"].flatMap { RetryAfter.seconds(from: $0, now: now) }
        switch status {
        case 300...399:
            return SegmentsError(
                .httpStatus, "\(operation) was redirected; redirects are refused", httpStatus: status,
                retryAfter: retryAfter)
        case 401, 403:
            return SegmentsError(
                .unauthorized, "\(operation) was refused: not authorized", httpStatus: status, retryAfter: retryAfter)
        default:
            return SegmentsError(
                .httpStatus, "\(operation) failed with an error status", httpStatus: status, retryAfter: retryAfter)
        }
    }

    /// The error for a transport that threw instead of answering: ``SegmentsError`` passes through,
    /// cancellation becomes `.cancelled`, `URLError.timedOut` `.timeout`, anything else `.network`.
    package static func error(forTransportError error: any Error, operation: String) -> SegmentsError {
        if let error = error as? SegmentsError { return error }
        if error is CancellationError { return cancelled(operation, underlying: error) }
        if let urlError = error as? URLError {
            switch urlError.code {
            case .timedOut: return SegmentsError(.timeout, "\(operation) timed out", underlying: error)
            case .cancelled: return cancelled(operation, underlying: error)
            default: break
            }
        }
        return SegmentsError(.network, "\(operation) failed: \(SegmentsError.summary(of: error))", underlying: error)
    }

    /// `operation` was cancelled (by the caller's task, `anonymize` or `stop`).
    package static func cancelled(_ operation: String, underlying: any Error = CancellationError()) -> SegmentsError {
        SegmentsError(.cancelled, "\(operation) was cancelled", underlying: underlying)
    }
}
