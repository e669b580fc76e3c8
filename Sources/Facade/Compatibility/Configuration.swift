import Foundation
import SegmentsDomain

/// What the facade was configured with, in the Exponea SDK's shape: ``Exponea/configuration``
/// answers it, and ``Exponea/configure(with:authContext:)`` takes one (<doc:Behaviour#X1>).
///
/// Of its settings this SDK applies the integration (``integrationConfig``), ``defaultProperties``
/// and ``allowDefaultCustomerProperties`` (<doc:Behaviour#E8>); the others belong to features
/// outside it (push, sessions, in-app content, app inbox, customer tokens) and are kept only to be
/// read back. Configure names those that ask for something in its one warning.
public struct Configuration: Sendable, Equatable {
    /// The integration: ``Exponea/ProjectSettings`` or ``Exponea/StreamSettings``.
    public internal(set) var integrationConfig: any IntegrationType
    /// The default properties, as ``JSONValue``.
    var defaultPropertyValues: [String: JSONValue]?
    /// Placeholders of in-app content blocks to prefetch; not applied.
    public var inAppContentBlocksPlaceholders: [String]?
    /// The session time-out in seconds (60 by default); not applied.
    public var sessionTimeout: Double = 60
    /// Whether sessions are tracked automatically; not applied.
    public var automaticSessionTracking: Bool = true
    /// The app's id within the project (`default-application` by default); not applied.
    public var applicationID: String = "default-application"
    /// Whether push notifications were to be tracked automatically; not applied.
    public internal(set) var automaticPushNotificationTracking: Bool = true
    /// Whether the push token was tracked only when authorized; not applied.
    public internal(set) var requirePushAuthorization: Bool = true
    /// How often the push token was tracked; not applied.
    public internal(set) var tokenTrackFrequency: TokenTrackFrequency = .onTokenChange
    /// The app group shared with extensions; not applied.
    public internal(set) var appGroup: String?
    /// The Exponea SDK's tries before an event is dropped; not applied (<doc:Behaviour#E3>).
    public internal(set) var flushEventMaxRetries: Int = 10
    /// Whether ``defaultProperties`` are added to customer updates too (<doc:Behaviour#E8>);
    /// `true` by default.
    public internal(set) var allowDefaultCustomerProperties: Bool = true
    /// Whether customer-token authorization was asked for; not applied.
    public var advancedAuthEnabled: Bool = false
    /// The app inbox's dark mode; not applied.
    public internal(set) var isDarkModeEnabled: Bool?
    /// The app inbox's image inset; not applied.
    public internal(set) var appInboxDetailImageInset: CGFloat?
    /// Whether open manual sessions are closed automatically; not applied.
    public internal(set) var manualSessionAutoClose: Bool = true

    /// The properties added to every tracked event (<doc:Behaviour#E8>).
    public var defaultProperties: [String: any JSONConvertible]? {
        get { defaultPropertyValues?.mapValues { $0 as any JSONConvertible } }
        set { defaultPropertyValues = newValue?.jsonValues }
    }

    /// The project token or stream id.
    public var integrationId: String { integrationConfig.type.integrationId }

    /// The project token; empty for a stream.
    @available(*, deprecated, message: "Use integrationConfig instead.")
    public var projectToken: String { (integrationConfig as? Exponea.ProjectSettings)?.projectToken ?? "" }

    /// The project's authorization; `.none` for a stream.
    @available(*, deprecated, message: "Use integrationConfig instead.")
    public var authorization: Authorization { (integrationConfig as? Exponea.ProjectSettings)?.authorization ?? .none }

    /// The API base URL.
    @available(*, deprecated, message: "Use integrationConfig instead.")
    public var baseUrl: String { integrationConfig.baseUrl }

    /// The project mapping; not applied.
    @available(*, deprecated, message: "Use integrationConfig instead.")
    public var projectMapping: [EventType: [ExponeaProject]]? {
        (integrationConfig as? Exponea.ProjectSettings)?.projectMapping
    }

    /// A configuration of `integrationConfig`; every other setting as in the Exponea SDK, `nil`
    /// meaning its default.
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` when the project token or stream id is
    ///   empty.
    public init(
        integrationConfig: any IntegrationType, appGroup: String? = nil, defaultProperties: [String: any JSONConvertible]? = nil,
        inAppContentBlocksPlaceholders: [String]? = nil, sessionTimeout: Double? = nil, automaticSessionTracking: Bool? = nil,
        automaticPushNotificationTracking: Bool? = nil, requirePushAuthorization: Bool? = nil,
        tokenTrackFrequency: TokenTrackFrequency? = nil, flushEventMaxRetries: Int? = nil,
        allowDefaultCustomerProperties: Bool? = nil, advancedAuthEnabled: Bool? = nil, isDarkModeEnabled: Bool? = nil,
        appInboxDetailImageInset: CGFloat? = nil, manualSessionAutoClose: Bool? = nil, applicationID: String? = nil
    ) throws {
        guard !integrationConfig.type.integrationId.isEmpty else {
            throw SegmentsError(.invalidConfiguration, "The project token or stream id is empty")
        }
        self.integrationConfig = integrationConfig
        self.appGroup = appGroup
        self.defaultProperties = defaultProperties
        self.inAppContentBlocksPlaceholders = inAppContentBlocksPlaceholders
        self.sessionTimeout = sessionTimeout ?? 60
        self.automaticSessionTracking = automaticSessionTracking ?? true
        self.automaticPushNotificationTracking = automaticPushNotificationTracking ?? true
        self.requirePushAuthorization = requirePushAuthorization ?? true
        self.tokenTrackFrequency = tokenTrackFrequency ?? .onTokenChange
        self.flushEventMaxRetries = flushEventMaxRetries ?? 10
        self.allowDefaultCustomerProperties = allowDefaultCustomerProperties ?? true
        self.advancedAuthEnabled = advancedAuthEnabled ?? false
        self.isDarkModeEnabled = isDarkModeEnabled
        self.appInboxDetailImageInset = appInboxDetailImageInset
        self.manualSessionAutoClose = manualSessionAutoClose ?? true
        if let applicationID, !applicationID.isEmpty { self.applicationID = applicationID }
    }

    /// A project configuration in the Exponea SDK's older form.
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` when `projectToken` is empty.
    @available(*, deprecated, message: "Use init(integrationConfig:…) instead.")
    public init(
        projectToken: String, projectMapping: [EventType: [ExponeaProject]]? = nil, authorization: Authorization? = nil,
        baseUrl: String? = nil, appGroup: String? = nil, defaultProperties: [String: any JSONConvertible]? = nil,
        inAppContentBlocksPlaceholders: [String]? = nil, sessionTimeout: Double? = nil, automaticSessionTracking: Bool? = nil,
        automaticPushNotificationTracking: Bool? = nil, requirePushAuthorization: Bool? = nil,
        tokenTrackFrequency: TokenTrackFrequency? = nil, flushEventMaxRetries: Int? = nil,
        allowDefaultCustomerProperties: Bool? = nil, advancedAuthEnabled: Bool? = nil, isDarkModeEnabled: Bool? = nil,
        appInboxDetailImageInset: CGFloat? = nil, manualSessionAutoClose: Bool? = nil, applicationID: String? = nil
    ) throws {
        try self.init(
            integrationConfig: Exponea.ProjectSettings(
                projectToken: projectToken, authorization: authorization ?? .none, baseUrl: baseUrl, projectMapping: projectMapping),
            appGroup: appGroup, defaultProperties: defaultProperties, inAppContentBlocksPlaceholders: inAppContentBlocksPlaceholders,
            sessionTimeout: sessionTimeout, automaticSessionTracking: automaticSessionTracking,
            automaticPushNotificationTracking: automaticPushNotificationTracking, requirePushAuthorization: requirePushAuthorization,
            tokenTrackFrequency: tokenTrackFrequency, flushEventMaxRetries: flushEventMaxRetries,
            allowDefaultCustomerProperties: allowDefaultCustomerProperties, advancedAuthEnabled: advancedAuthEnabled,
            isDarkModeEnabled: isDarkModeEnabled, appInboxDetailImageInset: appInboxDetailImageInset,
            manualSessionAutoClose: manualSessionAutoClose, applicationID: applicationID)
    }

    /// The configuration in the property list `plistName` (with or without `.plist`) of the app's
    /// bundles, in the Exponea SDK's keys: `projectToken` or `streamId`, `authorization`
    /// (`"Token <key>"` or `"Bearer <token>"`), `baseUrl`, `defaultProperties`, `sessionTimeout`,
    /// `automaticSessionTracking`, `automaticPushNotificationTracking`, `requirePushAuthorization`,
    /// `tokenTrackFrequency`, `appGroup`, `flushEventMaxRetries`, `allowDefaultCustomerProperties`,
    /// `advancedAuthEnabled`, `manualSessionAutoClose`, `applicationID`. `projectMapping` is not
    /// read.
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` when no bundle has the file, it is not a
    ///   dictionary, or names neither a project token nor a stream id.
    public init(plistName: String) throws {
        let name = plistName.hasSuffix(".plist") ? String(plistName.dropLast(".plist".count)) : plistName
        let bundles = [Bundle.main] + Bundle.allBundles
        guard let url = bundles.lazy.compactMap({ $0.url(forResource: name, withExtension: "plist") }).first else {
            throw SegmentsError(.invalidConfiguration, "Configuration plist not found: \(name).plist")
        }
        try self.init(propertyList: try Data(contentsOf: url))
    }

    /// The configuration in a property list's data, in the keys of ``init(plistName:)``.
    init(propertyList data: Data) throws {
        guard let plist = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else {
            throw SegmentsError(.invalidConfiguration, "The configuration plist is not a dictionary")
        }
        let baseUrl = plist["baseUrl"] as? String
        let integration: any IntegrationType
        if let streamId = plist["streamId"] as? String, !streamId.isEmpty {
            integration = Exponea.StreamSettings(streamId: streamId, baseUrl: baseUrl)
        } else if let projectToken = plist["projectToken"] as? String {
            integration = Exponea.ProjectSettings(
                projectToken: projectToken, authorization: Authorization(plistValue: plist["authorization"] as? String),
                baseUrl: baseUrl)
        } else {
            throw SegmentsError(.invalidConfiguration, "The configuration plist names no projectToken or streamId")
        }
        try self.init(
            integrationConfig: integration, appGroup: plist["appGroup"] as? String,
            defaultProperties: (plist["defaultProperties"] as? [String: Any]).map { $0.mapValues(JSONValue.converting) },
            sessionTimeout: plist["sessionTimeout"] as? Double, automaticSessionTracking: plist["automaticSessionTracking"] as? Bool,
            automaticPushNotificationTracking: plist["automaticPushNotificationTracking"] as? Bool,
            requirePushAuthorization: plist["requirePushAuthorization"] as? Bool,
            tokenTrackFrequency: (plist["tokenTrackFrequency"] as? String).flatMap(TokenTrackFrequency.init(rawValue:)),
            flushEventMaxRetries: plist["flushEventMaxRetries"] as? Int,
            allowDefaultCustomerProperties: plist["allowDefaultCustomerProperties"] as? Bool,
            advancedAuthEnabled: plist["advancedAuthEnabled"] as? Bool,
            manualSessionAutoClose: plist["manualSessionAutoClose"] as? Bool, applicationID: plist["applicationID"] as? String)
    }

    /// Equal when the integrations and every setting are.
    public static func == (lhs: Configuration, rhs: Configuration) -> Bool {
        lhs.integrationConfig.isSame(as: rhs.integrationConfig) && lhs.defaultPropertyValues == rhs.defaultPropertyValues
            && lhs.inAppContentBlocksPlaceholders == rhs.inAppContentBlocksPlaceholders && lhs.sessionTimeout == rhs.sessionTimeout
            && lhs.automaticSessionTracking == rhs.automaticSessionTracking && lhs.applicationID == rhs.applicationID
            && lhs.automaticPushNotificationTracking == rhs.automaticPushNotificationTracking
            && lhs.requirePushAuthorization == rhs.requirePushAuthorization && lhs.tokenTrackFrequency == rhs.tokenTrackFrequency
            && lhs.appGroup == rhs.appGroup && lhs.flushEventMaxRetries == rhs.flushEventMaxRetries
            && lhs.allowDefaultCustomerProperties == rhs.allowDefaultCustomerProperties
            && lhs.advancedAuthEnabled == rhs.advancedAuthEnabled && lhs.isDarkModeEnabled == rhs.isDarkModeEnabled
            && lhs.appInboxDetailImageInset == rhs.appInboxDetailImageInset && lhs.manualSessionAutoClose == rhs.manualSessionAutoClose
    }
}

extension IntegrationType {
    /// Whether `other` is of the same type and equal.
    func isSame(as other: any IntegrationType) -> Bool {
        (other as? Self) == self
    }
}

extension Exponea.Authorization {
    /// The value of a plist's `authorization` key: `"Token <key>"`, `"Bearer <token>"`, else `.none`.
    init(plistValue: String?) {
        let parts = (plistValue ?? "").split(separator: " ", maxSplits: 1).map(String.init)
        switch (parts.first, parts.count) {
        case ("Token", 2): self = .token(parts[1])
        case ("Bearer", 2): self = .bearer(parts[1])
        default: self = .none
        }
    }
}
