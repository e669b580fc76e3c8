import Foundation
import RealtimeSegments
import SegmentsDomain
import SegmentsTesting
import Testing

// Regression tests of issue 20 (the lifecycle), client level, through the public API only. Each
// failed on the client before the lifecycle rewrite; the test's name starts with the SPEC id it
// proves.

// MARK: - Helpers

/// Runs `body` on a new thread; the semaphore is signalled when it returns.
private func startOnNewThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return done
}

/// Waits for `semaphore` on a new thread (no cooperative-pool thread blocks), at most `seconds`
/// times `Hang.timeScale`. A signal that arrived is left in place, so a later wait on the same
/// semaphore sees it too.
private func arrives(_ semaphore: DispatchSemaphore, within seconds: Double) async -> Bool {
    await onDedicatedThread {
        guard semaphore.wait(timeout: .now() + Hang.scaled(seconds)) == .success else { return false }
        semaphore.signal()
        return true
    }
}

/// Runs `body` on a new thread and waits at most `seconds` for it: `false` when it did not return
/// in time (it then goes on running on its thread).
private func finishes(within seconds: Double, _ body: @escaping @Sendable () -> Void) async -> Bool {
    await arrives(startOnNewThread(body), within: seconds)
}

/// `finishes(within:_:)` for a throwing call: an error it throws is counted in `failures`.
private func finishes(
    within seconds: Double, counting failures: LockedValue<Int>, _ body: @escaping @Sendable () throws -> Void
) async -> Bool {
    await finishes(within: seconds) {
        do { try body() } catch { failures.withLock { $0 += 1 } }
    }
}

/// Blocks a serial queue until ``release()`` (or 5 minutes, so nothing stays blocked for good).
/// A call that returns while ``passed`` is still false did not wait for the queue, however long
/// it took: no clock decides it.
private final class QueueBlocker: Sendable {
    private let gate = DispatchSemaphore(value: 0)
    private let passedFlag = LockedValue(false)
    init(_ queue: DispatchQueue) {
        let (gate, passedFlag) = (gate, passedFlag)
        queue.async {
            _ = gate.wait(timeout: .now() + 300)
            passedFlag.withLock { $0 = true }
        }
    }
    /// Whether the queue has gone past the block (released, or at its 5 minutes).
    var passed: Bool { passedFlag.withLock { $0 } }
    func release() { gate.signal() }
}

/// A customer store whose next `load()` after ``arm()`` reads the stored customer, then waits
/// for ``release()`` (at most 10 s) before returning it.
private final class HeldCustomerStore: CustomerStore {
    let inner: RecordingCustomerStore
    private let armed = LockedValue(false)
    let entered = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)

    init(_ customer: CustomerIds? = nil) { inner = RecordingCustomerStore(customer) }

    func arm() { armed.withLock { $0 = true } }
    func release() { gate.signal() }

    func load() -> CustomerIds? {
        let customer = inner.load()
        let hold = armed.withLock { armed in
            defer { armed = false }
            return armed
        }
        if hold {
            entered.signal()
            _ = gate.wait(timeout: .now() + 10)
        }
        return customer
    }

    func save(_ customer: CustomerIds) throws { try inner.save(customer) }
}

/// A logger that records every line and, once armed, holds the thread that logs a line containing
/// `holdOn` until ``release()`` (at most 10 s).
private final class HoldingLogger: SegmentsLogger {
    let lines = LockedValue<[(LogLevel, String)]>([])
    private let holdOn: String
    private let armed = LockedValue(true)
    let entered = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)

    init(holdingOn holdOn: String) { self.holdOn = holdOn }

    var logLevel: LogLevel { .verbose }

    func log(_ level: LogLevel, _ message: String) {
        lines.withLock { $0.append((level, message)) }
        guard message.contains(holdOn) else { return }
        let hold = armed.withLock { armed in
            defer { armed = false }
            return armed
        }
        if hold {
            entered.signal()
            _ = gate.wait(timeout: .now() + 10)
        }
    }

    func release() { gate.signal() }
}

/// One integration's backend: its repository and uploader, on the client's virtual time.
private struct Integration {
    let name: String
    let repository: RecordingSegmentRepository
    let uploader: RecordingEventUploader
    var configuration: SegmentsClient.Configuration {
        .init(backend: .custom(id: name, repository: repository, uploader: uploader))
    }

    init(_ name: String, scheduler: TestScheduler) {
        self.name = name
        repository = RecordingSegmentRepository(scheduler: scheduler)
        uploader = RecordingEventUploader(scheduler: scheduler)
    }
}

/// A client on virtual time over fakes.
/// A client on in-memory storage with its own storage queue, and one integration for it, as the
/// R1 tests use it: they block `queue` and see which calls still return.
private struct StorageQueueFixture {
    let queue = DispatchQueue(label: "r1.storage")
    let client: SegmentsClient
    let project: Integration

    /// With `configured`, the client is configured and its background load done.
    init(configured: Bool) throws {
        let scheduler = TestScheduler()
        client = makeClient(scheduler: scheduler, storageQueue: queue)
        project = Integration("project", scheduler: scheduler)
        if configured {
            try client.configure(project.configuration)
            drained(queue)
        }
    }
}

private func makeClient(
    scheduler: TestScheduler, logger: any SegmentsLogger = RecordingLogger(), storage: SegmentsClient.Options.Storage = .inMemory,
    storageQueue: DispatchQueue
) -> SegmentsClient {
    SegmentsClient(
        options: .init(
            runtime: SegmentsRuntime(
                scheduler: scheduler, clock: scheduler, logger: logger, deliveryQueue: DispatchQueue(label: "lifecycle.delivery")),
            storage: storage, storageQueue: storageQueue))
}

/// Which integration the client's engine and its tracking pipeline are on: tracks one event and
/// forces one read, then sees which uploader got the event and which repository was fetched.
private func integrationsInUse(
    _ client: SegmentsClient, scheduler: TestScheduler, storageQueue: DispatchQueue, among integrations: [Integration]
) async -> (engine: String?, pipeline: String?) {
    await drained(storageQueue)  // what configure loads in the background is in (see Behaviour R3)
    let fetchesBefore = integrations.map(\.repository.fetches.count)
    let uploadsBefore = integrations.map(\.uploader.accepted.count)
    try? client.trackEvent(properties: [:], timestamp: nil, eventType: "probe")
    client.getSegments(force: true, category: .discovery()) { _ in }
    for _ in 0..<3 {
        await drained(storageQueue)
        await scheduler.advance()
    }
    let engine = zip(integrations, fetchesBefore).first { $0.repository.fetches.count > $1 }?.0.name
    let pipeline = zip(integrations, uploadsBefore).first { $0.uploader.accepted.count > $1 }?.0.name
    return (engine, pipeline)
}

/// Three minutes: `a4_configuresRacingFromTwoThreads…` runs many rounds of real configures and
/// drains, which under ThreadSanitizer on a loaded machine took longer than one (seen twice).
@Suite(Hang.timeLimit(minutes: 3)) struct LifecycleRegressionTests {
    // MARK: R1 — no public call waits for the storage queue

    @Test func r1_configureRightAfterAnonymizeDoesNotWaitForTheStorageQueue() async throws {
        let fixture = try StorageQueueFixture(configured: true)
        let (client, project) = (fixture.client, fixture.project)
        let blocker = QueueBlocker(fixture.queue)
        defer { blocker.release() }

        #expect(await finishes(within: 30) { client.anonymize() }, "anonymize waited for the storage queue")
        let failures = LockedValue(0)
        let returned = await finishes(within: 30, counting: failures) {
            try client.configure(project.configuration)
        }
        #expect(returned, "configure right after anonymize waited for the storage queue")
        #expect(failures.withLock { $0 } == 0)
        #expect(!blocker.passed, "the calls returned only once the storage queue went on")
    }

    @Test func r1_configureRightAfterIdentifyCustomerDoesNotWaitForTheStorageQueue() async throws {
        let fixture = try StorageQueueFixture(configured: true)
        let (client, project) = (fixture.client, fixture.project)
        let blocker = QueueBlocker(fixture.queue)
        defer { blocker.release() }

        let failures = LockedValue(0)
        let identified = await finishes(within: 30, counting: failures) {
            try client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        }
        #expect(identified, "identifyCustomer waited for the storage queue")
        let returned = await finishes(within: 30, counting: failures) {
            try client.configure(project.configuration)
        }
        #expect(returned, "configure right after identifyCustomer waited for the storage queue")
        #expect(failures.withLock { $0 } == 0)
        #expect(!blocker.passed, "the calls returned only once the storage queue went on")
    }

    @Test func r1_aSecondConfigureOnAFreshInstallDoesNotWaitForTheStorageQueue() async throws {
        let fixture = try StorageQueueFixture(configured: false)
        let (client, project) = (fixture.client, fixture.project)
        let blocker = QueueBlocker(fixture.queue)
        defer { blocker.release() }

        let failures = LockedValue(0)
        let first = await finishes(within: 30, counting: failures) {
            try client.configure(project.configuration)
        }
        #expect(first, "the first configure on a fresh install waited for the storage queue")
        guard first else { return }
        let second = await finishes(within: 30, counting: failures) {
            try client.configure(project.configuration)
        }
        #expect(second, "the second configure on a fresh install waited for the storage queue (the new cookie's save)")
        #expect(failures.withLock { $0 } == 0)
        #expect(!blocker.passed, "the calls returned only once the storage queue went on")
    }

    @Test func r1_queuedEventCountDoesNotWaitForTheStoredQueueToLoad() async throws {
        let fixture = try StorageQueueFixture(configured: false)
        let (client, project) = (fixture.client, fixture.project)
        let blocker = QueueBlocker(fixture.queue)
        defer { blocker.release() }

        let failures = LockedValue(0)
        let configured = await finishes(within: 30, counting: failures) {
            try client.configure(project.configuration)
        }
        #expect(configured)
        guard configured else { return }
        let counts = LockedValue<[Int]>([])
        let answered = await finishes(within: 30) {
            let count = client.queuedEventCount
            counts.withLock { $0.append(count) }
        }
        #expect(answered, "queuedEventCount waited for the stored queue to load")
        #expect(failures.withLock { $0 } == 0)
        #expect(!blocker.passed, "the calls returned only once the storage queue went on")
    }

    // MARK: A4 — lifecycle calls take effect in one total order

    @Test func a4_aConfigureOvertakenByAnotherLeavesTheEngineAndThePipelineOnTheSameIntegration() async throws {
        let scheduler = TestScheduler()
        let queue = DispatchQueue(label: "a4.storage")
        // The stored cookie is empty: configure logs a warning on its caller's thread after the
        // engine switched and before the pipeline did; the logger holds configure(A) there.
        let logger = HoldingLogger(holdingOn: "empty cookie")
        let client = makeClient(
            scheduler: scheduler, logger: logger,
            storage: .custom(
                customer: RecordingCustomerStore(CustomerIds(["cookie": ""])), baseline: RecordingSegmentBaselineStore(),
                events: RecordingEventQueueStore()),
            storageQueue: queue)
        let a = Integration("a", scheduler: scheduler)
        let b = Integration("b", scheduler: scheduler)
        defer { logger.release() }

        let configuredA = startOnNewThread { try? client.configure(a.configuration) }
        let held = await arrives(logger.entered, within: 5)
        #expect(held, "configure(A) logged no empty-cookie warning to be held at (adapt the hold point)")
        let configuredB = startOnNewThread { try? client.configure(b.configuration) }
        _ = await arrives(configuredB, within: 0.5)  // today B completes while A is held
        logger.release()
        let bothReturned = await arrives(configuredA, within: 5)
        #expect(bothReturned)
        #expect(await arrives(configuredB, within: 5))
        guard bothReturned else { return }

        let inUse = await integrationsInUse(client, scheduler: scheduler, storageQueue: queue, among: [a, b])
        #expect(inUse.engine != nil)
        #expect(inUse.pipeline != nil)
        #expect(inUse.engine == inUse.pipeline, "the engine is on \(inUse.engine ?? "-"), the pipeline on \(inUse.pipeline ?? "-")")
    }

    @Test func a4_configuresRacingFromTwoThreadsLeaveTheEngineAndThePipelineOnTheSameIntegration() async throws {
        let scheduler = TestScheduler()
        let queue = DispatchQueue(label: "a4.storage")
        let client = makeClient(scheduler: scheduler, storageQueue: queue)
        let a = Integration("a", scheduler: scheduler)
        let b = Integration("b", scheduler: scheduler)
        // The probe itself: one configure after the other leaves both on the same integration.
        try client.configure(a.configuration)
        let afterA = await integrationsInUse(client, scheduler: scheduler, storageQueue: queue, among: [a, b])
        #expect(afterA.engine == "a" && afterA.pipeline == "a")
        try client.configure(b.configuration)
        let afterB = await integrationsInUse(client, scheduler: scheduler, storageQueue: queue, among: [a, b])
        #expect(afterB.engine == "b" && afterB.pipeline == "b")

        let rounds = 300
        var roundsRun = 0
        var mismatches = 0
        var undecided = 0
        for _ in 0..<rounds {
            let ready = DispatchSemaphore(value: 0)
            let go = DispatchSemaphore(value: 0)
            let doneA = startOnNewThread {
                ready.signal()
                _ = go.wait(timeout: .now() + 10)
                try? client.configure(a.configuration)
            }
            let doneB = startOnNewThread {
                ready.signal()
                _ = go.wait(timeout: .now() + 10)
                try? client.configure(b.configuration)
            }
            let started = await onDedicatedThread { () -> Bool in
                guard ready.wait(timeout: .now() + Hang.scaled(5)) == .success, ready.wait(timeout: .now() + Hang.scaled(5)) == .success else {
                    return false
                }
                go.signal()
                go.signal()
                return true
            }
            guard started, await arrives(doneA, within: 5), await arrives(doneB, within: 5) else { break }
            roundsRun += 1
            let inUse = await integrationsInUse(client, scheduler: scheduler, storageQueue: queue, among: [a, b])
            if inUse.engine == nil || inUse.pipeline == nil {
                undecided += 1
            } else if inUse.engine != inUse.pipeline {
                mismatches += 1
            }
        }
        #expect(roundsRun == rounds)
        #expect(undecided == 0)
        #expect(mismatches == 0, "\(mismatches) of \(roundsRun) rounds ended with the engine and the pipeline on different integrations")
    }

    /// The mode in force is seen in what the pipeline does, not in the getter: a pipeline starts
    /// in `.manual`, and the client had `.manual` set before, so only `.immediate`, set while
    /// configure is held reading the customer, uploads a tracked event at once.
    @Test func a4_aFlushingModeSetWhileConfigureRunsIsTheOneInForce() async throws {
        let scheduler = TestScheduler()
        let queue = DispatchQueue(label: "a4.storage")
        let customer = HeldCustomerStore(CustomerIds(cookie: "cookie-1"))
        let client = makeClient(
            scheduler: scheduler,
            storage: .custom(customer: customer, baseline: RecordingSegmentBaselineStore(), events: RecordingEventQueueStore()),
            storageQueue: queue)
        let project = Integration("project", scheduler: scheduler)
        defer { customer.release() }
        client.flushingMode = .manual

        customer.arm()
        // The configuration names no mode: the last mode set, before or during configure, applies (E2).
        let configured = startOnNewThread { try? client.configure(project.configuration) }
        #expect(await arrives(customer.entered, within: 5), "configure did not read the customer (adapt the hold point)")
        let modeSet = startOnNewThread { client.flushingMode = .immediate }
        #expect(await arrives(modeSet, within: 5), "the setter waited for configure")
        customer.release()
        #expect(await arrives(configured, within: 5))
        #expect(client.flushingMode == .immediate, "the mode set last is lost: \(client.flushingMode)")

        await drained(queue)  // the stored queue has loaded (see Behaviour R3)
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "probe")
        for _ in 0..<3 {
            await drained(queue)
            await scheduler.advance()
        }
        #expect(project.uploader.accepted.count == 1, "the pipeline is not in the mode set last: nothing was uploaded at once")
    }

    // MARK: A4, A1 — configure reads the customer inside its step

    /// The race of an anonymize with a re-configure's read of the customer file cannot happen: a
    /// re-configure on the same storage takes the customer from memory (Behaviour R1) and never
    /// reads the store, so the anonymize that follows it stands. (Before the first configure
    /// and after stop an anonymize does nothing, so no other configure can race it.)
    @Test func a4_aReconfigureOnTheSameStorageTakesTheCustomerFromMemorySoAnAnonymizeStands() async throws {
        let scheduler = TestScheduler()
        let queue = DispatchQueue(label: "a4.storage")
        let customer = HeldCustomerStore()
        let client = makeClient(
            scheduler: scheduler,
            storage: .custom(customer: customer, baseline: RecordingSegmentBaselineStore(), events: RecordingEventQueueStore()),
            storageQueue: queue)
        let project = Integration("project", scheduler: scheduler)
        defer { customer.release() }
        try client.configure(project.configuration)
        try client.identifyCustomer(customerIds: ["email": "jane@example.com"], properties: [:], timestamp: nil)
        // The identify's save is decided when it returns but carried out after the lock by whichever
        // thread is carrying out effects: here it can be the storage queue's own job (the load that
        // configure started), which queues the save behind the first drain's mark, so a second
        // drain is what waits for it (seen in a serial run of the suite).
        await drained(queue)
        await drained(queue)
        let loggedIn = try #require(client.customerIds)
        #expect(loggedIn.values["email"] == "jane@example.com")
        #expect(customer.inner.load() == loggedIn)

        customer.arm()  // a read of the customer file now holds until release
        let configured = startOnNewThread { try? client.configure(project.configuration) }
        #expect(await arrives(configured, within: 5), "the re-configure did not return (it holds reading the customer file)")
        #expect(customer.entered.wait(timeout: .now()) == .timedOut, "the re-configure read the customer file")
        #expect(client.customerIds == loggedIn)
        client.anonymize()
        customer.release()
        await drained(queue)

        let after = try #require(client.customerIds)
        #expect(after.values["email"] == nil, "the logged-out id came back: \(after.values)")
        #expect(after.cookie != loggedIn.cookie)
        #expect(customer.inner.load()?.values["email"] == nil)
    }

    // MARK: E2 — a periodic interval must be finite and > 0

    @Test(arguments: [Double.nan, 0, -1, .infinity])
    func e2_aPeriodicIntervalThatIsNotFiniteAndPositiveIsRefusedAtRunTime(seconds: Double) async throws {
        let scheduler = TestScheduler()
        let logger = RecordingLogger()
        let client = makeClient(scheduler: scheduler, logger: logger, storageQueue: DispatchQueue(label: "e2.storage"))
        try client.configure(Integration("project", scheduler: scheduler).configuration)
        #expect(client.flushingMode == .immediate)
        let errorsBefore = logger.entries.filter { $0.level == .error }.count

        client.flushingMode = .periodic(seconds: seconds)
        #expect(client.flushingMode == .immediate, "periodic(\(seconds)) was accepted: \(client.flushingMode)")
        #expect(logger.entries.filter { $0.level == .error }.count == errorsBefore + 1)
    }

    @Test(arguments: [Double.nan, 0, -1, .infinity])
    func e2_aPeriodicIntervalThatIsNotFiniteAndPositiveIsRefusedBeforeConfigure(seconds: Double) async throws {
        let scheduler = TestScheduler()
        let logger = RecordingLogger()
        let client = makeClient(scheduler: scheduler, logger: logger, storageQueue: DispatchQueue(label: "e2.storage"))
        client.flushingMode = .manual
        client.flushingMode = .periodic(seconds: seconds)
        #expect(client.flushingMode == .manual, "periodic(\(seconds)) was accepted: \(client.flushingMode)")
        #expect(logger.entries.filter { $0.level == .error }.count == 1)
        try client.configure(Integration("project", scheduler: scheduler).configuration)
        #expect(client.flushingMode == .manual, "configure applied periodic(\(seconds)): \(client.flushingMode)")
    }

    #if compiler(>=6.2) && (os(macOS) || os(Linux) || os(Windows))
        @Test func e2_exponeasFlushingModeGetterDoesNotTrapOnAnIntervalBeyondInt() async {
            await #expect(processExitsWith: .success) {
                let client = SegmentsClient(options: .init(storage: .inMemory))
                client.flushingMode = .periodic(seconds: 1e300)  // finite and > 0: a valid interval
                _ = Exponea(client: client).flushingMode
            }
        }
    #endif
}
