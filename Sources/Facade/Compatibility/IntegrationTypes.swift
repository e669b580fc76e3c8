import Foundation
import SegmentsDomain

/// The Exponea SDK's name of ``Exponea/Authorization``, for code that names the type
/// unqualified (`let auth: Authorization = .token(key)`).
public typealias Authorization = Exponea.Authorization

/// An integration the facade can be configured with: ``Exponea/ProjectSettings`` (Bloomreach
/// Engagement) or ``Exponea/StreamSettings`` (Data Hub), as the Exponea SDK's protocol of that
/// name (<doc:Behaviour#X1>).
///
/// ``Exponea/configure(_:pushNotificationTracking:automaticSessionTracking:defaultProperties:inAppContentBlocksPlaceholders:flushingSetup:allowDefaultCustomerProperties:advancedAuthEnabled:manualSessionAutoClose:applicationID:)``
/// takes `any IntegrationType`. It also requires `Sendable`, which the Exponea SDK's does not:
/// the configuration is kept and read from any thread. Only the two settings types configure an
/// integration; any other conforming type is refused with an error line.
public protocol IntegrationType: Equatable, Sendable {
    /// The API base URL.
    var baseUrl: String { get }
    /// Which integration this is.
    var type: IntegrationSourceType { get }
}

/// Which integration a configuration names, as the Exponea SDK's type of that name.
public enum IntegrationSourceType: Hashable, Sendable {
    /// A Bloomreach Engagement project.
    case project(projectToken: String)
    /// A Bloomreach Data Hub stream.
    case stream(streamId: String)

    /// `"project"` or `"stream"`.
    public var rawValue: String {
        switch self {
        case .project: "project"
        case .stream: "stream"
        }
    }

    /// The project token or the stream id.
    public var integrationId: String {
        switch self {
        case .project(let projectToken): projectToken
        case .stream(let streamId): streamId
        }
    }

    /// Whether this is a stream integration.
    public var isStream: Bool {
        if case .stream = self { return true }
        return false
    }
}

extension Exponea.ProjectSettings: IntegrationType {
    /// `.project(projectToken:)`.
    public var type: IntegrationSourceType { .project(projectToken: projectToken) }
}

extension Exponea.StreamSettings: IntegrationType {
    /// `.stream(streamId:)`.
    public var type: IntegrationSourceType { .stream(streamId: streamId) }
}

/// The kinds of tracked items, as the Exponea SDK's type of that name: only the keys of
/// ``Exponea/ProjectSettings/projectMapping``, which is accepted and ignored here.
public enum EventType: String, Hashable, Sendable, Codable, CaseIterable {
    /// The app's first start.
    case install = "INSTALL"
    /// A session's start.
    case sessionStart = "SESSION_START"
    /// A session's end.
    case sessionEnd = "SESSION_END"
    /// An event of the app's (`trackEvent`).
    case customEvent = "TRACK_EVENT"
    /// A customer update (`identifyCustomer`).
    case identifyCustomer = "TRACK_CUSTOMER"
    /// A payment (`trackPayment`).
    case payment = "PAYMENT"
    /// A push token.
    case registerPushToken = "PUSH_TOKEN"
    /// A push notification delivered.
    case pushDelivered = "PUSH_DELIVERED"
    /// A push notification opened.
    case pushOpened = "PUSH_OPENED"
    /// A campaign link opened.
    case campaignClick = "CAMPAIGN_CLICK"
    /// An in-app message event.
    case banner = "BANNER"
}

/// Another Engagement project, as the Exponea SDK's type of that name: only the values of
/// ``Exponea/ProjectSettings/projectMapping``, which is accepted and ignored here.
public struct ExponeaProject: Hashable, Sendable {
    /// The project's API base URL.
    public let baseUrl: String
    /// The project's token.
    public let projectToken: String
    /// The project's authorization.
    public let authorization: Authorization

    /// A project; `baseUrl` is `https://api.exponea.com` by default.
    public init(baseUrl: String = "https://api.exponea.com", projectToken: String, authorization: Authorization) {
        self.baseUrl = baseUrl
        self.projectToken = projectToken
        self.authorization = authorization
    }
}

/// Who the customer is, and the Stream JWT that authorizes them: what
/// ``Exponea/identifyCustomer(context:properties:timestamp:)-(_,[String:JSONConvertible],_)`` and
/// ``Exponea/configure(with:authContext:)`` take, as the Exponea SDK's type of that name
/// (<doc:Behaviour#X1>).
///
/// The JWT is printed and reflected as `<redacted>` (<doc:Behaviour#P4>).
public struct CustomerIdentity: Hashable, Sendable, Codable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The hard ids to merge into the current customer.
    public var customerIds: [String: String]
    /// The Stream JWT for Data Hub requests; ignored in project mode. Given to an identify, it
    /// replaces the token of ``Exponea/setSdkAuthToken(_:)``.
    public var jwtToken: String?

    /// An identity with ids and, optionally, a Stream JWT.
    public init(customerIds: [String: String], jwtToken: String? = nil) {
        self.customerIds = customerIds
        self.jwtToken = jwtToken
    }

    /// An identity carrying a Stream JWT only.
    public init(jwtToken: String) {
        self.init(customerIds: [:], jwtToken: jwtToken)
    }

    /// An empty identity.
    public init() {
        self.init(customerIds: [:])
    }

    /// Whether it names any customer id.
    public var hasCustomerIds: Bool { !customerIds.isEmpty }

    /// Whether it carries a non-empty JWT.
    public var hasJwtToken: Bool { !(jwtToken ?? "").isEmpty }

    /// The id types and whether a JWT is held; never the JWT.
    public var description: String {
        "CustomerIdentity(customerIds: \(customerIds.keys.sorted()), jwtToken: \(jwtToken == nil ? "nil" : "<redacted>"))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The ids only: the JWT is not reachable by reflection.
    public var customMirror: Mirror {
        Mirror(self, children: ["customerIds": customerIds], displayStyle: .struct)
    }
}

/// Why the SDK asks the app for a new Stream JWT: what the handler of
/// ``Exponea/setJwtErrorHandler(_:)`` is given, as the Exponea SDK's type of that name.
public struct JwtErrorContext: Hashable, Sendable {
    /// Why a new token is needed. Switch over it with a `default` case: later versions may add
    /// reasons.
    public enum Reason: Hashable, Sendable {
        /// A request needed a JWT and none was set.
        case notProvided
        /// The server refused the JWT (HTTP 401 or 403).
        case invalid
        /// The JWT expired. Not reported by this SDK: a refused token is ``invalid``.
        case expired
        /// The JWT expires soon. Not reported by this SDK.
        case expiredSoon
        /// Reserved, as in the Exponea SDK; not reported.
        case insufficient
    }

    /// Why a new token is needed.
    public let reason: Reason
    /// The current customer's hard ids, when known; this SDK reports `nil`.
    public let customerIds: [String: String]?

    /// A context.
    public init(reason: Reason, customerIds: [String: String]? = nil) {
        self.reason = reason
        self.customerIds = customerIds
    }
}

/// The Exponea SDK's push delegate, so settings that name one compile. Push is outside this SDK:
/// a delegate given to ``Exponea/PushNotificationTracking/enabled(appGroup:delegate:requirePushAuthorization:tokenTrackFrequency:)``
/// is not kept and never called.
public protocol PushNotificationManagerDelegate: AnyObject {}

/// How often the Exponea SDK tracked the push token; push is outside this SDK, so it is accepted
/// and ignored.
public enum TokenTrackFrequency: String, Hashable, Sendable, Codable {
    /// When the token changes.
    case onTokenChange
    /// At every start.
    case everyLaunch
    /// Once a day.
    case daily
}
