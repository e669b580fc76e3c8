import Foundation
import SegmentsDomain
import SegmentsNetworking

extension Exponea {
    /// How requests are authorized: the `Authorization` header each request carries
    /// (<doc:Behaviour#Requests>).
    ///
    /// The Exponea SDK's spelling of ``BloomreachAuthorization``, mirrored on purpose, case for case,
    /// so facade code reads as it did with the Exponea SDK.
    ///
    /// Printing never shows the credential — `description`, `debugDescription`, `dump` and `Mirror`
    /// alike (<doc:Behaviour#P4>).
    public enum Authorization: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// No `Authorization` header.
        case none
        /// `Authorization: Token <api key>`.
        case token(String)
        /// `Authorization: Bearer <token>`.
        case bearer(String)

        /// The kind only: `none`, `token(<redacted>)` or `bearer(<redacted>)`.
        public var description: String { bloomreach.description }

        /// The same as ``description``.
        public var debugDescription: String { description }

        /// The same credential as the Bloomreach adapter's value.
        var bloomreach: BloomreachAuthorization {
            switch self {
            case .none: .none
            case .token(let key): .token(key)
            case .bearer(let token): .bearer(token)
            }
        }

        /// No children: the credential is not reachable by reflection.
        public var customMirror: Mirror {
            Mirror(self, children: [], displayStyle: .enum)
        }
    }

    /// A Bloomreach Engagement **project** integration.
    ///
    /// Two settings are equal when their values are, and they hold the same provider instance (an
    /// actor or class) or none; a provider of value type is equal only in copies of the settings it
    /// was given to.
    public struct ProjectSettings: Sendable, Hashable {
        /// The project token.
        public var projectToken: String
        /// The authorization of every request that ``authorizationProvider`` gives no token for.
        public var authorization: Authorization
        /// The app's refreshing token, as in stream mode: sent as `Authorization: Bearer <token>`
        /// when it gives one, told about 401/403 (see ``BloomreachAuthorizationProvider``).
        public var authorizationProvider: (any BloomreachAuthorizationProvider)? {
            get { providerReference?.provider }
            set { providerReference = newValue.map(AuthorizationProviderReference.init) }
        }
        /// The API base URL; `https://api.exponea.com` by default. Plain `http` only for loopback
        /// unless ``allowsInsecureHTTP`` (<doc:Behaviour#P3>).
        public var baseUrl: String
        /// The Exponea SDK's tracking of some event types into other projects. Accepted and
        /// ignored: every event goes to ``projectToken``'s project, and configure warns once,
        /// naming it (<doc:Behaviour#X1>).
        public var projectMapping: [EventType: [ExponeaProject]]?
        /// Allows a plain-`http` base URL that is not loopback.
        public var allowsInsecureHTTP: Bool
        /// The provider, compared by instance and printed without its contents (<doc:Behaviour#P4>).
        private var providerReference: AuthorizationProviderReference?

        /// Creates project settings; a `nil` `baseUrl` is `https://api.exponea.com`, as in the
        /// Exponea SDK.
        public init(
            projectToken: String, authorization: Authorization, baseUrl: String? = nil,
            projectMapping: [EventType: [ExponeaProject]]? = nil, allowsInsecureHTTP: Bool = false
        ) {
            self.projectToken = projectToken
            self.authorization = authorization
            self.baseUrl = baseUrl ?? Exponea.defaultBaseUrl
            self.projectMapping = projectMapping
            self.allowsInsecureHTTP = allowsInsecureHTTP
        }

        /// Creates project settings whose requests are authorized by `authorizationProvider`'s
        /// token, or by `authorization` while it gives none.
        public init(
            projectToken: String, authorization: Authorization = .none,
            authorizationProvider: any BloomreachAuthorizationProvider, baseUrl: String = "https://api.exponea.com",
            allowsInsecureHTTP: Bool = false
        ) {
            self.init(
                projectToken: projectToken, authorization: authorization, baseUrl: baseUrl,
                allowsInsecureHTTP: allowsInsecureHTTP)
            self.authorizationProvider = authorizationProvider
        }
    }

    /// A Bloomreach Data Hub **stream** integration.
    ///
    /// Two settings are equal when their values are, and they hold the same provider instance (an
    /// actor or class) or none.
    public struct StreamSettings: Sendable, Hashable {
        /// The stream id.
        public var streamId: String
        /// The API base URL; `https://api.exponea.com` by default.
        public var baseUrl: String
        /// Provides the JWT sent as `Authorization: Bearer <jwt>`, and hears about 401/403 (see
        /// ``BloomreachAuthorizationProvider``).
        public var authorizationProvider: (any BloomreachAuthorizationProvider)? {
            get { providerReference?.provider }
            set { providerReference = newValue.map(AuthorizationProviderReference.init) }
        }
        /// Allows a plain-`http` base URL that is not loopback.
        public var allowsInsecureHTTP: Bool
        /// The provider, printed without its contents (<doc:Behaviour#P4>).
        private var providerReference: AuthorizationProviderReference?

        /// Creates stream settings; a `nil` `baseUrl` is `https://api.exponea.com`, as in the
        /// Exponea SDK. Without `authorizationProvider`, requests carry the JWT given to
        /// ``Exponea/setSdkAuthToken(_:)``.
        public init(
            streamId: String, baseUrl: String? = nil,
            authorizationProvider: (any BloomreachAuthorizationProvider)? = nil, allowsInsecureHTTP: Bool = false
        ) {
            self.streamId = streamId
            self.baseUrl = baseUrl ?? Exponea.defaultBaseUrl
            self.allowsInsecureHTTP = allowsInsecureHTTP
            self.authorizationProvider = authorizationProvider
        }
    }

    /// When tracked events are uploaded (<doc:Behaviour#E2>): the Exponea SDK's spelling of the
    /// core ``RealtimeSegments/FlushingMode``, mirrored on purpose (`.periodic` takes whole seconds,
    /// as in the Exponea SDK).
    public enum FlushingMode: Sendable, Hashable {
        /// Upload after each event: the default, and what accurate segments need.
        case immediate
        /// Upload every given number of seconds, and when the app resigns active or goes to the
        /// background.
        case periodic(Int)
        /// Upload when the app resigns active or goes to the background, as the Exponea iOS SDK's
        /// mode of that name.
        case automatic
        /// Upload only on `flushData()`.
        case manual
    }

    /// The flushing settings of ``Exponea/configure(_:flushingSetup:)-(ProjectSettings,_)`` and
    /// ``Exponea/configure(_:flushingSetup:)-(StreamSettings,_)``.
    public struct FlushingSetup: Sendable, Hashable {
        /// The flushing mode.
        public var mode: FlushingMode
        /// The Exponea SDK's number of tries before an event is dropped. Kept, not applied: an
        /// item is dropped after 10 permanent failures and transient failures are retried with
        /// backoff without limit (<doc:Behaviour#E3>); another value is named in configure's
        /// warning (<doc:Behaviour#X1>).
        public var maxRetries: Int

        /// `.immediate` flushing, ``maxRetries`` 10.
        public static let `default` = FlushingSetup()

        /// Creates flushing settings; `.immediate` and 10 tries by default.
        public init(mode: FlushingMode = .immediate, maxRetries: Int = 10) {
            self.mode = mode
            self.maxRetries = maxRetries
        }
    }

    /// The default API base URL, `https://api.exponea.com`.
    static let defaultBaseUrl = "https://api.exponea.com"
}
