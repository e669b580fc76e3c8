import Foundation
import SegmentsDomain

/// Everything the Bloomreach adapters need to address and authorize requests.
public struct BloomreachConfiguration: Sendable {
    /// `https://api.exponea.com`.
    public static let defaultBaseURL = "https://api.exponea.com"
    /// The `User-Agent` sent by default.
    public static let defaultUserAgent = "RealtimeSegments/0.1 (Swift)"

    /// The project or stream.
    public var integration: BloomreachIntegration
    /// The API base URL; endpoint paths are joined to it with exactly one `/`.
    public var baseURL: String
    /// The static `Authorization` header.
    public var authorization: BloomreachAuthorization
    /// Stream mode only: the app's JWT source, used instead of ``authorization`` when it has a token.
    public var streamAuthorization: (any StreamAuthorizationProvider)?
    /// Whether a plain `http` base URL is allowed for a non-loopback host (SPEC P3); `false` by default.
    public var allowsInsecureHTTP: Bool
    /// The deadline of each request, in seconds: more than 0, at most 300 (SPEC P7).
    public var requestTimeout: TimeInterval
    /// The `User-Agent` header, or `nil` to send none.
    public var userAgent: String?

    /// Creates a configuration.
    public init(
        integration: BloomreachIntegration,
        baseURL: String = defaultBaseURL,
        authorization: BloomreachAuthorization = .none,
        streamAuthorization: (any StreamAuthorizationProvider)? = nil,
        allowsInsecureHTTP: Bool = false,
        requestTimeout: TimeInterval = 10,
        userAgent: String? = defaultUserAgent
    ) {
        self.integration = integration
        self.baseURL = baseURL
        self.authorization = authorization
        self.streamAuthorization = streamAuthorization
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.requestTimeout = requestTimeout
        self.userAgent = userAgent
    }

    /// Checks the settings without sending anything: the base URL (absolute, `https` unless allowed
    /// otherwise), a non-empty project token or stream id, and a request time-out that is finite,
    /// more than 0 and at most 300 s (SPEC P7).
    ///
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`. The adapters check the same before
    ///   every request, so calling this is optional; it lets an app fail early.
    public func validate() throws {
        _ = try validatedBaseURL()
    }

    /// The validated base URL; also rejects an empty token or id and a bad time-out.
    func validatedBaseURL() throws -> BaseURL {
        try DurationRules.checkTimeout(requestTimeout, "The request time-out")
        switch integration {
        case .project(let token) where token.isEmpty:
            throw SegmentsError(.invalidConfiguration, "The project token is empty")
        case .stream(let id) where id.isEmpty:
            throw SegmentsError(.invalidConfiguration, "The stream id is empty")
        default:
            return try BaseURL(baseURL, allowsInsecureHTTP: allowsInsecureHTTP)
        }
    }
}
