import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsNetworking

// The Exponea SDK 4.x forms of configuration, identity, tracking and Stream JWT (SPEC X1), over
// the facade's own calls. What each does differently is listed in Docs/MigratingFromExponea.md.

extension Exponea {
    // MARK: - Configuration

    /// The configuration applied last (by any `configure` form), or `nil` before the first
    /// successful configure (<doc:Behaviour#X1>).
    public var configuration: Configuration? {
        client.isConfigured ? compatibility.configuration : nil
    }

    /// Configures the SDK with the Exponea SDK's parameters (<doc:Behaviour#X1>).
    ///
    /// The integration is applied as by ``configure(_:flushingSetup:)-(ProjectSettings,_)`` or
    /// ``configure(_:flushingSetup:)-(StreamSettings,_)``; `flushingSetup`'s mode is applied unless
    /// it is ``FlushingSetup/default``, which keeps a ``flushingMode`` set before (else
    /// `.immediate`, <doc:Behaviour#E2>). `defaultProperties` and `allowDefaultCustomerProperties`
    /// are kept in ``configuration`` (<doc:Behaviour#E8>).
    ///
    /// The other parameters configure features outside this SDK (push, sessions, in-app content,
    /// customer tokens, multiple apps): they are accepted and not applied, and one warning line
    /// names those that ask for something — `pushNotificationTracking` `.enabled`,
    /// `automaticSessionTracking` `.enabled` (the default), `inAppContentBlocksPlaceholders`,
    /// `advancedAuthEnabled` `true`, `manualSessionAutoClose` `false`, `applicationID`, the
    /// settings' `projectMapping`, and `flushingSetup`'s `maxRetries` other than 10:
    /// `Segments: configure ignored parameters of features outside this SDK: pushNotificationTracking, automaticSessionTracking`.
    public func configure(
        _ integrationConfig: any IntegrationType, pushNotificationTracking: PushNotificationTracking,
        automaticSessionTracking: AutomaticSessionTracking = .enabled(), defaultProperties: [String: any JSONConvertible]? = nil,
        inAppContentBlocksPlaceholders: [String]? = nil, flushingSetup: FlushingSetup = .default,
        allowDefaultCustomerProperties: Bool? = nil, advancedAuthEnabled: Bool? = nil, manualSessionAutoClose: Bool = true,
        applicationID: String? = nil
    ) {
        configureIntegrationType(
            integrationConfig, push: ("pushNotificationTracking", pushNotificationTracking.isEnabled, automatic: false),
            appGroup: pushNotificationTracking.appGroup, automaticSessionTracking: automaticSessionTracking,
            defaultProperties: defaultProperties, inAppContentBlocksPlaceholders: inAppContentBlocksPlaceholders,
            flushingSetup: flushingSetup, allowDefaultCustomerProperties: allowDefaultCustomerProperties,
            advancedAuthEnabled: advancedAuthEnabled, manualSessionAutoClose: manualSessionAutoClose, applicationID: applicationID)
    }

    /// The Exponea SDK's deprecated form with automatic (swizzling) push tracking: the same as
    /// ``configure(_:pushNotificationTracking:automaticSessionTracking:defaultProperties:inAppContentBlocksPlaceholders:flushingSetup:allowDefaultCustomerProperties:advancedAuthEnabled:manualSessionAutoClose:applicationID:)``,
    /// with `automaticPushNotificationTracking` `.enabled` named in the warning.
    @available(*, deprecated, message: "Automatic push notification tracking is deprecated; push is outside this SDK. Use configure(_:pushNotificationTracking:…).")
    public func configure(
        _ integrationConfig: any IntegrationType, automaticPushNotificationTracking: AutomaticPushNotificationTracking,
        automaticSessionTracking: AutomaticSessionTracking = .enabled(), defaultProperties: [String: any JSONConvertible]? = nil,
        inAppContentBlocksPlaceholders: [String]? = nil, flushingSetup: FlushingSetup = .default,
        allowDefaultCustomerProperties: Bool? = nil, advancedAuthEnabled: Bool? = nil, manualSessionAutoClose: Bool = true,
        applicationID: String? = nil
    ) {
        let automatic = automaticPushNotificationTracking.enabled
        configureIntegrationType(
            integrationConfig, push: ("automaticPushNotificationTracking", automatic, automatic: automatic),
            appGroup: automaticPushNotificationTracking.appGroup, automaticSessionTracking: automaticSessionTracking,
            defaultProperties: defaultProperties, inAppContentBlocksPlaceholders: inAppContentBlocksPlaceholders,
            flushingSetup: flushingSetup, allowDefaultCustomerProperties: allowDefaultCustomerProperties,
            advancedAuthEnabled: advancedAuthEnabled, manualSessionAutoClose: manualSessionAutoClose, applicationID: applicationID)
    }

    /// The two `any IntegrationType` forms, which differ only in how they name push tracking:
    /// `push` is the parameter's name, whether it asks for push, and whether it asks for the
    /// automatic (swizzling) kind.
    private func configureIntegrationType(
        _ integrationConfig: any IntegrationType, push: (name: String, asks: Bool, automatic: Bool), appGroup: String?,
        automaticSessionTracking: AutomaticSessionTracking, defaultProperties: [String: any JSONConvertible]?,
        inAppContentBlocksPlaceholders: [String]?, flushingSetup: FlushingSetup, allowDefaultCustomerProperties: Bool?,
        advancedAuthEnabled: Bool?, manualSessionAutoClose: Bool, applicationID: String?
    ) {
        configureCompatibly(integrationConfig, flushingSetup: flushingSetup, ignored: [(push.name, push.asks)]) {
            try Configuration(
                integrationConfig: integrationConfig, appGroup: appGroup, defaultProperties: defaultProperties,
                inAppContentBlocksPlaceholders: inAppContentBlocksPlaceholders, sessionTimeout: automaticSessionTracking.timeout,
                automaticSessionTracking: automaticSessionTracking.enabled, automaticPushNotificationTracking: push.automatic,
                flushEventMaxRetries: flushingSetup.maxRetries, allowDefaultCustomerProperties: allowDefaultCustomerProperties,
                advancedAuthEnabled: advancedAuthEnabled, manualSessionAutoClose: manualSessionAutoClose,
                applicationID: applicationID)
        }
    }

    /// The Exponea SDK's deprecated project form: a project integration with `.immediate`
    /// flushing unless a ``flushingMode`` was set before; `appGroup` is named in the warning when
    /// given, as are the parameters listed for
    /// ``configure(_:pushNotificationTracking:automaticSessionTracking:defaultProperties:inAppContentBlocksPlaceholders:flushingSetup:allowDefaultCustomerProperties:advancedAuthEnabled:manualSessionAutoClose:applicationID:)``.
    @available(*, deprecated, message: "Use configure(_:pushNotificationTracking:…) with Exponea.ProjectSettings.")
    public func configure(
        projectToken: String, authorization: Authorization, baseUrl: String? = nil, appGroup: String? = nil,
        defaultProperties: [String: any JSONConvertible]? = nil, inAppContentBlocksPlaceholders: [String]? = nil,
        allowDefaultCustomerProperties: Bool? = nil, advancedAuthEnabled: Bool? = nil, manualSessionAutoClose: Bool = true,
        applicationID: String? = nil
    ) {
        configureProjectCompatibly(
            ProjectSettings(projectToken: projectToken, authorization: authorization, baseUrl: baseUrl), appGroup: appGroup,
            defaultProperties: defaultProperties, inAppContentBlocksPlaceholders: inAppContentBlocksPlaceholders,
            allowDefaultCustomerProperties: allowDefaultCustomerProperties, advancedAuthEnabled: advancedAuthEnabled,
            manualSessionAutoClose: manualSessionAutoClose, applicationID: applicationID)
    }

    /// The Exponea SDK's deprecated project form with a project mapping, which is accepted and
    /// named in the warning (every event goes to `projectToken`'s project).
    @available(*, deprecated, message: "Use configure(_:pushNotificationTracking:…) with Exponea.ProjectSettings.")
    public func configure(
        projectToken: String, projectMapping: [EventType: [ExponeaProject]], authorization: Authorization,
        baseUrl: String? = nil, appGroup: String? = nil, defaultProperties: [String: any JSONConvertible]? = nil,
        inAppContentBlocksPlaceholders: [String]? = nil, allowDefaultCustomerProperties: Bool? = nil,
        advancedAuthEnabled: Bool? = nil, manualSessionAutoClose: Bool = true, applicationID: String? = nil
    ) {
        configureProjectCompatibly(
            ProjectSettings(
                projectToken: projectToken, authorization: authorization, baseUrl: baseUrl, projectMapping: projectMapping),
            appGroup: appGroup, defaultProperties: defaultProperties, inAppContentBlocksPlaceholders: inAppContentBlocksPlaceholders,
            allowDefaultCustomerProperties: allowDefaultCustomerProperties, advancedAuthEnabled: advancedAuthEnabled,
            manualSessionAutoClose: manualSessionAutoClose, applicationID: applicationID)
    }

    /// Configures the SDK from the property list `plistName` of the app's bundles
    /// (``Configuration/init(plistName:)``); a missing or invalid file is refused with an error
    /// line.
    public func configure(plistName: String) {
        do {
            let configuration = try Configuration(plistName: plistName)
            configure(with: configuration)
        } catch {
            client.options.runtime.logger.log(.error, "Segments: Configuration refused: \(SegmentsError.wrapping(error))")
        }
    }

    /// Configures the SDK with a ``Configuration``, then applies `authContext`: its JWT as by
    /// ``setSdkAuthToken(_:)`` and, when it names ids, an identify with them and no properties
    /// (<doc:Behaviour#X1>). Settings of features outside this SDK are named in one warning, as
    /// by ``configure(_:pushNotificationTracking:automaticSessionTracking:defaultProperties:inAppContentBlocksPlaceholders:flushingSetup:allowDefaultCustomerProperties:advancedAuthEnabled:manualSessionAutoClose:applicationID:)``.
    public func configure(with configuration: Configuration, authContext: CustomerIdentity? = nil) {
        let ignored: [(String, Bool)] = [
            ("automaticPushNotificationTracking", configuration.automaticPushNotificationTracking),
            ("appGroup", configuration.appGroup != nil),
        ]
        let applied = configureCompatibly(
            configuration.integrationConfig, flushingSetup: .default, ignored: ignored, configuration: { configuration })
        guard applied, let authContext else { return }
        if let jwt = authContext.jwtToken { setSdkAuthToken(jwt) }
        if authContext.hasCustomerIds {
            identifyCustomer(customerIds: authContext.customerIds, properties: [:], timestamp: nil)
        }
    }

    // MARK: - Identity and tracking

    /// Identifies the customer with ``CustomerIdentity``: its ids are merged into the current
    /// customer and a customer update is tracked (<doc:Behaviour#E1>, <doc:Behaviour#T4>).
    ///
    /// In a stream integration configured without its own provider, its `jwtToken` becomes the
    /// Stream JWT before the update is queued, and an identity without one clears it, as in the
    /// Exponea SDK (then requests carry none until ``setSdkAuthToken(_:)``).
    public func identifyCustomer(
        context: CustomerIdentity, properties: [String: any JSONConvertible], timestamp: Double?
    ) {
        identifyCustomer(context: context, properties: properties.jsonValues, timestamp: timestamp)
    }

    /// The ``JSONValue`` form of `identifyCustomer(context:properties:timestamp:)`, for literals
    /// such as `["gift": nil]`.
    public func identifyCustomer(context: CustomerIdentity, properties: [String: JSONValue] = [:], timestamp: Double? = nil) {
        if case .stream = configuration?.integrationConfig.type {
            compatibility.streamJwt.setToken(context.jwtToken.flatMap { $0.isEmpty ? nil : $0 })
        }
        identifyCustomer(customerIds: context.customerIds, properties: properties, timestamp: timestamp)
    }

    /// The Exponea SDK's identify form (deprecated there in favour of
    /// `identifyCustomer(context:properties:timestamp:)`;
    /// not here, where it is the facade's own form): `nil` ids track a customer update for the
    /// current customer's ids.
    public func identifyCustomer(
        customerIds: [String: String]?, properties: [String: any JSONConvertible], timestamp: Double?
    ) {
        identifyCustomer(customerIds: customerIds ?? [:], properties: properties.jsonValues, timestamp: timestamp)
    }

    /// Queues an event whose properties are the Exponea SDK's ``JSONConvertible`` values; the same
    /// as the ``JSONValue`` form of `trackEvent(properties:timestamp:eventType:)`, with them converted on
    /// the calling thread.
    public func trackEvent(properties: [String: any JSONConvertible], timestamp: Double?, eventType: String?) {
        trackEvent(properties: properties.jsonValues, timestamp: timestamp, eventType: eventType)
    }

    /// Queues a `payment` event, as the Exponea SDK's `trackPayment` (<doc:Behaviour#E1>).
    public func trackPayment(properties: [String: any JSONConvertible], timestamp: Double?) {
        trackPayment(properties: properties.jsonValues, timestamp: timestamp)
    }

    /// The ``JSONValue`` form of `trackPayment(properties:timestamp:)`, for literals such as
    /// `["coupon": nil]`.
    public func trackPayment(properties: [String: JSONValue], timestamp: Double? = nil) {
        trackEvent(properties: properties, timestamp: timestamp, eventType: "payment")
    }

    // MARK: - Stream JWT

    /// Sets the Stream JWT that authorizes Data Hub requests (`Authorization: Bearer <jwt>`) of a
    /// stream configured without its own ``StreamSettings/authorizationProvider``; the next
    /// request carries it (<doc:Behaviour#X1>).
    ///
    /// Unlike the Exponea SDK, it may be set before configure. An empty token is ignored with a
    /// warning, as is a token given while a project integration is configured. The token is never
    /// logged (<doc:Behaviour#P4>).
    public func setSdkAuthToken(_ token: String) {
        let logger = client.options.runtime.logger
        guard !token.isEmpty else {
            logger.log(.warning, "Segments: setSdkAuthToken ignored an empty token")
            return
        }
        if case .project = configuration?.integrationConfig.type {
            logger.log(.warning, "Segments: setSdkAuthToken ignored: the integration is a project, not a stream")
            return
        }
        compatibility.streamJwt.setToken(token)
        logger.log(.verbose, "Segments: Stream JWT updated")
    }

    /// Sets the handler told when the server refuses the Stream JWT (HTTP 401 or 403):
    /// `.notProvided` when none was set, else `.invalid` (<doc:Behaviour#X1>). It is called on an
    /// SDK thread; a token it sets with ``setSdkAuthToken(_:)`` at once is used by the retry that
    /// follows 1 s later. It replaces the previous handler, and may be set before configure.
    public func setJwtErrorHandler(_ handler: @escaping @Sendable (JwtErrorContext) -> Void) {
        compatibility.streamJwt.setErrorHandler(handler)
    }

    // MARK: - Shared steps

    /// Configures `integration` with `flushingSetup` (`nil` keeps a mode set before) and records
    /// `recording`, or a configuration of `integration` alone, when it is applied.
    /// - Returns: whether it was applied.
    @discardableResult
    func configureIntegration(
        _ integration: any IntegrationType, flushingSetup: FlushingSetup?, recording: Configuration? = nil
    ) -> Bool {
        let applied: Bool
        switch integration {
        case let settings as ProjectSettings:
            applied = configure(
                BloomreachConfiguration(
                    integration: .project(token: settings.projectToken), baseURL: settings.baseUrl,
                    authorization: settings.authorization.bloomreach, authorizationProvider: settings.authorizationProvider,
                    allowsInsecureHTTP: settings.allowsInsecureHTTP),
                flushingSetup: flushingSetup, defaults: recording)
        case let settings as StreamSettings:
            applied = configure(
                BloomreachConfiguration(
                    integration: .stream(id: settings.streamId), baseURL: settings.baseUrl,
                    authorizationProvider: settings.authorizationProvider ?? compatibility.streamJwt,
                    allowsInsecureHTTP: settings.allowsInsecureHTTP),
                flushingSetup: flushingSetup, defaults: recording)
        default:
            client.options.runtime.logger.log(
                .error,
                "Segments: Configuration refused: \(type(of: integration)) is not Exponea.ProjectSettings or Exponea.StreamSettings")
            applied = false
        }
        if applied, let configuration = recording ?? (try? Configuration(integrationConfig: integration)) {
            compatibility.record(configuration)
        }
        return applied
    }

    /// The Exponea forms' common path: one warning naming the parameters that ask for features
    /// outside this SDK, then the configuration.
    @discardableResult
    private func configureCompatibly(
        _ integration: any IntegrationType, flushingSetup: FlushingSetup, ignored: [(String, Bool)],
        configuration makeConfiguration: () throws -> Configuration
    ) -> Bool {
        let configuration: Configuration
        do {
            configuration = try makeConfiguration()
        } catch {
            client.options.runtime.logger.log(.error, "Segments: Configuration refused: \(SegmentsError.wrapping(error))")
            return false
        }
        let named = (ignored + [
            ("automaticSessionTracking", configuration.automaticSessionTracking),
            ("inAppContentBlocksPlaceholders", configuration.inAppContentBlocksPlaceholders != nil),
            ("advancedAuthEnabled", configuration.advancedAuthEnabled),
            ("manualSessionAutoClose", !configuration.manualSessionAutoClose),
            ("applicationID", configuration.applicationID != Configuration.defaultApplicationID),
            ("projectMapping", (integration as? ProjectSettings)?.projectMapping != nil),
            ("flushingSetup.maxRetries", flushingSetup.maxRetries != FlushingSetup.default.maxRetries),
        ]).filter(\.1).map(\.0)
        if !named.isEmpty {
            client.options.runtime.logger.log(
                .warning, "Segments: configure ignored parameters of features outside this SDK: \(named.joined(separator: ", "))")
        }
        return configureIntegration(
            integration, flushingSetup: flushingSetup == .default ? nil : flushingSetup, recording: configuration)
    }

    /// The deprecated project forms' common path.
    private func configureProjectCompatibly(
        _ settings: ProjectSettings, appGroup: String?, defaultProperties: [String: any JSONConvertible]?,
        inAppContentBlocksPlaceholders: [String]?, allowDefaultCustomerProperties: Bool?, advancedAuthEnabled: Bool?,
        manualSessionAutoClose: Bool, applicationID: String?
    ) {
        configureCompatibly(settings, flushingSetup: .default, ignored: [("appGroup", appGroup != nil)]) {
            try Configuration(
                integrationConfig: settings, appGroup: appGroup, defaultProperties: defaultProperties,
                inAppContentBlocksPlaceholders: inAppContentBlocksPlaceholders, automaticSessionTracking: false,
                automaticPushNotificationTracking: false, allowDefaultCustomerProperties: allowDefaultCustomerProperties,
                advancedAuthEnabled: advancedAuthEnabled, manualSessionAutoClose: manualSessionAutoClose,
                applicationID: applicationID)
        }
    }
}

extension Configuration {
    /// The default ``applicationID``.
    static let defaultApplicationID = "default-application"
}
