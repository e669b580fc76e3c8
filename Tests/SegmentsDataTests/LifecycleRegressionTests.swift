import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

// Regression tests of issue 20 (the lifecycle), engine level. Each failed on the engine before
// the lifecycle rewrite; the test's name starts with the SPEC id it proves.

// MARK: - The one place that builds the engine's ports and dependencies (their initializers change)

/// The ports of one integration.
private func lifecyclePorts(
    repository: any SegmentRepository, customer: any CustomerStore, baseline: any SegmentBaselineStore
) -> SegmentationEngine.Ports {
    .init(repository: repository, customerStore: customer, baselineStore: baseline)
}

/// An engine on `harness`'s runtime except its scheduler (for the timer-thread prune test).
private func lifecycleEngine(_ harness: EngineHarness, scheduler: any SegmentsScheduler) -> SegmentationEngine {
    SegmentationEngine(
        dependencies: .init(
            client: ClientPorts(runtime: SegmentsRuntime(
                scheduler: scheduler, clock: harness.scheduler, logger: harness.logger,
                deliveryQueue: harness.deliveryQueue, random: { 0.5 }), storageQueue: harness.storageQueue)))
}

// MARK: - Helpers

/// Runs `call` — which lets go of the last reference to an app object whose `deinit` calls the SDK
/// — on a thread of its own, waits at most 5 s, and expects it to return (`what` names the call
/// and what it let go of, for the failure) and that `deinit` to have run once (after `settle`).
/// `false` when it deadlocked: the engine's lock is then held forever, so the test must touch
/// nothing more.
private func releasesWithoutDeadlock(
    _ what: String, deinits: LockedValue<Int>, settle: () -> Void = {},
    sourceLocation: SourceLocation = #_sourceLocation, _ call: @escaping @Sendable () -> Void
) async -> Bool {
    let finished = await finishes(within: 5, call)
    #expect(finished, "\(what) was released under the engine's lock: deadlocked", sourceLocation: sourceLocation)
    guard finished else { return false }
    settle()
    #expect(deinits.withLock { $0 } == 1, sourceLocation: sourceLocation)
    return true
}

/// Runs `body` on a new thread and waits for it, on another new thread, at most `seconds` times
/// `Hang.timeScale`: `false` when it did not finish in time (a deadlock). No cooperative-pool
/// thread ever blocks; a thread that deadlocked stays blocked, so a test that got `false` must not
/// touch that engine again.
private func finishes(within seconds: Double, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return await onDedicatedThread { done.wait(timeout: .now() + Hang.scaled(seconds)) == .success }
}

/// An app object whose `deinit` calls the SDK (see Behaviour D7).
private final class CallsTheSDKInDeinit: Sendable {
    let onDeinit: @Sendable () -> Void
    init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

/// What the app's `deinit` does: three public calls into the engine, then it counts itself.
private func callTheEngine(_ engine: SegmentationEngine, counting deinits: LockedValue<Int>) -> @Sendable () -> Void {
    { [weak engine] in
        guard let engine else { return }
        _ = engine.customer
        _ = engine.listenerCount
        engine.getSegments(category: .content()) { _ in }
        deinits.withLock { $0 += 1 }
    }
}

/// Registers a listener whose handler closure holds the only reference to an object calling the
/// engine in its `deinit`.
private func addListenerHoldingTheLastReference(
    to engine: SegmentationEngine, owner: AnyObject? = nil, counting deinits: LockedValue<Int>
) -> ListenerToken {
    let object = CallsTheSDKInDeinit(callTheEngine(engine, counting: deinits))
    return engine.addListener(
        SegmentListener(category: .discovery(), includeFirstLoad: false) { _ in _ = object }, owner: owner)
}

/// A repository the app wrote itself, calling the engine in its `deinit`.
private final class DeinitCallingRepository: SegmentRepository {
    let inner: RecordingSegmentRepository
    let onDeinit: @Sendable () -> Void
    init(_ inner: RecordingSegmentRepository, onDeinit: @escaping @Sendable () -> Void) {
        self.inner = inner
        self.onDeinit = onDeinit
    }
    deinit { onDeinit() }
    func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory {
        try await inner.fetchSegments(for: customer)
    }
    func linkCustomerIds(_ customer: CustomerIds) async throws { try await inner.linkCustomerIds(customer) }
}

/// A scheduler that keeps work until `fireAll()`, which runs each piece on a thread of its own (a
/// task whose executor makes a new thread per job), so a deadlock in the work blocks only that
/// thread, never one of the cooperative pool.
private final class OwnThreadScheduler: SegmentsScheduler {
    private let pending = LockedValue<[@Sendable () async -> Void]>([])

    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork {
        pending.withLock { $0.append(work) }
        return ScheduledWork {}
    }

    func sleep(for delay: TimeInterval) async {}

    /// Runs every piece of work kept so far, one after another, on new threads; returns when all
    /// finished, or never (the caller waits with a bound).
    func fireAll() {
        let work = pending.withLock { work in
            defer { work = [] }
            return work
        }
        for item in work {
            let done = DispatchSemaphore(value: 0)
            if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
                let executor = ThreadPerJobExecutor()
                Task(executorPreference: executor) {
                    await item()
                    done.signal()
                }
                withExtendedLifetime(executor) { done.wait() }
                continue
            } else {
                Task {
                    await item()
                    done.signal()
                }
            }
            done.wait()
        }
    }
}

/// Runs each job on a new thread.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
private final class ThreadPerJobExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread.detachNewThread { job.runSynchronously(on: executor) }
    }
}

private let b1 = Segment(id: "b1", segmentationId: "gb")
private let a1 = Segment(id: "a1", segmentationId: "ga")

@Suite(Hang.timeLimit(minutes: 1)) struct LifecycleRegressionTests {
    // MARK: D4 — compared per listener, against what it was last told

    @Test func d4_aListenerIsToldTheAnswerOfTheProjectItReturnsToEvenWhenThatProjectsBaselineEqualsIt() async {
        let harness = EngineHarness()
        let repositoryB = RecordingSegmentRepository(scheduler: harness.scheduler)
        repositoryB.answer([.discovery(): [b1]])
        let customerB = RecordingCustomerStore(CustomerIds(cookie: "cookie-b"))
        let baselineB = RecordingSegmentBaselineStore()
        let projectB = lifecyclePorts(repository: repositoryB, customer: customerB, baseline: baselineB)

        harness.engine.configure(projectB)
        let (told, _) = harness.listen(.discovery())
        await harness.advance(by: 5)  // T1: the listener's reload
        #expect(told.all == [[b1]])
        #expect(baselineB.load().snapshot?.segments[.discovery()] == [b1])

        let repositoryA = RecordingSegmentRepository(scheduler: harness.scheduler)
        repositoryA.answer([.discovery(): [a1]])
        harness.engine.configure(
            lifecyclePorts(
                repository: repositoryA, customer: RecordingCustomerStore(CustomerIds(cookie: "cookie-a")),
                baseline: RecordingSegmentBaselineStore()))
        harness.engine.itemUploaded()
        await harness.advance(by: 5)
        #expect(repositoryA.fetches.count == 1)
        #expect(told.last == [a1])

        // Back to B: its stored baseline already holds [b1], the answer is still [b1].
        harness.engine.configure(projectB)
        harness.engine.itemUploaded()
        await harness.advance(by: 5)
        await harness.advance(by: 30)
        #expect(repositoryB.fetches.count == 2)
        #expect(told.last == [b1], "the listener keeps project A's segments: \(told.all)")
    }

    // MARK: T2 — re-configuring reloads for a kept first-load promise

    @Test func t2_reconfiguringToAnotherProjectReloadsForAnIncludeFirstLoadListenerWhosePromiseWasKept() async {
        let harness = EngineHarness()
        let repositoryA = RecordingSegmentRepository(scheduler: harness.scheduler)
        repositoryA.answer([.discovery(): [a1]])
        harness.engine.configure(
            lifecyclePorts(
                repository: repositoryA, customer: RecordingCustomerStore(CustomerIds(cookie: "cookie-a")),
                baseline: RecordingSegmentBaselineStore()))
        let (told, _) = harness.listen(.discovery(), includeFirstLoad: true)
        await harness.advance(by: 5)
        #expect(told.all == [[a1]])  // the promise is kept under A

        let repositoryB = RecordingSegmentRepository(scheduler: harness.scheduler)
        repositoryB.answer([.discovery(): [b1]])
        harness.engine.configure(
            lifecyclePorts(
                repository: repositoryB, customer: RecordingCustomerStore(CustomerIds(cookie: "cookie-b")),
                baseline: RecordingSegmentBaselineStore()))
        await harness.advance(by: 5)
        await harness.advance(by: 30)
        #expect(repositoryB.fetches.count == 1, "project B was never fetched")
        #expect(told.last == [b1], "the listener keeps project A's segments: \(told.all)")
        #expect(harness.logger.count(of: "Segments: Skipping initial segments update process as is not required") == 0)
    }

    // MARK: D7 — no app object is released under an SDK lock

    @Test func d7_stopReleasesAListenerWhoseDeinitCallsTheSDKWithoutDeadlocking() async {
        let harness = EngineHarness()
        harness.configure()
        let deinits = LockedValue(0)
        _ = addListenerHoldingTheLastReference(to: harness.engine, counting: deinits)
        #expect(deinits.withLock { $0 } == 0)
        let engine = harness.engine
        guard await releasesWithoutDeadlock("stop(): the handler", deinits: deinits, { engine.stop() }) else { return }
        #expect(!engine.isConfigured)
    }

    @Test func d7_removeListenerReleasesAHandlerWhoseDeinitCallsTheSDKWithoutDeadlocking() async {
        let harness = EngineHarness()
        harness.configure()
        let deinits = LockedValue(0)
        let token = addListenerHoldingTheLastReference(to: harness.engine, counting: deinits)
        let engine = harness.engine
        guard await releasesWithoutDeadlock("removeListener: the handler", deinits: deinits, { engine.removeListener(token) })
        else { return }
        #expect(engine.listenerCount == 0)
        // The deinit's read left work due on the scheduler: run it, so the scheduler (held by that
        // work's engine) does not outlive the test and report a stall into the run.
        await harness.scheduler.runUntilIdle()
    }

    @Test func d7_theOwnerPruneOnTheNextAddListenerReleasesAHandlerWhoseDeinitCallsTheSDK() async {
        let harness = EngineHarness()
        harness.configure()
        let deinits = LockedValue(0)
        var owner: NSObject? = NSObject()
        _ = addListenerHoldingTheLastReference(to: harness.engine, owner: owner, counting: deinits)
        owner = nil  // the owner goes; the registration (and its handler) stays until the prune
        #expect(owner == nil)
        #expect(deinits.withLock { $0 } == 0)
        let engine = harness.engine
        guard await releasesWithoutDeadlock("addListener: the pruned handler", deinits: deinits, {
            engine.addListener(SegmentListener(category: .content(), includeFirstLoad: false) { _ in })
        }) else { return }
        #expect(engine.listenerCount == 1)
        // The deinit's read left work due on the scheduler: run it, so the scheduler (held by that
        // work's engine) does not outlive the test and report a stall into the run.
        await harness.scheduler.runUntilIdle()
    }

    @Test func d7_theOwnerPruneOnTheReloadTimerReleasesAHandlerWhoseDeinitCallsTheSDK() async {
        let harness = EngineHarness()
        let timers = OwnThreadScheduler()
        let engine = lifecycleEngine(harness, scheduler: timers)
        engine.configure(
            lifecyclePorts(
                repository: RecordingSegmentRepository(), customer: RecordingCustomerStore(CustomerIds(cookie: "c")),
                baseline: RecordingSegmentBaselineStore()))
        await drained(harness.storageQueue)  // the baseline is in
        let deinits = LockedValue(0)
        var owner: NSObject? = NSObject()
        _ = addListenerHoldingTheLastReference(to: engine, owner: owner, counting: deinits)  // T1: a debounce timer
        owner = nil
        #expect(owner == nil)
        #expect(deinits.withLock { $0 } == 0)
        await harness.scheduler.advance(by: 5)  // the engine's clock: the debounce is due
        // The debounce fires: prune, then reload.
        guard await releasesWithoutDeadlock("the reload timer: the pruned handler", deinits: deinits, { timers.fireAll() })
        else { return }
        #expect(engine.listenerCount == 0)
    }

    @Test func d7_reconfiguringReleasesThePreviousRepositoryWhoseDeinitCallsTheSDK() async {
        let harness = EngineHarness()
        let deinits = LockedValue(0)
        let engine = harness.engine
        do {
            let repository = DeinitCallingRepository(
                RecordingSegmentRepository(scheduler: harness.scheduler), onDeinit: callTheEngine(engine, counting: deinits))
            engine.configure(
                lifecyclePorts(
                    repository: repository, customer: RecordingCustomerStore(CustomerIds(cookie: "c")),
                    baseline: RecordingSegmentBaselineStore()))
        }
        await drained(harness.storageQueue)  // the background load no longer holds the first ports' stores
        #expect(deinits.withLock { $0 } == 0)
        let next = lifecyclePorts(
            repository: RecordingSegmentRepository(scheduler: harness.scheduler),
            customer: RecordingCustomerStore(CustomerIds(cookie: "c")), baseline: RecordingSegmentBaselineStore())
        guard await releasesWithoutDeadlock(
            "configure: the previous repository", deinits: deinits, settle: { harness.storageQueue.sync {} },
            { engine.configure(next) })
        else { return }
        #expect(engine.customer?.cookie == "c")
        // The deinit's read left work due on the scheduler: run it, so the scheduler (held by that
        // work's engine) does not outlive the test and report a stall into the run.
        await harness.scheduler.runUntilIdle()
    }

    // MARK: G6 — a read made after the customer changed does not pay for the stale flight

    @Test func g6_aReadMadeAfterACustomerChangeSucceedsForTheNewCustomerEvenWithoutRetries() async {
        let harness = EngineHarness(timings: SegmentationTimings(maxReadRetries: 0))
        harness.repository.answer([.discovery(): [a1]])
        harness.repository.answer([.discovery(): [b1]], forCustomerIds: ["registered": "jane"])
        harness.repository.delay = 1
        harness.configure()
        let stale = harness.read(.discovery(), force: true)
        await harness.advance()  // the flight for cookie-a starts and waits for its answer
        #expect(harness.fetchCount == 1)
        harness.engine.identify(hardIds: ["registered": "jane"])
        let fresh = harness.read(.discovery(), force: true)  // made after the change
        await harness.advance(by: 1)  // the stale flight comes back
        await harness.advance(by: 1)
        await harness.advance(by: 1)
        #expect(stale.count == 1)  // joined the flight before the change: may fail with no retries left
        #expect(fresh.count == 1)
        #expect(fresh.last?.value == [b1], "the read made for jane got \(String(describing: fresh.last))")
        #expect(harness.repository.fetches.last?.values["registered"] == "jane")
    }
}
