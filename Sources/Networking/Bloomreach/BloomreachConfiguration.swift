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
    /// The static `Authorization` header, sent when no ``authorizationProvider`` gives a token.
    public var authorization: BloomreachAuthorization
    /// The app's token source, project or stream mode alike: its token is sent as
    /// `Authorization: Bearer <token>` instead of ``authorization``, and it hears about 401/403
    /// (see ``BloomreachAuthorizationProvider``).
    public var authorizationProvider: (any BloomreachAuthorizationProvider)? {
        get { providerReference?.provider }
        set { providerReference = newValue.map(AuthorizationProviderReference.init) }
    }
    /// The provider, kept so that printing the configuration never shows what it holds
    /// (<doc:Behaviour#P4>).
    private var providerReference: AuthorizationProviderReference?
    /// Whether a plain `http` base URL is allowed for a non-loopback host (<doc:Behaviour#P3>);
    /// `false` by default.
    public var allowsInsecureHTTP: Bool
    /// The deadline of each request, in seconds: more than 0, at most 300 (<doc:Behaviour#P7>).
    public var requestTimeout: TimeInterval
    /// The `User-Agent` header, or `nil` to send none.
    public var userAgent: String?

    /// Creates a configuration.
    public init(
        integration: BloomreachIntegration,
        baseURL: String = defaultBaseURL,
        authorization: BloomreachAuthorization = .none,
        authorizationProvider: (any BloomreachAuthorizationProvider)? = nil,
        allowsInsecureHTTP: Bool = false,
        requestTimeout: TimeInterval = 10,
        userAgent: String? = defaultUserAgent
    ) {
        self.integration = integration
        self.baseURL = baseURL
        self.authorization = authorization
        self.providerReference = authorizationProvider.map(AuthorizationProviderReference.init)
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.requestTimeout = requestTimeout
        self.userAgent = userAgent
    }

    /// Creates a configuration with a token provider, under its name from when it served streams only.
    @available(*, deprecated, renamed: "init(integration:baseURL:authorization:authorizationProvider:allowsInsecureHTTP:requestTimeout:userAgent:)")
    public init(
        integration: BloomreachIntegration,
        baseURL: String = defaultBaseURL,
        authorization: BloomreachAuthorization = .none,
        streamAuthorization: (any BloomreachAuthorizationProvider)?,
        allowsInsecureHTTP: Bool = false,
        requestTimeout: TimeInterval = 10,
        userAgent: String? = defaultUserAgent
    ) {
        self.init(
            integration: integration, baseURL: baseURL, authorization: authorization,
            authorizationProvider: streamAuthorization, allowsInsecureHTTP: allowsInsecureHTTP,
            requestTimeout: requestTimeout, userAgent: userAgent)
    }

    /// The token provider, under its name from when it served streams only.
    @available(*, deprecated, renamed: "authorizationProvider")
    public var streamAuthorization: (any BloomreachAuthorizationProvider)? {
        get { authorizationProvider }
        set { authorizationProvider = newValue }
    }

    /// Checks the settings without sending anything: the base URL (absolute, `https` unless allowed
    /// otherwise, without a user name or password), a non-empty project token or stream id, a
    /// request time-out that is finite, more than 0 and at most 300 s, and an authorization value
    /// and user agent without control characters such as CR or LF (<doc:Behaviour#P3>,
    /// <doc:Behaviour#P7>).
    ///
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`. The adapters check the same before
    ///   every request, so calling this is optional; it lets an app fail early.
    public func validate() throws {
        _ = try validatedBaseURL()
    }

    /// The validated base URL; also rejects an empty token or id, a bad time-out, and a control
    /// character in the authorization value or the user agent (a header value, <doc:Behaviour#P7>).
    func validatedBaseURL() throws -> BaseURL {
        try DurationRules.checkTimeout(requestTimeout, "The request time-out")
        switch integration {
        case .project(let token) where token.isEmpty:
            throw SegmentsError(.invalidConfiguration, "The project token is empty")
        case .stream(let id) where id.isEmpty:
            throw SegmentsError(.invalidConfiguration, "The stream id is empty")
        default:
            break
        }
        switch authorization {
        case .none: break
        case .token(let key): try HeaderValueRules.check(key, "The API key")
        case .bearer(let token): try HeaderValueRules.check(token, "The bearer token")
        }
        if let userAgent { try HeaderValueRules.check(userAgent, "The user agent") }
        return try BaseURL(baseURL, allowsInsecureHTTP: allowsInsecureHTTP)
    }
}
