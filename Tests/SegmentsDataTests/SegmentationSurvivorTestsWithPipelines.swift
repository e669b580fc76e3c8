import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// An eraser that records the queued items it is asked to delete (see Behaviour A3).
final class RecordingEraser: StoredDataEraser {
    private let calls = Locked<[[TrackedEvent.ID]]>([])
    var all: [[TrackedEvent.ID]] { calls.value }
    func erase(queuedItems: [TrackedEvent.ID]) { calls.withLock { $0.append(queuedItems) } }
}

/// A redo that finds `items` in the queue file (see Behaviour P8).
struct QueueFileRedo: RefusedStorageRedo {
    var items: [TrackedEvent]
    func redo() -> RefusedStorageRedone { RefusedStorageRedone(customer: .notRead, items: items) }
}

/// A queue store that runs a hook once, right after its next append (a call racing the write).
final class HookedEventQueueStore: EventQueueStore {
    private let inner = RecordingEventQueueStore()
    private let hook = Locked<(@Sendable () -> Void)?>(nil)
    func afterNextAppend(_ body: @escaping @Sendable () -> Void) { hook.withLock { $0 = body } }
    func load() -> [TrackedEvent] { inner.load() }
    func append(_ event: TrackedEvent) throws {
        try inner.append(event)
        let body = hook.withLock { hook in
            defer { hook = nil }
            return hook
        }
        body?()
    }
    func update(_ event: TrackedEvent) throws { try inner.update(event) }
    func remove(id: TrackedEvent.ID) throws { try inner.remove(id: id) }
}

/// The machine and engine with tracking pipelines: an ended pipeline's settle (E4), the queue
/// file's items found once protected data is available (P8), and a deletion that a configure on
/// the same storage queues while the last flush still runs (A3).
@Suite(Hang.timeLimit(minutes: 1)) struct SegmentationSurvivorTestsWithPipelines {
    typealias Machine = SegmentationStateMachine
    typealias Fixtures = SegmentationStateMachineTests

    static func pipeline(
        scheduler: TestScheduler = TestScheduler(), storageQueue: DispatchQueue = DispatchQueue(label: "test.pipeline.storage"),
        store: any EventQueueStore = RecordingEventQueueStore(), uploader: RecordingEventUploader = RecordingEventUploader(),
        mode: FlushingMode = .manual
    ) -> TrackingPipeline {
        TrackingPipeline(
            dependencies: .init(client: ClientPorts(runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler), storageQueue: storageQueue)),
            store: store, uploader: uploader, mode: mode, loadsAtOnce: false, onItemUploaded: {})
    }

    /// The pipelines the `startTracking` of `steps` waits for.
    static func waitsFor(_ steps: Machine.Actions) -> [ObjectIdentifier]? {
        steps.compactMap { step -> [ObjectIdentifier]? in
            if case .perform(.lifecycle(.startTracking(_, let after))) = step { after.map(ObjectIdentifier.init) } else { nil }
        }.first
    }

    @Test func e4_aConfigurationOnTheSameStorageWaitsForAnEndedPipelineOnlyUntilItIsSettled() {
        let first = Self.pipeline(), second = Self.pipeline(), third = Self.pipeline()
        var machine = Machine(timings: SegmentationTimings())
        Fixtures.configure(&machine, Fixtures.ports(tracking: first))
        _ = machine.stop()
        var (_, steps) = machine.configure(
            Fixtures.ports(tracking: second), namedMode: nil, stored: .some(Fixtures.customer), newCookie: nil, at: Fixtures.at(1))
        #expect(Self.waitsFor(steps) == [ObjectIdentifier(first)])  // not settled yet
        _ = machine.stop()
        _ = machine.trackingSettled(ObjectIdentifier(first))
        _ = machine.trackingSettled(ObjectIdentifier(second))
        (_, steps) = machine.configure(
            Fixtures.ports(tracking: third), namedMode: nil, stored: .some(Fixtures.customer), newCookie: nil, at: Fixtures.at(2))
        #expect(Self.waitsFor(steps) == [])
    }

    @Test func p8_theQueueFilesItemsFoundOnceProtectedDataIsAvailableAreQueued() {
        let harness = EngineHarness()
        let pipeline = Self.pipeline(scheduler: harness.scheduler, storageQueue: harness.storageQueue)
        let found = TrackedEvent(kind: .event(type: "refused"), customerIds: Fixture.customerA, properties: [:], timestamp: Date())
        harness.engine.flushingMode = .manual
        harness.engine.configure(
            SegmentationEngine.Ports(
                repository: harness.repository, customerStore: harness.customerStore, baselineStore: harness.baselineStore,
                tracking: pipeline, storageID: "folder-a", refusedStorageRedo: QueueFileRedo(items: [found])))
        harness.drainDeliveries()
        #expect(pipeline.queuedCount == 0)
        harness.engine.protectedDataBecameAvailable()
        harness.drainDeliveries()
        #expect(pipeline.queuedCount == 1)
    }

    @Test func a3_aDeletionQueuedByAConfigureOnTheSameStorageCutsTheLastFlushShortAndDeletesItsItems() async throws {
        let harness = EngineHarness()
        let uploader = RecordingEventUploader(scheduler: harness.scheduler)
        uploader.delay = 10  // uploads wait for virtual time, which does not move here
        let store = RecordingEventQueueStore()
        let eraser = RecordingEraser()
        let first = Self.pipeline(scheduler: harness.scheduler, storageQueue: harness.storageQueue, store: store, uploader: uploader)
        func ports(_ pipeline: TrackingPipeline) -> SegmentationEngine.Ports {
            SegmentationEngine.Ports(
                repository: harness.repository, customerStore: harness.customerStore, baselineStore: harness.baselineStore,
                tracking: pipeline, storageID: "folder-a", eraser: eraser)
        }
        harness.engine.flushingMode = .manual
        harness.engine.configure(ports(first))
        harness.drainDeliveries()
        let written = try first.track(eventType: "e", properties: [:], timestamp: nil, customer: Fixture.customerA)
        harness.engine.stopErasing()  // its last flush's upload waits
        harness.drainDeliveries()
        #expect(eraser.all.isEmpty)
        harness.engine.configure(ports(Self.pipeline(scheduler: harness.scheduler, storageQueue: harness.storageQueue, store: store)))
        harness.drainDeliveries()
        #expect(eraser.all == [[written.event.id]])
        // The cut-short upload still waits on virtual time: run it, so the scheduler is not left
        // with work when the test ends.
        await harness.scheduler.runUntilIdle()
    }

    @Test func a4_e1_aCallMadeBeforeConfigureWrittenAsAReconfigureOnTheSameStorageStopsThePipelineIsAdoptedByItsSuccessor() {
        let harness = EngineHarness()
        let store = HookedEventQueueStore()
        let first = Self.pipeline(scheduler: harness.scheduler, storageQueue: harness.storageQueue, store: store)
        // The successor's own store: it gets the item only by adopting it.
        let second = Self.pipeline(scheduler: harness.scheduler, storageQueue: harness.storageQueue)
        func ports(_ pipeline: TrackingPipeline) -> SegmentationEngine.Ports {
            SegmentationEngine.Ports(
                repository: harness.repository, customerStore: harness.customerStore, baselineStore: harness.baselineStore,
                tracking: pipeline, storageID: "folder-a")
        }
        harness.engine.flushingMode = .manual
        #expect(harness.engine.hold(HeldCall(.event(type: "early"))) == .held)
        let engine = harness.engine
        let successorPorts = ports(second)
        store.afterNextAppend { engine.configure(successorPorts) }
        engine.configure(ports(first))
        harness.drainDeliveries()
        #expect(second.queuedCount == 1)
    }
}
