import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// Collects values handed to a callback from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])
    func record(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.value }
    var count: Int { all.count }
    var last: Value? { all.last }
}

/// One engine on virtual time with recording doubles for every port.
final class EngineHarness: Sendable {
    let scheduler = TestScheduler()
    let logger = RecordingLogger()
    let deliveryQueue = DispatchQueue(label: "test.delivery")
    let storageQueue = DispatchQueue(label: "test.storage")
    let repository: RecordingSegmentRepository
    let customerStore: RecordingCustomerStore
    let baselineStore: RecordingSegmentBaselineStore
    let engine: SegmentationEngine
    private let cookieCounter = Locked(0)

    init(
        customer: CustomerIds? = CustomerIds(cookie: "cookie-a"), baseline: SegmentBaseline = .empty,
        timings: SegmentationTimings = SegmentationTimings()
    ) {
        repository = RecordingSegmentRepository(scheduler: scheduler)
        customerStore = RecordingCustomerStore(customer)
        baselineStore = RecordingSegmentBaselineStore(baseline)
        let counter = cookieCounter
        engine = SegmentationEngine(
            dependencies: .init(client: ClientPorts(runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: logger, deliveryQueue: deliveryQueue, random: { 0.5 }), storageQueue: storageQueue), timings: timings, makeCookie: {
                    counter.withLock { count in
                        count += 1
                        return "new-cookie-\(count)"
                    }
                }))
    }

    /// This harness's repository and customer store over another baseline store (a file store,
    /// for restart tests).
    func ports(baselineStore: any SegmentBaselineStore) -> SegmentationEngine.Ports {
        .init(repository: repository, customerStore: customerStore, baselineStore: baselineStore)
    }

    /// This harness's repository and stores.
    var backend: SegmentationEngine.Ports { ports(baselineStore: baselineStore) }

    /// Configures, and waits until the baseline has loaded on the storage queue (see Behaviour R3).
    func configure() {
        engine.configure(backend)
        drained(storageQueue)
    }

    /// Re-configures with another project: its own repository and stores, customer `cookie`.
    @discardableResult
    func configureOtherProject(
        cookie: String = "cookie-b", answering segments: SegmentsByCategory = [:]
    ) -> RecordingSegmentRepository {
        let repository = RecordingSegmentRepository(scheduler: scheduler)
        repository.answer(segments)
        engine.configure(
            .init(
                repository: repository, customerStore: RecordingCustomerStore(CustomerIds(cookie: cookie)),
                baselineStore: RecordingSegmentBaselineStore()))
        return repository
    }

    /// Advances virtual time, then waits until every queued delivery has run.
    func advance(by seconds: TimeInterval = 0) async {
        await drained(storageQueue)  // loads the engine asked for come in before time moves (see Behaviour R3)
        await scheduler.advance(by: seconds)
        drainDeliveries()
    }

    /// Waits until every queued delivery and every queued save has run.
    func drainDeliveries() {
        drained(storageQueue)
        drained(deliveryQueue)
    }

    /// Registers a listener that records every list it is told.
    @discardableResult
    func listen(
        _ category: SegmentCategory = .discovery(), includeFirstLoad: Bool = false, group: UUID? = nil
    ) -> (Recorder<[Segment]>, ListenerToken) {
        let recorder = Recorder<[Segment]>()
        let token = engine.addListener(
            SegmentListener(category: category, includeFirstLoad: includeFirstLoad) { recorder.record($0) },
            group: group)
        return (recorder, token)
    }

    /// Starts a one-shot read that records its answers.
    func read(_ category: SegmentCategory = .discovery(), force: Bool = false) -> Recorder<Result<[Segment], SegmentsError>> {
        let recorder = Recorder<Result<[Segment], SegmentsError>>()
        engine.getSegments(force: force, category: category) { recorder.record($0) }
        return recorder
    }

    var fetchCount: Int { repository.fetches.count }
}

/// Fixtures.
enum Fixture {
    static let s1 = Segment(id: "s1", segmentationId: "g1")
    static let s2 = Segment(id: "s2", segmentationId: "g1")
    static let s3 = Segment(id: "s3", segmentationId: "g2", attributes: ["name": "VIP"])
    static let customerA = CustomerIds(cookie: "cookie-a")
    static let transient = SegmentsError(.httpStatus, "server error", httpStatus: 503)
    static let permanent = SegmentsError(.httpStatus, "not found", httpStatus: 404)
}

extension Result where Failure == SegmentsError {
    var value: Success? { try? get() }
    var error: SegmentsError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Waits for `semaphore` on a thread of its own — not on a cooperative or global-queue thread,
/// which other tests' tasks need: `true` when it was signalled within `seconds` (times `Hang.timeScale`) (generous: only a
/// hang takes that long).
func signalled(_ semaphore: DispatchSemaphore, within seconds: TimeInterval = 30) async -> Bool {
    await onDedicatedThread { semaphore.wait(timeout: .now() + Hang.scaled(seconds)) == .success }
}
