import Foundation
import SegmentsDomain

/// Every decision of one client — its life, customer, segments, listeners and reads — as one
/// value (the T, C, D, G, M and A rules of <doc:Behaviour>).
///
/// Each event the engine sees — a public call, a timer firing, a flight or a load coming back —
/// is one `mutating` transition that changes ``state`` and returns the ``Steps`` it decided. A
/// transition does no I/O and calls none of the app's code — no handler, store, repository,
/// logger or scheduler — but the component does: the ``StateMachineDriver`` holds the machine
/// under its lock and, after releasing it, carries the steps out through ``SegmentationEngine``,
/// in the order they were decided. Time, jitter and new cookies are inputs.
///
/// The machine holds nothing but its state, and its state is four machines of their own, as
/// async-http-client's connection pool delegates to its sibling machines: each has one state, its
/// own transitions and its own action enum, and this machine routes every event to them, decides
/// what one's outcome means for the others, and turns their actions into its own:
/// - ``LifecycleStateMachine``: unconfigured, loading, running, stopped — the configuration's ports
///   (backend, stores, tracking pipeline, storage hand-over and protected-data redo), the customer,
///   the baseline, the flushing mode, the customers whose save is not written yet;
/// - ``ReloadStateMachine``: idle, debouncing, retrying, fetching — when to fetch;
/// - ``PendingReads``: the one-shot reads that wait;
/// - ``ListenerRegistry``: the listeners, what each was told, and their lifetimes.
///
/// Because they are one value under one lock, the lifecycle calls of a client — configure, stop,
/// anonymize, identify, the flushing mode, protected data becoming available — take effect in one
/// total order (<doc:Behaviour#A4>), and so do the listeners and reads they affect.
struct SegmentationStateMachine: DrivenStateMachine {
    // MARK: - State

    /// The client's state: its parts, each a machine of its own with its own state enum. A struct
    /// of them rather than an enum with one live case: a look at an enum's payload copies it, and
    /// the looks made on the app's thread (the stamp of `trackEvent`, a cache hit, the cookie) paid
    /// about 300 ns each for that copy (benchmark 10k: 571 against 261 ns).
    private struct Parts: Sendable {
        var lifecycle: LifecycleStateMachine
        var reload = ReloadStateMachine()
        var reads = PendingReads()
        var listeners = ListenerRegistry()
        /// The network path last reported (<doc:Behaviour#N1>): offline, no segment request starts.
        var path = NetworkPathStatus.usable
    }

    typealias Flight = ReloadStateMachine.Flight
    typealias Reload = ReloadStateMachine.State
    typealias PendingRead = PendingReads.Read
    typealias ReadReply = PendingReads.Reply
    typealias Ending = LifecycleStateMachine.Ending
    typealias ConfigureOutcome = LifecycleStateMachine.ConfigureOutcome

    /// What the engine carries out once the lock is released: the parts' actions, and the
    /// deliveries and stream ends decided here.
    enum Action: Sendable {
        /// One of the lifecycle's: saves, loads, the pipeline, the storage.
        case lifecycle(LifecycleStateMachine.Action)
        /// One of the reads': answers (<doc:Behaviour#G4>).
        case reads(PendingReads.Action)
        case log(LogLevel, String)
        /// The link-failure line: the customer's ids appear only at verbose level
        /// (<doc:Behaviour#C4>, <doc:Behaviour#P4>).
        case logLinkFailure(CustomerIds)
        case startFlight(Flight)
        /// Handler calls, run in this order on the delivery queue
        /// (<doc:Behaviour#D5>–<doc:Behaviour#D8>).
        case deliver([Delivery])
        /// Finish the `changes(of:)` streams a stop removed (<doc:Behaviour#M5>).
        case endStreams([@Sendable () -> Void])
        /// Tell the configuration's pipeline the network path (<doc:Behaviour#N1>, <doc:Behaviour#N2>),
        /// in the order of the other lifecycle decisions.
        case trackingPath(TrackingPipeline, NetworkPathStatus)
    }

    typealias Actions = Steps<Action>

    private var state: Parts

    init(timings: SegmentationTimings) {
        state = Parts(lifecycle: LifecycleStateMachine(timings: timings))
    }

    /// Runs `body` on the parts in place.
    private mutating func mutate<Result>(_ body: (inout Parts) -> Result) -> Result {
        body(&state)
    }

    // MARK: - Looking at the state

    /// Whether configured and not stopped.
    var isConfigured: Bool { state.lifecycle.isConfigured }

    /// The current customer, or `nil` before configuration and after stop.
    var customer: CustomerIds? { state.lifecycle.customer }

    /// The flushing mode in force, or the one set before configure (`.immediate` by default).
    var flushingMode: FlushingMode { state.lifecycle.flushingMode }

    /// How many listeners are registered, those whose owner went but that were not pruned yet
    /// included, and the owners of the registrations tied to one: ``SegmentationEngine`` looks at
    /// those after the lock (<doc:Behaviour#D7>).
    var listenerCount: (registered: Int, owners: [WeakOwner]) { (state.listeners.count, state.listeners.owners) }

    /// The network path last reported (<doc:Behaviour#N1>).
    var networkPath: NetworkPathStatus { state.path }

    /// The timer the reload waits for, if any.
    var currentTimer: TimerID? { state.lifecycle.isConfigured ? state.reload.timer : nil }

    /// The reload's state (for tests and diagnostics); `nil` when not configured.
    var reload: Reload? { state.lifecycle.isConfigured ? state.reload.state : nil }

    /// The current customer and the pipeline of the same configuration, or `nil` when not configured.
    var stamp: SegmentationEngine.Stamp? { state.lifecycle.stamp }

    /// The answer of a read without `force` when the cache gives it right now (<doc:Behaviour#G1>).
    func cacheHit(_ category: SegmentCategory, uptime: TimeInterval, wall: Date?) -> LifecycleStateMachine.CacheAnswer {
        state.lifecycle.cacheHit(category, uptime: uptime, wall: wall)
    }

    // MARK: - Configure (unconfigured, running or stopped → loading → running)

    /// Configures (or re-configures) with `ports` (<doc:Behaviour#T2>, <doc:Behaviour#T6>,
    /// <doc:Behaviour#A4>, <doc:Behaviour#R1>, <doc:Behaviour#R3>): see
    /// ``LifecycleStateMachine/configure(_:namedMode:stored:newCookie:reload:hasListeners:)``. A
    /// reload that was pending, owed or in flight is requested again once the new baseline is in;
    /// listeners, what they were told and reads made before stay. The previous configuration's
    /// ports, pipeline and flight are let go of after the lock.
    mutating func configure(
        _ ports: SegmentationEngine.Ports, namedMode: FlushingMode?, stored: CustomerIds??, newCookie: String?,
        namedDefaults: ConfiguredDefaults? = nil, at now: Moment
    ) -> (ConfigureOutcome, Actions) {
        mutate { parts in
            var actions = Actions()
            let (outcome, decided, dropped) = parts.lifecycle.configure(
                ports, namedMode: namedMode, stored: stored, newCookie: newCookie, reload: parts.reload.pending,
                hasListeners: !parts.listeners.isEmpty, namedDefaults: namedDefaults)
            if case .configured = outcome {
                _ = Self.cancelReload(&parts, &actions)
                // The new pipeline learns the path before it starts loading, so nothing is sent offline (N1).
                if parts.path == .unusable, let tracking = ports.tracking { actions.append(.trackingPath(tracking, .unusable)) }
            }
            Self.add(decided, to: &actions)
            if let dropped { actions.release(dropped) }
            return (outcome, actions)
        }
    }

    /// The baseline that `configure` asked for is in (<doc:Behaviour#R3>): the initial reload is
    /// decided (T2) and the reads made meanwhile are served, in call order. A load that a later
    /// configure or stop overtook is ignored.
    mutating func baselineLoaded(_ loadID: Int, _ loaded: SegmentBaseline, at now: Moment) -> Actions {
        mutate { parts in
            var actions = Actions()
            let (load, decided) = parts.lifecycle.baselineLoaded(loadID, loaded)
            Self.add(decided, to: &actions)
            guard let load else { return actions }
            Self.pruneReleasedOwners(&parts, &actions)
            if parts.listeners.isEmpty {
                actions.append(.log(.verbose, SegmentsLogText.initialSkippedNoCallback))
            } else if load.reloadOwed || load.otherIntegration || parts.listeners.anyIncludesFirstLoad {
                Self.requestReload(&parts, at: now, burstStarted: load.burstStarted, &actions)
            } else {
                actions.append(.log(.verbose, SegmentsLogText.initialSkippedNotRequired))
            }
            for read in parts.reads.takeAll() { Self.serve(read, &parts, at: now, &actions) }
            return actions
        }
    }

    /// A customer save was written: once none is pending for its storage, the store is the truth again.
    mutating func customerSaved(in storageID: String) -> Actions {
        mutate { $0.lifecycle.customerSaved(in: storageID) }
        return Actions()
    }

    /// The customer file of `storageID`, refused at configure because protected data was not
    /// available, has been read (<doc:Behaviour#P8>): adopted like an identify when the customer is
    /// still the one configure made — the reload backoff ends and, with listeners, a reload is
    /// requested.
    mutating func storedCustomerRead(_ stored: CustomerIds?, in storageID: String, at now: Moment) -> Actions {
        mutate { parts in
            var actions = Actions()
            let (adopted, decided) = parts.lifecycle.storedCustomerRead(stored, in: storageID)
            Self.add(decided, to: &actions)
            if adopted { Self.customerIdsChanged(&parts, at: now, &actions) }
            return actions
        }
    }

    /// Protected data became available (<doc:Behaviour#P8>): the configuration in force redoes
    /// what its storage refused, in this place of the order.
    mutating func protectedDataBecameAvailable() -> Actions {
        var actions = Actions()
        Self.add(state.lifecycle.protectedDataBecameAvailable(), to: &actions)
        return actions
    }

    // MARK: - Calls made before the first configure, default properties (any state)

    /// A tracking call made while no configuration is in force (<doc:Behaviour#E1>, rev 4).
    mutating func hold(_ call: HeldCall, at now: Moment) -> (HoldOutcome, Actions) {
        (mutate { $0.lifecycle.hold(call, at: now.wall) }, Actions())
    }

    /// The default properties in force, or set for the next configure (<doc:Behaviour#E8>).
    var defaultProperties: DefaultProperties { state.lifecycle.defaults }

    /// Sets the default properties (<doc:Behaviour#E8>, <doc:Behaviour#A4>): items stamped after this
    /// transition get them.
    mutating func setDefaultProperties(_ properties: [String: JSONValue]) -> Actions {
        mutate { $0.lifecycle.setDefaultProperties(properties) }
        return Actions()
    }

    /// The pipeline of an ended configuration is settled: its last flush ended, its removals
    /// queued (<doc:Behaviour#E4>, <doc:Behaviour#A4>).
    mutating func trackingSettled(_ pipeline: ObjectIdentifier) -> Actions {
        state.lifecycle.trackingSettled(pipeline)
        return Actions()
    }

    // MARK: - The flushing mode (any state)

    /// Sets the flushing mode (<doc:Behaviour#E2>, <doc:Behaviour#T8>, <doc:Behaviour#A4>).
    mutating func setFlushingMode(_ mode: FlushingMode) -> Actions {
        mutate { parts in
            var actions = Actions()
            Self.add(parts.lifecycle.setFlushingMode(mode, hasListeners: !parts.listeners.isEmpty), to: &actions)
            return actions
        }
    }

    // MARK: - The customer (loading or running)

    /// Decides an identify (<doc:Behaviour#E1>, <doc:Behaviour#A4>): the stamp its update is
    /// written with, and its ticket for ``endIdentify(_:queued:at:)``; `nil` when not configured.
    mutating func beginIdentify(hardIds: [String: String]) -> ((ticket: Int, stamp: SegmentationEngine.Stamp)?, Actions) {
        mutate { parts in (parts.lifecycle.beginIdentify(hardIds: hardIds), Actions()) }
    }

    /// Whether the identify `ticket` came before the stop that ended its configuration: its
    /// update is written though the pipeline stopped (<doc:Behaviour#A4>).
    func identifyCameBeforeTheStop(_ ticket: Int) -> Bool {
        state.lifecycle.identifyCameBeforeTheStop(ticket)
    }

    /// The update of an identify was written or refused: its ids are merged in decision order
    /// (<doc:Behaviour#E1>, <doc:Behaviour#T4>). When the ids change, the backoff of the old ids
    /// ends and a reload is requested.
    mutating func endIdentify(_ ticket: Int, queued: Bool, at now: Moment) -> Actions {
        mutate { parts in
            var actions = Actions()
            let (changed, decided) = parts.lifecycle.endIdentify(ticket, queued: queued)
            Self.add(decided, to: &actions)
            if changed { Self.customerIdsChanged(&parts, at: now, &actions) }
            return actions
        }
    }

    /// A new anonymous customer (<doc:Behaviour#A1>, <doc:Behaviour#A2>): cancels pending and
    /// in-flight work, deletes the baseline and link memory, tells listeners of non-empty
    /// categories `[]`, answers pending reads with `[]`, and, when listeners exist, requests a
    /// reload for the new customer so first-load promises are kept (D6).
    mutating func anonymize(
        newCookie: String, at now: Moment, completion: LifecycleCompletion? = nil
    ) -> (CustomerIds?, Actions) {
        let (customer, decided) = anonymized(newCookie: newCookie, at: now)
        var actions = decided
        // After the new customer's save, in the storage queue's order (A5).
        if let completion { Self.add(state.lifecycle.whenStorageWorkDone(completion), to: &actions) }
        return (customer, actions)
    }

    private mutating func anonymized(newCookie: String, at now: Moment) -> (CustomerIds?, Actions) {
        mutate { parts in
            var actions = Actions()
            guard parts.lifecycle.isConfigured, !parts.lifecycle.holdsCalls else {
                // Before the first configure it waits with the tracking calls, in their order (see
                // Behaviour E1): the items tracked after it are stamped with the new customer.
                if parts.lifecycle.hold(HeldCall(.anonymize(cookie: newCookie)), at: now.wall) == .full {
                    actions.append(.log(.error, SegmentsLogText.waitingCallRefused("anonymize")))
                }
                return (nil, actions)
            }
            let anonymous = Self.anonymizeNow(newCookie: newCookie, &parts, at: now, &actions)
            return (anonymous, actions)
        }
    }

    /// Anonymize's work on a configuration (A1, A2): the new customer, `nil` when not configured.
    @discardableResult
    private static func anonymizeNow(
        newCookie: String, _ parts: inout Parts, at now: Moment, _ actions: inout Actions
    ) -> CustomerIds? {
        if cancelReload(&parts, &actions) { actions.append(.log(.verbose, SegmentsLogText.cancelledMeanwhile)) }
        guard let (anonymous, emptied, decided) = parts.lifecycle.anonymize(newCookie: newCookie) else { return nil }
        add(decided, to: &actions)
        deliver(emptied, answer: [:], firstLoad: false, &parts, &actions)
        add(parts.reads.answerAll(.success([:])), to: &actions)
        pruneReleasedOwners(&parts, &actions)
        if !parts.listeners.isEmpty { requestReload(&parts, at: now, &actions) }
        return anonymous
    }

    /// The caller of the first `configure` queued the items it had (<doc:Behaviour#E1>,
    /// <doc:Behaviour#A4>): the calls made meanwhile are applied in their order — an identify's
    /// ids merged (a reload requested as for any identify), an anonymize carried out — and the
    /// next items returned; `nil` once none waits, and calls are tracked as usual again.
    mutating func replayed(at now: Moment) -> (WaitingReplay?, Actions) {
        mutate { parts in
            var actions = Actions()
            while true {
                switch parts.lifecycle.nextReplay() {
                case .done:
                    return (nil, actions)
                case .anonymize(let cookie):
                    Self.anonymizeNow(newCookie: cookie, &parts, at: now, &actions)
                case .items(let replay, let changed, let decided):
                    Self.add(decided, to: &actions)
                    if changed { Self.customerIdsChanged(&parts, at: now, &actions) }
                    return (replay, actions)
                }
            }
        }
    }

    /// The customer's ids changed under a configuration (identify, the stored customer adopted):
    /// the old ids' backoff ends and listeners get a reload.
    private static func customerIdsChanged(_ parts: inout Parts, at now: Moment, _ actions: inout Actions) {
        let withdrawn = parts.reload.endBackoff()
        carryOut(withdrawn, &parts, &actions)
        // A listener whose owner went is gone: it asks for no reload (M4).
        pruneReleasedOwners(&parts, &actions)
        if !parts.listeners.isEmpty { requestReload(&parts, at: now, &actions) }
    }

    // MARK: - Listeners (any state)

    /// Registers a listener; when configured, requests a reload (<doc:Behaviour#T1>).
    mutating func addListener(
        _ listener: SegmentListener, group: UUID?, owner: AnyObject?, lifetime: ListenerLifetime = .untilStop, at now: Moment
    ) -> (ListenerToken, Actions) {
        mutate { parts in
            var actions = Actions()
            Self.pruneReleasedOwners(&parts, &actions)
            let token = parts.listeners.add(listener, group: group, owner: owner, lifetime: lifetime)
            if parts.lifecycle.isConfigured {
                Self.requestReload(&parts, at: now, &actions)
                Self.add(parts.lifecycle.warnIfTrackingNotImmediate(hasListeners: true), to: &actions)
            }
            return (token, actions)
        }
    }

    /// Removes one registration; its gate is closed before this returns (<doc:Behaviour#D7>). The
    /// registration (its handler) is let go of after the lock.
    mutating func removeListener(_ token: ListenerToken) -> Actions {
        var actions = Actions()
        if let removed = mutate({ $0.listeners.remove(token) }) { actions.release(removed) }
        return actions
    }

    /// Removes every registration of `group`.
    mutating func removeListeners(group: UUID) -> Actions {
        var actions = Actions()
        let removed = mutate { $0.listeners.removeGroup(group) }
        if !removed.isEmpty { actions.release(removed) }
        return actions
    }

    /// Drops registrations whose owner is gone; they are let go of after the lock, and so are the
    /// owners found alive (looking at a weak reference holds the object for a moment: if the app
    /// let go of it meanwhile, its `deinit` must not run under the lock, <doc:Behaviour#D7>).
    private static func pruneReleasedOwners(_ parts: inout Parts, _ actions: inout Actions) {
        var alive: [AnyObject] = []
        let removed = parts.listeners.pruneReleasedOwners(keepingAlive: &alive)
        if !removed.isEmpty { actions.release(removed) }
        if !alive.isEmpty { actions.release(OwnersSeenAlive(objects: alive)) }
    }

    // MARK: - Reloads (running)

    /// A tracked event or customer update was uploaded (<doc:Behaviour#T3>).
    mutating func itemUploaded(at now: Moment) -> Actions {
        mutate { parts in
            var actions = Actions()
            guard parts.lifecycle.isConfigured else { return actions }
            Self.pruneReleasedOwners(&parts, &actions)
            guard !parts.listeners.isEmpty else {
                actions.append(.log(.verbose, SegmentsLogText.trackedSkippedNoCallback))
                return actions
            }
            Self.requestReload(&parts, at: now, &actions)
            return actions
        }
    }

    /// The app is returning to the foreground (<doc:Behaviour#T11>): with listeners, and the newest
    /// successful reload older than the foreground refresh age (or none made by this process, whose
    /// age is unknown), a reload is requested through the debounce like any other. While the
    /// baseline loads, the return is kept and judged against the loaded baseline's age once it is
    /// in; unconfigured or stopped, nothing happens.
    mutating func appWillEnterForeground(at now: Moment) -> Actions {
        mutate { parts in
            var actions = Actions()
            let age = parts.lifecycle.timings.foregroundRefreshAge
            guard age > 0, parts.lifecycle.isConfigured else { return actions }
            Self.pruneReleasedOwners(&parts, &actions)
            guard !parts.listeners.isEmpty else { return actions }
            guard let running = parts.lifecycle.running else {
                parts.lifecycle.returnedToForegroundWhileLoading(at: now.uptime)
                return actions
            }
            if let fetched = running.snapshotUptime, now.uptime - fetched <= age { return actions }
            Self.requestReload(&parts, at: now, &actions)
            return actions
        }
    }

    /// The network path changed (<doc:Behaviour#N1>–<doc:Behaviour#N3>), in this place of the order.
    /// The configuration's pipeline is told (it holds or flushes the queue). Going offline changes
    /// nothing else now: requests that come due wait for the path. When a usable path returns on a
    /// configuration, listeners get a reload when the newest successful one is older than the
    /// foreground refresh age (T11's rule; while the baseline loads, the reload is owed), and a
    /// backoff in progress, or a reload that waited for the path, starts at once. A report of the
    /// path it has already is ignored.
    mutating func networkPathChanged(_ status: NetworkPathStatus, at now: Moment) -> Actions {
        mutate { parts in
            var actions = Actions()
            guard parts.path != status else { return actions }
            parts.path = status
            if let tracking = parts.lifecycle.configured?.ports.tracking { actions.append(.trackingPath(tracking, status)) }
            guard status == .usable, parts.lifecycle.isConfigured else { return actions }
            Self.pruneReleasedOwners(&parts, &actions)
            let age = parts.lifecycle.timings.foregroundRefreshAge
            if !parts.listeners.isEmpty, age > 0 {
                // While the baseline loads its age is unknown: the reload is owed until it is in.
                let stale = parts.lifecycle.running.map { running in running.snapshotUptime.map { now.uptime - $0 > age } ?? true } ?? true
                if stale { Self.requestReload(&parts, at: now, &actions) }
            }
            Self.carryOut(parts.reload.pathReturned(), &parts, &actions)
            return actions
        }
    }

    /// A reload request (<doc:Behaviour#T5>, <doc:Behaviour#T6>): owed while the baseline loads,
    /// otherwise coalesced by the reload.
    private static func requestReload(
        _ parts: inout Parts, at now: Moment, burstStarted: TimeInterval? = nil, _ actions: inout Actions
    ) {
        if parts.lifecycle.isLoading {
            parts.lifecycle.oweReload()
            return
        }
        guard parts.lifecycle.running != nil else { return }
        let decided = parts.reload.request(at: now.uptime, burstStarted: burstStarted, debounce: parts.lifecycle.timings.debounce)
        carryOut(decided, &parts, &actions)
    }

    /// A timer fired: the reload decides whether it starts a fetch. A timer that was replaced or
    /// cancelled does nothing.
    mutating func timerFired(_ timer: TimerID, at now: Moment) -> Actions {
        mutate { parts in
            var actions = Actions()
            guard parts.lifecycle.running != nil else { return actions }
            let decided = parts.reload.timerFired(timer, at: now.uptime, debounce: parts.lifecycle.timings.debounce)
            Self.carryOut(decided, &parts, &actions)
            return actions
        }
    }

    /// Turns the reload's actions into steps; starting a reload is decided here, where the
    /// listeners are known.
    private static func carryOut(_ decided: [ReloadStateMachine.Action], _ parts: inout Parts, _ actions: inout Actions) {
        for action in decided {
            switch action {
            case .scheduleTimer(let timer, let delay): actions.schedule(timer, after: delay)
            case .cancelTimer(let timer): actions.cancel(timer)
            case .startReload(let attempt): startAutomaticReload(&parts, attempt: attempt, &actions)
            }
        }
    }

    /// Starts the reload a timer was waiting for, unless no listener is left (<doc:Behaviour#T7>).
    private static func startAutomaticReload(_ parts: inout Parts, attempt: Int, _ actions: inout Actions) {
        pruneReleasedOwners(&parts, &actions)
        guard !parts.listeners.isEmpty else {
            actions.append(.log(.verbose, SegmentsLogText.reloadSkippedNoCallback))
            return
        }
        startFlight(&parts, forListeners: true, retryAttempt: attempt, &actions)
    }

    /// Snapshots the customer and starts a fetch for it (<doc:Behaviour#C1>), linking first when
    /// needed (C4). A pending debounce or retry is absorbed: the fetch starts after every request
    /// it covered.
    private static func startFlight(_ parts: inout Parts, forListeners: Bool, retryAttempt: Int, _ actions: inout Actions) {
        guard parts.path == .usable else {
            waitForPath(&parts, forListeners: forListeners, retryAttempt: retryAttempt, &actions)
            return
        }
        guard let current = parts.lifecycle.running,
            let ticket = parts.reload.prepareFlight(forListeners: forListeners, retryAttempt: retryAttempt)
        else { return }
        carryOut(ticket.actions, &parts, &actions)
        guard let cookie = current.customer.cookie, !cookie.isEmpty else {
            let error = SegmentsError(.missingCookie, "the customer has no cookie")
            actions.append(.log(.warning, SegmentsLogText.fetchFailed(error)))
            add(parts.reads.answerAll(.failure(error)), to: &actions)
            return
        }
        let flight = Flight(
            id: ticket.id, customer: current.customer,
            needsLink: current.customer.hasHardIds && !current.baseline.linkedCustomers.contains(current.customer),
            repository: current.ports.repository, forListeners: ticket.forListeners, retryAttempt: ticket.retryAttempt)
        parts.reload.began(flight)
        actions.append(.startFlight(flight))
    }

    /// No usable network path (<doc:Behaviour#N1>): no request starts. The reads that wait for a
    /// fetch are answered at once with `SegmentsError.offline`; the reload listeners are owed waits
    /// for the path, its chain of retries as it was (no retry counted, no backoff grown).
    private static func waitForPath(_ parts: inout Parts, forListeners: Bool, retryAttempt: Int, _ actions: inout Actions) {
        guard parts.lifecycle.running != nil else { return }
        add(parts.reads.answerAll(.failure(SegmentsError.offline)), to: &actions)
        if forListeners {
            actions.append(.log(.verbose, SegmentsLogText.reloadWaitsForPath))
            carryOut(parts.reload.waitForPath(attempt: retryAttempt), &parts, &actions)
        }
    }

    /// What a flight does before each of its requests (<doc:Behaviour#C2>).
    enum NextRequest: Sendable, Equatable {
        /// The flight still counts and its customer is unchanged: send the request.
        case send
        /// Send nothing more: the flight was discarded (stop, anonymize, re-configure) or is
        /// unknown, or its customer changed, which the machine has already acted on.
        case abandon
    }

    /// Before each request of a flight (the link, then the fetch): records a link that just
    /// succeeded (`linked`, <doc:Behaviour#C4>), then sends the request only while the flight still
    /// counts and its customer is unchanged (<doc:Behaviour#C2>). When the customer changed, the
    /// flight ends here: reads retry for the current customer and an owed reload is requested again
    /// (<doc:Behaviour#C3>, <doc:Behaviour#G6>).
    mutating func beforeRequest(of flightID: Int, linked: Bool, at now: Moment) -> (NextRequest, Actions) {
        mutate { parts in
            var actions = Actions()
            guard let current = parts.lifecycle.running, let (flight, followUpOwed) = parts.reload.inFlight(flightID) else {
                return (.abandon, actions)
            }
            if linked { Self.add(parts.lifecycle.linked(flight.customer), to: &actions) }
            guard current.customer == flight.customer else {
                actions.append(.log(.verbose, SegmentsLogText.cancelledCustomerChanged))
                _ = parts.reload.finished(flightID)
                Self.customerChanged(during: flight, followUpOwed: followUpOwed, &parts, at: now, &actions)
                return (.abandon, actions)
            }
            return (.send, actions)
        }
    }

    /// A flight came back: apply its outcome, unless it was discarded or its customer is gone
    /// (<doc:Behaviour#C3>, <doc:Behaviour#T9>). Whatever the outcome, a follow-up owed during the
    /// flight is scheduled (T6).
    mutating func flightFinished(
        _ flightID: Int, with result: Result<SegmentsByCategory, SegmentsError>, at now: Moment
    ) -> Actions {
        mutate { parts in
            var actions = Actions()
            guard let current = parts.lifecycle.running, let (flight, followUpOwed) = parts.reload.finished(flightID) else {
                return actions
            }
            guard current.customer == flight.customer else {
                actions.append(.log(.verbose, SegmentsLogText.ignoredDifferentCustomer))
                Self.customerChanged(during: flight, followUpOwed: followUpOwed, &parts, at: now, &actions)
                return actions
            }
            switch result {
            case .success(let segments):
                Self.apply(segments, of: flight, &parts, at: now, &actions)
                if followUpOwed { Self.requestReload(&parts, at: now, &actions) }
            case .failure(let error):
                Self.fail(error, of: flight, followUpOwed: followUpOwed, &parts, at: now, &actions)
            }
            return actions
        }
    }

    /// A successful fetch: replaces the baseline, tells listeners and answers reads
    /// (<doc:Behaviour#D1>–<doc:Behaviour#D6>, <doc:Behaviour#G3>).
    private static func apply(
        _ segments: SegmentsByCategory, of flight: Flight, _ parts: inout Parts, at now: Moment, _ actions: inout Actions
    ) {
        guard let (changes, saves) = parts.lifecycle.fetched(segments, for: flight.customer, at: now) else { return }
        add(saves, to: &actions)
        let categories = changes.keys.map(\.name).sorted().joined(separator: ", ")
        actions.append(.log(.verbose, "Segments: Segments fetched; changed categories: [\(categories)]"))
        deliver(changes, answer: segments, firstLoad: true, &parts, &actions)
        add(parts.reads.answerAll(.success(segments)), to: &actions)
    }

    /// A failed fetch: nothing changes; reads fail; a transient failure of an owed reload is
    /// retried with backoff while listeners exist; after a permanent one, a follow-up owed during
    /// the flight is still scheduled (<doc:Behaviour#D9>, <doc:Behaviour#T6>, <doc:Behaviour#T7>,
    /// <doc:Behaviour#C4>, <doc:Behaviour#L2>).
    private static func fail(
        _ error: SegmentsError, of flight: Flight, followUpOwed: Bool, _ parts: inout Parts, at now: Moment,
        _ actions: inout Actions
    ) {
        if error.code == .linkFailed { actions.append(.logLinkFailure(flight.customer)) }
        actions.append(.log(.warning, SegmentsLogText.fetchFailed(error)))
        add(parts.reads.answerAll(.failure(error)), to: &actions)
        pruneReleasedOwners(&parts, &actions)
        guard flight.forListeners || followUpOwed, !parts.listeners.isEmpty else { return }
        guard error.isTransient else {
            if followUpOwed { requestReload(&parts, at: now, &actions) }
            return
        }
        guard parts.path == .usable else {
            // Offline, no retry is counted: the reload waits for the path (N1).
            carryOut(parts.reload.waitForPath(attempt: flight.retryAttempt), &parts, &actions)
            return
        }
        let attempt = flight.retryAttempt + 1
        let delay = parts.lifecycle.timings.retry.delay(attempt: attempt, random: now.random, retryAfter: error.retryAfter)
        carryOut(parts.reload.retry(attempt: attempt, after: delay), &parts, &actions)
    }

    /// The customer changed under a flight (<doc:Behaviour#C2>, <doc:Behaviour#C3>,
    /// <doc:Behaviour#G6>): reads retry for the current customer (a bounded number of times; a read
    /// that came after the change is not charged), and an owed reload is requested again.
    private static func customerChanged(
        during flight: Flight, followUpOwed: Bool, _ parts: inout Parts, at now: Moment, _ actions: inout Actions
    ) {
        let owed = flight.forListeners || followUpOwed
        let (anyWaiting, decided) = parts.reads.customerChanged(
            during: flight.customer, current: parts.lifecycle.customer, maxRetries: parts.lifecycle.timings.maxReadRetries)
        add(decided, to: &actions)
        if anyWaiting {
            startFlight(&parts, forListeners: owed && !parts.listeners.isEmpty, retryAttempt: 0, &actions)
        } else if owed && !parts.listeners.isEmpty {
            requestReload(&parts, at: now, &actions)
        }
    }

    /// Cancels the debounce or backoff and discards the flight (<doc:Behaviour#A1>,
    /// <doc:Behaviour#A3>). Returns whether anything was pending or in flight. The discarded flight
    /// is let go of after the lock.
    private static func cancelReload(_ parts: inout Parts, _ actions: inout Actions) -> Bool {
        let (dropped, withdrawn) = parts.reload.cancel()
        carryOut(withdrawn, &parts, &actions)
        guard let dropped else { return false }
        actions.release(dropped)
        return true
    }

    // MARK: - One-shot reads (any state)

    /// A one-shot read (<doc:Behaviour#G1>–<doc:Behaviour#G4>): waits before configuration and
    /// while the baseline loads, fails after stop, otherwise is served. Returns its id, for
    /// ``withdrawRead(_:)``.
    mutating func read(
        _ category: SegmentCategory, force: Bool, reply: ReadReply, at now: Moment
    ) -> (Int, Actions) {
        mutate { parts in
            var actions = Actions()
            let read = parts.reads.make(category, force: force, reply: reply)
            if parts.lifecycle.running != nil {
                Self.serve(read, &parts, at: now, &actions)
            } else if parts.lifecycle.isStopped {
                actions.append(.reads(.answer([read], .failure(SegmentsError.stopped))))
            } else {
                Self.add(parts.reads.waitForConfiguration(read), to: &actions)
            }
            return (read.id, actions)
        }
    }

    /// Answers a still-pending read with `.cancelled`; a read already answered is left alone, so
    /// every read is answered exactly once.
    mutating func withdrawRead(_ id: Int) -> Actions {
        var actions = Actions()
        Self.add(mutate { $0.reads.withdraw(id) }, to: &actions)
        return actions
    }

    /// Answers from the cache when allowed (G1), otherwise joins the flight or starts one (G2).
    private static func serve(_ read: PendingRead, _ parts: inout Parts, at now: Moment, _ actions: inout Actions) {
        if !read.force, let segments = parts.lifecycle.cacheHit(read.category, at: now) {
            actions.append(.reads(.answer([read], .success([read.category: segments]))))
            return
        }
        parts.reads.waitForFlight(read, of: parts.lifecycle.customer)
        startFlight(&parts, forListeners: false, retryAttempt: 0, &actions)
    }

    // MARK: - Deliveries

    /// Decides the handler calls after an answer (<doc:Behaviour#D4>–<doc:Behaviour#D7>): per
    /// category, in name order, each listener in registration order is told the category's full
    /// list when the category `changed` against the baseline, when the list differs from what that
    /// listener was last told (so no listener keeps another customer's or project's segments, D4),
    /// or — with `firstLoad` — when its first-load promise is still to be kept (D6).
    private static func deliver(
        _ changed: SegmentsByCategory, answer: SegmentsByCategory, firstLoad: Bool, _ parts: inout Parts, _ actions: inout Actions
    ) {
        var deliveries: [Delivery] = []
        let categories = Set(changed.keys).union(answer.keys).union(parts.listeners.categories)
        for category in categories.sorted(by: { $0.name < $1.name }) {
            let segments = changed[category] ?? answer[category] ?? []
            parts.listeners.tell(segments, to: category, changed: changed[category] != nil, firstLoad: firstLoad, into: &deliveries)
        }
        if firstLoad { parts.listeners.keepFirstLoadPromises() }
        if !deliveries.isEmpty { actions.append(.deliver(deliveries)) }
    }

    // MARK: - Stop (→ stopped)

    /// Stops (<doc:Behaviour#A3>, <doc:Behaviour#M5>): cancels and discards segment work, deletes the
    /// baseline and link memory, fails pending reads with `.stopped`, ends the configuration (the
    /// pipeline to stop and the storage to free are returned to the caller), removes every listener
    /// but a model's — those are told `[]` and follow the next configuration — and finishes the
    /// change streams. Work is rejected until configured again; everything the app gave is let go
    /// of after the lock.
    ///
    /// With `erasing` (<doc:Behaviour#A3> rev 4, `stopIntegration`), the stored data is deleted
    /// behind the app's back: the ending carries the pipeline's last flush, after which
    /// ``lastFlushEnded(_:)`` queues the deletion; ``erased(_:)`` marks it done and calls
    /// `completion`. Never configured, `defaultStorage` is deleted without upload. Without
    /// `erasing`, `completion` follows the disk work the stop queued.
    mutating func stop(
        erasing: Bool = false, completion: LifecycleCompletion? = nil,
        defaultStorage: LifecycleStateMachine.DefaultStorage? = nil
    ) -> (Ending, Actions) {
        mutate { parts in
            var actions = Actions()
            // Identify calls decided before the stop take their full effect before it (A4): the
            // ids merged, and, with listeners, a reload requested (T4) — which the stop cancels.
            let (changed, merged) = parts.lifecycle.mergeIdentifiesBeforeTheEnd()
            Self.add(merged, to: &actions)
            if changed { Self.pruneReleasedOwners(&parts, &actions) }
            let reloadRequested = changed && !parts.listeners.isEmpty
            if Self.cancelReload(&parts, &actions) || reloadRequested {
                actions.append(.log(.verbose, SegmentsLogText.cancelledMeanwhile))
            }
            Self.add(parts.lifecycle.forgetSegments(), to: &actions)
            Self.add(parts.reads.answerAll(.failure(SegmentsError.stopped)), to: &actions)
            let ending: Ending
            if erasing {
                let (ended, decided, dropped) = parts.lifecycle.endErasing(completion: completion, defaultStorage: defaultStorage)
                Self.add(decided, to: &actions)
                actions.release(dropped)
                ending = ended
            } else {
                ending = Self.end(&parts, &actions)
                if let completion { Self.add(parts.lifecycle.whenStorageWorkDone(completion), to: &actions) }
            }
            let stopped = parts.listeners.stop()
            if !stopped.deliveries.isEmpty { actions.append(.deliver(stopped.deliveries)) }
            if !stopped.streamEnds.isEmpty { actions.append(.endStreams(stopped.streamEnds)) }
            if !stopped.removed.isEmpty { actions.release(stopped.removed) }
            return (ending, actions)
        }
    }

    /// The last flush of a stop that deletes the stored data ended (<doc:Behaviour#A3>): the
    /// deletion is queued on the storage queue, unless a configure on the same storage did it.
    mutating func lastFlushEnded(_ erasureID: Int) -> Actions {
        var actions = Actions()
        Self.add(state.lifecycle.lastFlushEnded(erasureID), to: &actions)
        return actions
    }

    /// The deletion of a stop is done (<doc:Behaviour#A3>): the storage's next owner may read it,
    /// and the stop's completions are called.
    mutating func erased(_ erasureID: Int) -> Actions {
        var actions = Actions()
        Self.add(state.lifecycle.erased(erasureID), to: &actions)
        return actions
    }

    /// Whether a deletion of stored data is still to come (<doc:Behaviour#A3>).
    var erasurePending: Bool { state.lifecycle.erasurePending }

    /// The client was let go of without a stop: its configuration ends as at a stop — the pipeline
    /// stopped, the storage given back with the customer it ended with (<doc:Behaviour#P5>,
    /// <doc:Behaviour#R1>) — but what it stored stays, for the next owner or launch.
    mutating func clientReleased() -> (Ending, Actions) {
        mutate { parts in
            var actions = Actions()
            _ = Self.cancelReload(&parts, &actions)
            Self.add(parts.reads.answerAll(.failure(SegmentsError.stopped)), to: &actions)
            let ending = Self.end(&parts, released: true, &actions)
            actions.release(parts.lifecycle.forgetUnsettled())
            return (ending, actions)
        }
    }

    /// Ends the configuration (→ stopped); its ports are let go of after the lock.
    private static func end(_ parts: inout Parts, released: Bool = false, _ actions: inout Actions) -> Ending {
        let (ending, decided, dropped) = parts.lifecycle.end(released: released)
        add(decided, to: &actions)
        actions.release(dropped)
        return ending
    }

    // MARK: - The parts' actions

    private static func add(_ decided: [LifecycleStateMachine.Action], to actions: inout Actions) {
        for action in decided { actions.append(.lifecycle(action)) }
    }

    private static func add(_ decided: [PendingReads.Action], to actions: inout Actions) {
        for action in decided { actions.append(.reads(action)) }
    }
}
