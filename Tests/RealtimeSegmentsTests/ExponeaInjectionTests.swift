import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// The facade built around an injected client, the delivery queue of the shared instance, and
/// project-mode authorization providers.
@Suite(Hang.timeLimit(minutes: 2)) struct ExponeaInjectionTests {
    let harness = ClientHarness()
    static let segments = "/webxp/projects/TOKEN/segments"

    func configure(_ exponea: Exponea, provider: RecordingAuthorizationProvider) {
        exponea.configure(
            Exponea.ProjectSettings(
                projectToken: "TOKEN", authorization: .token("SECRET-KEY"), authorizationProvider: provider,
                baseUrl: "http://127.0.0.1:9"),
            flushingSetup: Exponea.FlushingSetup(mode: .manual))
    }

    /// Reads `category` through the facade's completion form, advancing virtual time meanwhile.
    func read(_ exponea: Exponea, force: Bool = true) async -> [Segment] {
        await withCheckedContinuation { continuation in
            exponea.getSegments(force: force, category: .discovery()) { continuation.resume(returning: $0) }
            Task { await harness.advance() }
        }
    }

    /// Flushes through the facade, advancing virtual time meanwhile.
    func flush(_ exponea: Exponea) async -> SegmentsFlushResult {
        await withCheckedContinuation { continuation in
            exponea.flushData { continuation.resume(returning: $0.result) }
            Task { await harness.advance() }
        }
    }

    // MARK: - Facades around an injected client

    @Test func t2_d8_facadesOverAnInjectedClientShareItsCallbacksAndItsDeliveryQueue() async throws {
        let exponea = Exponea(client: harness.client)
        let key = DispatchSpecificKey<String>()
        harness.deliveryQueue.setSpecific(key: key, value: "test queue")
        let told = Recorder<String?>()
        let callback = SegmentCallbackData(category: .discovery(), isIncludeFirstLoad: true) { _ in
            told.record(DispatchQueue.getSpecific(key: key))
        }
        SegmentationManager(exponea: exponea).addCallback(callbackData: callback)
        try harness.configure()
        await harness.advance(by: 5)
        #expect(told.all == ["test queue"])
        #expect(Exponea(client: harness.client).customerCookie == exponea.customerCookie)
        SegmentationManager(exponea: Exponea(client: harness.client)).removeCallback(callbackData: callback)
        #expect(harness.client.listenerCount == 0, "another registry over the same client removed it")
    }

    // MARK: - The delivery queue of the shared instance

    @Test func d8_aDeliveryQueueChosenBeforeTheSharedInstanceIsBuiltIsTheOneItCallsBackOn() async throws {
        let logger = RecordingLogger()
        let choice = ChosenUntilFirstUse(DispatchQueue(label: "default"), logger: logger, lateChoice: "Segments: too late")
        let chosen = DispatchQueue(label: "chosen")
        let key = DispatchSpecificKey<String>()
        chosen.setSpecific(key: key, value: "chosen")
        #expect(choice.set(chosen))
        let shared = Exponea.makeShared(logger: logger, deliveryQueue: choice)
        let (queue, result) = await withCheckedContinuation { continuation in
            shared.flushData { continuation.resume(returning: (DispatchQueue.getSpecific(key: key), $0)) }
        }
        #expect(queue == "chosen")
        #expect(throws: SegmentsError.self) { try result.get() }   // not configured, answered on the queue
        #expect(logger.entries.isEmpty)
    }

    @Test func d8_aDeliveryQueueChosenAfterTheSharedInstanceIsBuiltIsRefusedWithAnErrorLine() {
        let logger = RecordingLogger()
        let first = DispatchQueue(label: "first")
        let choice = ChosenUntilFirstUse(first, logger: logger, lateChoice: "Segments: too late")
        _ = Exponea.makeShared(logger: logger, deliveryQueue: choice)
        #expect(!choice.set(DispatchQueue(label: "late")))
        #expect(choice.value === first, "the queue in use is still reported")
        #expect(logger.entries.map(\.level) == [.error])
        #expect(logger.count(of: "Segments: too late") == 1)
    }

    @Test func d8_theSharedInstanceCallsBackOnTheQueueItReports() async throws {
        _ = Exponea.shared
        let inUse = Exponea.sharedDeliveryQueue
        Exponea.sharedDeliveryQueue = DispatchQueue(label: "too late")    // refused: shared is built
        #expect(Exponea.sharedDeliveryQueue === inUse)
        let key = DispatchSpecificKey<String>()
        inUse.setSpecific(key: key, value: "shared delivery")
        let queue = await withCheckedContinuation { continuation in
            Exponea.shared.flushData { _ in continuation.resume(returning: DispatchQueue.getSpecific(key: key)) }
        }
        #expect(queue == "shared delivery")
    }

    // MARK: - Project mode with an authorization provider

    @Test func wire_p4_projectSettingsWithAProviderAuthorizeEachRequestWithItsLatestToken() async throws {
        let exponea = Exponea(client: harness.client)
        let tokens = RecordingAuthorizationProvider("jwt-1")
        harness.transport.respond(to: Self.segments, with: .json(#"{"discovery":[{"id":"s1","segmentation_id":"g1"}]}"#))
        configure(exponea, provider: tokens)
        #expect(await read(exponea) == [Fixture.s1])
        tokens.set("jwt-2")
        #expect(await read(exponea) == [Fixture.s1])
        tokens.set(nil)
        #expect(await read(exponea) == [Fixture.s1])
        #expect(harness.transport.requests.map { $0.headers["Authorization"] } == [
            "Bearer jwt-1", "Bearer jwt-2", "Token SECRET-KEY",
        ])
        #expect(!harness.logger.messages.joined().contains("jwt-"))
    }

    @Test func wire_aProjectRefusalIsReportedToTheProviderAndRetriedOnceWithItsNewToken() async throws {
        let exponea = Exponea(client: harness.client)
        let tokens = RecordingAuthorizationProvider("jwt-1")
        harness.transport.enqueue(.handler { _ in
            tokens.set("jwt-2")                                  // what a refresh would give
            return SegmentsHTTPResponse(status: 401)
        }, for: Self.segments)
        harness.transport.respond(to: Self.segments, with: .json(#"{"discovery":[{"id":"s1","segmentation_id":"g1"}]}"#))
        configure(exponea, provider: tokens)
        let answer = Recorder<[Segment]>()
        exponea.getSegments(force: true, category: .discovery()) { answer.record($0) }
        await harness.advance()                                  // the fetch, refused
        #expect(tokens.refusals == 1)
        #expect(answer.all.isEmpty, "the retry waits 1 s")
        await harness.advance(by: 1)
        #expect(answer.all == [[Fixture.s1]])
        #expect(harness.transport.requests.map { $0.headers["Authorization"] } == ["Bearer jwt-1", "Bearer jwt-2"])
    }

    @Test func e3_aProviderErrorFailsTheUploadButNeverDropsTheEvent() async throws {
        let exponea = Exponea(client: harness.client)
        let tokens = RecordingAuthorizationProvider("jwt-1")
        struct TokenServiceDown: Error {}
        tokens.fail(with: TokenServiceDown())
        harness.transport.respond(to: "/track/v2/projects/TOKEN/customers/events", with: .json(#"{"success":true}"#))
        configure(exponea, provider: tokens)
        exponea.trackEvent(properties: ["sku": "A-1"], timestamp: nil, eventType: "view_item")
        let failed = await flush(exponea)
        #expect(throws: SegmentsError.self) { try failed.get() }
        if case .failure(let error) = failed { #expect(error.code == .unauthorized) }
        #expect(harness.client.queuedEventCount == 1)
        #expect(harness.transport.requests.isEmpty, "nothing is sent without a token")

        tokens.fail(with: nil)
        #expect(try await flush(exponea).get() == 1)           // manual mode: the next flush sends it
        #expect(harness.client.queuedEventCount == 0)
        #expect(harness.transport.requests.map { $0.headers["Authorization"] } == ["Bearer jwt-1"])
    }

    @Test func projectSettingsAreEqualWithTheSameProviderInstance() {
        let tokens = RecordingAuthorizationProvider("jwt-1")
        let settings = Exponea.ProjectSettings(projectToken: "T", authorizationProvider: tokens)
        #expect(settings == Exponea.ProjectSettings(projectToken: "T", authorizationProvider: tokens))
        #expect(Set([settings, settings]).count == 1)
        #expect(settings != Exponea.ProjectSettings(projectToken: "T", authorizationProvider: RecordingAuthorizationProvider("jwt-1")))
        #expect(settings != Exponea.ProjectSettings(projectToken: "T", authorization: .none))
        var changed = settings
        changed.authorizationProvider = nil
        #expect(changed == Exponea.ProjectSettings(projectToken: "T", authorization: .none))

        struct FixedToken: BloomreachAuthorizationProvider {
            func token() async -> String? { "jwt" }
            func authorizationFailed() async {}
        }
        let valued = Exponea.ProjectSettings(projectToken: "T", authorizationProvider: FixedToken())
        let copy = valued
        #expect(copy == valued)
        #expect(valued != Exponea.ProjectSettings(projectToken: "T", authorizationProvider: FixedToken()))
    }
}
