extension SegmentsError {
    /// Why a fetch failed, as a value to compare against rather than a message to parse, spelled
    /// as Optimizely's `fetchSegmentsFailed(reason)` spells it: `decode error`,
    /// `network error`, the HTTP status (`"503"`), a GraphQL classification, …
    ///
    /// ```swift
    /// catch let error as SegmentsError where error.reason == .decodeError { … }
    /// catch let error as SegmentsError where error.reason == .httpStatus(503) { … }
    /// ```
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The reason as text, e.g. `decode error` or `503`.
        public let rawValue: String

        /// A reason with this text.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The answer arrived but is not the documented shape (or not JSON).
        public static let decodeError = Reason(rawValue: "decode error")
        /// No answer: no connection, connection lost, DNS failure.
        public static let networkError = Reason(rawValue: "network error")
        /// The device had no usable network path, so no request was sent (<doc:Behaviour#N1>): the
        /// reason of a one-shot read that needs the network, and of a flush, while offline.
        public static let offline = Reason(rawValue: "offline")
        /// No answer in time.
        public static let timeout = Reason(rawValue: "timeout")
        /// The backend does not know the user id, or the id is empty.
        public static let invalidIdentifier = Reason(rawValue: "invalid identifier")
        /// No audience backend is configured.
        public static let notEnabled = Reason(rawValue: "not enabled")

        /// An HTTP status of 400 or more, as its number: `"503"`.
        public static func httpStatus(_ status: Int) -> Reason {
            Reason(rawValue: String(status))
        }

        /// The text.
        public var description: String { rawValue }
    }

    /// The reason given when the error was made, else the one its code implies: `.networkError`,
    /// `.timeout`, `.httpStatus(status)`, `.decodeError` for `.invalidResponse`,
    /// `.invalidIdentifier`, `.notEnabled`, otherwise the code's name.
    public var reason: Reason {
        if let explicitReason { return explicitReason }
        switch code {
        case .network: return .networkError
        case .timeout: return .timeout
        case .httpStatus, .unauthorized: return httpStatus.map(Reason.httpStatus) ?? Reason(rawValue: code.rawValue)
        case .invalidResponse: return .decodeError
        case .invalidIdentifier: return .invalidIdentifier
        case .notEnabled: return .notEnabled
        default: return Reason(rawValue: code.rawValue)
        }
    }
}
