import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// A recording event store that runs `onAppend` (set by the test) before each append: a test
/// seam to call the SDK at the moment the client writes an item.
final class HookedEventQueueStore: EventQueueStore, Sendable {
    let recording = RecordingEventQueueStore()
    let onAppend = Locked<(@Sendable (TrackedEvent) -> Void)?>(nil)

    func load() -> [TrackedEvent] { recording.load() }
    func append(_ event: TrackedEvent) throws {
        onAppend.value?(event)
        try recording.append(event)
    }
    func sync() throws { try recording.sync() }
    func update(_ event: TrackedEvent) throws { try recording.update(event) }
    func remove(id: TrackedEvent.ID) throws { try recording.remove(id: id) }
}

/// A client over recording stores, its customer store holding `stored`: the tests read the items
/// the pipeline queued, in order, from the event store.
struct RecordingStoresHarness {
    let customers: RecordingCustomerStore
    let events = HookedEventQueueStore()
    let harness: ClientHarness

    init(stored: CustomerIds? = CustomerIds(["cookie": "stored", "registered": "old"])) {
        customers = RecordingCustomerStore(stored)
        harness = ClientHarness(storage: .custom(customer: customers, baseline: RecordingSegmentBaselineStore(), events: events))
    }

    var client: SegmentsClient { harness.client }
    var queued: [TrackedEvent] { events.load() }

    func configure(
        defaultProperties: [String: JSONValue]? = nil, allowDefaultCustomerProperties: Bool = true
    ) throws {
        var configuration = harness.customConfiguration
        configuration.flushingMode = .manual
        configuration.defaultProperties = defaultProperties
        configuration.allowDefaultCustomerProperties = allowDefaultCustomerProperties
        try client.configure(configuration)
    }
}

/// Calls made before the first configure (Behaviour E1, rev 4): kept in memory in call order, at
/// most 1,000, applied when configure runs, stamped with the configured customer.
@Suite(Hang.timeLimit(minutes: 2)) struct PreConfigureCallsTests {
    static let stored = CustomerIds(["cookie": "stored", "registered": "old"])

    @Test func e1_callsBeforeConfigureAreQueuedAtConfigureInCallOrderStampedWithTheConfiguredCustomer() async throws {
        let world = RecordingStoresHarness(stored: Self.stored)
        let client = world.client
        let first = world.harness.scheduler.now()
        try client.trackEvent(properties: ["n": 1], timestamp: nil, eventType: "a")
        await world.harness.scheduler.advance(by: 10)
        try client.identifyCustomer(customerIds: ["registered": "jane", "email": "j@x"], properties: ["plan": "gold"], timestamp: nil)
        try client.trackEvent(properties: ["n": 2], timestamp: Date(timeIntervalSince1970: 5), eventType: "b")
        #expect(world.queued.isEmpty, "nothing is queued before configure")
        #expect(client.customerIds == nil)

        try world.configure()
        try client.trackEvent(properties: ["n": 3], timestamp: nil, eventType: "c")  // after configure: after them

        let jane = CustomerIds(["cookie": "stored", "registered": "jane", "email": "j@x"])
        let queued = world.queued
        #expect(queued.map(\.kind) == [.event(type: "a"), .customerUpdate, .event(type: "b"), .event(type: "c")])
        #expect(queued.map(\.customerIds) == [Self.stored, jane, jane, jane])
        #expect(queued.first?.timestamp == first, "stamped with the time of the call, not of configure")
        #expect(queued[1].properties == ["plan": "gold"])
        #expect(queued[2].timestamp == Date(timeIntervalSince1970: 5))
        #expect(client.customerIds == jane, "identify's hard ids merged into the configured customer")
        await world.harness.advance()
        #expect(world.customers.load() == jane, "and saved")
        #expect(await client.countQueuedEvents() == 4)
    }

    @Test func e1_the1001stCallBeforeConfigureIsRefusedWithAnErrorLine() async throws {
        let world = RecordingStoresHarness()
        let exponea = Exponea(client: world.client)
        for index in 0..<1_000 {
            exponea.trackEvent(properties: ["index": .int(index)], timestamp: nil, eventType: "e")
        }
        #expect(world.harness.logger.entries.allSatisfy { $0.level != .error })
        exponea.trackEvent(properties: ["index": 1_000], timestamp: nil, eventType: "e")
        let errors = world.harness.logger.entries.filter { $0.level == .error }.map(\.message)
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("Tracking: trackEvent failed:") == true)
        #expect(errors.first?.contains("1000 calls made before configure wait already") == true, "\(errors)")
        let refused = #expect(throws: SegmentsError.self) {
            try world.client.identifyCustomer(customerIds: ["registered": "late"], properties: [:], timestamp: nil)
        }
        #expect(refused?.code == .notConfigured)

        try world.configure()
        #expect(world.queued.count == 1_000)
        #expect(world.queued.map { $0.properties["index"] } == (0..<1_000).map { .int($0) })
        #expect(world.client.customerIds == Self.stored, "the refused identify merged nothing")
    }

    @Test func e1_a1_anonymizeBeforeConfigureDoesNotMergeEarlierIdsIntoTheNewCustomer() async throws {
        let world = RecordingStoresHarness(stored: Self.stored)
        let client = world.client
        try client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "a")
        client.anonymize()
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "b")
        try world.configure()

        let jane = CustomerIds(["cookie": "stored", "registered": "jane"])
        let anonymous = try #require(client.customerIds)
        #expect(anonymous.hardIds.isEmpty, "the new customer has no hard ids: \(anonymous)")
        #expect(anonymous.cookie != "stored")
        #expect(world.queued.map(\.kind) == [.customerUpdate, .event(type: "a"), .event(type: "b")])
        #expect(world.queued.map(\.customerIds) == [jane, jane, anonymous])
        await world.harness.advance()
        #expect(world.customers.load() == anonymous)
    }

    @Test func e1_a3_stopBeforeConfigureDropsTheWaitingCallsWithAWarningAndLaterOnesAreRefused() async throws {
        let world = RecordingStoresHarness()
        let client = world.client
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "forgotten")
        try client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        client.stop()
        #expect(world.harness.logger.entries.contains {
            $0.level == .warning && $0.message == "Tracking: Stopped with 2 tracking call(s) waiting for configure; they were dropped"
        })
        let refused = #expect(throws: SegmentsError.self) {
            try client.trackEvent(properties: [:], timestamp: nil, eventType: "refused")
        }
        #expect(refused?.code == .notConfigured)
        try world.configure()
        #expect(world.queued.isEmpty)
        #expect(client.customerIds == Self.stored)
    }

    @Test func e1_t4_anIdentifyBeforeConfigureRequestsAReloadForTheMergedCustomer() async throws {
        let world = RecordingStoresHarness(stored: Self.stored)
        let client = world.client
        _ = client.addListener(category: .discovery(), includeFirstLoad: false) { _ in }
        try client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        try world.configure()
        await world.harness.advance(by: 10)
        let jane = CustomerIds(["cookie": "stored", "registered": "jane"])
        #expect(world.harness.repository.calls.last == .fetch(jane), "\(world.harness.repository.calls)")
    }

    @Test func e1_a4_callsMadeWhileConfigureQueuesTheWaitingOnesComeAfterThemInTheirOrder() async throws {
        let world = RecordingStoresHarness(stored: Self.stored)
        let client = world.client
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "a")
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "b")
        // While configure writes the first waiting item, the app (another thread, here the store's
        // seam) tracks, identifies, anonymizes and tracks again: each waits behind the waiting items.
        let once = Locked(false)
        world.events.onAppend.withLock {
            $0 = { _ in
                guard once.withLock({ let first = !$0; $0 = true; return first }) else { return }
                try? client.trackEvent(properties: [:], timestamp: nil, eventType: "during")
                try? client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
                client.anonymize()
                try? client.trackEvent(properties: [:], timestamp: nil, eventType: "last")
            }
        }
        try world.configure()
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "after")

        let jane = CustomerIds(["cookie": "stored", "registered": "jane"])
        let anonymous = try #require(client.customerIds)
        #expect(anonymous.hardIds.isEmpty && anonymous.cookie != "stored")
        #expect(world.queued.map(\.kind) == [
            .event(type: "a"), .event(type: "b"), .event(type: "during"), .customerUpdate, .event(type: "last"), .event(type: "after"),
        ])
        #expect(world.queued.map(\.customerIds) == [Self.stored, Self.stored, Self.stored, jane, anonymous, anonymous])
    }

    @Test func e1_e4_aStopRacingConfigureLosesNoneOfTheWaitingCalls() async throws {
        let world = RecordingStoresHarness(stored: Self.stored)
        let client = world.client
        for type in ["a", "b", "c"] { try client.trackEvent(properties: [:], timestamp: nil, eventType: type) }
        // A stop on another thread (here the store's seam) lands while configure writes the first one.
        let once = Locked(false)
        world.events.onAppend.withLock {
            $0 = { _ in
                guard once.withLock({ let first = !$0; $0 = true; return first }) else { return }
                client.stop()
            }
        }
        try world.configure()
        #expect(!client.isConfigured)
        #expect(world.queued.map(\.kind) == ["a", "b", "c"].map { .event(type: $0) }, "all on disk for the next start")
        try world.configure()
        #expect(await client.countQueuedEvents() == 3)
    }
}
