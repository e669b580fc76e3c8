import Foundation
import SegmentsDomain

/// The tracking pipeline of one client (<doc:Behaviour#E1>–<doc:Behaviour#E6>,
/// <doc:Behaviour#R1>–<doc:Behaviour#R3>, <doc:Behaviour#T3>): queues events and customer updates
/// durably, uploads them oldest first, one request each, and removes an item only after the backend
/// accepted it.
///
/// It is a ``StateMachineDriver`` over ``TrackingStateMachine`` plus one function,
/// ``perform(_:with:on:)``, that carries out the machine's actions after the driver's lock is
/// released: uploads (one request each, on the scheduler), store removals and updates, the
/// journal's sync, completions, logs. Disk work other than the caller's one buffered append runs on
/// the SDK-owned serial storage queue, and nothing waits for it (<doc:Behaviour#R1>): the queue
/// loads there in the background (calls made meanwhile are served in call order once it is loaded),
/// removals and updates are queued there in the order they were decided, and the journal is synced
/// there, batched (group commit).
package final class TrackingPipeline: Sendable {
    /// The ports and settings of the pipeline.
    package struct Dependencies: Sendable {
        /// The client's ports: scheduler (periodic flushes, backoff, the upload loop), clock
        /// (timestamps of items tracked without one), logger, jitter, and the serial queue every
        /// store load, removal, update and sync runs on, the engine's too, so one client touches
        /// its folder from one queue.
        package var client: ClientPorts
        /// Backoff after transient and authorization failures.
        package var retry: RetryBackoff
        /// How many permanent failures drop an item (<doc:Behaviour#E3>): 10.
        package var maxPermanentFailures: Int
        /// How many items may wait for upload; at the cap `track` refuses (default 100,000).
        package var capacity: Int

        /// Creates the dependencies.
        package init(
            client: ClientPorts, retry: RetryBackoff = RetryBackoff(), maxPermanentFailures: Int = 10,
            capacity: Int = TrackingPipeline.defaultCapacity
        ) {
            self.client = client
            self.retry = retry
            self.maxPermanentFailures = max(maxPermanentFailures, 1)
            self.capacity = max(capacity, 1)
        }
    }

    /// The default cap of the queue: 100,000 items.
    package static let defaultCapacity = EventQueueLimits.defaultCapacity

    private typealias Machine = TrackingStateMachine
    private typealias Driver = StateMachineDriver<TrackingStateMachine>

    /// What ``perform(_:with:on:)`` needs besides the driver.
    private struct Ports: Sendable {
        let store: any EventQueueStore
        let uploader: any EventUploader
        let onItemUploaded: @Sendable () -> Void
        let client: ClientPorts
    }

    private let driver: Driver
    private let store: any EventQueueStore
    private let clock: any SegmentsClock
    private let logger: any SegmentsLogger
    private let storageQueue: DispatchQueue

    /// A pipeline over `store` that uploads with `uploader` and calls `onItemUploaded` after each
    /// success (T3). The stored items load on the storage queue, in the background
    /// (<doc:Behaviour#R3>, <doc:Behaviour#E4>): queued there at once, or, with `loadsAtOnce:
    /// false`, when ``startLoading()`` is called, so that a client can queue its baseline's load
    /// first (the first `getSegments` of a cold start waits only for the baseline, not for a long
    /// journal).
    package init(
        dependencies: Dependencies, store: any EventQueueStore, uploader: any EventUploader,
        mode: FlushingMode = .immediate, loadsAtOnce: Bool = true, onItemUploaded: @escaping @Sendable () -> Void
    ) {
        let ports = Ports(
            store: store, uploader: uploader, onItemUploaded: onItemUploaded, client: dependencies.client)
        let machine = Machine(
            mode: mode,
            limits: .init(
                capacity: dependencies.capacity, retry: dependencies.retry,
                maxPermanentFailures: dependencies.maxPermanentFailures))
        let driver = Driver(machine, runtime: dependencies.client.runtime) { action, driver in
            Self.perform(action, with: ports, on: driver)
        }
        self.driver = driver
        self.store = store
        self.clock = dependencies.client.runtime.clock
        self.logger = dependencies.client.runtime.logger
        self.storageQueue = dependencies.client.storageQueue
        if loadsAtOnce { startLoading() }
    }

    /// Queues the load of the stored items on the storage queue; call it once, and only for a
    /// pipeline made with `loadsAtOnce: false`. Until the items are loaded, tracking and flushes
    /// are served as while any load runs (<doc:Behaviour#R3>).
    package func startLoading() {
        let store = self.store
        storageQueue.async { [driver] in
            let stored = store.load()
            driver.transition { machine, _ in machine.loaded(stored) }
        }
    }

    /// Queues an event stamped with `customer`'s ids (<doc:Behaviour#E1>). It returns once the item
    /// is written to the queue (it survives the process being killed); the sync for power loss
    /// follows on the storage queue within moments (R2).
    /// - Returns: the item written, and whether this pipeline queued it: `false` when it was stopped
    ///   while the item was written (the item is on disk; see ``adopt(_:)``).
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` for properties that could not be
    ///   replayed (E6: deeper than 64 levels, over 64 KiB; a non-finite number is dropped with a
    ///   warning instead), `.storage` when the queue is full or cannot be written, `.stopped`.
    @discardableResult
    package func track(
        eventType: String, properties: [String: JSONValue], timestamp: Date?, customer: CustomerIds
    ) throws -> Written {
        try enqueue(.event(type: eventType), properties: properties, timestamp: timestamp, customer: customer)
    }

    /// Queues a customer update stamped with `customer`'s ids, already merged (<doc:Behaviour#E1>).
    @discardableResult
    package func trackCustomerUpdate(
        properties: [String: JSONValue], timestamp: Date?, customer: CustomerIds, evenIfStopped: Bool = false
    ) throws -> Written {
        try enqueue(.customerUpdate, properties: properties, timestamp: timestamp, customer: customer, evenIfStopped: evenIfStopped)
    }

    /// Queues an item the client accepted before configure (<doc:Behaviour#E1>): written even when a
    /// stop that raced the configure stopped the pipeline meanwhile (``Written/queued`` is then
    /// `false`: the item stays on disk for the next start, or a successor on the same store adopts
    /// it), as an item admitted before a stop is.
    @discardableResult
    package func trackAccepted(
        _ kind: TrackedEvent.Kind, properties: [String: JSONValue], timestamp: Date, customer: CustomerIds
    ) throws -> Written {
        try enqueue(kind, properties: properties, timestamp: timestamp, customer: customer, evenIfStopped: true)
    }

    /// Takes over an item that the pipeline this one replaced on the same store wrote after it had
    /// stopped (<doc:Behaviour#A4>, <doc:Behaviour#E4>): it is on disk already; this queues it in
    /// memory unless it was loaded from the file.
    package func adopt(_ event: TrackedEvent) {
        driver.transition(at: Self.untimed) { machine, _ in machine.adopt(event) }
    }

    /// Takes the items the store read once protected data became available (<doc:Behaviour#P8>):
    /// those this pipeline does not hold are queued (not one it uploaded whose removal is still to
    /// be written: <doc:Behaviour#E4>), and immediate mode then uploads what is queued, as after
    /// the first load.
    package func adoptStored(_ items: [TrackedEvent]) {
        driver.transition { machine, _ in machine.storedItemsRead(items) }
    }

    /// The flushing mode; setting it takes effect at once (<doc:Behaviour#E2>).
    package var mode: FlushingMode {
        get { driver.read { $0.mode } }
        set { driver.transition { machine, _ in machine.setMode(newValue) } }
    }

    /// How many items wait for upload, answered from memory at once; it never waits for the
    /// storage queue (<doc:Behaviour#R1>). While the stored queue is still loading it counts what is
    /// known so far: the items tracked since, not yet the stored ones. For the exact count, use
    /// ``queuedCount(_:)``.
    package var queuedCount: Int {
        driver.read { $0.queuedCount }
    }

    /// The exact number of items waiting for upload, stored ones included: answered at once when
    /// the stored queue is loaded, else as soon as it is (<doc:Behaviour#R1>, <doc:Behaviour#R3>).
    /// A stopped pipeline answers 0. `completion` runs on the thread that answers it; it must not
    /// block.
    package func queuedCount(_ completion: @escaping @Sendable (Int) -> Void) {
        driver.transition { machine, _ in machine.countWhenLoaded(completion) }
    }

    /// Uploads everything queued and reports how many items went up (<doc:Behaviour#E5>). Only one
    /// flush runs at a time: a call during a flush joins it and gets its result. A flush asked for
    /// while the queue loads starts once it is loaded.
    package func flush(completion: @escaping @Sendable (SegmentsFlushResult) -> Void) {
        let forward = driver.transition { machine, _ in machine.flush(completion) }
        forward?.flush(completion: completion)
    }

    /// The `async` form of ``flush(completion:)``.
    package func flush() async -> SegmentsFlushResult {
        await withCheckedContinuation { continuation in flush { continuation.resume(returning: $0) } }
    }

    /// The network path changed (<doc:Behaviour#N1>, <doc:Behaviour#N2>): offline no upload
    /// starts and no backoff grows; when a usable path returns, every mode but manual cuts a
    /// pending backoff short and flushes. The client's engine calls it in the order of its other
    /// lifecycle decisions.
    package func networkPathChanged(_ status: NetworkPathStatus) {
        driver.transition { machine, _ in machine.networkPathChanged(status) }
    }

    /// The app resigned active or went to the background (<doc:Behaviour#E2>, <doc:Behaviour#E7>).
    ///
    /// On resigning active, periodic and automatic flushing upload what is queued, unless an upload
    /// backoff is pending (<doc:Behaviour#E3>). On entering the background, in every mode but
    /// manual, what is queued is flushed — even during a backoff — within background time asked
    /// of `lifecycle`: the request is ended exactly once, when the flush finishes (whatever its
    /// outcome) or when the time runs out, whichever comes first. Running out of time drops
    /// nothing: an item leaves the queue only after its upload succeeded, so what is left is
    /// uploaded later.
    package func appLifecycleChanged(_ event: AppLifecycleEvent, lifecycle: any AppLifecycle) {
        switch event {
        case .willResignActive:
            driver.transition { machine, _ in machine.appLeftForeground() }
        case .didEnterBackground:
            let request = BackgroundTime()
            let flushing = driver.transition { machine, _ in
                machine.appEnteredBackground { _ in request.end() }
            }
            if flushing { request.begin(with: lifecycle) }
        case .didBecomeActive, .willEnterForeground:
            break
        }
    }

    /// Stops timers and further work; queued items stay on disk for the next start, and no upload
    /// starts from now on (<doc:Behaviour#A3>). An upload already sent comes back as usual (its
    /// item's removal is written: <doc:Behaviour#E4>); see ``whenSettled(_:)``. The waiters of a
    /// flush in progress, or asked for while the stored queue was still loading, join `successor`,
    /// the next pipeline on the same store, when there is one (its flush runs over the same
    /// items); otherwise they fail with `.stopped` (<doc:Behaviour#E5>). A last flush asked for
    /// with ``finish(completion:)`` ends here.
    package func stop(handingFlushesTo successor: TrackingPipeline? = nil) {
        let handed = driver.transition { machine, _ in machine.stop(to: successor) }
        if let successor { for waiter in handed { successor.flush(completion: waiter) } }
    }

    /// Runs `body` once the pipeline is settled: stopped, the flush it had begun ended, and the
    /// removal of every item that flush delivered queued on the storage queue (so work `body`
    /// queues there runs after it). The next pipeline on the same store loads only then, so it
    /// never loads an item this one is still uploading (<doc:Behaviour#E4>, <doc:Behaviour#A4>).
    /// At once (on the calling thread) when already settled; else on the thread where the last
    /// upload came back or the stop was made. `body` must not block.
    package func whenSettled(_ body: @escaping @Sendable () -> Void) {
        driver.transition { machine, _ in machine.whenSettled(body) }
    }

    /// One last flush, then stop (<doc:Behaviour#A3>): the flush ends when the queue is empty or
    /// an upload fails, without waiting out a backoff; `completion` runs once the pipeline has
    /// stopped (at once when it is stopped already), on the thread that stopped it.
    package func finish(completion: @escaping @Sendable () -> Void) {
        driver.transition { machine, _ in machine.finish(completion) }
    }

    /// The ids of the items the pipeline held when it stopped (stored ones loaded after the stop,
    /// and items written while it stopped, included); empty while it runs. Read on the storage
    /// queue after the pipeline's load, it names every item of the store this pipeline knew of.
    package var itemsLeftAtStop: [TrackedEvent.ID] {
        driver.read { $0.leftAtStop }
    }

    private func enqueue(
        _ kind: TrackedEvent.Kind, properties: [String: JSONValue], timestamp: Date?, customer: CustomerIds,
        evenIfStopped: Bool = false
    ) throws -> Written {
        // A non-finite number is dropped with one warning (see Behaviour E6, rev 4). The client's calls
        // drop them at the door, so this warns only for a caller of the pipeline itself.
        let accepted = try ReplayableEvent.accepting(properties)
        if let warning = accepted.warning(for: kind == .customerUpdate ? "identifyCustomer" : "trackEvent") {
            logger.log(.warning, warning)
        }
        let properties = accepted.properties
        // `RandomUUID`, not `UUID()`: on Linux the latter reads /dev/urandom with three system
        // calls per id, which cost the caller more than the journal's write (Behaviour R2).
        let event = TrackedEvent(
            id: RandomUUID.next(), kind: kind, customerIds: customer, properties: properties,
            timestamp: timestamp ?? clock.now())
        try ReplayableEvent.check(timestamp: event.timestamp)
        let refusal = driver.transition(at: Self.untimed) { machine, _ -> (SegmentsError?, Steps<Machine.Action>) in
            do throws(SegmentsError) {
                try machine.admit(evenIfStopped: evenIfStopped)
                return (nil, Steps())
            } catch {
                return (error, Steps())
            }
        }
        if let refusal { throw refusal }
        do {
            // The caller's one buffered write, outside the driver's lock (see Behaviour R1, R2).
            try store.append(event)
        } catch {
            driver.transition(at: Self.untimed) { machine, _ in machine.appendFailed() }
            throw SegmentsError.wrapping(error, as: .storage)
        }
        let queued = driver.transition(at: Self.untimed) { machine, _ in machine.appended(event) }
        return Written(event: event, queued: queued)
    }

    /// An item `track` wrote, and whether this pipeline queued it.
    package struct Written: Sendable {
        /// The item, as written to the journal.
        package let event: TrackedEvent
        /// `false` when the pipeline was stopped while the item was written.
        package let queued: Bool
    }

    /// The moment handed to transitions that read no time (admitting and queueing an item): the
    /// caller of `track` does not pay for reading the clocks and the random source
    /// (<doc:Behaviour#R2>). Transitions that use time or jitter (an upload failing, a timer) get
    /// the real one.
    private static let untimed = Moment(uptime: 0, wall: .distantPast, random: 0.5)

    /// Carries out one of the machine's actions, outside the driver's lock, in the order the
    /// machine decided them. Nothing here waits for the storage queue: removals, updates and the
    /// sync are queued on it in that order, so the file follows memory, a step behind
    /// (at-least-once: an item is removed only after its 2xx, so a crash before the removal is
    /// written means a duplicate upload, never a loss — <doc:Behaviour#E3>, <doc:Behaviour#E4>).
    private static func perform(_ action: Machine.Action, with ports: Ports, on driver: Driver) {
        let logger = ports.client.runtime.logger
        switch action {
        case .upload(let event):
            let uploader = ports.uploader
            // Not sent once the pipeline has stopped (A3). One sent before comes back as usual:
            // the removal of an item the backend accepted is written, and then whoever waits for
            // the pipeline to be settled is told (E4, A4); its client keeps it until then. A
            // pipeline let go of (its client was) uploads no more.
            ports.client.runtime.scheduler.schedule(after: 0) { [weak driver] in
                guard driver?.transition({ machine, _ in machine.beforeUpload(event.id) }) == true else { return }
                var failure: SegmentsError?
                do { try await uploader.upload(event) } catch { failure = SegmentsError.wrapping(error) }
                guard let driver else { return }
                driver.transition { machine, now in
                    if let failure { machine.uploadFailed(event.id, failure, at: now) } else { machine.uploadSucceeded(event.id) }
                }
            }
        case .remove(let id):
            let store = ports.store
            ports.client.storageQueue.async { [weak driver] in
                do { try store.remove(id: id) } catch {
                    logger.log(.error, "Tracking: Removing an uploaded event from the queue failed: \(SegmentsError.summary(of: error))")
                }
                driver?.transition { machine, _ in machine.removalWritten(id) }
            }
        case .update(let event):
            let store = ports.store
            ports.client.storageQueue.async {
                do { try store.update(event) } catch {
                    logger.log(.error, "Tracking: Updating the event queue failed: \(SegmentsError.summary(of: error))")
                }
            }
        case .sync:
            let store = ports.store
            ports.client.storageQueue.async { [weak driver] in
                driver?.transition { machine, _ in machine.syncStarting() }
                do { try store.sync() } catch {
                    logger.log(.error, "Tracking: Syncing the event queue to disk failed: \(SegmentsError.summary(of: error))")
                }
            }
        case .itemUploaded:
            ports.onItemUploaded()
        case .finished(let waiters), .settled(let waiters):
            waiters.forEach { $0() }
        case .completeFlushes(let waiters, let result):
            waiters.forEach { $0(result) }
        case .answerCounts(let waiters, let count):
            waiters.forEach { $0(count) }
        case .log(let level, let message):
            logger.log(level, message)
        }
    }
}
