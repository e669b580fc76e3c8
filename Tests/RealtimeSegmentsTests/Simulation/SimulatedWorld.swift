import Foundation
import SegmentsDomain
import SegmentsData
@testable import SegmentsPersistence
import RealtimeSegments
import SegmentsTesting

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real clients under test, on virtual time, with fake servers per integration, the manual
/// app lifecycle and protected-data fakes, over the app's in-memory stores or a folder of files.
///
/// Every call the SDK could block in runs on a caller thread of the world and is waited for at
/// most ``callLimit`` seconds, and every drain of a queue likewise: a deadlock (D7, R1) ends the
/// session as a divergence instead of hanging the run.
final class SimulatedWorld {
    typealias Integration = SpecModel.Integration

    /// How long a call or a drain may take before the world calls it a deadlock: the limit given
    /// to `init`, times `Hang.timeScale`.
    let callLimit: TimeInterval
    /// How long the work due on the scheduler may take: it runs on Swift's cooperative pool, which
    /// a loaded test run (every suite at once on two cores) can keep busy for a while.
    var schedulerLimit: TimeInterval { max(callLimit, Hang.scaled(120)) }
    /// Which of the client's queued work runs first when the session settles: its storage queue
    /// (a load, a save, a retry of P8) or the work due now on the scheduler (a flush's upload, a
    /// fetch's start). Both orders happen on a device; a session takes one.
    let storageFirst: Bool

    /// A backend whose answers the session scripts; requests are logged with their virtual time.
    final class Server: Sendable {
        let integration: Integration
        let world: Locked<SpecModel.Server>
        private let scheduler: TestScheduler
        private let requests: Locked<[RequestRecord]>

        init(_ integration: Integration, scheduler: TestScheduler, requests: Locked<[RequestRecord]>) {
            self.integration = integration
            self.scheduler = scheduler
            self.requests = requests
            world = Locked(SpecModel.Server())
        }

        func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory {
            requests.withLock { $0.append(RequestRecord(at: scheduler.uptime(), integration: integration, kind: "fetch", customer: customer)) }
            let registered = customer.values["registered"]
            let result = world.withLock { server -> Result<SpecModel.Segments, SpecModel.Failure> in
                if !server.failNextFetches.isEmpty { return .failure(server.failNextFetches.removeFirst()) }
                return .success(server.answers[registered ?? "anonymous"] ?? [:])
            }
            await scheduler.sleep(for: SpecModel.fetchTime)
            switch result {
            case .success(let segments):
                return Dictionary(uniqueKeysWithValues: segments.map { category, names in
                    (SegmentCategory(category), names.map(SimulatedWorld.segment(named:)))
                })
            case .failure(let failure): throw Self.error(failure)
            }
        }

        func linkCustomerIds(_ customer: CustomerIds) async throws {
            requests.withLock { $0.append(RequestRecord(at: scheduler.uptime(), integration: integration, kind: "link", customer: customer)) }
            let failure = world.withLock { $0.failNextLinks.isEmpty ? nil : $0.failNextLinks.removeFirst() }
            await scheduler.sleep(for: SpecModel.fetchTime)
            if let failure { throw Self.error(failure) }
        }

        /// Answers at once: 2xx, or the next scripted failure.
        func upload(_ event: TrackedEvent) async throws {
            let failure = world.withLock { $0.failNextUploads.isEmpty ? nil : $0.failNextUploads.removeFirst() }
            var record = RequestRecord(at: scheduler.uptime(), integration: integration, kind: "upload", customer: event.customerIds)
            if case .int(let number) = event.properties["n"] { record.item = number }
            record.status = failure?.status ?? 200
            requests.withLock { $0.append(record) }
            if let failure { throw Self.error(failure) }
        }

        static func error(_ failure: SpecModel.Failure) -> SegmentsError {
            // A custom backend reports 401 and 403 as `.unauthorized` (Docs/CustomTransport.md).
            SegmentsError(
                failure.isAuthorization ? .unauthorized : .httpStatus, "the simulated server said \(failure.status)",
                httpStatus: failure.status, retryAfter: failure.retryAfter)
        }
    }

    /// The backend of one configuration: the integration's server, and an app object whose
    /// `deinit` calls the SDK when the client lets the configuration go (D7).
    ///
    /// A client the app let go without `stop()` may still have work in flight (its engine lives
    /// while a request runs) and even start more: the world's servers never answer such a client
    /// (its requests wait forever on the virtual timeline), so it neither stores what it fetched
    /// nor uploads, nor uses up the session's scripted answers (the contract names no such path).
    final class Backend: SegmentRepository, EventUploader, Sendable {
        let server: Server
        let probe: Probe
        let followed: Locked<Bool>
        let scheduler: TestScheduler
        init(_ server: Server, probe: Probe, followed: Locked<Bool>, scheduler: TestScheduler) {
            self.server = server
            self.probe = probe
            self.followed = followed
            self.scheduler = scheduler
        }
        /// A request of a client the app let go: it never comes back.
        private func never() async {
            await scheduler.sleep(for: 1e9)
        }
        func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory {
            guard followed.value else {
                await never()
                return [:]
            }
            let answer = try await server.fetchSegments(for: customer)
            if !followed.value { await never() }
            return answer
        }
        func linkCustomerIds(_ customer: CustomerIds) async throws {
            guard followed.value else { return await never() }
            try await server.linkCustomerIds(customer)
            if !followed.value { await never() }
        }
        func upload(_ event: TrackedEvent) async throws {
            guard followed.value else { return await never() }
            try await server.upload(event)
        }
    }

    /// An app object the SDK holds (a handler's capture, a backend) whose `deinit` calls the SDK
    /// (D7: no SDK lock is held while an app object is released). Its calls change nothing the
    /// model follows, except the configure of finding 1 (``Probe/configuring``).
    final class Probe: Sendable {
        private let client: Locked<WeakClient>
        let deinits: Locked<Int>
        /// The world's configures in progress: a probe made with it configures the client again
        /// from its `deinit` while one is (finding 1 of issue 32).
        private let nested: Locked<NestedConfigures>?

        init(client: SegmentsClient?, deinits: Locked<Int>, nested: Locked<NestedConfigures>? = nil) {
            self.client = Locked(WeakClient(client: client))
            self.deinits = deinits
            self.nested = nested
        }

        deinit {
            guard let client = client.value.client else { return }
            _ = client.customerIds
            _ = client.isConfigured
            _ = client.listenerCount
            _ = client.queuedEventCount
            _ = client.flushingMode
            deinits.withLock { $0 += 1 }
            // Taken and entered in one step, so the world waits for every configure it starts.
            let configuring = nested?.withLock { nested -> (SegmentsClient.Configuration, SpecModel.Integration, DispatchQueue?)? in
                guard let (configuration, integration) = nested.configuring else { return nil }
                nested.running.enter()
                return (configuration, integration, nested.afterTheLoadOn)
            }
            if let nested, let (configuration, integration, storageQueue) = configuring {
                var pinned = false
                if let storageQueue {
                    // Pinned to the moment after the configuration's background load: what is
                    // queued on the storage queue runs first. Not when released on that queue
                    // (work held the object): the wait would be its own; the configure comes
                    // when it may then, and the model accepts each moment.
                    if DispatchQueue.getSpecific(key: SimulatedWorld.storageQueueMark) != ObjectIdentifier(storageQueue) {
                        let loaded = DispatchSemaphore(value: 0)
                        storageQueue.async { loaded.signal() }
                        pinned = loaded.wait(timeout: .now() + Hang.scaled(10)) == .success
                    }
                }
                let made = (try? client.configure(configuration)) != nil
                nested.withLock { nested in
                    if made { nested.made.append(integration) }
                    if made, pinned { nested.pinned += 1 }
                    nested.running.leave()
                }
            }
        }
    }

    /// The configures `deinit`s make (finding 1 of issue 32): the configuration they use (and its
    /// integration), set while the world configures; those started and not yet returned; the
    /// integrations of those made, in the order they were made.
    struct NestedConfigures: Sendable {
        var configuring: (SegmentsClient.Configuration, SpecModel.Integration)?
        /// The storage queue of the client being configured, when a world pins a `deinit`'s
        /// configure to the moment after the configuration's background load
        /// (``SimulatedWorld/nestedConfiguresAfterTheLoad``); `nil`: whenever the object goes.
        var afterTheLoadOn: DispatchQueue?
        /// How many of those made came after the load: pinned there, and the wait for it ended.
        var pinned = 0
        let running = DispatchGroup()
        var made: [SpecModel.Integration] = []
    }

    struct WeakClient: Sendable {
        weak var client: SegmentsClient?
    }

    /// An owner object an owner-tied listener follows (M4).
    final class Owner: Sendable {}

    /// What one `changes(of:)` iteration received.
    final class StreamRecord: Sendable {
        let values = Locked<[[String]]>([])
        let finished = Locked(false)
        /// Signalled at each element and at the end: a wait for them blocks, it does not poll.
        private let changed = DispatchSemaphore(value: 0)

        func received(_ list: [String]) {
            values.withLock { $0.append(list) }
            changed.signal()
        }

        func ended() {
            finished.withLock { $0 = true }
            changed.signal()
        }

        /// Waits, at most `seconds` of real time, until `condition` holds after an element or the end.
        func wait(within seconds: TimeInterval, until condition: () -> Bool) -> Bool {
            let deadline = DispatchTime.now() + seconds
            while !condition() {
                guard changed.wait(timeout: deadline) == .success else { return condition() }
            }
            return true
        }
    }

    /// A baseline and an event queue per integration (as folders per project keep them), chosen
    /// by the integration being configured: the session switches it only while nothing is
    /// pending on the storage queue (``SimulatedOperation/settlesBefore(_:)``). In the one-storage
    /// layout both integrations use A's.
    final class StoresPerIntegration: SegmentBaselineStore, EventQueueStore, Sendable {
        let baselines: [Integration: InMemorySegmentBaselineStore] = [.a: InMemorySegmentBaselineStore(), .b: InMemorySegmentBaselineStore()]
        let events: [Integration: InMemoryEventQueueStore] = [.a: InMemoryEventQueueStore(), .b: InMemoryEventQueueStore()]
        let route = Locked(Integration.a)
        func load() -> SegmentBaseline { baselines[route.value]!.load() }
        func save(_ baseline: SegmentBaseline) throws { baselines[route.value]!.save(baseline) }
        func load() -> [TrackedEvent] { events[route.value]!.load() }
        func append(_ event: TrackedEvent) throws { events[route.value]!.append(event) }
        func update(_ event: TrackedEvent) throws { events[route.value]!.update(event) }
        func remove(id: TrackedEvent.ID) throws { events[route.value]!.remove(id: id) }
    }

    /// One client and what it was built with.
    struct Client {
        let client: SegmentsClient
        let storageQueue: DispatchQueue
        let protectedData: ManualProtectedDataAvailability
        /// Whether the app still follows this client: what its listeners, reads and flushes hear,
        /// and what it logs and asks servers, after the app let it go without `stop()` is not
        /// recorded (the contract names no such path; see ``Backend``).
        let followed: Locked<Bool>
    }

    /// `s1` is segment s1; `s1*` is s1 altered (another segmentation id).
    static func segment(named name: String) -> Segment {
        name.hasSuffix("*") ? Segment(id: String(name.dropLast()), segmentationId: "g-altered") : Segment(id: name, segmentationId: "g")
    }

    static func name(of segment: Segment) -> String {
        segment.segmentationId == "g-altered" ? segment.id + "*" : segment.id
    }

    let scheduler = TestScheduler()
    let deliveryQueue = DispatchQueue(label: "simulation.delivery")
    let servers: [Integration: Server]
    let layout: SpecModel.Layout
    let stores = StoresPerIntegration()
    let customerStore = InMemoryCustomerStore()
    /// The folder of the files layout (in `/dev/shm` where there is one: no disk syncs).
    let folder: URL?
    let lifecycle = ManualAppLifecycle()
    /// The device's network path, shared by every client of the session (N1–N3).
    let networkPath = ManualNetworkPath()
    let logger: ContractLines
    /// Listener calls, read answers and flush results, in the order the delivery queue ran them.
    let delivered = Locked<[SpecModel.Delivery]>([])
    let probeDeinits = Locked(0)
    /// Marks each client's storage queue (and the queues that target it) with its identity.
    static let storageQueueMark = DispatchSpecificKey<ObjectIdentifier>()
    let nestedConfigures = Locked(NestedConfigures())
    /// Whether app objects' `deinit`s configure (finding 1 of issue 32).
    let probesConfigure: Bool
    /// Whether such a configure waits until the storage queue ran the background load of the
    /// configuration that released its object, so that it comes after the load ended and before
    /// the work due now whatever the threads do (unless the object goes on that storage queue):
    /// one of the moments ``SpecModel/settled(configuring:afterTheLoad:)`` accepts, and the one
    /// where the configure shows (made before the load ended it looks like no configure at all).
    /// Otherwise the moment is the threads'.
    let nestedConfiguresAfterTheLoad: Bool
    private let requestLog: Locked<[RequestRecord]>
    private let cookies = Locked<[String: Int]>([:])
    /// The thread calls are made on, and the second one of races.
    private let callerQueue = DispatchQueue(label: "simulation.caller")
    private let raceQueue = DispatchQueue(label: "simulation.race")

    private(set) var current: Client
    /// Clients the app keeps after a hand-over (stopped or never configured).
    private var previous: [Client] = []
    private var generation = 0
    private var tokens: [Int: ListenerToken] = [:]
    private var owners: [Int: Owner] = [:]
    private var streams: [Int: (record: StreamRecord, task: Task<Void, Never>)] = [:]
    /// Models by number: the model (a `SegmentsModel`) and its listener numbers by category.
    private var models: [Int: (model: any Sendable, listeners: [String: Int])] = [:]
    /// The queues suspended by ``SimulatedOperation/hold``.
    private var suspended: [DispatchQueue] = []
    /// Why the world cannot go on: a call or a queue that did not return in time.
    private(set) var failure: String?

    init(
        layout: SpecModel.Layout, probesConfigure: Bool = false, nestedConfiguresAfterTheLoad: Bool = false,
        callLimit: TimeInterval = 60, storageFirst: Bool = true
    ) {
        self.layout = layout
        self.nestedConfiguresAfterTheLoad = nestedConfiguresAfterTheLoad
        self.callLimit = Hang.scaled(callLimit)
        self.storageFirst = storageFirst
        self.probesConfigure = probesConfigure
        logger = ContractLines(scheduler: scheduler)
        let requests = Locked<[RequestRecord]>([])
        requestLog = requests
        let scheduler = scheduler
        servers = [.a: Server(.a, scheduler: scheduler, requests: requests), .b: Server(.b, scheduler: scheduler, requests: requests)]
        if layout == .files {
            let base = FileManager.default.fileExists(atPath: "/dev/shm") ? URL(fileURLWithPath: "/dev/shm") : FileManager.default.temporaryDirectory
            let folder = base.appendingPathComponent("segments-simulation-\(UUID().uuidString)")
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            self.folder = folder
        } else {
            folder = nil
        }
        current = Self.makeClient(
            layout: layout, scheduler: scheduler, logger: logger, deliveryQueue: deliveryQueue, lifecycle: lifecycle,
            networkPath: networkPath, stores: stores, customerStore: customerStore, folder: folder, generation: 0,
            protectedData: ManualProtectedDataAvailability(isAvailable: true))
    }

    private static func makeClient(
        layout: SpecModel.Layout, scheduler: TestScheduler, logger: ContractLines, deliveryQueue: DispatchQueue,
        lifecycle: ManualAppLifecycle, networkPath: ManualNetworkPath, stores: StoresPerIntegration,
        customerStore: InMemoryCustomerStore, folder: URL?, generation: Int, protectedData: ManualProtectedDataAvailability
    ) -> Client {
        let storageQueue = DispatchQueue(label: "simulation.storage.\(generation)")
        storageQueue.setSpecific(key: storageQueueMark, value: ObjectIdentifier(storageQueue))
        let followed = Locked(true)
        var options = SegmentsClient.Options(
            runtime: SegmentsRuntime(
                scheduler: scheduler, clock: scheduler, logger: ContractLines.Follower(logger, followed: followed),
                deliveryQueue: deliveryQueue),
            timings: SegmentationTimings(retry: RetryBackoff(jitter: 0)), uploadRetry: RetryBackoff(jitter: 0),
            transport: RecordingTransport(),
            storage: folder.map { .directory($0) } ?? .custom(customer: customerStore, baseline: stores, events: stores),
            storageQueue: storageQueue)
        options.appLifecycle = lifecycle
        options.networkPath = networkPath
        options.protectedData = protectedData
        return Client(client: SegmentsClient(options: options), storageQueue: storageQueue, protectedData: protectedData, followed: followed)
    }

    private func newClient(protectedData: ManualProtectedDataAvailability = ManualProtectedDataAvailability(isAvailable: true)) -> Client {
        generation += 1
        let client = Self.makeClient(
            layout: layout, scheduler: scheduler, logger: logger, deliveryQueue: deliveryQueue, lifecycle: lifecycle,
            networkPath: networkPath, stores: stores, customerStore: customerStore, folder: folder, generation: generation,
            protectedData: protectedData)
        if isHolding {
            // Made in a held stretch: its queued work waits like the rest.
            client.storageQueue.suspend()
            suspended.append(client.storageQueue)
        }
        return client
    }

    var client: SegmentsClient { current.client }

    // MARK: - Bounded calls

    /// Runs `body` on the caller thread; `nil` (and ``failure`` set) when it did not return within
    /// ``callLimit``: a deadlock.
    @discardableResult
    func call<T: Sendable>(_ what: @autoclosure () -> String, _ body: @escaping @Sendable () -> T) -> T? {
        guard failure == nil else { return nil }
        let result = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        callerQueue.async {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + callLimit) == .success else {
            failure = "\(what()) did not return within \(Int(callLimit)) s: a deadlock (D7, R1)"
            return nil
        }
        return result.value
    }

    /// Runs `body` on this thread: for the calls that let go of no app object (its `deinit` could
    /// call the SDK under a lock, D7), whose only way to hang would be a plain deadlock of the SDK.
    @discardableResult
    func direct<T>(_ body: () -> T) -> T? {
        guard failure == nil else { return nil }
        return body()
    }

    /// Whether the SDK may let go of app objects in `operation` (a replaced backend, removed
    /// handlers): such calls run on the caller thread, bounded.
    func releasesAppObjects(_ operation: SimulatedOperation) -> Bool {
        switch operation {
        case .configure, .stop, .stopAndDeleteData: true
        default: false
        }
    }

    /// Runs `first` on the caller thread and `second` on another, started together (A4).
    func race<T: Sendable>(_ what: String, _ first: @escaping @Sendable () -> T, _ second: @escaping @Sendable () -> T) -> (T, T)? {
        guard failure == nil else { return nil }
        let results = Locked<(T?, T?)>((nil, nil))
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        raceQueue.async {
            go.wait()
            let value = second()
            results.withLock { $0.1 = value }
            done.signal()
        }
        callerQueue.async {
            go.signal()
            let value = first()
            results.withLock { $0.0 = value }
            done.signal()
        }
        let deadline = DispatchTime.now() + callLimit
        guard done.wait(timeout: deadline) == .success, done.wait(timeout: deadline) == .success,
            let first = results.value.0, let second = results.value.1
        else {
            failure = "\(what) did not return within \(Int(callLimit)) s: a deadlock (A4, D7)"
            return nil
        }
        return (first, second)
    }

    /// Waits until what is queued on `queue` so far has run, at most ``callLimit``.
    private func drain(_ queue: DispatchQueue) {
        guard failure == nil else { return }
        let done = DispatchSemaphore(value: 0)
        queue.async { done.signal() }
        if done.wait(timeout: .now() + callLimit) != .success {
            failure = "the queue \(queue.label) did not drain within \(Int(callLimit)) s: a deadlock (D7, R1)"
        }
    }

    /// `scheduler.advance(by:)`, given up on (``failure``) after ``callLimit``.
    private func advanceScheduler(by seconds: Double) async {
        guard failure == nil else { return }
        let scheduler = scheduler
        let finished = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer = Watchdog.shared.watch(within: schedulerLimit) { continuation.resume(returning: $0) }
            Task {
                await scheduler.advance(by: seconds)
                answer(true)
            }
        }
        if !finished { failure = "work due on the scheduler did not finish within \(Int(schedulerLimit)) s: a deadlock" }
    }

    /// Gives up on waits that did not end by their deadline: one thread for all of them, so a
    /// bounded wait costs a lock, not a timer of its own.
    final class Watchdog: Sendable {
        static let shared = Watchdog()
        private let waits = Locked<(next: Int, deadlines: [Int: (deadline: Date, answer: @Sendable (Bool) -> Void)])>((0, [:]))

        private init() {
            let thread = Thread { [waits] in
                while true {
                    Thread.sleep(forTimeInterval: 0.5)
                    let now = Date()
                    let expired = waits.withLock { waits in
                        let due = waits.deadlines.filter { $0.value.deadline < now }
                        for key in due.keys { waits.deadlines[key] = nil }
                        return due.values.map(\.answer)
                    }
                    for answer in expired { answer(false) }
                }
            }
            thread.name = "simulation.watchdog"
            thread.start()
        }

        /// Registers a wait: the returned closure answers it (once); the watchdog answers `false`
        /// after `seconds`.
        func watch(within seconds: TimeInterval, _ resume: @escaping @Sendable (Bool) -> Void) -> @Sendable (Bool) -> Void {
            let answered = Locked(false)
            let once: @Sendable (Bool) -> Void = { value in
                let first = answered.withLock { answered in
                    defer { answered = true }
                    return !answered
                }
                if first { resume(value) }
            }
            let key = waits.withLock { waits in
                waits.next += 1
                waits.deadlines[waits.next] = (Date().addingTimeInterval(seconds), once)
                return waits.next
            }
            return { [waits] value in
                waits.withLock { _ = $0.deadlines.removeValue(forKey: key) }
                once(value)
            }
        }
    }

    // MARK: - Queued work

    /// ``SimulatedOperation/hold``: the storage queues and the delivery queue wait (time does not
    /// move, so the scheduler runs nothing) until ``settle()``.
    func hold() {
        guard suspended.isEmpty else { return }
        suspended = ([current] + previous).map(\.storageQueue) + [deliveryQueue]
        for queue in suspended { queue.suspend() }
    }

    var isHolding: Bool { !suspended.isEmpty }

    /// Lets the storage queues, work due now and the delivery queue run until nothing is left.
    func settle() async {
        if !storageFirst, scheduler.pendingDelays.first == 0 {
            // The work due now runs first, while the storage queue waits.
            let held = suspended.contains { $0 === current.storageQueue }
            if !held { current.storageQueue.suspend() }
            await advanceScheduler(by: 0)
            if !held { current.storageQueue.resume() }
        }
        let resumed = suspended
        for queue in suspended { queue.resume() }
        suspended = []
        // The clients the app keeps after a hand-over are stopped: their queues are drained once
        // (their last saves).
        for client in previous { drain(client.storageQueue) }
        // So are the queues of clients let go while held (their release could not drain them): a
        // launch that follows must find their writes done, as the model does (R1, P5), not race
        // them (the launch was handed the released client's customer under ThreadSanitizer).
        let kept = Set(([current] + previous).map { ObjectIdentifier($0.storageQueue) } + [ObjectIdentifier(deliveryQueue)])
        for queue in resumed where !kept.contains(ObjectIdentifier(queue)) { drain(queue) }
        var rounds = 0
        if storageFirst { drainStorageThenDeliveries() }
        repeat {
            // Work due now (tasks on the scheduler), then the storage queue and what it queued,
            // then the delivery queue — or, in a storage-first world, the storage queue before.
            if scheduler.pendingDelays.first == 0 { await advanceScheduler(by: 0) }
            drainStorageThenDeliveries()
            rounds += 1
        } while failure == nil && rounds < 20 && scheduler.pendingDelays.first == 0
    }

    /// Waits (at most ``callLimit``) until the current client's storage queue has run what was
    /// queued on it, and what that queued on it in turn, then the delivery queue what was queued
    /// by then: one wait for the three.
    private func drainStorageThenDeliveries() {
        guard failure == nil else { return }
        let done = DispatchSemaphore(value: 0)
        let storage = current.storageQueue
        let deliveries = deliveryQueue
        storage.async { storage.async { deliveries.async { done.signal() } } }
        if done.wait(timeout: .now() + callLimit) != .success {
            failure = "the storage or the delivery queue did not drain within \(Int(callLimit)) s: a deadlock (D7, R1)"
        }
    }

    /// Moves virtual time on one due piece of work at a time, letting the queues settle after
    /// each, so every call and answer happens at its own moment.
    func advance(by seconds: Double) async {
        await settle()
        let target = scheduler.uptime() + seconds
        while failure == nil, let next = scheduler.pendingDelays.first, scheduler.uptime() + next <= target {
            await advanceScheduler(by: next)
            await settle()
        }
        await advanceScheduler(by: target - scheduler.uptime())
        await settle()
    }

    // MARK: - Calls

    /// The configuration of `integration`, with a backend of its own (its probe tells when the
    /// client lets it go).
    func configuration(_ integration: Integration, mode: SpecModel.FlushingMode?, for client: Client) -> SegmentsClient.Configuration {
        let probe = Probe(client: client.client, deinits: probeDeinits, nested: probesConfigure ? nestedConfigures : nil)
        let backend = Backend(servers[integration]!, probe: probe, followed: client.followed, scheduler: scheduler)
        return .init(backend: .custom(id: integration.rawValue, repository: backend, uploader: backend), flushingMode: mode.map(Self.sdkMode))
    }

    static func sdkMode(_ mode: SpecModel.FlushingMode) -> FlushingMode {
        switch mode {
        case .immediate: .immediate
        case .periodic(let seconds): .periodic(seconds: seconds)
        case .automatic: .automatic
        case .manual: .manual
        }
    }

    /// A lifecycle call (or tracking) as a closure for the caller thread: returns whether the
    /// SDK refused it. `item` numbers a tracked item. A configure lets the `deinit`s of app objects
    /// released meanwhile configure again with its configuration unless `raced`: two raced
    /// configures would share that one slot, and a `deinit` could take the other's.
    func lifecycleCall(_ operation: SimulatedOperation, item: Int, raced: Bool = false) -> @Sendable () -> Bool {
        let client = client
        switch operation {
        case .configure(let integration, let mode):
            if layout == .storagePerProject { stores.route.withLock { $0 = integration } }
            let configuration = configuration(integration, mode: mode, for: current)
            guard !raced else { return { (try? client.configure(configuration)) == nil } }
            let nested = nestedConfigures
            // Not while the storage queue waits (held): the load does not end before the settle.
            let afterTheLoadOn = nestedConfiguresAfterTheLoad && !isHolding ? current.storageQueue : nil
            return {
                nested.withLock {
                    $0.configuring = (configuration, integration)
                    $0.afterTheLoadOn = afterTheLoadOn
                }
                defer { nested.withLock { $0.configuring = nil } }
                return (try? client.configure(configuration)) == nil
            }
        case .stop:
            return {
                client.stop()
                return false
            }
        case .anonymize:
            return {
                client.anonymize()
                return false
            }
        case .identify(let id):
            return { (try? client.identifyCustomer(customerIds: ["registered": id], properties: ["n": .int(item)], timestamp: nil)) == nil }
        case .track:
            return { (try? client.trackEvent(properties: ["n": .int(item)], timestamp: nil, eventType: "view")) == nil }
        case .setMode(let mode):
            let sdkMode = Self.sdkMode(mode)
            return {
                client.flushingMode = sdkMode
                return false
            }
        default:
            preconditionFailure("\(operation) is not a lifecycle call")
        }
    }

    /// What a call did that the model is told: refusals, and configures made from a `deinit`.
    struct Effect {
        var refused: [Bool] = []
        /// The integrations of the configures `deinit`s made during the call, in order.
        var nestedConfigures: [SpecModel.Integration] = []
        /// Listeners the app let go: an owner released, a stream ended, a model released.
        var removed: [Int] = []
        /// Whether the client's queued work ran after the call (not holding).
        var settled = false
        /// Whether the world pinned ``nestedConfigures`` to the moment after the background load
        /// of the configuration whose call released their objects, before the work due now
        /// (``SimulatedWorld/nestedConfiguresAfterTheLoad``): no other moment is possible then.
        var nestedAfterTheLoad = false
    }

    /// Numbers the session gives listeners, reads, items and flushes, in call order.
    struct Numbers {
        var listeners = 0
        var reads = 0
        var items = 0
        var flushes = 0
        var models = 0
    }

    /// The configures `deinit`s made so far, once none is still running: one that started while
    /// the world configured can end on the SDK's thread after the world's call returned (the world
    /// counted it a step late before). Not ended within ``callLimit``: a deadlock (D7).
    private func nestedConfiguresMade() -> [SpecModel.Integration] {
        if failure == nil, nestedConfigures.value.running.wait(timeout: .now() + callLimit) != .success {
            failure = "a configure made by a deinit did not return within \(Int(callLimit)) s: a deadlock (D7)"
        }
        return nestedConfigures.value.made
    }

    /// Performs `operation` on the real client.
    func perform(_ operation: SimulatedOperation, numbers: inout Numbers) async -> Effect {
        var effect = Effect()
        var settleAfter = false
        let nestedBefore = nestedConfigures.value.made.count
        let pinnedBefore = nestedConfigures.value.pinned
        if operation.settlesBefore(layout) { await settle() }
        switch operation {
        case .configure, .stop, .anonymize, .identify, .track, .setMode:
            if case .identify = operation { numbers.items += 1 }
            if case .track = operation { numbers.items += 1 }
            let body = lifecycleCall(operation, item: numbers.items)
            effect.refused = [(releasesAppObjects(operation) ? call("\(operation)", body) : direct(body)) ?? false]
        case .stopAndDeleteData:
            // A3 rev 4: the last flush and the deletion run on the client's queues; the completion
            // comes on the main queue once they are done. "Refused" here: it never came.
            let client = client
            let completed = Locked(false)
            _ = call("\(operation)") {
                client.stopAndDeleteData { completed.withLock { $0 = true } }
                return false
            }
            for _ in 0..<3 {
                await settle()
                await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
                if completed.value { break }
            }
            effect.refused = [!completed.value]
        case .race(let first, let second):
            // The calls' queued work waits while they race, so what follows them is decided by
            // their order alone.
            if !isHolding {
                hold()
                settleAfter = true
            }
            var items = [0, 0]
            for (index, call) in [first, second].enumerated() {
                if case .identify = call { numbers.items += 1; items[index] = numbers.items }
                if case .track = call { numbers.items += 1; items[index] = numbers.items }
            }
            if let (a, b) = race(
                "\(operation)", lifecycleCall(first, item: items[0], raced: true), lifecycleCall(second, item: items[1], raced: true))
            {
                effect.refused = [a, b]
            }
        case .addListener(let category, let includeFirstLoad):
            numbers.listeners += 1
            tokens[numbers.listeners] = addHandler(category: category, includeFirstLoad: includeFirstLoad, listener: numbers.listeners, owner: nil)
        case .addOwnedListener(let category):
            numbers.listeners += 1
            let owner = Owner()
            owners[numbers.listeners] = owner
            tokens[numbers.listeners] = addHandler(category: category, includeFirstLoad: false, listener: numbers.listeners, owner: owner)
        case .releaseOwner(let number):
            if owners.removeValue(forKey: number) != nil { effect.removed = [number] }
        case .removeListener(let number):
            if let token = tokens[number] {
                effect.removed = [number]
                let client = client
                call("removeListener(#\(number))") { client.removeListener(token) }
            }
        case .openStream(let category, let includeFirstLoad):
            numbers.listeners += 1
            openStream(category: category, includeFirstLoad: includeFirstLoad, listener: numbers.listeners)
        case .endStream(let number):
            if streams[number] != nil { effect.removed = [number] }
            endStream(number)
        case .addModel(let categories):
            numbers.models += 1
            var unique: [String] = []
            for category in categories where !unique.contains(category) { unique.append(category) }
            var listeners: [String: Int] = [:]
            for category in unique {
                numbers.listeners += 1
                listeners[category] = numbers.listeners
            }
            await addModel(number: numbers.models, categories: unique, listeners: listeners)
        case .releaseModel(let number):
            effect.removed = models[number].map { $0.listeners.values.sorted() } ?? []
            await releaseModel(number)
        case .read(let category, let force):
            numbers.reads += 1
            read(category: category, force: force, number: numbers.reads)
        case .flush:
            numbers.flushes += 1
            let number = numbers.flushes
            let client = client
            let delivered = delivered
            let scheduler = scheduler
            let followed = current.followed
            direct {
                client.flush { result in
                    guard followed.value else { return }
                    let outcome: SpecModel.FlushOutcome =
                        switch result {
                        case .success(let count): .uploaded(count)
                        case .failure(let error): .error(error.code.rawValue)
                        }
                    delivered.withLock { $0.append(.flushed(at: scheduler.uptime(), flush: number, outcome)) }
                }
            }
        case .lifecycle(let event):
            let lifecycle = lifecycle
            let sdkEvent: AppLifecycleEvent =
                switch event {
                case .willResignActive: .willResignActive
                case .didEnterBackground: .didEnterBackground
                case .willEnterForeground: .willEnterForeground
                case .didBecomeActive: .didBecomeActive
                }
            direct { lifecycle.post(sdkEvent) }
        case .expireBackgroundTime:
            let lifecycle = lifecycle
            direct { lifecycle.expireBackgroundTime() }
        case .networkPath(let usable):
            let path = networkPath
            direct { usable ? path.goOnline() : path.goOffline() }
        case .serverAnswers(let integration, let who, let segments):
            servers[integration]!.world.withLock { $0.answers[who] = segments }
        case .serverFailsNextFetch(let integration, let failure):
            servers[integration]!.world.withLock { $0.failNextFetches.append(failure) }
        case .serverFailsNextLink(let integration, let failure):
            servers[integration]!.world.withLock { $0.failNextLinks.append(failure) }
        case .serverFailsNextUploads(let integration, let failure, let times):
            servers[integration]!.world.withLock { $0.failNextUploads += Array(repeating: failure, count: times) }
        case .moveWallClock(let seconds):
            scheduler.moveWallClock(by: seconds)
        case .advance(let seconds):
            await advance(by: seconds)
        case .hold:
            hold()
        case .settle:
            break
        case .restart(let stopFirst):
            await letObserversGo()
            if stopFirst {
                let client = client
                call("stop()") { client.stop() }
            }
            await releaseCurrent(replacingWith: newClient())
        case .handOver(let integration):
            var next: Client? = newClient()
            let sdk = Locked<SegmentsClient?>(next!.client)
            let configuration = configuration(integration, mode: nil, for: next!)
            let refused =
                call("configure(\(integration)) on a second client") { (try? sdk.value!.configure(configuration)) == nil } ?? false
            effect.refused = [refused]
            if refused {
                let queue = next!.storageQueue
                next = nil
                await release(sdk, queue: queue)
            } else {
                await letObserversGo()
                await settle()
                current.followed.withLock { $0 = false }
                previous.append(current)
                current = next!
                sdk.withLock { $0 = nil }
                tokens = [:]
                owners = [:]
            }
        case .protectedLaunch(let integration, let calls):
            await letObserversGo()
            do {
                let client = client
                call("stop()") { client.stop() }
            }
            let protectedData = ManualProtectedDataAvailability(isAvailable: false)
            await releaseCurrent(replacingWith: newClient(protectedData: protectedData))
            // A launch is a new process: the clients the app kept after a hand-over are gone too.
            let kept = previous
            previous = []
            for client in kept {
                let box = Locked<SegmentsClient?>(client.client)
                client.followed.withLock { $0 = false }
                await release(box, queue: client.storageQueue)
            }
            await settle()
            waitUntilTheFolderIsLetGo()
            effect.refused = protectedLaunch(integration, calls: calls, numbers: &numbers)
            // The retry the signal queues waits for the settle, which orders it with the work due
            // now (``storageFirst``).
            if !suspended.contains(where: { $0 === current.storageQueue }) {
                current.storageQueue.suspend()
                suspended.append(current.storageQueue)
            }
            settleAfter = true
            call("signalAvailable()") { protectedData.signalAvailable() }
        }
        if !isHolding || settleAfter { await settle() }
        effect.settled = !isHolding
        // Counted here, not in a `defer`: a `defer` runs after `return effect` has copied the
        // value, so the count it set was never seen (every session saw 0 configures made by a
        // `deinit`, and finding 1's session diverged whenever one was made).
        effect.nestedConfigures = Array(nestedConfiguresMade().dropFirst(nestedBefore))
        effect.nestedAfterTheLoad =
            !effect.nestedConfigures.isEmpty && nestedConfigures.value.pinned - pinnedBefore == effect.nestedConfigures.count
        return effect
    }

    /// Waits (at most ``callLimit``) until no client of this process holds the folder's lock. A
    /// launch stands for a new process, where nothing of the last one is left; here the released
    /// clients' last objects can go a moment after their release, on the thread that ran their
    /// last work (under ThreadSanitizer the launch once found the lock still held, could not take
    /// it when protected data came back, and kept the customer it had made).
    private func waitUntilTheFolderIsLetGo() {
        guard let folder, failure == nil else { return }
        let deadline = Date().addingTimeInterval(callLimit)
        // A folder that is gone (a stop deleted it) holds no lock. Each try waits out a moment's
        // holder as a claim does (about 50 ms); an error other than a held lock is the launch's to
        // meet.
        while FileManager.default.fileExists(atPath: folder.path) {
            do {
                _ = try StorageDirectoryLock.waitingOutMomentaryHolders { try StorageDirectoryLock.acquire(folder, creating: false) }
                return
            } catch let error as SegmentsError where error.isLockHeld {
                guard Date() < deadline else {
                    failure = "the released clients still held the folder's lock after \(Int(callLimit)) s (P5)"
                    return
                }
            } catch {
                return
            }
        }
    }

    /// P8: configure and `calls` while every file under the folder is refused (`EACCES`, as
    /// before the first unlock); the refused loads and saves run before it ends.
    private func protectedLaunch(_ integration: Integration, calls: [SimulatedOperation], numbers: inout Numbers) -> [Bool] {
        guard let folder else { return [] }
        var refused: [Bool] = []
        let storageQueue = current.storageQueue
        FileOperationLog.failing([InjectedFileFault(.open, errno: EACCES, times: 1_000_000)], under: folder.path) {
            // The calls are made while the configuration's load waits (R3), as in a held stretch.
            storageQueue.suspend()
            let body = lifecycleCall(.configure(integration), item: 0)
            refused.append(call("configure(\(integration)) before the first unlock", body) ?? false)
            for operation in calls {
                switch operation {
                case .addListener(let category, let includeFirstLoad):
                    numbers.listeners += 1
                    tokens[numbers.listeners] = addHandler(
                        category: category, includeFirstLoad: includeFirstLoad, listener: numbers.listeners, owner: nil)
                    refused.append(false)
                case .read(let category, let force):
                    numbers.reads += 1
                    read(category: category, force: force, number: numbers.reads)
                    refused.append(false)
                default:
                    if case .identify = operation { numbers.items += 1 }
                    if case .track = operation { numbers.items += 1 }
                    let body = lifecycleCall(operation, item: numbers.items)
                    refused.append((releasesAppObjects(operation) ? call("\(operation)", body) : direct(body)) ?? false)
                }
            }
            storageQueue.resume()
            drain(storageQueue)
        }
        return refused
    }

    private func addHandler(category: String, includeFirstLoad: Bool, listener: Int, owner: Owner?) -> ListenerToken? {
        let scheduler = scheduler
        let delivered = delivered
        let client = client
        let probe = Probe(client: client, deinits: probeDeinits)
        let followed = current.followed
        return direct {
            client.addListener(category: SegmentCategory(category), includeFirstLoad: includeFirstLoad, owner: owner) { segments in
                _ = probe
                guard followed.value else { return }
                delivered.withLock {
                    $0.append(.told(at: scheduler.uptime(), listener: listener, segments: segments.map(SimulatedWorld.name(of:)).sorted()))
                }
            }
        }
    }

    private func read(category: String, force: Bool, number: Int) {
        let scheduler = scheduler
        let delivered = delivered
        let client = client
        let followed = current.followed
        direct {
            client.getSegments(force: force, category: SegmentCategory(category)) { result in
                guard followed.value else { return }
                let answer: SpecModel.Answer =
                    switch result {
                    case .success(let segments): .segments(segments.map(SimulatedWorld.name(of:)).sorted())
                    case .failure(let error): .error(error.code.rawValue)
                    }
                delivered.withLock { $0.append(.answered(at: scheduler.uptime(), read: number, answer)) }
            }
        }
    }

    private func openStream(category: String, includeFirstLoad: Bool, listener: Int) {
        let client = client
        guard let stream = direct({ client.changes(of: SegmentCategory(category), includeFirstLoad: includeFirstLoad) }) else { return }
        let record = StreamRecord()
        let task = Task.detached {
            for await segments in stream {
                record.received(segments.map(SimulatedWorld.name(of:)).sorted())
            }
            record.ended()
        }
        streams[listener] = (record, task)
    }

    /// The app stops iterating: the stream's listener goes once the iteration ended (bounded).
    private func endStream(_ number: Int) {
        guard let stream = streams[number] else { return }
        stream.task.cancel()
        if !stream.record.wait(within: callLimit, until: { stream.record.finished.value }) {
            failure = "the iteration of stream #\(number) did not end within \(Int(callLimit)) s after its task was cancelled"
        }
        streams[number] = nil
    }

    private func addModel(number: Int, categories: [String], listeners: [String: Int]) async {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
        let client = client
        let model = await MainActor.run { SegmentsModel(categories: categories.map(SegmentCategory.init), client: client) }
        models[number] = (model, listeners)
    }

    private func releaseModel(_ number: Int) async {
        guard models[number] != nil else { return }
        // The model goes on the main actor, where the app holds it; its `deinit` removes its listeners.
        let box = Locked<(any Sendable)?>(models.removeValue(forKey: number)?.model)
        await MainActor.run { box.withLock { $0 = nil } }
    }

    /// The lists the live models show, by listener number (M5).
    func modelLists() async -> [Int: [String]] {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *), !models.isEmpty else { return [:] }
        let watched = models.values.flatMap { model in model.listeners.map { (model.model, $0.key, $0.value) } }
        let pairs = watched.map { (model: $0.0, category: $0.1, listener: $0.2) }
        let entries = Locked<[(model: any Sendable, category: String, listener: Int)]>(pairs)
        return await MainActor.run {
            var lists: [Int: [String]] = [:]
            for entry in entries.value {
                guard let model = entry.model as? SegmentsModel else { continue }
                lists[entry.listener] = model.segments(for: SegmentCategory(entry.category)).map(SimulatedWorld.name(of:))
            }
            return lists
        }
    }

    /// What each open stream received so far, once it caught up with what it should have (bounded).
    func streamRecords(expecting expected: [Int: (last: [String]?, finished: Bool)]) -> [Int: (values: [[String]], finished: Bool)] {
        var records: [Int: (values: [[String]], finished: Bool)] = [:]
        for (number, stream) in streams {
            if let expectation = expected[number] {
                _ = stream.record.wait(within: callLimit) {
                    stream.record.values.value.last == expectation.last && stream.record.finished.value == expectation.finished
                }
            }
            records[number] = (stream.record.values.value, stream.record.finished.value)
        }
        return records
    }

    /// Before a restart or hand-over: the app stops iterating its streams and lets its models go.
    private func letObserversGo() async {
        for number in streams.keys.sorted() { endStream(number) }
        for number in models.keys.sorted() { await releaseModel(number) }
    }

    private func releaseCurrent(replacingWith next: Client) async {
        // What the client answered before it goes is heard — unless its queued work waits: then
        // it goes with that work still queued (its saves run when the queue does, R1, P5).
        if !isHolding { await settle() }
        current.followed.withLock { $0 = false }
        let box = Locked<SegmentsClient?>(current.client)
        let queue = current.storageQueue
        current = next
        tokens = [:]
        owners = [:]
        await release(box, queue: queue)
    }

    /// Lets the client in `box` go on the caller thread (its `deinit` may call app objects, D7),
    /// once its queued work ran; `box` holds the last reference.
    private func release(_ box: Locked<SegmentsClient?>, queue: DispatchQueue) async {
        let held = suspended.contains { $0 === queue }
        if !held { drain(queue) }
        call("releasing a client") { box.withLock { $0 = nil } }
        if !held { drain(queue) }
    }

    /// Ends the session: stops iterating, resumes held queues, stops every client.
    func tearDown() async {
        for queue in suspended { queue.resume() }
        suspended = []
        if failure == nil {
            await letObserversGo()
            for client in [current] + previous {
                let sdk = client.client
                call("stop()") { sdk.stop() }
            }
            await settle()
        } else {
            for stream in streams.values { stream.task.cancel() }
        }
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    // MARK: - What the app sees

    /// The client's customer as the model writes it: cookies numbered in the order first seen.
    func customer(_ ids: CustomerIds?) -> SpecModel.Customer? {
        guard let ids, let cookie = ids.cookie else { return nil }
        let number = cookies.withLock { cookies in
            if let number = cookies[cookie] { return number }
            cookies[cookie] = cookies.count
            return cookies.count - 1
        }
        return SpecModel.Customer(cookie: number, registered: ids.values["registered"])
    }

    /// The contract's log lines written so far, in order.
    var logs: [SpecModel.LogLine] { logger.lines.value }

    /// A logger that keeps the contract's lines (``SpecModel/Log``), a line with a prefix of
    /// ``SpecModel/Log/prefixes`` as that prefix, and drops the rest.
    final class ContractLines: SegmentsLogger, Sendable {
        /// One client's logger: it writes to the world's lines while the app follows the client.
        final class Follower: SegmentsLogger, Sendable {
            let lines: ContractLines
            let followed: Locked<Bool>
            init(_ lines: ContractLines, followed: Locked<Bool>) {
                self.lines = lines
                self.followed = followed
            }
            var logLevel: LogLevel { .verbose }
            func log(_ level: LogLevel, _ message: String) {
                if followed.value { lines.log(level, message) }
            }
        }

        let lines = Locked<[SpecModel.LogLine]>([])
        let scheduler: TestScheduler
        init(scheduler: TestScheduler) {
            self.scheduler = scheduler
        }
        var logLevel: LogLevel { .verbose }
        func log(_ level: LogLevel, _ message: String) {
            if SpecModel.Log.all.contains(message) {
                lines.withLock { $0.append(SpecModel.LogLine(at: scheduler.uptime(), text: message)) }
            } else if let prefix = SpecModel.Log.prefixes.first(where: { message.hasPrefix($0) }) {
                lines.withLock { $0.append(SpecModel.LogLine(at: scheduler.uptime(), text: prefix)) }
            }
        }
    }

    /// The servers' requests as the model writes them.
    var requests: [SpecModel.Request] {
        requestLog.value.map { record -> SpecModel.Request in
            switch record.kind {
            case "link": return .link(at: record.at, record.integration, customer(record.customer)!)
            case "fetch": return .fetch(at: record.at, record.integration, customer(record.customer)!)
            default: return .upload(at: record.at, record.integration, customer(record.customer)!, item: record.item, status: record.status)
            }
        }
    }

    /// E7: the requests for background time the client made.
    var backgroundTime: [(ended: Bool, expired: Bool)] {
        lifecycle.backgroundTimeRequests.map { (ended: $0.ended, expired: $0.expired) }
    }
}
