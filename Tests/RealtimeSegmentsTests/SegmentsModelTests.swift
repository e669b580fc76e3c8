import Foundation
import Observation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// Watches one category of a model as SwiftUI does: tracked again after every change, so it sees
/// each one, and records an issue for a change announced off the main actor. A change is announced
/// before it is made, so each announcement records the list the category held until then;
/// ``values`` adds the current list to those and drops the initial `[]`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor private final class Watch {
    let model: SegmentsModel
    let category: SegmentCategory
    private var before: [[Segment]] = []

    init(_ model: SegmentsModel, _ category: SegmentCategory) {
        self.model = model
        self.category = category
        track()
    }

    /// How many changes were announced.
    var changes: Int { before.count }

    /// Every list the category held after the initial `[]`, in order.
    var values: [[Segment]] {
        changes == 0 ? [] : Array((before + [model.segments(for: category)]).dropFirst())
    }

    private func track() {
        withObservationTracking {
            _ = model.segments(for: category)
        } onChange: { [weak self, category] in
            guard MainQueue.isCurrent else {
                Issue.record("a change of \(category.name) was announced off the main actor")
                return
            }
            MainActor.assumeIsolated { self?.changed() }
        }
    }

    private func changed() {
        before.append(model.segments(for: category))
        track()
    }
}

/// Waits (bounded) until what was queued on the main queue so far has run: the model's updates
/// queued by handlers that already ran.
private func mainQueueDrained() async -> Bool {
    let reached = LockedValue(false)
    DispatchQueue.main.async { reached.withLock { $0 = true } }
    return await eventually(timeout: 30) { reached.value }
}

/// Drives the harness without draining its delivery queue: with the queue suspended, lists pile up on it.
private func advanceHoldingDeliveries(_ harness: ClientHarness, by seconds: TimeInterval = 0) async {
    await drained(harness.storageQueue)
    await harness.scheduler.advance(by: seconds)
}

@Suite(Hang.timeLimit(minutes: 2)) struct SegmentsModelTests {
    let s1 = Fixture.s1
    let s2 = Fixture.s2

    /// Tracks an event and lets the upload and the reload after it run (see Behaviour T3).
    private func reloadAfterUpload(_ harness: ClientHarness) async throws {
        try harness.client.trackEvent(properties: ["sku": "A-1"], timestamp: nil, eventType: "view_item")
        await harness.advance()
        await harness.advance(by: 5)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func m5_d5_d6_aCategoryChangesExactlyWhenAFirstLoadListenerOfItIsTold() async throws {
        let harness = ClientHarness()
        try harness.configure()
        let model = SegmentsModel(categories: [.discovery(), .content()], client: harness.client)
        let toldDiscovery = Recorder<[Segment]>()
        let toldContent = Recorder<[Segment]>()
        harness.client.addListener(category: .discovery(), includeFirstLoad: true) { toldDiscovery.record($0) }
        harness.client.addListener(category: .content(), includeFirstLoad: true) { toldContent.record($0) }
        let discovery = Watch(model, .discovery())
        let content = Watch(model, .content())

        // The first load: discovery has segments, content has none and is told [] (D6).
        harness.repository.answer([.discovery(): [s1]])
        await harness.advance(by: 5)
        #expect(await mainQueueDrained())
        #expect(toldDiscovery.all == [[s1]] && toldContent.all == [[]])
        #expect(discovery.values == toldDiscovery.all)
        #expect(content.values == toldContent.all)
        #expect(model.segments(for: .discovery()) == [s1])

        // A change of discovery only.
        harness.repository.answer([.discovery(): [s1, s2]])
        try await reloadAfterUpload(harness)
        #expect(await mainQueueDrained())
        #expect(toldDiscovery.all == [[s1], [s1, s2]])
        #expect(discovery.values == toldDiscovery.all)
        #expect(content.changes == 1)  // content was not told, so it did not change

        // An unchanged reload tells nobody: nothing changes (D5).
        let fetches = harness.repository.fetches.count
        try await reloadAfterUpload(harness)
        #expect(await mainQueueDrained())
        #expect(harness.repository.fetches.count == fetches + 1)
        #expect(toldDiscovery.count == 2 && toldContent.count == 1)
        #expect(discovery.changes == 2 && content.changes == 1)

        // A change of content only: discovery's observers are not told.
        harness.repository.answer([.discovery(): [s1, s2], .content(): [s2]])
        try await reloadAfterUpload(harness)
        #expect(await mainQueueDrained())
        #expect(toldContent.all == [[], [s2]])
        #expect(content.values == toldContent.all)
        #expect(discovery.changes == 2)
        #expect(discovery.values == toldDiscovery.all)
        #expect(model.segments(for: .merchandising()) == [])  // not watched
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func m5_d7_listsPiledUpOnTheDeliveryQueueReachTheMainActorInOrder() async throws {
        let harness = ClientHarness()
        try harness.configure()
        let model = SegmentsModel(categories: [.discovery()], client: harness.client)
        let told = Recorder<[Segment]>()
        harness.client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        let discovery = Watch(model, .discovery())

        // Three lists wait on the suspended delivery queue: the first load and two changes.
        harness.deliveryQueue.suspend()
        harness.repository.answer([.discovery(): [s1]])
        await advanceHoldingDeliveries(harness, by: 5)
        for answer in [[s1, s2], [s2]] {
            harness.repository.answer([.discovery(): answer])
            try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
            await advanceHoldingDeliveries(harness)
            await advanceHoldingDeliveries(harness, by: 5)
        }
        // The handlers run while the main thread is held here: every update waits on the main queue.
        harness.deliveryQueue.resume()
        #expect(drained(harness.deliveryQueue))
        #expect(told.all == [[s1], [s1, s2], [s2]])
        #expect(discovery.changes == 0)

        #expect(await mainQueueDrained())
        #expect(discovery.values == told.all)  // each on the main thread (Watch checks), in order
        #expect(model.segments(for: .discovery()) == [s2])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func m5_d8_onTheMainDeliveryQueueAListIsSetBeforeTheNextListenerIsCalled() async throws {
        let scheduler = TestScheduler()
        let storageQueue = DispatchQueue(label: "model-tests.storage")
        let repository = RecordingSegmentRepository(scheduler: scheduler)
        let client = SegmentsClient(options: .init(
            runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: RecordingLogger(), deliveryQueue: .main),
            storage: .inMemory, storageQueue: storageQueue))
        try client.configure(.init(backend: .custom(id: "test", repository: repository, uploader: RecordingEventUploader())))
        let model = SegmentsModel(categories: [.discovery()], client: client)
        // Registered after the model, so called after it on the same delivery: the model already
        // holds the list when the main delivery queue needs no second hop.
        let shownWhenTold = Recorder<[Segment]>()
        client.addListener(category: .discovery(), includeFirstLoad: true) { [model] _ in
            MainActor.assumeIsolated { shownWhenTold.record(model.segments(for: .discovery())) }
        }
        let discovery = Watch(model, .discovery())

        repository.answer([.discovery(): [s1]])
        await drained(storageQueue)
        await scheduler.advance(by: 5)
        #expect(await mainQueueDrained())
        #expect(shownWhenTold.all == [[s1]])
        #expect(discovery.values == [[s1]])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func m5_d7_aReleasedModelRemovesItsListenersAndAnUpdateStillQueuedFindsNothing() async throws {
        let harness = ClientHarness()
        try harness.configure()
        let told = Recorder<[Segment]>()
        harness.client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        let listeners = harness.client.listenerCount
        var model: SegmentsModel? = SegmentsModel(categories: [.discovery(), .content()], client: harness.client)
        let released = { [weak model] in model == nil }
        #expect(harness.client.listenerCount == listeners + 2)
        let changed = LockedValue(false)  // nothing reaches the model before it goes, below
        withObservationTracking {
            _ = model?.segments(for: .discovery())
        } onChange: {
            changed.withLock { $0 = true }
        }

        // The first load's updates wait on the main queue, which this test holds.
        harness.deliveryQueue.suspend()
        harness.repository.answer([.discovery(): [s1]])
        await advanceHoldingDeliveries(harness, by: 5)
        harness.deliveryQueue.resume()
        #expect(drained(harness.deliveryQueue))
        #expect(told.all == [[s1]])

        model = nil
        #expect(released())  // neither its listeners nor its queued updates keep it
        #expect(harness.client.listenerCount == listeners)
        #expect(await mainQueueDrained())  // the queued updates run, and find nothing
        #expect(!changed.value)

        harness.repository.answer([.discovery(): [s2]])
        try await reloadAfterUpload(harness)
        #expect(told.all == [[s1], [s2]])  // the client goes on without it
        #expect(harness.client.listenerCount == listeners)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func m5_d6_aModelBuiltBeforeConfigureGetsTheFirstLoadAfterIt() async throws {
        let harness = ClientHarness()
        let model = SegmentsModel(categories: [.discovery(), .content(), .discovery()], exponea: Exponea(client: harness.client))
        #expect(model.categories == [.discovery(), .content()])
        #expect(harness.client.listenerCount == 2)
        let discovery = Watch(model, .discovery())
        let content = Watch(model, .content())
        await harness.advance(by: 60)
        #expect(await mainQueueDrained())
        #expect(harness.repository.fetches.isEmpty && discovery.changes == 0)

        harness.repository.answer([.discovery(): [s1, s2]])
        try harness.configure()
        await drained(harness.storageQueue)                    // configure loads the baseline, then asks
        #expect(harness.scheduler.pendingDelays == [5])  // the initial reload (T2), debounced
        await harness.advance(by: 5)
        #expect(await mainQueueDrained())
        #expect(discovery.values == [[s1, s2]])
        #expect(content.values == [[]])  // told once, even though it is still empty (D6)
    }
}
