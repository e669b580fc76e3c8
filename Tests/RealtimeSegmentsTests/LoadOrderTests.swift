import Foundation
import RealtimeSegments
import SegmentsDomain
import SegmentsTesting
import Testing

/// R3, cold start: `configure` queues the baseline's load on the storage queue before the event
/// queue's, so the first cached read waits for the small baseline, not for a long journal.
@Suite(Hang.timeLimit(minutes: 2)) struct LoadOrderTests {
    private final class Loads: Sendable {
        let order = Locked<[String]>([])
    }

    private struct Baseline: SegmentBaselineStore {
        let loads: Loads
        func load() -> SegmentBaseline { loads.order.withLock { $0.append("baseline") }; return .empty }
        func save(_ baseline: SegmentBaseline) throws {}
    }

    private struct Events: EventQueueStore {
        let loads: Loads
        func load() -> [TrackedEvent] { loads.order.withLock { $0.append("events") }; return [] }
        func append(_ event: TrackedEvent) throws {}
        func sync() throws {}
        func update(_ event: TrackedEvent) throws {}
        func remove(id: TrackedEvent.ID) throws {}
    }

    @Test func r3_theBaselineLoadsBeforeTheEventQueue() throws {
        let loads = Loads()
        let storageQueue = DispatchQueue(label: "r3.storage")
        let scheduler = TestScheduler()
        let client = SegmentsClient(
            options: .init(
                runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: RecordingLogger()),
                storage: .custom(customer: InMemoryCustomerStore(), baseline: Baseline(loads: loads), events: Events(loads: loads)),
                storageQueue: storageQueue))
        try client.configure(.init(
            backend: .custom(id: "r3", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()),
            flushingMode: .manual))
        drained(storageQueue)
        #expect(loads.order.value == ["baseline", "events"])
        client.stop()
        drained(storageQueue)
    }
}
