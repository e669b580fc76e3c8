import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// Records the two steps of a storage hand-over, in the order they came.
final class RecordingStorageHandOver: StorageHandOver {
    private let recorded = Locked<[String]>([])

    /// `release(<cookie>)` and `writesQueued`, in order.
    var steps: [String] { recorded.value }

    func release(endingWith customer: CustomerIds) {
        recorded.withLock { $0.append("release(\(customer.cookie ?? "-"))") }
    }

    func writesQueued() {
        recorded.withLock { $0.append("writesQueued") }
    }
}

/// Ending a configuration hands its storage over (its folder's owner lock, with the customer it
/// ended with) exactly when the storage changes, and frees it before the ending call returns (see
/// Behaviour P5, A4, R1).
@Suite(Hang.timeLimit(minutes: 1)) struct StorageHandOverStepTests {
    typealias Base = SegmentationStateMachineTests

    /// The steps of re-configuring `machine` (by default a configured one) with `storage`.
    private func reconfigure(
        _ machine: SegmentationStateMachine = Base.configured(), storage: String?
    ) -> (SegmentationStateMachine.Ending, Steps<SegmentationStateMachine.Action>) {
        var machine = machine
        let ports = Base.ports(storage: storage)
        var (outcome, steps) = machine.configure(ports, namedMode: nil, stored: nil, newCookie: nil, at: Base.at(1))
        if outcome != .configured {  // the new storage's customer is read first
            (outcome, steps) = machine.configure(ports, namedMode: nil, stored: .some(Base.customer), newCookie: "new", at: Base.at(1))
        }
        guard case .configured(let ending) = outcome else {
            Issue.record("not configured: \(outcome)")
            return (SegmentationStateMachine.Ending(), steps)
        }
        return (ending, steps)
    }

    /// Stopping the pipeline and releasing the storage, which the transition returns for the call
    /// to carry out before it returns, and the mark of the storage's writes, in its place among
    /// the steps.
    private func handOverSteps(_ transition: (SegmentationStateMachine.Ending, Steps<SegmentationStateMachine.Action>)) -> [String] {
        let (ending, steps) = transition
        var described: [String] = []
        if ending.tracking != nil { described.append("stopTracking before returning") }
        if let storage = ending.storage { described.append("release(\(storage.lastCustomer.cookie ?? "-")) before returning") }
        return described
            + steps.compactMap { step in
                if case .perform(.lifecycle(.storageWritesQueued)) = step { "writesQueued" } else { nil }
            }
    }

    @Test func p5_a4_anotherFolderEndsTheOldConfiguration() {
        #expect(handOverSteps(reconfigure(storage: "folder-b")) == ["release(cookie-a) before returning", "writesQueued"])
    }

    @Test func p5_a4_leavingAFolderForMemoryEndsTheOldConfiguration() {
        #expect(handOverSteps(reconfigure(storage: nil)) == ["release(cookie-a) before returning", "writesQueued"])
    }

    @Test func p5_a4_theSameFolderIsKept() {
        #expect(handOverSteps(reconfigure(storage: "folder-a")).isEmpty)
    }

    @Test func p5_a3_stopEndsTheConfiguration() {
        var machine = Base.configured()
        #expect(handOverSteps(machine.stop()) == ["release(cookie-a) before returning", "writesQueued"])
    }

    /// No upload of the old pipeline starts once the folder may belong to another client: the
    /// pipeline is stopped first, by the call itself.
    @Test func p5_a3_a4_stopStopsTheTrackingPipelineBeforeItFreesTheStorage() {
        let tracking = TrackingPipelineTests.Harness()
        var machine = SegmentationStateMachine(timings: SegmentationTimings())
        Base.configure(&machine, Base.ports(tracking: tracking.pipeline))
        #expect(
            handOverSteps(machine.stop())
                == ["stopTracking before returning", "release(cookie-a) before returning", "writesQueued"])
    }

    @Test func p5_a4_anotherFolderStopsTheOldPipelineBeforeItFreesTheOldStorage() {
        let tracking = TrackingPipelineTests.Harness()
        var machine = SegmentationStateMachine(timings: SegmentationTimings())
        Base.configure(&machine, Base.ports(tracking: tracking.pipeline))
        #expect(
            handOverSteps(reconfigure(machine, storage: "folder-b"))
                == ["stopTracking before returning", "release(cookie-a) before returning", "writesQueued"])
    }

    /// A scheduler whose next `schedule` call, once armed, blocks until opened: the thread that
    /// makes it is the engine's draining thread, stuck in a port the app may own.
    final class GateScheduler: SegmentsScheduler {
        let inner = TestScheduler()
        let entered = DispatchSemaphore(value: 0)
        let open = DispatchSemaphore(value: 0)
        private let armed = Locked(false)

        func arm() { armed.withLock { $0 = true } }

        func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork {
            if armed.withLock({ armed in defer { armed = false }; return armed }) {
                entered.signal()
                // Bounded, and longer than the suite's time limit: on a loaded machine the test may
                // take a while to see `entered`, and the gate must stay shut until it opens it.
                _ = open.wait(timeout: .now() + 300)
            }
            return inner.schedule(after: delay, work)
        }

        func sleep(for delay: TimeInterval) async { await inner.sleep(for: delay) }
    }

    /// The flake this guards against: `stop()` returned while another thread was still carrying
    /// out the engine's steps, the release of the folder among them, so a second client configured
    /// on the folder right after was refused as if the first still owned it.
    @Test func p5_stopFreesTheStorageBeforeItReturnsWhileAnotherThreadCarriesOutEarlierSteps() async {
        let gate = GateScheduler()
        let storageQueue = DispatchQueue(label: "test.storage")
        let engine = SegmentationEngine(
            dependencies: .init(
                client: ClientPorts(runtime: SegmentsRuntime(
                    scheduler: gate, clock: gate.inner, logger: RecordingLogger(), deliveryQueue: DispatchQueue(label: "test.delivery"),
                    random: { 0.5 }), storageQueue: storageQueue)))
        let handOver = RecordingStorageHandOver()
        engine.configure(
            .init(
                repository: RecordingSegmentRepository(scheduler: gate.inner), customerStore: RecordingCustomerStore(Fixture.customerA),
                baselineStore: RecordingSegmentBaselineStore(), storageID: "folder-a", handOver: handOver))
        await drained(storageQueue)  // the baseline is in: a listener now starts a reload's debounce timer

        gate.arm()
        // A thread of its own, started here: a task would first wait for the cooperative pool,
        // which the run's other tests may keep busy for longer than the wait below.
        let listened = DispatchSemaphore(value: 0)
        Thread {
            _ = engine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: false) { _ in }, group: nil)
            listened.signal()
        }.start()
        #expect(await signalled(gate.entered), "the listener's reload asked for its timer")
        engine.stop()
        #expect(handOver.steps == ["release(cookie-a)"], "freed before stop() returned; its writes are not marked yet")

        gate.open.signal()
        #expect(await signalled(listened))
        #expect(handOver.steps == ["release(cookie-a)", "writesQueued"], "the draining thread marked them, after its own steps")
    }
}
