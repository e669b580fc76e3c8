import Foundation

/// The one error type of the SDK: what went wrong, why, and the HTTP status when there is one.
public struct SegmentsError: Error, Sendable, CustomStringConvertible {
    /// What went wrong: a stable, extensible set of values.
    ///
    /// A struct rather than an enum, so later versions can add codes without breaking an app's
    /// `switch` (which therefore needs a `default`). Compare with `==` or `switch` over the
    /// constants; ``rawValue`` is stable and safe to log or send to analytics.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, e.g. `"network"`.
        public let rawValue: String

        /// A code with the given name; the SDK only produces the constants below.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The code's name.
        public var description: String { rawValue }

        /// The request did not complete: no connection, connection lost, DNS failure.
        public static let network = Code(rawValue: "network")
        /// The request or the whole call took longer than its time-out.
        public static let timeout = Code(rawValue: "timeout")
        /// The server answered with a status that is not a success (see ``SegmentsError/httpStatus``).
        public static let httpStatus = Code(rawValue: "httpStatus")
        /// The credentials were refused (HTTP 401 or 403), or the app's authorization provider
        /// failed to supply a token, so nothing was sent.
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// A success status with a body that breaks the wire format, or a body over the size cap.
        public static let invalidResponse = Code(rawValue: "invalidResponse")
        /// Linking the customer's ids to its cookie failed, so segments were not fetched
        /// (<doc:Behaviour#C4>).
        public static let linkFailed = Code(rawValue: "linkFailed")
        /// The customer has no cookie, so there is nothing to fetch for (<doc:Behaviour#C5>).
        public static let missingCookie = Code(rawValue: "missingCookie")
        /// The customer changed while the request ran, more often than the retries allow
        /// (<doc:Behaviour#G6>).
        public static let customerChanged = Code(rawValue: "customerChanged")
        /// The work was cancelled (anonymize, stop or task cancellation).
        public static let cancelled = Code(rawValue: "cancelled")
        /// The integration was stopped: reads and flushes that were waiting, and reads made
        /// afterwards, fail with it until the next configure (<doc:Behaviour#A3>).
        public static let stopped = Code(rawValue: "stopped")
        /// The SDK is not configured yet.
        public static let notConfigured = Code(rawValue: "notConfigured")
        /// A setting or argument is not valid.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// The backend does not know the user identifier (ODP).
        public static let invalidIdentifier = Code(rawValue: "invalidIdentifier")
        /// The feature is not enabled for this integration (ODP).
        public static let notEnabled = Code(rawValue: "notEnabled")
        /// Reading or writing local storage failed.
        public static let storage = Code(rawValue: "storage")
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

    /// Whether trying again later can succeed (<doc:Behaviour#Status-handling>): network
    /// failures, time-outs, 408, 429, 5xx and malformed success bodies are transient; other statuses,
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
        default:
            // Authorization failures and local errors (missing cookie, customer changed,
            // cancelled, stopped, not configured, invalid configuration or identifier, not
            // enabled, storage), and any code this version does not know.
            return false
        }
    }

    /// `message`, with the HTTP status when there is one.
    public var description: String {
        if let httpStatus { return "\(message) (HTTP \(httpStatus))" }
        return message
    }

    /// The integration was stopped (``SegmentsClient/stop()``, `Exponea.stopIntegration()`); the
    /// answer of every call that was waiting and of every call made afterwards (<doc:Behaviour#A3>).
    public static var stopped: SegmentsError { SegmentsError(.stopped, "the integration was stopped") }

    /// The client is not configured yet, or no longer; the answer of calls that need a configured
    /// integration.
    public static var notConfigured: SegmentsError { SegmentsError(.notConfigured, "the client is not configured") }

    /// The device has no usable network path, so nothing was sent (<doc:Behaviour#N1>): code
    /// ``Code/network``, reason ``Reason/offline``. A one-shot read that needs the network fails
    /// with it at once while offline (the completion form answers `[]`), and so does a flush.
    public static var offline: SegmentsError {
        SegmentsError(.network, "the device is offline (no usable network path); nothing was sent", reason: .offline)
    }

    /// `error` as a `SegmentsError`: itself when it already is one, otherwise wrapped with `code`.
    ///
    /// The message of a wrapped error names only its type (and its domain and code when it has
    /// them), never its text: a foreign error's description can carry a URL with the customer's
    /// cookie or the words of an app's token provider (<doc:Behaviour#P4>). The error itself is
    /// ``underlying``.
    public static func wrapping(_ error: any Error, as code: Code = .network) -> SegmentsError {
        if let error = error as? SegmentsError { return error }
        if error is CancellationError { return SegmentsError(.cancelled, "cancelled", underlying: error) }
        return SegmentsError(code, summary(of: error), underlying: error)
    }

    /// What may be said about `error` in a log, a message or a dump (<doc:Behaviour#P4>): a
    /// `SegmentsError`'s ``description``; for any other error its type, with its domain and code
    /// when it declares them (`URLError (NSURLErrorDomain -1004)`), never its text.
    public static func summary(of error: any Error) -> String {
        if let error = error as? SegmentsError { return error.description }
        let type = String(describing: Swift.type(of: error))
        if let error = error as? any CustomNSError {
            return "\(type) (\(Swift.type(of: error).errorDomain) \(error.errorCode))"
        }
        return type
    }
}

extension SegmentsError: CustomDebugStringConvertible, CustomReflectable {
    /// The code, message, status and wait, and the ``underlying`` error as ``summary(of:)`` puts
    /// it, never its text (<doc:Behaviour#P4>).
    public var debugDescription: String {
        var parts = ["code: \(code)", "message: \(String(reflecting: message))"]
        if let httpStatus { parts.append("httpStatus: \(httpStatus)") }
        if let retryAfter { parts.append("retryAfter: \(retryAfter)") }
        if let underlying { parts.append("underlying: \(Self.reflectionOfUnderlying(underlying))") }
        return "SegmentsError(\(parts.joined(separator: ", ")))"
    }

    /// What `dump` and `Mirror` show: the same fields as ``debugDescription``; an underlying
    /// `SegmentsError` is shown (redacted the same way), any other underlying error only as
    /// ``summary(of:)`` (<doc:Behaviour#P4>).
    public var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [
            ("code", code.rawValue), ("message", message), ("reason", reason.rawValue),
        ]
        if let httpStatus { children.append(("httpStatus", httpStatus)) }
        if let retryAfter { children.append(("retryAfter", retryAfter)) }
        if let underlying {
            children.append(("underlying", (underlying as? SegmentsError).map { $0 as Any } ?? Self.summary(of: underlying)))
        }
        return Mirror(self, children: children, displayStyle: .struct)
    }

    private static func reflectionOfUnderlying(_ error: any Error) -> String {
        if let error = error as? SegmentsError { return error.debugDescription }
        return summary(of: error)
    }
}
