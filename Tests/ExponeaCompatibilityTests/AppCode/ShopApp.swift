// Exponea-shaped app code (SPEC X1): call sites written from the Exponea iOS SDK 4.x's public
// declarations and its Documentation (configuration, tracking, identity, flushing, logging,
// segmentation), with `import RealtimeSegments` in place of `import ExponeaSDK` and no other
// change. This folder is compiled twice, in Swift 5 language mode (ExponeaCompatibilitySwift5Tests,
// through a symlink) and in Swift 6 mode (ExponeaCompatibilityTests), and the second target runs
// these calls against the emulator (ExponeaFormsEmulatorTests).
//
// Calls of members owned by other work (anonymize(completion:), stopIntegration(completion:),
// defaultProperties) are in OwnedElsewhere.swift, excluded from both targets until they land.
import Foundation
import RealtimeSegments

/// An app's logger, as apps subclass the Exponea SDK's `Logger`: it keeps the lines it is given
/// instead of printing them.
final class ShopLogger: Logger {
    private let linesLock = NSLock()
    private var kept: [String] = []

    /// The lines logged so far, each as `LEVEL message`.
    var lines: [String] {
        linesLock.lock()
        defer { linesLock.unlock() }
        return kept
    }

    override func log(_ level: LogLevel, message: String, fileName: String, line: Int, funcName: String) -> Bool {
        guard level != .none, level.rawValue <= logLevel.rawValue else { return false }
        linesLock.lock()
        kept.append("\(level.name) \(message)")
        linesLock.unlock()
        return true
    }

    override func logMessage(_ message: String) {
        // Lines come through log(_:message:…) above; nothing is printed.
    }
}

/// The app's analytics, over the Exponea SDK's API. Apps usually call `Exponea.shared`; this one
/// takes its instance so the calls can run against a test integration.
struct ShopAnalytics {
    let exponea: Exponea

    init(exponea: Exponea = Exponea.shared) {
        self.exponea = exponea
    }

    // MARK: Logging

    /// Installs the app's logger, verbose in debug builds.
    static func installLogger(_ logger: ShopLogger) {
        Exponea.logger = logger
        Exponea.logger.logLevel = .verbose
        let level: LogLevel = Exponea.logger.logLevel
        _ = level.name
    }

    // MARK: Configuration (Documentation/CONFIGURATION.md)

    /// "Most common use case".
    func configureMostCommon(projectToken: String, accessToken: String, baseUrl: String) {
        exponea.configure(
            Exponea.ProjectSettings(
                projectToken: projectToken,
                authorization: .token(accessToken),
                baseUrl: baseUrl
            ),
            pushNotificationTracking: .enabled(appGroup: "group.com.shop")
        )
    }

    /// "Disabling all the automatic features of the SDK".
    func configureWithoutAutomaticFeatures(projectToken: String, accessToken: String, baseUrl: String) {
        exponea.configure(
            Exponea.ProjectSettings(
                projectToken: projectToken,
                authorization: .token(accessToken),
                baseUrl: baseUrl
            ),
            pushNotificationTracking: .disabled,
            automaticSessionTracking: .disabled,
            flushingSetup: Exponea.FlushingSetup(mode: .manual)
        )
    }

    /// "Complex use-case with project mapping and advanced auth", every parameter given.
    func configureComplex(projectToken: String, accessToken: String, baseUrl: String, delegate: PushNotificationManagerDelegate?) {
        exponea.configure(
            Exponea.ProjectSettings(
                projectToken: projectToken,
                authorization: .token(accessToken),
                baseUrl: baseUrl,
                projectMapping: [
                    .payment: [
                        ExponeaProject(
                            baseUrl: baseUrl,
                            projectToken: "OTHER PROJECT TOKEN",
                            authorization: .token("OTHER ACCESS TOKEN")
                        )
                    ]
                ]
            ),
            pushNotificationTracking: .enabled(
                appGroup: "group.com.shop",
                delegate: delegate,
                requirePushAuthorization: false,
                tokenTrackFrequency: .onTokenChange
            ),
            automaticSessionTracking: .enabled(timeout: 123),
            defaultProperties: ["prop-1": "value-1", "prop-2": 123],
            inAppContentBlocksPlaceholders: ["placeholder"],
            flushingSetup: Exponea.FlushingSetup(mode: .periodic(100), maxRetries: 5),
            allowDefaultCustomerProperties: false,
            advancedAuthEnabled: true,
            manualSessionAutoClose: false,
            applicationID: "com.yourApplication.org"
        )
    }

    /// A Data Hub stream: configure, register the JWT error handler, then set the token.
    func configureStream(streamId: String, baseUrl: String, jwt: String, refreshedJwt: @escaping @Sendable () -> String?) {
        exponea.configure(
            Exponea.StreamSettings(
                streamId: streamId,
                baseUrl: baseUrl
            ),
            pushNotificationTracking: .disabled,
            automaticSessionTracking: .disabled,
            flushingSetup: Exponea.FlushingSetup(mode: .manual)
        )
        let exponea = self.exponea
        exponea.setJwtErrorHandler { context in
            switch context.reason {
            case .notProvided, .invalid, .expired, .expiredSoon:
                if let token = refreshedJwt() { exponea.setSdkAuthToken(token) }
            default:
                break
            }
            _ = context.customerIds
        }
        exponea.setSdkAuthToken(jwt)
    }

    /// A configuration object with initial customer ids (`configure(with:authContext:)`).
    func configureWithConfiguration(projectToken: String, accessToken: String, baseUrl: String, email: String) throws {
        let configuration = try Configuration(
            integrationConfig: Exponea.ProjectSettings(projectToken: projectToken, authorization: .token(accessToken), baseUrl: baseUrl),
            defaultProperties: ["app": "shop"],
            sessionTimeout: 30,
            automaticSessionTracking: false,
            flushEventMaxRetries: 10,
            allowDefaultCustomerProperties: true
        )
        exponea.configure(with: configuration, authContext: CustomerIdentity(customerIds: ["registered": email]))
    }

    /// The legacy plist configuration.
    func configureFromPlist() {
        exponea.configure(plistName: "ExampleConfig.plist")
    }

    /// The settings an app keeps in variables of the Exponea SDK's types.
    func settingsInVariables(projectToken: String, baseUrl: String?) -> any IntegrationType {
        let authorization: Authorization = .token("KEY")
        let project: Exponea.ProjectSettings = Exponea.ProjectSettings(
            projectToken: projectToken, authorization: authorization, baseUrl: baseUrl)
        let stream: Exponea.StreamSettings = Exponea.StreamSettings(streamId: "STREAM", baseUrl: baseUrl)
        let integrations: [any IntegrationType] = [project, stream]
        let source: IntegrationSourceType = integrations[0].type
        _ = (source.integrationId, source.isStream, source.rawValue, project == project, stream.baseUrl)
        let push: Exponea.PushNotificationTracking = .disabled
        let sessions: Exponea.AutomaticSessionTracking = .enabled()
        let flushing: Exponea.FlushingSetup = Exponea.FlushingSetup.default
        _ = (push, sessions, flushing)
        return integrations[0]
    }

    /// What the app reads back.
    func readBack() -> (configured: Bool, cookie: String?, integrationId: String?) {
        let configuration: Configuration? = exponea.configuration
        let properties: [String: JSONConvertible]? = configuration?.defaultProperties
        _ = properties
        return (exponea.isConfigured, exponea.customerCookie, configuration?.integrationId)
    }

    // MARK: Identity (Documentation/TRACKING.md)

    /// Identifies the customer with a context, properties held in a variable.
    func signIn(email: String, name: String, age: Int, jwt: String?) {
        let properties: [String: JSONConvertible] = ["first_name": name, "age": age, "newsletter": true]
        exponea.identifyCustomer(
            context: CustomerIdentity(customerIds: ["registered": email], jwtToken: jwt),
            properties: properties,
            timestamp: nil
        )
    }

    /// The identity forms of `CustomerIdentity`.
    func identities(jwt: String) -> [CustomerIdentity] {
        let onlyToken = CustomerIdentity(jwtToken: jwt)
        var built = CustomerIdentity()
        built.customerIds["registered"] = "jane@example.com"
        built.jwtToken = jwt
        _ = (onlyToken.hasJwtToken, built.hasCustomerIds)
        return [onlyToken, built]
    }

    /// The deprecated identify form, ids in an optional variable.
    func legacySignIn(ids: [String: String]?, plan: String) {
        exponea.identifyCustomer(customerIds: ids, properties: ["plan": plan], timestamp: nil)
    }

    // MARK: Tracking (Documentation/TRACKING.md)

    /// Tracks a purchase from the app's variables of the usual Swift types.
    func trackPurchase(price: Double, sku: String, quantity: Int, gift: Bool, coupon: String?, tags: [String]) {
        exponea.trackEvent(
            properties: [
                "price": price, "sku": sku, "quantity": quantity, "gift": gift, "coupon": coupon, "tags": tags,
                "shipping": ["country": "SK", "express": true],
            ],
            timestamp: Date().timeIntervalSince1970,
            eventType: "purchase"
        )
    }

    /// Tracks an event from a properties variable of the Exponea SDK's type.
    func trackView(_ properties: [String: JSONConvertible], eventType: String?) {
        exponea.trackEvent(properties: properties, timestamp: nil, eventType: eventType)
    }

    /// Tracks a payment.
    func trackPayment(price: Double, itemId: String) {
        exponea.trackPayment(properties: ["brutto": price, "item_id": itemId, "currency": "EUR"], timestamp: nil)
    }

    /// The facade's own literal form keeps compiling: `nil`, nested literals.
    func trackWithLiterals() {
        exponea.trackEvent(properties: ["price": 9.99, "gift": nil, "tags": ["a", 1]], timestamp: nil, eventType: "literal")
        exponea.trackPayment(properties: ["coupon": nil, "brutto": 1])
        exponea.identifyCustomer(context: CustomerIdentity(jwtToken: "JWT"))
        let values: [String: JSONValue] = ["sku": "A-1"]
        exponea.trackEvent(properties: values, timestamp: nil, eventType: "json_value")
        exponea.identifyCustomer(customerIds: ["registered": "jane"], properties: ["plan": "gold"], timestamp: nil)
    }

    // MARK: Flushing (Documentation/DATA-FLUSHING.md)

    /// Sets the mode an app uses.
    func useFlushingMode(_ mode: Exponea.FlushingMode) {
        exponea.flushingMode = mode
        exponea.flushingMode = .periodic(30)
        exponea.flushingMode = mode
    }

    /// Flushes and reports the outcome as text, with a `switch` over every case.
    func flush(_ done: @escaping @Sendable (String) -> Void) {
        exponea.flushData { result in
            switch result {
            case .success(let count):
                done("success \(count)")
            case .flushAlreadyInProgress:
                done("in progress")
            case .noInternetConnection:
                done("offline")
            case .error(let error):
                done("error \(error.localizedDescription)")
            }
        }
    }

    /// The other flush forms.
    func flushQuietly() {
        exponea.flushData()
        exponea.flushData(completion: nil)
        let handler: ((FlushResult) -> Void)? = nil
        _ = handler
    }

    // MARK: Segmentation (Documentation/SEGMENTATION.md)

    /// Registers for discovery segments and reads the content ones once.
    func segments(_ told: @escaping @Sendable ([String]) -> Void) -> SegmentCallbackData {
        let callback = SegmentCallbackData(category: .discovery(), isIncludeFirstLoad: true) { segments in
            told(segments.map(\.id))
        }
        SegmentationManager.shared.addCallback(callbackData: callback)
        exponea.getSegments(category: .content()) { segments in
            told(segments.map(\.id))
        }
        exponea.getSegments(force: true, category: .merchandising()) { _ in }
        return callback
    }

    /// Removes a registration.
    func stopListening(_ callback: SegmentCallbackData) {
        SegmentationManager.shared.removeCallback(callbackData: callback)
    }

    /// A registration without a handler, compared as the Exponea SDK compares them.
    func isPlaceholder(_ other: SegmentCallbackData) -> Bool {
        let quiet = SegmentCallbackData(category: .content(), isIncludeFirstLoad: false, onNewData: nil)
        quiet.fireBlock(category: [])
        return quiet == other
    }
}

/// The Exponea SDK's deprecated forms, called on purpose: from deprecated declarations, which is
/// where Swift lets deprecated API be used without a warning. The tests run them through
/// ``ShopLegacyForms``, whose requirements are not deprecated.
struct ShopLegacyConfiguration: ShopLegacyForms {
    let exponea: Exponea

    @available(*, deprecated, message: "Calls the Exponea SDK's deprecated forms on purpose (compile test).")
    func configureByToken(projectToken: String, accessToken: String, baseUrl: String) {
        exponea.configure(
            projectToken: projectToken, authorization: .token(accessToken), baseUrl: baseUrl, appGroup: "group.com.shop",
            defaultProperties: ["legacy": true])
    }

    @available(*, deprecated, message: "Calls the Exponea SDK's deprecated forms on purpose (compile test).")
    func configureWithMapping(projectToken: String, accessToken: String, baseUrl: String) {
        exponea.configure(
            projectToken: projectToken,
            projectMapping: [.customEvent: [ExponeaProject(projectToken: "OTHER", authorization: .token("OTHER KEY"))]],
            authorization: .token(accessToken), baseUrl: baseUrl)
    }

    @available(*, deprecated, message: "Calls the Exponea SDK's deprecated forms on purpose (compile test).")
    func configureWithAutomaticPush(projectToken: String, accessToken: String, baseUrl: String) {
        exponea.configure(
            Exponea.ProjectSettings(projectToken: projectToken, authorization: .token(accessToken), baseUrl: baseUrl),
            automaticPushNotificationTracking: .enabled(appGroup: "group.com.shop"))
    }

    @available(*, deprecated, message: "Calls the Exponea SDK's deprecated forms on purpose (compile test).")
    func readLegacyConfiguration() throws -> String? {
        let configuration = try Configuration(projectToken: "TOKEN", authorization: .token("KEY"), baseUrl: nil)
        return exponea.configuration?.projectToken ?? configuration.projectToken
    }
}

/// The deprecated forms, called through requirements that are not deprecated.
protocol ShopLegacyForms {
    func configureByToken(projectToken: String, accessToken: String, baseUrl: String)
    func configureWithMapping(projectToken: String, accessToken: String, baseUrl: String)
    func configureWithAutomaticPush(projectToken: String, accessToken: String, baseUrl: String)
    func readLegacyConfiguration() throws -> String?
}
