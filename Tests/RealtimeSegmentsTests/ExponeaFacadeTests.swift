import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// The Exponea-compatible facade over an injected client (tests never touch `shared`).
@Suite(Hang.timeLimit(minutes: 2)) struct ExponeaFacadeTests {
    let harness = ClientHarness()
    var exponea: Exponea { Exponea(client: harness.client) }
    var manager: SegmentationManager { SegmentationManager(exponea: exponea) }

    func configureProject(_ exponea: Exponea, token: String = "TOKEN", baseUrl: String = "http://127.0.0.1:9") {
        exponea.configure(
            Exponea.ProjectSettings(projectToken: token, authorization: .token("SECRET-KEY"), baseUrl: baseUrl),
            flushingSetup: Exponea.FlushingSetup(mode: .manual))
    }

    @Test func t2_callbacksAddedBeforeConfigureAreServedAfterIt() async throws {
        let told = Recorder<[Segment]>()
        let callback = SegmentCallbackData(category: .discovery(), isIncludeFirstLoad: true) { told.record($0) }
        manager.addCallback(callbackData: callback)
        harness.transport.respond(to: "/webxp/projects/TOKEN/segments", with: .json(#"{"discovery":[{"id":"s1","segmentation_id":"g1"}]}"#))
        configureProject(exponea)
        #expect(exponea.isConfigured)
        await harness.advance(by: 5)
        #expect(told.all == [[Fixture.s1]])
    }

    @Test func m4_removingACopyOfACallbackRemovesEveryRegistrationOfIt() async throws {
        let callback = SegmentCallbackData(category: .content(), isIncludeFirstLoad: false) { _ in }
        let copy = callback
        manager.addCallback(callbackData: callback)
        manager.addCallback(callbackData: callback)
        let other = SegmentCallbackData(category: .content(), isIncludeFirstLoad: false) { _ in }
        manager.addCallback(callbackData: other)
        manager.removeCallback(callbackData: copy)
        manager.removeCallback(callbackData: SegmentCallbackData(category: .content(), isIncludeFirstLoad: false) { _ in })
        #expect(harness.client.listenerCount == 1)
    }

    @Test func g4_g5_getSegmentsBeforeConfigureIsAnsweredOnceConfiguredAndFailureIsEmpty() async throws {
        let answers = Recorder<[Segment]>()
        exponea.getSegments(category: .content()) { answers.record($0) }
        await harness.advance(by: 60)
        #expect(answers.count == 0)
        harness.transport.respond(to: "/webxp/projects/TOKEN/segments", with: .status(503))
        configureProject(exponea)
        await harness.advance()
        #expect(answers.all == [[]])
    }

    @Test func p3_p4_badConfigurationIsRefusedWithAClearLogAndNoCrash() async throws {
        configureProject(exponea, token: "")
        configureProject(exponea, baseUrl: "not a url")
        configureProject(exponea, baseUrl: "http://api.example.com")  // plain http off loopback
        #expect(!exponea.isConfigured)
        let refusals = harness.logger.entries.filter { $0.level == .error && $0.message.hasPrefix("Segments: Configuration refused") }
        #expect(refusals.count == 3)
        #expect(!harness.logger.messages.joined().contains("SECRET-KEY"))
    }

    @Test func p4_authorizationValuesNeverReachTheLog() async throws {
        harness.transport.respond(to: "/webxp/projects/TOKEN/segments", with: .status(401))
        configureProject(exponea)
        let answers = Recorder<[Segment]>()
        exponea.getSegments(force: true, category: .content()) { answers.record($0) }
        await harness.advance()
        #expect(answers.all == [[]])
        #expect(harness.transport.requests.first?.headers["Authorization"] == "Token SECRET-KEY")
        #expect(harness.logger.messages.contains { $0.hasPrefix("Segments: Fetch of segments failed") })
        #expect(!harness.logger.messages.joined().contains("SECRET-KEY"))
    }

    @Test func a3_stopIntegrationRemovesCallbacksAndRefusesWorkUntilConfiguredAgain() async throws {
        configureProject(exponea)
        manager.addCallback(callbackData: SegmentCallbackData(category: .content(), isIncludeFirstLoad: true) { _ in })
        exponea.stopIntegration()
        #expect(!exponea.isConfigured)
        #expect(harness.client.listenerCount == 0)
        exponea.trackEvent(properties: ["a": 1], timestamp: nil, eventType: "x")
        #expect(harness.logger.messages.contains { $0.hasPrefix("Tracking: trackEvent failed") })
        configureProject(exponea)
        #expect(exponea.isConfigured)
    }

    @Test func anonymizeGivesANewCookieAndFlushingModeRoundTrips() async throws {
        configureProject(exponea)
        let before = exponea.customerCookie
        exponea.anonymize()
        #expect(exponea.customerCookie != nil && exponea.customerCookie != before)
        exponea.flushingMode = .periodic(30)
        #expect(exponea.flushingMode == .periodic(30))
    }

    @Test func flushDataReportsTheOutcome() async throws {
        harness.transport.respond(to: "/track/v2/projects/TOKEN/customers/events", with: .json(#"{"success":true}"#))
        configureProject(exponea)
        exponea.trackEvent(properties: ["price": 9.99], timestamp: 1_700_000_000, eventType: "purchase")
        let result = await withCheckedContinuation { continuation in
            exponea.flushData { continuation.resume(returning: $0) }
            Task { await harness.advance() }
        }
        #expect(try result.get() == 1)
        let body = try #require(harness.transport.requests.last?.body)
        let json = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        #expect(json?["event_type"] as? String == "purchase")
        #expect(json?["timestamp"] as? Double == 1_700_000_000)
    }
}
