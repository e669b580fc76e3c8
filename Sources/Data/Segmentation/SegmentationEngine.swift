import Foundation
import SegmentsDomain

/// The real-time segmentation core and lifecycle of one client: configuration, the customer,
/// listeners, automatic reloads, change delivery and one-shot reads (the T, C, D, G and A rules of
/// <doc:Behaviour>).
///
/// Reloads, reads, deliveries and the lifecycle are decided by ``SegmentationStateMachine``, run by
/// a ``StateMachineDriver``: one lock, so the synchronous entry points (`addListener`,
/// `removeListener`, the completion form of `getSegments`, the lifecycle calls) keep their call
/// order from any thread and take effect in one total order (<doc:Behaviour#A4>); everything a
/// transition decides is carried out after the lock is released, in decision order, by
/// ``perform(_:_:)`` below, which decides only what a failed save does (it logs it). Every
/// asynchronous step — debounce, backoff, each fetch — goes through the injected ``SegmentsScheduler``, so
/// tests drive the engine on virtual time. Deliveries run on one serial delivery queue
/// (<doc:Behaviour#D8>); loads and saves on one serial storage queue, in order, never on the
/// caller's thread (<doc:Behaviour#R1>).
package final class SegmentationEngine: Sendable {
    /// The ports that live as long as the engine.
    package struct Dependencies: Sendable {
        /// The client's ports: its runtime and the serial queue every store load and save runs
        /// on, in order, off the caller's thread; shared with the client's tracking pipelines.
        package var client: ClientPorts
        /// Every timing.
        package var timings: SegmentationTimings
        /// A new anonymous cookie.
        package var makeCookie: @Sendable () -> String

        /// Creates the dependencies; the defaults are the live ones.
        package init(
            client: ClientPorts,
            timings: SegmentationTimings = SegmentationTimings(),
            makeCookie: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() }
        ) {
            self.client = client
            self.timings = timings
            self.makeCookie = makeCookie
        }
    }

    /// The ports of one configured integration, held for as long as it stays configured. The
    /// client builds them once per configure (`ConfiguredIntegration` in the Facade, the only
    /// module that sees the backends and the stores); tests build them directly.
    package struct Ports: Sendable {
        /// Where segments come from.
        package var repository: any SegmentRepository
        /// The current customer's ids.
        package var customerStore: any CustomerStore
        /// The baseline and link memory.
        package var baselineStore: any SegmentBaselineStore
        /// The integration's event pipeline, if it tracks: started, switched and stopped with
        /// the configuration (<doc:Behaviour#A4>).
        package var tracking: TrackingPipeline?
        /// Names the integration (backend and base URL): configuring another one, or the same one on
        /// other storage, requests a reload whenever listeners exist (<doc:Behaviour#T2>); its
        /// baseline is not used by another integration sharing the storage (D1).
        package var integrationID: String
        /// Names where the customer is stored; `nil` when every configuration gets new storage.
        /// While a save to it is pending, the customer in memory is the truth (<doc:Behaviour#R1>).
        package var storageID: String?
        /// The customer the storage's previous owner in this process ended with, whose save may
        /// still be queued on its storage queue.
        package var handedOverCustomer: CustomerIds?
        /// Gives the storage back when the configuration ends — stopped, or replaced by one on
        /// other storage (<doc:Behaviour#P5>); `nil` when nothing is held.
        package var handOver: (any StorageHandOver)?
        /// Redoes what the storage refused before protected data was available
        /// (<doc:Behaviour#P8>); `nil` for storage that never refuses.
        package var refusedStorageRedo: (any RefusedStorageRedo)?
        /// Deletes what the configuration stored, for a stop that deletes it (<doc:Behaviour#A3>);
        /// `nil` when nothing is stored beyond the configuration (memory).
        package var eraser: (any StoredDataEraser)?

        /// Creates the ports of an integration.
        package init(
            repository: any SegmentRepository, customerStore: any CustomerStore,
            baselineStore: any SegmentBaselineStore, tracking: TrackingPipeline? = nil,
            integrationID: String = "", storageID: String? = nil, handedOverCustomer: CustomerIds? = nil,
            handOver: (any StorageHandOver)? = nil, refusedStorageRedo: (any RefusedStorageRedo)? = nil,
            eraser: (any StoredDataEraser)? = nil
        ) {
            self.repository = repository
            self.customerStore = customerStore
            self.baselineStore = baselineStore
            self.tracking = tracking
            self.integrationID = integrationID
            self.storageID = storageID
            self.handedOverCustomer = handedOverCustomer
            self.handOver = handOver
            self.refusedStorageRedo = refusedStorageRedo
            self.eraser = eraser
        }
    }

    /// What a tracked item is stamped with and where it is queued, read in one step
    /// (<doc:Behaviour#A4>).
    package struct Stamp: Sendable {
        /// The current customer.
        package let customer: CustomerIds
        /// Where the configuration stores its files (``Ports/storageID``).
        package let storageID: String?
        /// The pipeline of the same configuration.
        package let tracking: TrackingPipeline?
        /// The default properties in force (<doc:Behaviour#E8>).
        package var defaults = DefaultProperties()
        /// Tracking calls wait (``SegmentationEngine/hold(_:)``): the first configure's caller is
        /// still queuing the items of the calls made before it (<doc:Behaviour#E1>, <doc:Behaviour#A4>).
        package var holds = false
    }

    typealias Machine = SegmentationStateMachine

    let dependencies: Dependencies
    let driver: StateMachineDriver<Machine>

    /// An unconfigured engine: listeners and reads can be registered; they are served after
    /// ``configure(_:flushingMode:)``.
    package init(dependencies: Dependencies) {
        self.dependencies = dependencies
        driver = StateMachineDriver(Machine(timings: dependencies.timings), runtime: dependencies.client.runtime) { action, driver in
            Self.perform(action, on: driver, with: dependencies)
        }
    }

    // MARK: - Lifecycle

    /// Whether configured and not stopped.
    package var isConfigured: Bool { driver.read { $0.isConfigured } }

    /// The current customer, or `nil` before configuration and after stop.
    package var customer: CustomerIds? { driver.read { $0.customer } }

    /// Configures the engine with an integration's ports (<doc:Behaviour#T2>, <doc:Behaviour#T6>,
    /// <doc:Behaviour#A4>, <doc:Behaviour#R1>, <doc:Behaviour#R3>).
    ///
    /// The customer comes from memory when this client saved it and the save may still be
    /// queued, otherwise from the store (the small customer file, read on the caller's thread,
    /// outside the lock); a cookie is made when there is none. Never waits for the storage queue.
    /// The baseline loads there in the background; then the initial reload is decided and reads
    /// made before or meanwhile are served in call order. Re-configuring discards the flight but
    /// keeps listeners, what they were told, and a pending or owed reload; the previous
    /// configuration's pipeline is stopped.
    ///
    /// The tracking calls made before the first configure (<doc:Behaviour#E1>) are applied in
    /// their order and their items queued in the new pipeline before this returns, after the
    /// previous configuration's ending: a call the app makes next comes after them.
    /// - Parameters:
    ///   - flushingMode: the mode the configuration names; `nil` keeps the one set last.
    ///   - defaultProperties: what the configuration says of default properties (<doc:Behaviour#E8>);
    ///     `nil` keeps them as they are.
    package func configure(_ ports: Ports, flushingMode: FlushingMode? = nil, defaultProperties: ConfiguredDefaults? = nil) {
        var stored: CustomerIds?? = nil
        var newCookie: String?
        while true {
            switch driver.transition({ machine, now in
                machine.configure(
                    ports, namedMode: flushingMode, stored: stored, newCookie: newCookie, namedDefaults: defaultProperties, at: now)
            }) {
            case .configured(let ending):
                ending.carryOut()
                // The waiting calls' items, then those of the calls made while they were queued,
                // until none is left (see Behaviour E1, A4).
                var replay = ending.replay
                while let next = replay {
                    queue(next)
                    replay = driver.transition { machine, now in machine.replayed(at: now) }
                }
                return
            case .needsStoredCustomer: stored = .some(ports.customerStore.load())
            case .needsNewCookie: newCookie = dependencies.makeCookie()
            }
        }
    }

    /// Queues the items `configure` decided for the calls made before it, in their order
    /// (<doc:Behaviour#E1>). One that cannot be queued (the queue full or unwritable, or properties
    /// that grew past 64 KiB with the default properties) is logged as an error; the others go on.
    private func queue(_ replay: WaitingReplay) {
        let logger = dependencies.client.runtime.logger
        guard let pipeline = replay.tracking else {
            if !replay.items.isEmpty {
                logger.log(.error, "Tracking: \(replay.items.count) call(s) made before configure were dropped: the integration does not track")
            }
            return
        }
        for item in replay.items {
            do {
                // Written even when a stop racing this configure stopped the pipeline meanwhile: the
                // calls were accepted before it (see Behaviour E1, E4).
                let written = try pipeline.trackAccepted(
                    item.kind, properties: item.properties, timestamp: item.timestamp, customer: item.customer)
                // A re-configure on the same storage stopped the pipeline meanwhile: its successor takes
                // over the item written (see SegmentsClient's queue).
                if !written.queued, let now = stamp, let successor = now.tracking, successor !== pipeline,
                    now.storageID != nil, now.storageID == replay.storageID
                {
                    successor.adopt(written.event)
                }
            } catch {
                logger.log(.error, "Tracking: A call made before configure could not be queued: \(SegmentsError.wrapping(error))")
            }
        }
    }

    /// Keeps a tracking call made while no configuration is in force (<doc:Behaviour#E1>, rev 4):
    /// `.held` before the first configure (it is applied when configure runs), `.full` when
    /// ``WaitingCalls/capacity`` wait already, `.stopped` after a stop, `.configured` when a
    /// configuration is in force (the caller tracks it as usual).
    package func hold(_ call: HeldCall) -> HoldOutcome {
        driver.transition { machine, now in machine.hold(call, at: now) }
    }

    /// The default properties (<doc:Behaviour#E8>): set at any time, before configure too; items
    /// stamped after the change get them, in the same order as the lifecycle calls (<doc:Behaviour#A4>).
    package var defaultProperties: DefaultProperties {
        driver.read { $0.defaultProperties }
    }

    /// Sets the default properties' values (<doc:Behaviour#E8>); whether customer updates get them
    /// stays the configuration's.
    package func setDefaultProperties(_ properties: [String: JSONValue]) {
        driver.transition { machine, _ in machine.setDefaultProperties(properties) }
    }

    /// The customer file of `storageID`, which configure could not read because protected data
    /// was not available, has been read now (<doc:Behaviour#P8>): `stored` replaces the customer
    /// configure made for lack of it, unless the customer changed meanwhile (then the current one
    /// is saved over the file).
    package func storedCustomerRead(_ stored: CustomerIds?, storageID: String) {
        driver.transition { machine, now in machine.storedCustomerRead(stored, in: storageID, at: now) }
    }

    /// Stops the integration (<doc:Behaviour#A3>): cancels and discards segment work, deletes the
    /// baseline and link memory, removes every listener but those kept across stops (a model's,
    /// told `[]`; <doc:Behaviour#M5>) without waiting for a running handler (D7), finishes the change
    /// streams, answers pending reads with `.stopped`, stops the tracking pipeline and frees the
    /// storage before it returns, and rejects work until configured again.
    ///
    /// `completion` is called on the main queue once the disk work the client queued until the
    /// stop is done (or, when a deletion of a stop is still to come, once that is).
    package func stop(completion: LifecycleCompletion? = nil) {
        driver.transition { machine, _ in machine.stop(completion: completion) }.carryOut()
    }

    /// Stops as ``stop(completion:)`` does, and deletes the stored data behind the app's back
    /// (<doc:Behaviour#A3> rev 4, the Exponea SDK 4.x `stopIntegration`): the pipeline uploads what
    /// is queued in one last flush (it ends when the queue is empty or an upload fails, without
    /// waiting out a backoff), then the customer, the baseline, the link memory and the queued
    /// items are deleted on the storage queue, and `completion` is called on the main queue. The
    /// storage is free for another client of the process when this returns; that client makes a
    /// new customer and reads the folder only once the deletion is done (<doc:Behaviour#P5>).
    /// Never configured, `defaultStorage` (the storage ids it covers and its eraser) is deleted
    /// without upload.
    package func stopErasing(
        completion: LifecycleCompletion? = nil, defaultStorage: (storage: String, eraser: any StoredDataEraser)? = nil
    ) {
        let defaultStorage = defaultStorage.map { LifecycleStateMachine.DefaultStorage(storage: $0.storage, eraser: $0.eraser) }
        let ending = driver.transition { machine, _ in
            machine.stop(erasing: true, completion: completion, defaultStorage: defaultStorage)
        }
        ending.carryOut()
        if let (pipeline, erasure) = ending.lastFlush {
            // Held until the flush ends: the deletion and the completion follow even when the app
            // lets go of the client meanwhile.
            let driver = self.driver
            pipeline.finish { driver.transition { machine, _ in machine.lastFlushEnded(erasure) } }
        }
    }

    /// Whether a deletion of stored data is still to come (<doc:Behaviour#A3>).
    package var erasurePending: Bool { driver.read { $0.erasurePending } }

    /// The client was let go of without ``stop()``: the configuration ends as at a stop, but what
    /// it stored stays (<doc:Behaviour#P5>, <doc:Behaviour#R1>): the next owner of its folder in
    /// this process is handed the customer it ended with.
    package func clientReleased() {
        driver.transition { machine, _ in machine.clientReleased() }.carryOut()
    }

    /// Protected data became available (<doc:Behaviour#P8>): the configuration in force redoes, on
    /// the storage queue, what its storage refused.
    package func protectedDataBecameAvailable() {
        driver.transition { machine, _ in machine.protectedDataBecameAvailable() }
    }

    /// Switches to a new anonymous customer (<doc:Behaviour#A1>, <doc:Behaviour#A2>): new cookie,
    /// no hard ids; cancels pending and in-flight segment work, deletes the baseline and link
    /// memory, tells listeners of non-empty categories `[]`, and answers pending reads with `[]`.
    /// Listeners stay, and a reload for the new customer is requested when there are any.
    ///
    /// Before the first configure it waits with the tracking calls made before it (<doc:Behaviour#E1>).
    /// - Returns: the new customer, or `nil` when not configured.
    ///
    /// `completion` is called on the main queue once the new customer is saved (<doc:Behaviour#A5>);
    /// before configure, once the disk work queued so far is done.
    @discardableResult
    package func anonymize(completion: LifecycleCompletion? = nil) -> CustomerIds? {
        let newCookie = dependencies.makeCookie()
        return driver.transition { machine, now in machine.anonymize(newCookie: newCookie, at: now, completion: completion) }
    }

    /// The customer a tracked item is stamped with and the pipeline of the same configuration,
    /// read in one step (<doc:Behaviour#A4>); `nil` when not configured.
    package var stamp: Stamp? { driver.read { $0.stamp } }

    /// Decides an identify (<doc:Behaviour#E1>, <doc:Behaviour#A4>): returns the stamp its customer
    /// update is to be written with — the ids of identify calls decided before and still being
    /// written included — and a ticket the caller ends with ``endIdentify(_:queued:)`` once the
    /// update is written or refused; `nil` when not configured.
    package func beginIdentify(hardIds: [String: String]) -> (ticket: Int, stamp: Stamp)? {
        driver.transition { machine, _ in machine.beginIdentify(hardIds: hardIds) }
    }

    /// Ends the identify `ticket`: when its update was `queued`, its ids are merged into the
    /// customer (in decision order, unless another call replaced the customer since) and saved,
    /// and listeners get a reload (<doc:Behaviour#T4>); when refused, nothing changes.
    package func endIdentify(_ ticket: Int, queued: Bool) {
        driver.transition { machine, now in machine.endIdentify(ticket, queued: queued, at: now) }
    }

    /// Whether the identify `ticket` was decided before the stop that stopped its pipeline: it came
    /// first in the one order, so its update is written anyway (<doc:Behaviour#A4>).
    package func identifyCameBeforeTheStop(_ ticket: Int) -> Bool {
        driver.read { $0.identifyCameBeforeTheStop(ticket) }
    }

    /// Merges hard ids into the current customer at once, with no update to write (an engine
    /// without a pipeline); returns the customer then, `nil` when not configured.
    @discardableResult
    package func identify(hardIds: [String: String]) -> CustomerIds? {
        guard let (ticket, _) = beginIdentify(hardIds: hardIds) else { return nil }
        endIdentify(ticket, queued: true)
        return customer
    }

    /// The flushing mode in force, or set for the next configure (<doc:Behaviour#E2>); setting it
    /// switches the configured pipeline in the same total order as the other lifecycle calls
    /// (<doc:Behaviour#A4>) and warns once when listeners exist and it is not immediate (T8).
    package var flushingMode: FlushingMode {
        get { driver.read { $0.flushingMode } }
        set { driver.transition { machine, _ in machine.setFlushingMode(newValue) } }
    }

    /// A change in the app's life (<doc:Behaviour#E2>, <doc:Behaviour#E7>, <doc:Behaviour#T11>):
    /// returning to the foreground, listeners get a reload when the newest successful one is older
    /// than the foreground refresh age; resigning active or entering the background goes to the
    /// current configuration's tracking pipeline, which flushes (asking `lifecycle` for background
    /// time).
    package func appLifecycleChanged(_ event: AppLifecycleEvent, lifecycle: any AppLifecycle) {
        switch event {
        case .willEnterForeground:
            driver.transition { machine, now in machine.appWillEnterForeground(at: now) }
        case .willResignActive, .didEnterBackground:
            stamp?.tracking?.appLifecycleChanged(event, lifecycle: lifecycle)
        case .didBecomeActive:
            break
        }
    }

    /// The network path changed (<doc:Behaviour#N1>–<doc:Behaviour#N3>): one transition in the
    /// client's order. Offline no upload and no segment request starts and a read that needs the
    /// network fails at once; when a usable path returns the queue is flushed, a backoff is cut
    /// short, and listeners get a reload when their segments are older than the foreground refresh
    /// age.
    package func networkPathChanged(_ status: NetworkPathStatus) {
        driver.transition { machine, now in machine.networkPathChanged(status, at: now) }
    }

    /// The network path last reported (<doc:Behaviour#N1>).
    package var networkPath: NetworkPathStatus { driver.read { $0.networkPath } }

    /// Requests a reload because a tracked event or customer update was uploaded (<doc:Behaviour#T3>).
    package func itemUploaded() {
        driver.transition { machine, now in machine.itemUploaded(at: now) }
    }

    // MARK: - Listeners

    /// Registers a listener (<doc:Behaviour#M4>); callable from any thread, in call order.
    ///
    /// When the engine is configured this requests a reload (<doc:Behaviour#T1>).
    /// - Parameters:
    ///   - group: registrations sharing a group are removed together by ``removeListeners(group:)``.
    ///   - owner: when given, the registration ends by itself once `owner` is deallocated.
    /// - Returns: the token that removes this one registration.
    @discardableResult
    package func addListener(
        _ listener: SegmentListener, group: UUID? = nil, owner: AnyObject? = nil, lifetime: ListenerLifetime = .untilStop
    ) -> ListenerToken {
        driver.transition { machine, now in machine.addListener(listener, group: group, owner: owner, lifetime: lifetime, at: now) }
    }

    /// Removes one registration; unknown tokens are ignored. Never waits: once this returns no
    /// new call of the handler starts, and a call running right now may finish (<doc:Behaviour#D7>). A
    /// handler may remove its own listener.
    package func removeListener(_ token: ListenerToken) {
        driver.transition { machine, _ in machine.removeListener(token) }
    }

    /// Removes every registration of `group`; an unknown group is ignored. Never waits
    /// (<doc:Behaviour#D7>).
    package func removeListeners(group: UUID) {
        driver.transition { machine, _ in machine.removeListeners(group: group) }
    }

    /// How many listeners are registered (owners that are gone do not count).
    package var listenerCount: Int {
        let (registered, owners) = driver.read { $0.listenerCount }
        // Owners are looked at after the lock: a look holds the object for a moment (see Behaviour D7).
        return registered - owners.filter { $0.object == nil }.count
    }

    /// The changes of `category` as a stream: each element is the category's full list, as a
    /// listener would receive it. Ending the iteration removes the registration; ``stop()`` finishes
    /// the stream (<doc:Behaviour#M5>).
    ///
    /// The stream keeps only the newest list when the consumer falls behind: each element is a
    /// complete list, so an older one is never needed once a newer one arrived, and a consumer
    /// that stops reading cannot make the stream grow without bound.
    package func changes(of category: SegmentCategory, includeFirstLoad: Bool = false) -> AsyncStream<[Segment]> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let token = addListener(
                SegmentListener(category: category, includeFirstLoad: includeFirstLoad) { continuation.yield($0) },
                lifetime: .stream(end: { continuation.finish() }))
            continuation.onTermination = { [weak self] _ in self?.removeListener(token) }
        }
    }

    // MARK: - One-shot reads

    /// Answers the segments of `category` for the current customer, exactly once, on the delivery
    /// queue (<doc:Behaviour#G1>–<doc:Behaviour#G6>).
    ///
    /// Without `force`, a baseline of exactly this customer younger than the cache time answers at
    /// once. Otherwise the read joins the fetch in flight or starts one; the fetch updates the
    /// baseline and tells listeners about changes like any reload. Before configuration the read
    /// waits (at most 1,000 reads wait; more fail with `.notConfigured`); after ``stop()`` it fails
    /// with `.stopped`.
    package func getSegments(
        force: Bool = false, category: SegmentCategory,
        completion: @escaping @Sendable (Result<[Segment], SegmentsError>) -> Void
    ) {
        if let hit = cacheHit(category, force: force) {
            dependencies.client.runtime.deliveryQueue.async { completion(.success(hit)) }
            return
        }
        driver.transition { machine, now in
            machine.read(category, force: force, reply: .onDeliveryQueue(completion), at: now).1
        }
    }

    /// The `async` form of ``getSegments(force:category:completion:)``: throws ``SegmentsError``.
    /// The awaiting task is resumed directly, without a hop through the delivery queue
    /// (<doc:Behaviour#G4>).
    ///
    /// Cancelling the calling task withdraws the read at once: it throws `.cancelled` (still
    /// exactly one answer), and a fetch it started goes on for the other readers and listeners.
    package func getSegments(force: Bool = false, category: SegmentCategory) async throws -> [Segment] {
        // A hit answers without suspending the task at all; a cancelled task takes the slow path,
        // which answers it with `.cancelled`.
        if !Task.isCancelled, let hit = cacheHit(category, force: force) { return hit }
        let readID = Locked<Int?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let id = driver.transition { machine, now in
                    machine.read(category, force: force, reply: .direct { continuation.resume(with: $0) }, at: now)
                }
                readID.withLock { $0 = id }
                // Cancelled before the read existed: the handler below found nothing to withdraw.
                if Task.isCancelled { withdrawRead(id) }
            }
        } onCancel: {
            if let id = readID.value { withdrawRead(id) }
        }
    }

    /// The answer of a read when the cache gives it right now: one look under the lock, no
    /// transition, nothing queued (<doc:Behaviour#G1>, <doc:Behaviour#G4>). `nil` with `force` or
    /// when the read must wait. The clocks are read before the lock (they are ports): the wall
    /// clock only for a snapshot another process fetched, whose age it alone gives (T10).
    private func cacheHit(_ category: SegmentCategory, force: Bool) -> [Segment]? {
        guard !force else { return nil }
        let clock = dependencies.client.runtime.clock
        let uptime = clock.uptime()
        var answer = driver.read { $0.cacheHit(category, uptime: uptime, wall: nil) }
        if case .needsWallClock = answer {
            let wall = clock.now()
            answer = driver.read { $0.cacheHit(category, uptime: uptime, wall: wall) }
        }
        if case .answer(let segments) = answer { return segments }
        return nil
    }

    private func withdrawRead(_ id: Int) {
        driver.transition { machine, _ in machine.withdrawRead(id) }
    }

    // MARK: - Carrying out the machine's actions (outside the lock, in decision order)

    private static func perform(_ action: Machine.Action, on driver: StateMachineDriver<Machine>, with dependencies: Dependencies) {
        let runtime = dependencies.client.runtime
        switch action {
        case .lifecycle(let action):
            perform(action, on: driver, with: dependencies)
        case .reads(.answer(let reads, let result)):
            answer(reads, with: result, on: runtime.deliveryQueue)
        case .log(let level, let message):
            runtime.logger.log(level, message)
        case .logLinkFailure(let customer):
            let verbose = runtime.logger.isEnabled(.verbose)
            runtime.logger.log(.warning, SegmentsLogText.linkFailed(customer, verbose: verbose))
        case .startFlight(let flight):
            runtime.scheduler.schedule(after: 0) { [weak driver] in
                guard let driver else { return }
                await run(flight, on: driver)
            }
        case .deliver(let deliveries):
            // One hop for the whole fan-out; each call still checks its gate when it runs (D7).
            runtime.deliveryQueue.async {
                for delivery in deliveries { delivery.run() }
            }
        case .endStreams(let ends):
            for end in ends { end() }
        case .trackingPath(let pipeline, let status):
            pipeline.networkPathChanged(status)
        }
    }

    /// Carries out one of the lifecycle's actions: the stores, the pipeline, the storage.
    private static func perform(
        _ action: LifecycleStateMachine.Action, on driver: StateMachineDriver<Machine>, with dependencies: Dependencies
    ) {
        switch action {
        case .log(let level, let message):
            dependencies.client.runtime.logger.log(level, message)
        case .saveCustomer(let customer, let store, let storageID):
            save("the customer", with: dependencies) { [weak driver] in
                defer {
                    if let storageID { driver?.transition { machine, _ in machine.customerSaved(in: storageID) } }
                }
                try store.save(customer)
            }
        case .saveBaseline(let baseline, let store):
            save("the segments baseline", with: dependencies) { try store.save(baseline) }
        case .loadBaseline(let load, let store):
            dependencies.client.storageQueue.async { [weak driver] in
                let baseline = store.load()
                driver?.transition { machine, now in machine.baselineLoaded(load, baseline, at: now) }
            }
        case .setFlushingMode(let pipeline, let mode):
            pipeline.mode = mode
        case .startTracking(let pipeline, let after):
            // Not before the ended pipelines on the same store are settled (see Behaviour E4).
            startLoading(pipeline, after: after[...])
        case .watchSettled(let pipeline):
            let id = ObjectIdentifier(pipeline)
            pipeline.whenSettled { [weak driver] in driver?.transition { machine, _ in machine.trackingSettled(id) } }
        case .storageWritesQueued(let handOver):
            handOver.writesQueued()
        case .handedOverCustomerWritten(let storageID):
            dependencies.client.storageQueue.async { [weak driver] in
                driver?.transition { machine, _ in machine.customerSaved(in: storageID) }
            }
        case .redoRefusedStorage(let redo, let storageID, let tracking):
            dependencies.client.storageQueue.async { [weak driver] in
                let redone = redo.redo()
                if case .read(let stored) = redone.customer {
                    driver?.transition { machine, now in machine.storedCustomerRead(stored, in: storageID, at: now) }
                }
                // Items the queue file held, found now: queued behind those tracked meanwhile (the
                // pipeline ignores the ones it has, or uploaded with their removal still queued).
                tracking?.adoptStored(redone.items)
            }
        case .erase(let erasure, let eraser, let tracking):
            // Held until done: the completion of the stop follows even when the app lets go of
            // the client meanwhile.
            dependencies.client.storageQueue.async { [driver] in
                // Stopped here, behind its load on this queue: it knows every item of the store
                // it held; a last flush still running is cut short.
                tracking?.stop()
                eraser?.erase(queuedItems: tracking?.itemsLeftAtStop ?? [])
                driver.transition { machine, _ in machine.erased(erasure) }
            }
        case .completeAfterStorageWork(let completions):
            dependencies.client.storageQueue.async {
                DispatchQueue.main.async { completions.forEach { $0() } }
            }
        case .complete(let completions):
            DispatchQueue.main.async { completions.forEach { $0() } }
        }
    }

    /// Starts `pipeline`'s load once every pipeline of `previous` is settled, one after another.
    private static func startLoading(_ pipeline: TrackingPipeline, after previous: ArraySlice<TrackingPipeline>) {
        guard let first = previous.first else { return pipeline.startLoading() }
        first.whenSettled { startLoading(pipeline, after: previous.dropFirst()) }
    }

    /// Answers reads: completion handlers in one hop on the delivery queue, awaiting tasks
    /// directly (<doc:Behaviour#G4>).
    private static func answer(
        _ reads: [Machine.PendingRead], with result: Result<SegmentsByCategory, SegmentsError>, on queue: DispatchQueue
    ) {
        var onQueue: [@Sendable () -> Void] = []
        for read in reads {
            let narrowed = result.map { $0[read.category] ?? [] }
            switch read.reply {
            case .direct(let resume): resume(narrowed)
            case .onDeliveryQueue(let completion): onQueue.append { completion(narrowed) }
            }
        }
        guard !onQueue.isEmpty else { return }
        let calls = onQueue
        queue.async { calls.forEach { $0() } }
    }

    /// Saves on the storage queue, in the order decided; a failure is logged.
    private static func save(_ what: String, with dependencies: Dependencies, _ write: @escaping @Sendable () throws -> Void) {
        let logger = dependencies.client.runtime.logger
        dependencies.client.storageQueue.async {
            do { try write() } catch {
                logger.log(.error, "Segments: Saving \(what) failed: \(SegmentsError.summary(of: error))")
            }
        }
    }

    /// Links (when needed), then fetches; before each request the machine records a link that
    /// succeeded and says whether to send it or abandon the flight
    /// (``SegmentationStateMachine/beforeRequest(of:linked:at:)``; <doc:Behaviour#C1>,
    /// <doc:Behaviour#C2>, <doc:Behaviour#C4>).
    private static func run(_ flight: Machine.Flight, on driver: StateMachineDriver<Machine>) async {
        func beforeRequest(linked: Bool) -> Machine.NextRequest {
            driver.transition { machine, now in machine.beforeRequest(of: flight.id, linked: linked, at: now) }
        }
        func finish(_ result: Result<SegmentsByCategory, SegmentsError>) {
            driver.transition { machine, now in machine.flightFinished(flight.id, with: result, at: now) }
        }
        guard beforeRequest(linked: false) == .send else { return }
        if flight.needsLink {
            do {
                try await flight.repository.linkCustomerIds(flight.customer)
            } catch {
                let cause = SegmentsError.wrapping(error)
                finish(.failure(SegmentsError(
                    .linkFailed, "linking the customer ids failed: \(cause)", httpStatus: cause.httpStatus,
                    retryAfter: cause.retryAfter, underlying: cause)))
                return
            }
            guard beforeRequest(linked: true) == .send else { return }
        }
        do {
            finish(.success(try await flight.repository.fetchSegments(for: flight.customer)))
        } catch {
            finish(.failure(SegmentsError.wrapping(error)))
        }
    }
}

/// What a configuration's storage redoes once protected data is available (<doc:Behaviour#P8>):
/// the files it refused before the device's first unlock.
package protocol RefusedStorageRedo: Sendable {
    /// Redoes the refused work; runs on the client's storage queue, never under a lock.
    func redo() -> RefusedStorageRedone
}

/// What ``RefusedStorageRedo/redo()`` found.
package struct RefusedStorageRedone: Sendable {
    /// The customer file, when it was read now.
    package enum CustomerRead: Sendable {
        /// Not read: it was read before, or is still refused.
        case notRead
        /// Read: the stored customer, `nil` when there is none.
        case read(CustomerIds?)
    }

    /// The customer file's outcome.
    package var customer: CustomerRead
    /// The queue file's items, read now.
    package var items: [TrackedEvent]

    /// Creates an outcome.
    package init(customer: CustomerRead, items: [TrackedEvent]) {
        self.customer = customer
        self.items = items
    }
}

/// How a configuration gives its storage back when it ends — stopped, or replaced by one on other
/// storage — in two steps (<doc:Behaviour#P5>, <doc:Behaviour#R1>).
///
/// The call that ended the configuration releases the storage before it returns, so the app's
/// next call may give the folder to another client. The writes the configuration decided before
/// its end may not have been queued on its storage queue yet (another thread may be carrying out
/// the engine's earlier steps), so the second step says when they have: the next owner waits for
/// them before it reads the files.
package protocol StorageHandOver: Sendable {
    /// Frees the storage for another client of the process, which is told `customer`, the one the
    /// configuration ended with. Called once, outside any lock, before the call that ended the
    /// configuration returns.
    func release(endingWith customer: CustomerIds)

    /// Called once, in the order of the engine's steps: every write decided before the end has
    /// been queued on the storage queue.
    func writesQueued()
}
