// The Exponea-shaped app code of AppCode/ run against the emulator on 127.0.0.1 with the real
// URLSession transport (SPEC X1, X3, E2, E5, L1–L3): the requests it makes, the FlushResult
// values it gets, and the log lines it causes.
import Foundation
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting
import Testing

/// A facade over a live client (URLSession transport, live scheduler, in-memory stores) against
/// the emulator, logging to a recorder.
final class EmulatorFacade: Sendable {
    let emulator = SegmentsEmulator()
    let baseUrl: String
    let logger = RecordingLogger()
    let client: SegmentsClient
    let exponea: Exponea

    init(middlewares: [any SegmentsTransportMiddleware] = []) throws {
        baseUrl = try emulator.start().absoluteString
        client = SegmentsClient(
            options: SegmentsClient.Options(
                runtime: SegmentsRuntime(logger: logger, deliveryQueue: DispatchQueue(label: "compat.delivery")),
                timings: SegmentationTimings(
                    debounce: DebouncePolicy(delay: 0.05, maxWait: 0.2), retry: RetryBackoff(initial: 0.05, maximum: 0.2)),
                uploadRetry: RetryBackoff(initial: 0.05, maximum: 0.2), transport: URLSessionSegmentsTransport(),
                middlewares: middlewares, storage: .inMemory))
        exponea = Exponea(client: client)
    }

    /// Flushes with the app code's `switch` over every FlushResult case.
    func flush() async -> String {
        let analytics = ShopAnalytics(exponea: exponea)
        return await withCheckedContinuation { continuation in
            analytics.flush { continuation.resume(returning: $0) }
        }
    }

    /// The warnings naming ignored configure parameters.
    var ignoredParameterLines: [String] {
        logger.entries.filter { $0.level == .warning && $0.message.hasPrefix(Self.ignoredPrefix) }.map(\.message)
    }

    static let ignoredPrefix = "Segments: configure ignored parameters of features outside this SDK: "

    func tearDown() {
        client.stop()
        emulator.stop()
    }
}

/// Adds a header to every request, as an app's signing middleware would.
struct AppHeaderMiddleware: SegmentsTransportMiddleware {
    func intercept(
        _ request: SegmentsHTTPRequest, next: @Sendable (SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse
    ) async throws -> SegmentsHTTPResponse {
        var request = request
        request.headers["X-App-Signature"] = "signed"
        return try await next(request)
    }
}

@Suite(Hang.timeLimit(minutes: 2)) struct ExponeaFormsEmulatorTests {
    // MARK: - Configure, track, identify, flush

    @Test func x1_theDocumentedComplexConfigureTracksIdentifiesAndFlushesWithOneWarningNamingTheIgnoredParameters() async throws {
        let facade = try EmulatorFacade()
        defer { facade.tearDown() }
        facade.emulator.requireAuthorization("Token key")
        let analytics = ShopAnalytics(exponea: facade.exponea)

        analytics.configureComplex(projectToken: "project", accessToken: "key", baseUrl: facade.baseUrl, delegate: nil)
        #expect(facade.exponea.isConfigured)
        #expect(facade.ignoredParameterLines == [
            EmulatorFacade.ignoredPrefix
                + "pushNotificationTracking, automaticSessionTracking, inAppContentBlocksPlaceholders, advancedAuthEnabled, "
                + "manualSessionAutoClose, applicationID, projectMapping, flushingSetup.maxRetries"
        ])
        #expect(facade.exponea.flushingMode == .periodic(100))
        let configuration = try #require(facade.exponea.configuration)
        #expect(configuration.integrationId == "project")
        #expect(configuration.defaultProperties?.mapValues(\.jsonValue) == ["prop-1": "value-1", "prop-2": 123])
        #expect(configuration.allowDefaultCustomerProperties == false)

        analytics.trackPurchase(price: 9.99, sku: "A-1", quantity: 2, gift: false, coupon: nil, tags: ["new", "sale"])
        analytics.trackPayment(price: 19.5, itemId: "A-1")
        analytics.signIn(email: "jane@example.com", name: "Jane", age: 31, jwt: nil)
        analytics.legacySignIn(ids: nil, plan: "gold")
        #expect(await facade.flush() == "success 4")

        let purchase = try #require(facade.emulator.events.first { $0.eventType == "purchase" })
        #expect(purchase.properties == [
            "price": .number(9.99), "sku": .string("A-1"), "quantity": .number(2), "gift": .bool(false), "coupon": .null,
            "tags": .array([.string("new"), .string("sale")]),
            "shipping": .object(["country": .string("SK"), "express": .bool(true)]),
            "prop-1": .string("value-1"), "prop-2": .number(123),  // the configure's default properties (E8)
        ])
        let payment = try #require(facade.emulator.events.first { $0.eventType == "payment" })
        #expect(payment.properties == [
            "brutto": .number(19.5), "item_id": .string("A-1"), "currency": .string("EUR"), "prop-1": .string("value-1"),
            "prop-2": .number(123),
        ])
        let updates = facade.emulator.customerUpdates
        #expect(updates.count == 2)
        #expect(updates.first?.customerIds["registered"] == "jane@example.com")
        // allowDefaultCustomerProperties: false keeps the defaults out of customer updates (E8).
        #expect(updates.first?.properties == ["first_name": .string("Jane"), "age": .number(31), "newsletter": .bool(true)])
        #expect(updates.last?.properties == ["plan": .string("gold")])
        #expect(updates.last?.customerIds["registered"] == "jane@example.com", "nil ids keep the customer's")
        #expect(facade.emulator.requests(on: .event).allSatisfy { $0.header("Authorization") == "Token key" })
        #expect(facade.ignoredParameterLines.count == 1, "one warning per configure, none later")
    }

    @Test func x1_theMostCommonConfigureUploadsImmediatelyAndNamesOnlyWhatItAsksFor() async throws {
        let facade = try EmulatorFacade()
        defer { facade.tearDown() }
        let analytics = ShopAnalytics(exponea: facade.exponea)

        analytics.configureMostCommon(projectToken: "project", accessToken: "key", baseUrl: facade.baseUrl)
        #expect(facade.ignoredParameterLines == [EmulatorFacade.ignoredPrefix + "pushNotificationTracking, automaticSessionTracking"])
        #expect(facade.exponea.flushingMode == .immediate)
        analytics.trackView(["screen": "home", "position": 3], eventType: "view_item")
        let flushed = await facade.flush()
        #expect(flushed == "success 1" || flushed == "success 0", "the immediate upload may have gone first")
        #expect(facade.emulator.events.map(\.eventType) == ["view_item"])

        analytics.configureWithoutAutomaticFeatures(projectToken: "project", accessToken: "key", baseUrl: facade.baseUrl)
        #expect(facade.ignoredParameterLines.count == 1, "nothing ignored: no second warning")
        #expect(facade.exponea.flushingMode == .manual)
    }

    @Test func x1_configureWithAConfigurationAndAnAuthContextIdentifiesTheCustomer() async throws {
        let facade = try EmulatorFacade()
        defer { facade.tearDown() }
        let analytics = ShopAnalytics(exponea: facade.exponea)
        facade.exponea.flushingMode = .manual

        try analytics.configureWithConfiguration(
            projectToken: "project", accessToken: "key", baseUrl: facade.baseUrl, email: "jane@example.com")
        #expect(facade.exponea.isConfigured)
        #expect(facade.exponea.flushingMode == .manual, "a mode set before configure applies (E2)")
        #expect(facade.ignoredParameterLines == [EmulatorFacade.ignoredPrefix + "automaticPushNotificationTracking"],
                "a Configuration asks for automatic push by default, as in the Exponea SDK")
        #expect(await facade.flush() == "success 1")
        #expect(facade.emulator.customerUpdates.map { $0.customerIds["registered"] } == ["jane@example.com"])
    }

    @Test func x1_theDeprecatedFormsConfigureAProjectAndNameWhatTheyIgnore() async throws {
        let facade = try EmulatorFacade()
        defer { facade.tearDown() }
        let legacy: any ShopLegacyForms = ShopLegacyConfiguration(exponea: facade.exponea)

        legacy.configureByToken(projectToken: "project", accessToken: "key", baseUrl: facade.baseUrl)
        #expect(facade.exponea.configuration?.integrationId == "project")
        #expect(facade.ignoredParameterLines == [EmulatorFacade.ignoredPrefix + "appGroup"])
        #expect(try legacy.readLegacyConfiguration() == "project")

        legacy.configureWithAutomaticPush(projectToken: "other", accessToken: "key", baseUrl: facade.baseUrl)
        #expect(facade.ignoredParameterLines.last == EmulatorFacade.ignoredPrefix + "automaticPushNotificationTracking, automaticSessionTracking")
        legacy.configureWithMapping(projectToken: "third", accessToken: "key", baseUrl: facade.baseUrl)
        #expect(facade.ignoredParameterLines.last == EmulatorFacade.ignoredPrefix + "projectMapping")
        #expect(facade.exponea.configuration?.integrationId == "third")

        ShopAnalytics(exponea: facade.exponea).trackView(["n": 1], eventType: "legacy")
        _ = await facade.flush()
        #expect(facade.emulator.events.map(\.integration) == [.project(token: "third")])
    }

    // MARK: - FlushResult

    @Test func e5_x1_flushReportsNoInternetConnectionAnErrorAndSuccessAsExponeasCases() async throws {
        let facade = try EmulatorFacade()
        defer { facade.tearDown() }
        let analytics = ShopAnalytics(exponea: facade.exponea)
        #expect(await facade.flush() == "error \(SegmentsError.notConfigured.localizedDescription)", "before configure")

        analytics.configureWithoutAutomaticFeatures(projectToken: "project", accessToken: "key", baseUrl: facade.baseUrl)
        analytics.trackView(["n": 1], eventType: "view_item")
        facade.emulator.injectFault(.dropConnection, on: .event)
        #expect(await facade.flush() == "offline")
        facade.emulator.injectFault(.status(401), on: .event)
        let refused = await withCheckedContinuation { continuation in
            facade.exponea.flushData { continuation.resume(returning: $0) }
        }
        guard case .error(let error) = refused else {
            Issue.record("an authorization failure is .error, not \(refused)")
            return
        }
        #expect((error as? SegmentsError)?.code == .unauthorized)
        facade.emulator.injectFault(.status(400), on: .event)
        #expect(await facade.flush() == "success 0", "a permanent failure is counted against the item, not reported (E3)")
        #expect(await facade.flush() == "success 1")
        #expect(await facade.flush() == "success 0")
    }

    @Test func e5_x1_aFlushDuringAFlushJoinsItAndIsNeverAlreadyInProgress() async throws {
        let facade = try EmulatorFacade()
        defer { facade.tearDown() }
        let analytics = ShopAnalytics(exponea: facade.exponea)
        analytics.configureWithoutAutomaticFeatures(projectToken: "project", accessToken: "key", baseUrl: facade.baseUrl)
        analytics.trackView(["n": 1], eventType: "view_item")
        facade.emulator.injectFault(.delay(0.3), on: .event)
        async let first = facade.flush()
        async let second = facade.flush()
        let results = await [first, second]
        #expect(results == ["success 1", "success 1"])
        #expect(facade.emulator.requests(on: .event).count == 1)
    }

    // MARK: - Stream JWT

    @Test func x1_aStreamUsesTheSdkAuthTokenAndItsErrorHandlerRefreshesIt() async throws {
        let facade = try EmulatorFacade()
        defer { facade.tearDown() }
        facade.emulator.acceptBearerTokens(["jwt-2"])
        let reasons = LockedValue<[JwtErrorContext.Reason]>([])
        let analytics = ShopAnalytics(exponea: facade.exponea)

        analytics.configureStream(streamId: "stream-1", baseUrl: facade.baseUrl, jwt: "jwt-1") {
            reasons.withLock { $0.append(.invalid) }
            return "jwt-2"
        }
        analytics.trackView(["n": 1], eventType: "view_item")
        #expect(await facade.flush() == "success 1")
        #expect(facade.emulator.requests(on: .event).map { $0.header("Authorization") } == ["Bearer jwt-1", "Bearer jwt-2"])
        #expect(reasons.withLock { $0 } == [.invalid])
        #expect(!facade.logger.messages.contains { $0.contains("jwt-") }, "the token is never logged")

        analytics.signIn(email: "jane@example.com", name: "Jane", age: 31, jwt: "jwt-3")
        facade.emulator.acceptBearerTokens(["jwt-3"])
        #expect(await facade.flush() == "success 1")
        #expect(facade.emulator.requests(on: .customer).last?.header("Authorization") == "Bearer jwt-3")
    }

    @Test func x1_setSdkAuthTokenIgnoresAnEmptyTokenAndAProjectIntegrationWithAWarning() throws {
        let facade = try EmulatorFacade()
        defer { facade.tearDown() }
        facade.exponea.setSdkAuthToken("")
        ShopAnalytics(exponea: facade.exponea).configureMostCommon(projectToken: "project", accessToken: "key", baseUrl: facade.baseUrl)
        facade.exponea.setSdkAuthToken("jwt-1")
        #expect(facade.logger.entries.filter { $0.message.hasPrefix("Segments: setSdkAuthToken ignored") }.map(\.level) == [.warning, .warning])
    }

    // MARK: - Logger

    @Test func l3_x1_anAssignedLoggerSubclassGetsTheLinesOfTheSharedInstanceOnce() throws {
        let previous = Exponea.logger
        defer { Exponea.logger = previous }
        let logger = ShopLogger()
        ShopAnalytics.installLogger(logger)
        let emulator = SegmentsEmulator()
        let baseUrl = try emulator.start().absoluteString
        defer { emulator.stop() }
        var options = SegmentsClient.Options(storage: .inMemory)
        options.runtime.logger = RecordingLogger()       // not taken: the shared instance logs through Exponea.logger
        let shared = Exponea.makeShared(
            logger: Exponea.loggerOfShared, options: ChosenUntilFirstUse(options, logger: Exponea.loggerOfShared, lateChoice: "late"))
        defer { shared.client.stop() }

        ShopAnalytics(exponea: shared).configureMostCommon(projectToken: "project", accessToken: "key", baseUrl: baseUrl)
        let warnings = logger.lines.filter { $0.hasPrefix("WARNING " + EmulatorFacade.ignoredPrefix) }
        #expect(warnings == ["WARNING " + EmulatorFacade.ignoredPrefix + "pushNotificationTracking, automaticSessionTracking"])
        Exponea.logger.logLevel = .error
        shared.trackEvent(properties: [:] as [String: JSONValue], timestamp: nil, eventType: nil)
        #expect(logger.lines.last?.hasPrefix("ERROR Tracking: trackEvent failed") == true)
    }

    // MARK: - X3: the shared instance's options

    @Test func x3_optionsChosenBeforeTheSharedInstanceIsBuiltCarryItsRequestsAndALateChoiceIsRefused() async throws {
        let facadeForEmulator = try EmulatorFacade()
        defer { facadeForEmulator.tearDown() }
        let logger = RecordingLogger()
        let queue = DispatchQueue(label: "compat.shared.delivery")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "chosen")
        let choice = ChosenUntilFirstUse(SegmentsClient.Options(), logger: logger, lateChoice: "Segments: too late")
        #expect(choice.update { options in
            options.middlewares = [AppHeaderMiddleware()]
            options.storage = .inMemory
            options.runtime.deliveryQueue = queue
            options.appLifecycle = ManualAppLifecycle()
            options.timings = SegmentationTimings(debounce: DebouncePolicy(delay: 0.05, maxWait: 0.2))
        })
        let shared = Exponea.makeShared(logger: logger, options: choice)
        defer { shared.client.stop() }
        #expect(!choice.set(SegmentsClient.Options()))
        #expect(logger.count(of: "Segments: too late") == 1)
        #expect(choice.value.middlewares.count == 1, "the options in use are still reported")

        ShopAnalytics(exponea: shared).configureWithoutAutomaticFeatures(
            projectToken: "project", accessToken: "key", baseUrl: facadeForEmulator.baseUrl)
        ShopAnalytics(exponea: shared).trackView(["n": 1], eventType: "view_item")
        let (flushed, onQueue) = await withCheckedContinuation { continuation in
            shared.flushData { result in continuation.resume(returning: (result.uploaded, DispatchQueue.getSpecific(key: key))) }
        }
        #expect(flushed == 1)
        #expect(onQueue == "chosen")
        #expect(facadeForEmulator.emulator.requests(on: .event).map { $0.header("X-App-Signature") } == ["signed"])
    }

    @Test func x3_theSharedDeliveryQueueIsTheSharedOptionsQueue() {
        #expect(Exponea.sharedDeliveryQueue === Exponea.sharedOptions.runtime.deliveryQueue)
    }
}

extension FlushResult {
    /// The count of a success, else `nil`.
    var uploaded: Int? {
        if case .success(let count) = self { return count }
        return nil
    }
}
