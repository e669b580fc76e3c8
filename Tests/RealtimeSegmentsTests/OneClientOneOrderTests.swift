import Foundation
import Testing
import SegmentsDomain
import RealtimeSegments
@testable import SegmentsPersistence
import SegmentsTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An uploader whose `deinit` configures the client it was made for: an app object whose
/// `deinit` calls the SDK (see Behaviour D7).
private final class ConfiguringOnDeinit: EventUploader, @unchecked Sendable {
    // Audited: set once before the uploader is shared, read only by its deinit.
    weak var client: SegmentsClient?
    let ran: Recorder<Bool>

    init(ran: Recorder<Bool>) { self.ran = ran }

    deinit {
        try? client?.configure(
            .init(
                backend: .custom(id: "after-deinit", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()),
                flushingMode: .manual))
        ran.record(true)
    }

    func upload(_ event: TrackedEvent) async throws {}
}

/// An in-memory event queue that calls `onAppend` (once, on the caller's thread, before it stores
/// the item) for the next item of a given kind: a call of another thread landing between the
/// steps of `identifyCustomer`, made deterministic.
private final class HookedEventQueue: EventQueueStore, @unchecked Sendable {
    private let inner = InMemoryEventQueueStore()
    // Audited: only touched under `lock`.
    private var hook: (@Sendable () -> Void)?
    private let lock = NSLock()
    let appended = Recorder<TrackedEvent>()

    func onNextCustomerUpdate(_ body: @escaping @Sendable () -> Void) {
        lock.withLock { hook = body }
    }

    func load() -> [TrackedEvent] { inner.load() }
    func append(_ event: TrackedEvent) throws {
        if case .customerUpdate = event.kind {
            let body = lock.withLock { () -> (@Sendable () -> Void)? in
                defer { hook = nil }
                return hook
            }
            body?()
        }
        appended.record(event)
        inner.append(event)
    }
    func update(_ event: TrackedEvent) throws { inner.update(event) }
    func remove(id: TrackedEvent.ID) throws { inner.remove(id: id) }
}

/// A logger that runs `body` once, on the logging thread, when a line containing `trigger` is
/// logged: a lifecycle call of another thread landing in the middle of `configure`, made
/// deterministic.
private final class TriggeringLogger: SegmentsLogger, @unchecked Sendable {
    private let lock = NSLock()
    // Audited: only touched under `lock`.
    private var pending: (trigger: String, body: @Sendable () -> Void)?
    let logLevel = LogLevel.verbose

    func once(on trigger: String, _ body: @escaping @Sendable () -> Void) {
        lock.withLock { pending = (trigger, body) }
    }

    func log(_ level: LogLevel, _ message: String) {
        let body = lock.withLock { () -> (@Sendable () -> Void)? in
            guard let pending, message.contains(pending.trigger) else { return nil }
            self.pending = nil
            return pending.body
        }
        body?()
    }
}

/// The findings of issue 32 about facts of a client kept beside its state machine: each test failed
/// on the code before the fix (see Docs/decisions/0006-one-client-one-machine.md).
@Suite(Hang.timeLimit(minutes: 2)) struct OneClientOneOrderTests {
    let s1 = Fixture.s1
    let s2 = Fixture.s2

    // Finding 1: the old configuration's objects were let go of under a lock.
    @Test func d7_p8_anUploaderWhoseDeinitConfiguresDoesNotDeadlockAReconfigure() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let ran = Recorder<Bool>()
        let done = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "finding-1")
        let client = SegmentsClient(
            options: .init(
                runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: RecordingLogger()), storage: .directory(directory.url),
                storageQueue: queue))
        Thread.detachNewThread {
            do {
                do {
                    let uploader = ConfiguringOnDeinit(ran: ran)
                    uploader.client = client
                    try client.configure(
                        .init(backend: .custom(id: "a", repository: RecordingSegmentRepository(), uploader: uploader), flushingMode: .manual))
                }
                queue.sync {}  // A's queue has loaded: nothing of the storage queue holds its pipeline
                try client.configure(
                    .init(
                        backend: .custom(id: "b", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()),
                        flushingMode: .manual))
            } catch {
                Issue.record("configure failed: \(error)")
            }
            done.signal()
        }
        #expect(await signalled(done, within: 30), "configure deadlocked on an uploader's deinit")
        #expect(await eventually(timeout: 30) { ran.count == 1 })
        client.stop()
    }

    // Finding 2 (M5 rev 4): a model lives on through stop and follows the next configuration.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func m5_a3_aModelReadsEmptyAfterStopAndFollowsTheNextConfiguration() async throws {
        let harness = ClientHarness()
        try harness.configure()
        let model = SegmentsModel(categories: [.discovery()], client: harness.client)
        harness.repository.answer([.discovery(): [s1]])
        await harness.advance(by: 5)
        #expect(await mainQueueSettled())
        #expect(model.segments(for: .discovery()) == [s1])

        harness.client.stop()
        await harness.advance()
        #expect(await mainQueueSettled())
        #expect(model.segments(for: .discovery()) == [])

        harness.repository.answer([.discovery(): [s2]])
        try harness.configure()
        await harness.advance(by: 5)
        #expect(await mainQueueSettled())
        #expect(model.segments(for: .discovery()) == [s2])
        #expect(harness.client.listenerCount == 1)
    }

    // Finding 2 (M5 rev 4): a change stream finishes at stop.
    @Test func m5_a3_aChangesStreamFinishesAtStop() async throws {
        let harness = ClientHarness()
        try harness.configure()
        let stream = harness.client.changes(of: .discovery(), includeFirstLoad: true)
        let finished = Recorder<Int>()
        let task = Task {
            var count = 0
            for await _ in stream { count += 1 }
            finished.record(count)
        }
        harness.repository.answer([.discovery(): [s1]])
        await harness.advance(by: 5)
        harness.client.stop()
        #expect(await eventually(timeout: 30) { finished.count == 1 })
        #expect(finished.all == [1])
        #expect(harness.client.listenerCount == 0)
        task.cancel()
    }

    // Finding 3 (A4, E1): identify and anonymize racing end as one of their two orders.
    @Test func a4_e1_anIdentifyRacedByAnAnonymizeEndsAsOneOrderOfTheTwo() async throws {
        let queue = HookedEventQueue()
        let scheduler = TestScheduler()
        let client = SegmentsClient(
            options: .init(
                runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: RecordingLogger()),
                storage: .custom(customer: InMemoryCustomerStore(), baseline: InMemorySegmentBaselineStore(), events: queue)))
        try client.configure(
            .init(backend: .custom(id: "a", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()), flushingMode: .manual))
        try client.identifyCustomer(customerIds: ["registered": "bob"], properties: [:], timestamp: nil)
        let c0 = try #require(client.customerCookie)
        queue.onNextCustomerUpdate { client.anonymize() }
        try client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        let c1 = try #require(client.customerCookie)
        #expect(c1 != c0)

        let updates = queue.appended.all.map(\.customerIds)
        let identifyFirst = (
            updates: [CustomerIds(["cookie": c0, "registered": "bob"]), CustomerIds(["cookie": c0, "registered": "jane"])],
            customer: CustomerIds(["cookie": c1]))
        let anonymizeFirst = (
            updates: [CustomerIds(["cookie": c0, "registered": "bob"]), CustomerIds(["cookie": c1, "registered": "jane"])],
            customer: CustomerIds(["cookie": c1, "registered": "jane"]))
        let outcome = (updates: updates, customer: client.customerIds)
        #expect(
            (outcome.updates == identifyFirst.updates && outcome.customer == identifyFirst.customer)
                || (outcome.updates == anonymizeFirst.updates && outcome.customer == anonymizeFirst.customer),
            "updates \(updates), customer \(String(describing: client.customerIds))")
        client.stop()
    }

    // Finding 4 (A1, R1, P5): a client let go of without stop hands its folder on with its last customer.
    @Test func a1_r1_p5_aClientReleasedWithoutStopHandsTheNextOwnerItsLastCustomer() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let configuration = SegmentsClient.Configuration(
            backend: .custom(id: "p5", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()), flushingMode: .manual)
        func client(_ queue: DispatchQueue) -> SegmentsClient {
            SegmentsClient(
                options: .init(
                    runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: RecordingLogger()), storage: .directory(directory.url),
                    storageQueue: queue))
        }
        let queueA = DispatchQueue(label: "finding-4.a")
        var a: SegmentsClient? = client(queueA)
        try a?.configure(configuration)
        try a?.identifyCustomer(customerIds: ["registered": "bob"], properties: [:], timestamp: nil)
        await drained(queueA)
        queueA.suspend()  // A's next saves stay queued
        a?.anonymize()
        let last = try #require(a?.customerIds)
        weak let released = a
        a = nil
        #expect(released == nil)

        let b = client(DispatchQueue(label: "finding-4.b"))
        try b.configure(configuration)
        #expect(b.customerIds == last)
        queueA.resume()
        b.stop()
    }

    // Finding 5 (P5): stop lets go of the folder's owner lock, for another process too.
    @Test func p5_stopFreesTheFoldersOwnerLockWhileTheClientLives() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let queue = DispatchQueue(label: "finding-5")
        let client = SegmentsClient(
            options: .init(
                runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: RecordingLogger()), storage: .directory(directory.url),
                storageQueue: queue))
        try client.configure(
            .init(backend: .custom(id: "p5", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()), flushingMode: .manual))
        #expect(!Self.lockIsFree(in: directory.url))
        client.stop()
        await drained(queue)
        #expect(Self.lockIsFree(in: directory.url), "another process would be refused the folder")
        withExtendedLifetime(client) {}
    }

    /// Whether another open file description (as another process has) can take the folder's lock.
    static func lockIsFree(in directory: URL) -> Bool {
        let fd = open(directory.appendingPathComponent(StorageDirectoryLock.fileName).path, O_RDWR)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        flock(fd, LOCK_UN)
        return true
    }

    // Finding 6 (T2, D4): in memory, a configure is a new customer, and listeners hear its segments.
    @Test func t2_d4_reconfiguringInMemoryReloadsForTheNewCustomer() async throws {
        let harness = ClientHarness()
        let told = Recorder<[Segment]>()
        harness.repository.answer([.discovery(): [s1]])
        try harness.configure()
        await harness.advance()
        // Registered while configured, it asks for a reload (T1); it wants no first load, so only
        // a configure that counts as other storage reloads for it (T2).
        harness.client.addListener(category: .discovery(), includeFirstLoad: false) { told.record($0) }
        await harness.advance(by: 5)
        let first = try #require(harness.client.customerCookie)
        #expect(harness.repository.fetches.count == 1)

        harness.repository.answer([.discovery(): [s2]])
        try harness.configure()
        let second = try #require(harness.client.customerCookie)
        #expect(second != first)
        await harness.advance(by: 5)
        #expect(harness.repository.fetches.map(\.cookie) == [first, second])
        #expect(told.all == [[s1], [s2]])
        harness.client.stop()
    }

    // Finding 9 (A4, P8): a configure overtaken by another leaves the protected-data retry on the winner.
    @Test func a4_p8_aConfigureOvertakenByAnotherLeavesTheProtectedDataRetryOnTheOneInForce() async throws {
        let a = "finding-9a-\(UUID().uuidString.prefix(8).lowercased())"
        let b = "finding-9b-\(UUID().uuidString.prefix(8).lowercased())"
        let folderA = StorageLocation.defaultDirectory(integrationId: "custom-\(a)")
        let folderB = StorageLocation.defaultDirectory(integrationId: "custom-\(b)")
        defer {
            try? FileManager.default.removeItem(at: folderA)
            try? FileManager.default.removeItem(at: folderB)
        }
        _ = TemporaryDirectory()  // the umask the folders are made with
        let stored = CustomerIds(["cookie": "stored-in-b", "registered": "bea"])
        try PreviousRun.write(customer: stored, to: folderB, logger: RecordingLogger())

        let logger = TriggeringLogger()
        let signal = ManualProtectedDataAvailability()
        let queue = DispatchQueue(label: "finding-9")
        var options = SegmentsClient.Options(
            runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: logger), storage: .directory(nil), storageQueue: queue)
        options.protectedData = signal
        let client = SegmentsClient(options: options)
        client.addListener(category: .discovery()) { _ in }
        @Sendable func configuration(_ id: String) -> SegmentsClient.Configuration {
            .init(backend: .custom(id: id, repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()), flushingMode: .manual)
        }
        // While A's configure carries out what it decided, B's configure runs to its end: B is the
        // one in force, A's configure returns last.
        logger.once(on: "immediate flushing mode") { try? client.configure(configuration(b)) }
        // Only the two folders are refused: other suites use the default parent directory at the
        // same time (a fault under the whole parent once refused their folders' lock files).
        let refused = [InjectedFileFault(.open, errno: EACCES, times: 100_000)]
        try FileOperationLog.failing(refused, under: folderA.path) {
            try FileOperationLog.failing(refused, under: folderB.path) {
                try client.configure(configuration(a))
            }
        }
        #expect(client.customerIds != stored)
        await drained(queue)
        signal.signalAvailable()
        #expect(await eventually(timeout: 30) { client.customerIds == stored }, "the retry read A's folder, not B's")
        client.stop()
    }
}

/// Waits (bounded) until what was queued on the main queue so far has run.
func mainQueueSettled() async -> Bool {
    let reached = LockedValue(false)
    DispatchQueue.main.async { reached.withLock { $0 = true } }
    return await eventually(timeout: 30) { reached.value }
}
