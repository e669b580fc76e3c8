import Foundation
import SegmentsDomain

/// The tracking pipeline of one client (SPEC E1–E5, T3): queues events and customer updates
/// durably, uploads them oldest first, one request each, and removes an item only after the
/// backend accepted it.
///
/// Like the engine, its state sits behind one lock and every asynchronous step goes through the
/// injected ``Scheduler``.
public final class TrackingPipeline: Sendable {
    /// The ports and settings of the pipeline.
    public struct Dependencies: Sendable {
        /// Periodic flushes, backoff and the upload loop.
        public var scheduler: any Scheduler
        /// Timestamps of items tracked without one.
        public var clock: any Clock
        /// Where failures are logged.
        public var logger: any SegmentsLogger
        /// Backoff after transient upload failures.
        public var retry: RetryBackoff
        /// A value in `0..<1` for backoff jitter.
        public var random: @Sendable () -> Double
        /// How many permanent failures drop an item (SPEC E3): 10.
        public var maxPermanentFailures: Int

        /// Creates the dependencies.
        public init(
            scheduler: any Scheduler = TaskScheduler(), clock: any Clock = SystemClock(),
            logger: any SegmentsLogger, retry: RetryBackoff = RetryBackoff(),
            random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }, maxPermanentFailures: Int = 10
        ) {
            self.scheduler = scheduler
            self.clock = clock
            self.logger = logger
            self.retry = retry
            self.random = random
            self.maxPermanentFailures = max(maxPermanentFailures, 1)
        }
    }

    /// The outcome of a flush: how many items were uploaded, or why it stopped.
    public typealias FlushResult = Result<Int, SegmentsError>

    struct State: Sendable {
        var mode: FlushingMode
        var queue: [TrackedEvent]
        var flushing = false
        var uploaded = 0
        var waiters: [@Sendable (FlushResult) -> Void] = []
        var periodic: ScheduledWork?
        var retry: ScheduledWork?
        var retryAttempt = 0
        var stopped = false
    }

    let dependencies: Dependencies
    let store: any EventQueueStore
    let uploader: any EventUploader
    let onUploaded: @Sendable () -> Void
    let state: Locked<State>

    /// A pipeline over `store` (its items are loaded now, so nothing queued before a restart is
    /// lost, SPEC E4) that uploads with `uploader` and calls `onUploaded` after each success (T3).
    public init(
        dependencies: Dependencies, store: any EventQueueStore, uploader: any EventUploader,
        mode: FlushingMode = .immediate, onUploaded: @escaping @Sendable () -> Void
    ) {
        self.dependencies = dependencies
        self.store = store
        self.uploader = uploader
        self.onUploaded = onUploaded
        self.state = Locked(State(mode: mode, queue: store.load()))
        apply(mode)
    }

    /// Queues an event stamped with `customer`'s ids (SPEC E1).
    public func track(
        eventType: String, properties: [String: JSONValue], timestamp: Date?, customer: CustomerIds
    ) throws {
        try enqueue(.event(type: eventType), properties: properties, timestamp: timestamp, customer: customer)
    }

    /// Queues a customer update stamped with `customer`'s ids, already merged (SPEC E1).
    public func trackCustomerUpdate(properties: [String: JSONValue], timestamp: Date?, customer: CustomerIds) throws {
        try enqueue(.customerUpdate, properties: properties, timestamp: timestamp, customer: customer)
    }

    /// The flushing mode; setting it takes effect at once (SPEC E2).
    public var mode: FlushingMode {
        get { state.withLock { $0.mode } }
        set {
            state.withLock { $0.mode = newValue }
            apply(newValue)
        }
    }

    /// How many items wait for upload.
    public var queuedCount: Int {
        state.withLock { $0.queue.count }
    }

    /// Uploads everything queued and reports how many items went up (SPEC E5). Only one flush runs
    /// at a time: a call during a flush joins it and gets its result.
    public func flush(completion: @escaping @Sendable (FlushResult) -> Void) {
        enum Start { case rejected, joined, started }
        let start = state.withLock { state -> Start in
            guard !state.stopped else { return .rejected }
            state.waiters.append(completion)
            return beginFlush(&state) ? .started : .joined
        }
        switch start {
        case .rejected: completion(.failure(SegmentsError(.stopped, "the integration was stopped")))
        case .joined: break
        case .started: scheduleUploadLoop()
        }
    }

    /// The `async` form of ``flush(completion:)``.
    public func flush() async -> FlushResult {
        await withCheckedContinuation { continuation in flush { continuation.resume(returning: $0) } }
    }

    /// Stops timers and uploads; queued items stay on disk for the next start.
    public func stop() {
        let waiters = state.withLock { state -> [@Sendable (FlushResult) -> Void] in
            state.stopped = true
            state.periodic?.cancel()
            state.retry?.cancel()
            state.periodic = nil
            state.retry = nil
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0(.failure(SegmentsError(.stopped, "the integration was stopped"))) }
    }

    private func enqueue(
        _ kind: TrackedEvent.Kind, properties: [String: JSONValue], timestamp: Date?, customer: CustomerIds
    ) throws {
        let event = TrackedEvent(
            kind: kind, customerIds: customer, properties: properties,
            timestamp: timestamp ?? dependencies.clock.now())
        let start = try state.withLock { state -> Bool in
            guard !state.stopped else { throw SegmentsError(.stopped, "the integration was stopped") }
            // Durable before it is visible: a crash after this line cannot lose the event (E4).
            try store.append(event)
            state.queue.append(event)
            return state.mode == .immediate && state.retry == nil && beginFlush(&state)
        }
        if start { scheduleUploadLoop() }
    }

    /// Re-arms the timers of `mode`; immediate mode flushes what is queued.
    private func apply(_ mode: FlushingMode) {
        let start = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.periodic?.cancel()
            state.periodic = nil
            switch mode {
            case .immediate:
                return !state.queue.isEmpty && state.retry == nil && beginFlush(&state)
            case .periodic(let seconds):
                schedulePeriodicFlush(every: seconds, &state)
                return false
            case .manual:
                return false
            }
        }
        if start { scheduleUploadLoop() }
    }

    private func schedulePeriodicFlush(every seconds: TimeInterval, _ state: inout State) {
        let interval = max(seconds, 1)
        state.periodic = dependencies.scheduler.schedule(after: interval) { [weak self] in
            guard let self else { return }
            let start = self.state.withLock { state -> Bool in
                guard !state.stopped, state.mode == .periodic(seconds: seconds) else { return false }
                self.schedulePeriodicFlush(every: seconds, &state)
                return !state.queue.isEmpty && self.beginFlush(&state)
            }
            if start { await self.runUploadLoop() }
        }
    }

    /// Marks a flush as running; returns whether the caller must start the upload loop.
    func beginFlush(_ state: inout State) -> Bool {
        guard !state.flushing else { return false }
        state.flushing = true
        state.uploaded = 0
        return true
    }

    func scheduleUploadLoop() {
        dependencies.scheduler.schedule(after: 0) { [weak self] in await self?.runUploadLoop() }
    }
}
