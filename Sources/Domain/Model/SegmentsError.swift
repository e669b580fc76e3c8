import Foundation

/// The one error type of the SDK: what went wrong, why, and the HTTP status when there is one.
public struct SegmentsError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        /// The request did not complete: no connection, connection lost, DNS failure.
        case network
        /// The request or the whole call took longer than its time-out.
        case timeout
        /// The server answered with a status that is not a success (see ``SegmentsError/httpStatus``).
        case httpStatus
        /// The server refused the credentials (401 or 403).
        case unauthorized
        /// A success status with a body that breaks the wire format, or a body over the size cap.
        case invalidResponse
        /// Linking the customer's ids to its cookie failed, so segments were not fetched (SPEC C4).
        case linkFailed
        /// The customer has no cookie, so there is nothing to fetch for (SPEC C5).
        case missingCookie
        /// The customer changed while the request ran, more often than the retries allow (SPEC G6).
        case customerChanged
        /// The work was cancelled (anonymize, stop or task cancellation).
        case cancelled
        /// The integration was stopped (SPEC A3).
        case stopped
        /// The SDK is not configured yet.
        case notConfigured
        /// A setting or argument is not valid.
        case invalidConfiguration
        /// The backend does not know the user identifier (ODP).
        case invalidIdentifier
        /// The feature is not enabled for this integration (ODP).
        case notEnabled
        /// Reading or writing local storage failed.
        case storage
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable explanation, without credentials.
    public let message: String
    /// The HTTP status, when the server answered.
    public let httpStatus: Int?
    /// How long the server asked the client to wait before retrying (`Retry-After`), in seconds.
    public let retryAfter: TimeInterval?
    /// The error this one wraps, if any.
    public let underlying: (any Error)?
    /// The reason given at creation; ``reason`` falls back to the one the code implies.
    let explicitReason: Reason?

    /// Creates an error.
    ///
    /// - Parameter reason: why, as a value (see ``reason``); by default the one `code` implies.
    public init(
        _ code: Code, _ message: String, httpStatus: Int? = nil, retryAfter: TimeInterval? = nil,
        underlying: (any Error)? = nil, reason: Reason? = nil
    ) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
        self.underlying = underlying
        self.explicitReason = reason
    }

    /// Whether trying again later can succeed (WIRE.md "Status handling"): network failures,
    /// time-outs, 408, 429, 5xx and malformed success bodies are transient; other statuses,
    /// authorization failures and local errors are not. A link failure is as transient as its cause.
    public var isTransient: Bool {
        switch code {
        case .network, .timeout, .invalidResponse:
            return true
        case .httpStatus:
            guard let status = httpStatus else { return false }
            return status == 408 || status == 429 || (500...599).contains(status)
        case .linkFailed:
            return (underlying as? SegmentsError)?.isTransient ?? false
        case .unauthorized, .missingCookie, .customerChanged, .cancelled, .stopped, .notConfigured,
            .invalidConfiguration, .invalidIdentifier, .notEnabled, .storage:
            return false
        }
    }

    /// `message`, with the HTTP status when there is one.
    public var description: String {
        if let httpStatus { return "\(message) (HTTP \(httpStatus))" }
        return message
    }

    /// `error` as a `SegmentsError`: itself when it already is one, otherwise wrapped with `code`.
    public static func wrapping(_ error: any Error, as code: Code = .network) -> SegmentsError {
        if let error = error as? SegmentsError { return error }
        if error is CancellationError { return SegmentsError(.cancelled, "cancelled", underlying: error) }
        return SegmentsError(code, String(describing: error), underlying: error)
    }
}
