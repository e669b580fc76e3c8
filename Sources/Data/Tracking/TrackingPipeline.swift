import Foundation
import SegmentsDomain

/// The tracking pipeline of one client (see Behaviour E1–E6, R1–R3, T3): queues events and customer
/// updates durably, uploads them oldest first, one request each, and removes an item only after
/// the backend accepted it.
///
/// Every decision is made by a value state machine held under one lock; the actions it returns
/// (start the upload loop, timers, completions, logs, the journal's sync) are carried out after
/// the lock is released. Disk work other than the caller's one buffered append runs on the
/// SDK-owned serial storage queue: the queue loads there in the background (calls made meanwhile
/// are served in call order once it is loaded), removals and updates go there in order, and the
/// journal is synced there, batched (group commit).
package final class TrackingPipeline: Sendable {
    /// The ports and settings of the pipeline.
    package struct Dependencies: Sendable {
        /// Scheduler (periodic flushes, backoff, the upload loop), clock (timestamps of items
        /// tracked without one), logger and jitter, shared with the rest of the client.
        package var runtime: SegmentsRuntime
        /// Backoff after transient and authorization failures.
        package var retry: RetryBackoff
        /// How many permanent failures drop an item (see Behaviour E3): 10.
        package var maxPermanentFailures: Int
        /// The serial queue every store load, removal, update and sync runs on; share it with the
        /// engine so one client touches its folder from one queue.
        package var storageQueue: DispatchQueue
        /// How many items may wait for upload; at the cap `track` refuses (default 100,000).
        package var capacity: Int

        /// Creates the dependencies.
        package init(
            runtime: SegmentsRuntime, retry: RetryBackoff = RetryBackoff(), maxPermanentFailures: Int = 10,
            storageQueue: DispatchQueue = DispatchQueue(label: "RealtimeSegments.storage"),
            capacity: Int = TrackingPipeline.defaultCapacity
        ) {
            self.runtime = runtime
            self.retry = retry
            self.maxPermanentFailures = max(maxPermanentFailures, 1)
            self.storageQueue = storageQueue
            self.capacity = max(capacity, 1)
        }
    }

    /// The default cap of the queue: 100,000 items.
    package static let defaultCapacity = 100_000

    struct Core: Sendable {
        var machine: TrackingStateMachine
        var timers: [TrackingStateMachine.TimerID: ScheduledWork] = [:]
    }

    let dependencies: Dependencies
    let store: any EventQueueStore
    let uploader: any EventUploader
    let onUploaded: @Sendable () -> Void
    let core: Locked<Core>
    /// Left once the stored queue is in memory.
    private let loading = DispatchGroup()

    /// A pipeline over `store` that uploads with `uploader` and calls `onUploaded` after each
    /// success (T3). The stored items load on the storage queue, in the background (see Behaviour R3, E4).
    package init(
        dependencies: Dependencies, store: any EventQueueStore, uploader: any EventUploader,
        mode: FlushingMode = .immediate, onUploaded: @escaping @Sendable () -> Void
    ) {
        self.dependencies = dependencies
        self.store = store
        self.uploader = uploader
        self.onUploaded = onUploaded
        self.core = Locked(Core(machine: TrackingStateMachine(
            mode: mode, capacity: dependencies.capacity, retry: dependencies.retry,
            maxPermanentFailures: dependencies.maxPermanentFailures)))
        loading.enter()
        dependencies.storageQueue.async { [self] in
            let stored = store.load()
            transition { $0.loaded(stored) }
            loading.leave()
        }
    }

    /// Queues an event stamped with `customer`'s ids (see Behaviour E1). It returns once the item is written
    /// to the queue (it survives the process being killed); the sync for power loss follows on the
    /// storage queue within moments (R2).
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` for properties that could not be
    ///   replayed (E6), `.storage` when the queue is full or cannot be written, `.stopped`.
    package func track(
        eventType: String, properties: [String: JSONValue], timestamp: Date?, customer: CustomerIds
    ) throws {
        try enqueue(.event(type: eventType), properties: properties, timestamp: timestamp, customer: customer)
    }

    /// Queues a customer update stamped with `customer`'s ids, already merged (see Behaviour E1).
    package func trackCustomerUpdate(properties: [String: JSONValue], timestamp: Date?, customer: CustomerIds) throws {
        try enqueue(.customerUpdate, properties: properties, timestamp: timestamp, customer: customer)
    }

    /// The flushing mode; setting it takes effect at once (see Behaviour E2).
    package var mode: FlushingMode {
        get { core.withLock { $0.machine.mode } }
        set { transition { $0.setMode(newValue) } }
    }

    /// How many items wait for upload. While the stored queue is still loading, this waits for it.
    package var queuedCount: Int {
        loading.wait()
        return core.withLock { $0.machine.queuedCount }
    }

    /// Uploads everything queued and reports how many items went up (see Behaviour E5). Only one flush runs
    /// at a time: a call during a flush joins it and gets its result. A flush asked for while the
    /// queue loads starts once it is loaded.
    package func flush(completion: @escaping @Sendable (FlushResult) -> Void) {
        transition { $0.flush(completion) }
    }

    /// The `async` form of ``flush(completion:)``.
    package func flush() async -> FlushResult {
        await withCheckedContinuation { continuation in flush { continuation.resume(returning: $0) } }
    }

    /// Stops timers and uploads; queued items stay on disk for the next start.
    package func stop() {
        transition { $0.stop() }
    }

    private func enqueue(
        _ kind: TrackedEvent.Kind, properties: [String: JSONValue], timestamp: Date?, customer: CustomerIds
    ) throws {
        try ReplayableEvent.check(properties)
        let event = TrackedEvent(
            kind: kind, customerIds: customer, properties: properties,
            timestamp: timestamp ?? dependencies.runtime.clock.now())
        try core.withLock { try $0.machine.admit() }
        do {
            // The caller's one buffered write, outside the pipeline's lock (see Behaviour R1, R2).
            try store.append(event)
        } catch {
            core.withLock { $0.machine.appendFailed() }
            throw SegmentsError.wrapping(error, as: .storage)
        }
        transition { $0.appended(event) }
    }

    /// Runs one transition under the lock, then carries out what it decided, outside the lock.
    @discardableResult
    func transition<Result>(_ body: (inout TrackingStateMachine) -> (Result, [TrackingStateMachine.Action])) -> Result {
        let (result, actions) = core.withLock { body(&$0.machine) }
        actions.forEach(perform)
        return result
    }

    /// A transition without a result.
    func transition(_ body: (inout TrackingStateMachine) -> [TrackingStateMachine.Action]) {
        transition { machine in ((), body(&machine)) }
    }

    private func perform(_ action: TrackingStateMachine.Action) {
        switch action {
        case .startUploadLoop:
            dependencies.runtime.scheduler.schedule(after: 0) { [weak self] in await self?.runUploadLoop() }
        case .scheduleTimer(let timer, let delay):
            let work = dependencies.runtime.scheduler.schedule(after: delay) { [weak self] in
                guard let self else { return }
                core.withLock { _ = $0.timers.removeValue(forKey: timer) }
                transition { $0.timerFired(timer) }
            }
            core.withLock { core in
                if core.machine.periodicTimer == timer || core.machine.retryTimer == timer { core.timers[timer] = work }
            }
        case .cancelTimer(let timer):
            core.withLock { $0.timers.removeValue(forKey: timer) }?.cancel()
        case .complete(let waiters, let result):
            waiters.forEach { $0(result) }
        case .sync:
            dependencies.storageQueue.async { [self] in
                core.withLock { $0.machine.syncStarting() }
                do { try store.sync() } catch {
                    dependencies.runtime.logger.log(.error, "Tracking: Syncing the event queue to disk failed: \(error)")
                }
            }
        case .log(let level, let message):
            dependencies.runtime.logger.log(level, message)
        }
    }
}
