import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// No lock of the engine is held while it calls code it does not own (see Behaviour D7, R1): every port
/// below calls back into the engine from inside its own call. With a lock held across the call,
/// the re-entry would deadlock (the suite's time limit turns that into a failure).
@Suite(Hang.timeLimit(minutes: 1)) struct LockDisciplineTests {
    /// Runs `body` with the engine, once it exists.
    final class Reentry: Sendable {
        private let engine = Locked<SegmentationEngine?>(nil)
        let calls = Locked(0)

        func attach(_ engine: SegmentationEngine) { self.engine.withLock { $0 = engine } }

        /// Calls into the engine the way an app's code might.
        func callBack() {
            guard let engine = engine.value else { return }
            _ = engine.listenerCount
            _ = engine.customer
            _ = engine.isConfigured
            engine.getSegments(category: .content()) { _ in }
            calls.withLock { $0 += 1 }
        }
    }

    final class ReenteringCustomerStore: CustomerStore {
        let inner = RecordingCustomerStore()
        let reentry: Reentry
        init(_ reentry: Reentry) { self.reentry = reentry }
        func load() -> CustomerIds? { inner.load() }
        func save(_ customer: CustomerIds) throws {
            reentry.callBack()
            try inner.save(customer)
        }
    }

    final class ReenteringBaselineStore: SegmentBaselineStore {
        let inner = RecordingSegmentBaselineStore()
        let reentry: Reentry
        init(_ reentry: Reentry) { self.reentry = reentry }
        func load() -> SegmentBaseline { inner.load() }
        func save(_ baseline: SegmentBaseline) throws {
            reentry.callBack()
            try inner.save(baseline)
        }
    }

    final class ReenteringLogger: SegmentsLogger {
        let reentry: Reentry
        let lines = Locked<[String]>([])
        init(_ reentry: Reentry) { self.reentry = reentry }
        var logLevel: LogLevel { .verbose }
        func log(_ level: LogLevel, _ message: String) {
            lines.withLock { $0.append(message) }
            reentry.callBack()
        }
    }

    final class ReenteringScheduler: SegmentsScheduler {
        let inner: TestScheduler
        let reentry: Reentry
        init(_ inner: TestScheduler, _ reentry: Reentry) {
            self.inner = inner
            self.reentry = reentry
        }
        func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork {
            reentry.callBack()
            return inner.schedule(after: delay, work)
        }
        func sleep(for delay: TimeInterval) async { await inner.sleep(for: delay) }
    }

    final class ReenteringRepository: SegmentRepository {
        let inner: RecordingSegmentRepository
        let reentry: Reentry
        init(_ inner: RecordingSegmentRepository, _ reentry: Reentry) {
            self.inner = inner
            self.reentry = reentry
        }
        func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory {
            reentry.callBack()
            return try await inner.fetchSegments(for: customer)
        }
        func linkCustomerIds(_ customer: CustomerIds) async throws {
            reentry.callBack()
            try await inner.linkCustomerIds(customer)
        }
    }

    @Test func d7_r1_storesLoggersSchedulersRepositoriesAndHandlersMayCallBackIntoTheEngine() async {
        // On its own task, so a deadlock fails this test instead of hanging the run.
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await Self.scenario()
            done.signal()
        }
        #expect(await signalled(done, within: 60))
    }

    static func scenario() async {
        let reentry = Reentry()
        let scheduler = TestScheduler()
        let delivery = DispatchQueue(label: "lock-discipline.delivery")
        let storage = DispatchQueue(label: "lock-discipline.storage")
        let logger = ReenteringLogger(reentry)
        let engine = SegmentationEngine(
            dependencies: .init(client: ClientPorts(runtime: SegmentsRuntime(scheduler: ReenteringScheduler(scheduler, reentry), clock: scheduler, logger: logger, deliveryQueue: delivery, random: { 0.5 }), storageQueue: storage)))
        reentry.attach(engine)
        let repository = RecordingSegmentRepository(scheduler: scheduler)
        repository.answer([.discovery(): [Fixture.s1]])
        let customers = ReenteringCustomerStore(reentry)
        let baselines = ReenteringBaselineStore(reentry)

        let told = Recorder<[Segment]>()
        engine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: true) { segments in
            told.record(segments)
            reentry.callBack()  // a handler calling the SDK
            engine.addListener(SegmentListener(category: .merchandising(), includeFirstLoad: false) { _ in })
        })
        engine.configure(
            .init(repository: ReenteringRepository(repository, reentry), customerStore: customers, baselineStore: baselines))
        await drained(storage)  // the baseline loads on the storage queue (see Behaviour R3)
        engine.identify(hardIds: ["registered": "jane"])
        await scheduler.advance(by: 5)
        await drained(storage)
        await drained(delivery)
        engine.anonymize()
        await scheduler.advance(by: 5)
        engine.stop()
        await drained(storage)
        await drained(delivery)

        #expect(told.all.first == [Fixture.s1])
        #expect(customers.inner.saveCount >= 2)  // new cookie, identify, anonymize
        #expect(baselines.inner.saveCount >= 2)
        #expect(repository.fetches.count >= 1)
        #expect(reentry.calls.value >= 10)
    }
}
