import Foundation
import SegmentsDomain

/// Every decision of a client's segmentation and lifecycle, as a value (the T, C, D, G and A rules
/// of <doc:Behaviour>).
///
/// Each event the engine sees — a public call, a timer firing, a flight or a load coming back —
/// is one `mutating` transition that changes ``state`` and returns the ``Steps`` it decided:
/// timers, fetches, deliveries, answers, saves, logs, the tracking pipeline's start, mode and
/// stop, and the app's objects it let go of. A transition does no I/O and calls none of the app's
/// code — no handler, store, repository, logger or scheduler — but the component does: the
/// ``StateMachineDriver`` holds the machine under its lock and, after releasing it, carries the
/// steps out through ``SegmentationEngine``, which calls those ports and handlers, in the order
/// the steps were decided. Time, jitter and new cookies are inputs.
///
/// The lifecycle calls of one client — configure, stop, anonymize, identify, the flushing mode —
/// are transitions of this one machine, so they take effect in one total order (<doc:Behaviour#A4>):
/// the customer, the integration's ports and its tracking pipeline change together.
///
/// The file reads in the order of a client's life: the state and its data, configuration (and
/// the background load of the baseline), the customer, listeners, reloads and flights, one-shot
/// reads, deliveries, stop. The listeners themselves are a data structure of their own
/// (`ListenerRegistry.swift`), as the tracking machine's queue is (`PendingItems.swift`).
struct SegmentationStateMachine: DrivenStateMachine {
    // MARK: - State

    /// Where the client is in its life (<doc:Behaviour#T2>, <doc:Behaviour#R3>, <doc:Behaviour#A3>).
    private enum State: Sendable {
        /// Not configured yet: listeners and reads wait.
        case unconfigured
        /// Configured; the stored baseline is loading on the storage queue. Reads and reloads
        /// wait for it (<doc:Behaviour#R3>).
        case loading(Configured, BaselineLoad)
        /// Configured, baseline in memory.
        case running(Configured)
        /// Stopped: work is rejected until configured again.
        case stopped
        /// Only while a transition mutates the configured payload in place (no copy-on-write).
        case modifying
    }

    /// What one configuration holds.
    struct Configured: Sendable {
        var ports: SegmentationEngine.Ports
        var customer: CustomerIds
        var baseline: SegmentBaseline
        /// When `baseline.snapshot` was fetched on the monotonic clock; `nil` for one another
        /// process fetched, whose wall-clock `fetchedAt` is all there is (<doc:Behaviour#T10>).
        var snapshotUptime: TimeInterval?
        var reload: Reload
        /// The customer configure made because none was known; while it is still the current one,
        /// a stored customer read later (its file was refused for lack of protected data) replaces
        /// it (<doc:Behaviour#P8>).
        var madeAtConfigure: CustomerIds? = nil
    }

    /// The baseline load a configuration waits for.
    struct BaselineLoad: Sendable {
        let id: Int
        /// A reload was requested (or was pending at configure) while it loaded.
        var reloadOwed: Bool
        /// The configuration changed integration, so listeners must hear the new one
        /// (<doc:Behaviour#T2>).
        var otherIntegration: Bool
        /// Anonymize deleted the baseline while it loaded: the loaded one is stale.
        var discardLoaded: Bool
        /// The first request of a burst the previous configuration was debouncing: the reload
        /// owed again still starts at most the max wait after it (<doc:Behaviour#T5>,
        /// <doc:Behaviour#T6>).
        var burstStarted: TimeInterval?
    }

    /// The automatic reload and the one fetch the engine may have in flight
    /// (<doc:Behaviour#T5>–<doc:Behaviour#T7>, <doc:Behaviour#G2>).
    enum Reload: Sendable {
        /// Nothing pending, nothing in flight.
        case idle
        /// A burst of requests waits for its trailing debounce (T5).
        case debouncing(Burst)
        /// A failed reload waits for its backoff; `attempt` retries were scheduled so far (T7).
        case retrying(attempt: Int, timer: TimerID)
        /// A fetch is in flight; requests that came meanwhile owe one follow-up (T6).
        case fetching(Flight, followUpOwed: Bool)
    }

    /// A burst of reload requests, on the monotonic clock (<doc:Behaviour#T5>, <doc:Behaviour#T10>).
    struct Burst: Sendable {
        var firstRequest: TimeInterval
        var lastRequest: TimeInterval
        var timer: TimerID
    }

    /// One fetch (with its link) for one customer snapshot (<doc:Behaviour#C1>).
    struct Flight: Sendable {
        let id: Int
        let customer: CustomerIds
        let needsLink: Bool
        let repository: any SegmentRepository
        /// Whether the flight is the reload listeners are owed: a transient failure is then
        /// retried with backoff (<doc:Behaviour#T7>) and a re-configure requests it again (T6). A
        /// flight started only for one-shot reads is neither.
        let forListeners: Bool
        /// Retries already made in this chain of failures (T7).
        let retryAttempt: Int
    }

    /// A one-shot read waiting for configuration, the baseline, or a flight
    /// (<doc:Behaviour#G-One-shot-reads>).
    struct PendingRead: Sendable {
        /// Identifies the read, so a cancelled task can withdraw it.
        let id: Int
        let category: SegmentCategory
        let force: Bool
        let reply: ReadReply
        /// How often the read was retried because the customer changed (<doc:Behaviour#G6>).
        var customerRetries = 0
        /// The customer it waits for: a read that joined a flight of an earlier customer is not
        /// charged a retry when that flight is discarded.
        var customer: CustomerIds?
    }

    /// How a read is answered (<doc:Behaviour#G4>): a completion handler on the delivery queue, or an
    /// awaiting task resumed directly.
    enum ReadReply: Sendable {
        case onDeliveryQueue(@Sendable (Result<[Segment], SegmentsError>) -> Void)
        case direct(@Sendable (Result<[Segment], SegmentsError>) -> Void)
    }

    /// What the engine carries out once the lock is released.
    enum Action: Sendable {
        case log(LogLevel, String)
        /// The link-failure line: the customer's ids appear only at verbose level
        /// (<doc:Behaviour#C4>, <doc:Behaviour#P4>).
        case logLinkFailure(CustomerIds)
        case startFlight(Flight)
        /// Handler calls, run in this order on the delivery queue
        /// (<doc:Behaviour#D5>–<doc:Behaviour#D8>).
        case deliver([Delivery])
        /// Answers each read with `result` narrowed to its category (<doc:Behaviour#G4>).
        case answer([PendingRead], Result<SegmentsByCategory, SegmentsError>)
        /// Saves the customer; `storageID` is reported back with ``customerSaved(in:)``.
        case saveCustomer(CustomerIds, to: any CustomerStore, storageID: String?)
        case saveBaseline(SegmentBaseline, to: any SegmentBaselineStore)
        /// Load the baseline on the storage queue and hand it to ``baselineLoaded(_:_:at:)``
        /// (<doc:Behaviour#R3>).
        case loadBaseline(Int, from: any SegmentBaselineStore)
        /// Apply a flushing mode to a tracking pipeline (<doc:Behaviour#E2>).
        case setFlushingMode(TrackingPipeline, FlushingMode)
        /// Queue the load of a new configuration's event queue, behind its baseline's
        /// (<doc:Behaviour#R3>).
        case startTracking(TrackingPipeline)
        /// Every write the ended configuration decided has been queued: its storage's next owner
        /// may read once they are done.
        case storageWritesQueued(any StorageHandOver)
        /// Redo on the storage queue what the configuration's storage refused before protected
        /// data was available; a stored customer read is handed to
        /// ``storedCustomerRead(_:in:at:)``, stored items to `tracking` (<doc:Behaviour#P8>).
        case redoRefusedStorage(any RefusedStorageRedo, storageID: String, tracking: TrackingPipeline?)
        /// Finish the `changes(of:)` streams a stop removed (<doc:Behaviour#M5>).
        case endStreams([@Sendable () -> Void])
    }

    /// What the end of a configuration — stopped, replaced, or its client released — leaves for
    /// the call that ended it to carry out once its transition returned, before that call returns
    /// (<doc:Behaviour#P5>): the app's next call may give the folder to another client, so no upload
    /// of the old pipeline may start after it, and the folder must be free by then.
    struct Ending: Sendable {
        /// The pipeline to stop: its items stay on disk.
        var tracking: TrackingPipeline?
        /// The storage to give back, with the customer the configuration ended with.
        var storage: (handOver: any StorageHandOver, lastCustomer: CustomerIds)?

        /// Stops the pipeline, then frees the storage.
        func carryOut() {
            tracking?.stop()
            if let storage { storage.handOver.release(endingWith: storage.lastCustomer) }
        }
    }

    /// A customer save not written yet: until it is, the customer in memory is the truth for that
    /// storage (<doc:Behaviour#R1>).
    struct UnsavedCustomer: Sendable {
        var pending: Int
        var latest: CustomerIds
    }

    /// The counters that name timers, flights, reads, loads and customers.
    private struct Counters: Sendable {
        var timer = 0
        var flight = 0
        var read = 0
        var load = 0
    }

    /// The flushing mode in force (or set before configure) and whether the T8 warning was given.
    private struct Flushing: Sendable {
        var mode: FlushingMode?
        var warnedNotImmediate = false
    }

    /// Reads waiting for `configure` beyond this many are refused (a bounded queue).
    static let maxReadsWaitingForConfigure = 1_000

    private let timings: SegmentationTimings
    private var state: State = .unconfigured
    private var listeners = ListenerRegistry()
    /// Reads waiting for configuration, the baseline, or the flight in progress.
    private var reads: [PendingRead] = []
    private var counters = Counters()
    private var flushing = Flushing()
    private var unsavedCustomers: [String: UnsavedCustomer] = [:]
    /// The last snapshot this process fetched per integration, with its monotonic moment: a
    /// re-configure that loads it back ages it on the monotonic clock, not the wall clock (T10).
    private var fetchedByThisProcess: [String: (snapshot: SegmentSnapshot, uptime: TimeInterval)] = [:]

    init(timings: SegmentationTimings) {
        self.timings = timings
    }

    typealias Actions = Steps<Action>

    // MARK: - Looking at the state

    /// The configuration, loading or running.
    private var configured: Configured? {
        switch state {
        case .loading(let configured, _), .running(let configured): configured
        case .unconfigured, .stopped: nil
        case .modifying: preconditionFailure("the segmentation state was read while it was being modified")
        }
    }

    /// Whether configured and not stopped.
    var isConfigured: Bool { configured != nil }

    /// The current customer, or `nil` before configuration and after stop.
    var customer: CustomerIds? { configured?.customer }

    /// The flushing mode in force, or the one set before configure (`.immediate` by default).
    var flushingMode: FlushingMode { flushing.mode ?? .immediate }

    /// How many listeners are registered, those whose owner went but that were not pruned yet
    /// included, and the owners of the registrations tied to one: ``SegmentationEngine`` looks at
    /// those after the lock (<doc:Behaviour#D7>).
    var listenerCount: (registered: Int, owners: [WeakOwner]) { (listeners.count, listeners.owners) }

    /// The timer the reload waits for, if any.
    var currentTimer: TimerID? {
        switch configured?.reload {
        case .debouncing(let burst): burst.timer
        case .retrying(_, let timer): timer
        case .idle, .fetching, nil: nil
        }
    }

    /// The reload's state (for tests and diagnostics).
    var reload: Reload? { configured?.reload }

    /// Runs `body` on the running configuration in place; `nil` when not running.
    @discardableResult
    private mutating func withRunning<Result>(_ body: (inout Configured) -> Result) -> Result? {
        guard case .running(var configured) = state else { return nil }
        state = .modifying
        defer { state = .running(configured) }
        return body(&configured)
    }

    /// Runs `body` on the configuration, loading or running, in place; `nil` when not configured.
    @discardableResult
    private mutating func withConfigured<Result>(_ body: (inout Configured) -> Result) -> Result? {
        switch state {
        case .running:
            return withRunning(body)
        case .loading(var configured, let load):
            state = .modifying
            defer { state = .loading(configured, load) }
            return body(&configured)
        case .unconfigured, .stopped:
            return nil
        case .modifying:
            preconditionFailure("a segmentation transition started while another one was modifying the state")
        }
    }

    private mutating func makeTimer() -> TimerID {
        counters.timer += 1
        return TimerID(rawValue: counters.timer)
    }

    // MARK: - Configure (unconfigured, running or stopped → loading → running)

    /// What `configure` decided.
    enum ConfigureOutcome: Sendable, Equatable {
        /// Configured; the previous configuration's ending, if it ended, for the caller.
        case configured(Ending)
        /// The customer is not known in memory: read `ports.customerStore` (off the lock) and
        /// configure again with it.
        case needsStoredCustomer
        /// The customer has no cookie: configure again with a new one.
        case needsNewCookie

        /// Outcomes compare by their case: what an ending holds is objects, not values.
        static func == (lhs: Self, rhs: Self) -> Bool {
            switch (lhs, rhs) {
            case (.configured, .configured), (.needsStoredCustomer, .needsStoredCustomer), (.needsNewCookie, .needsNewCookie): true
            default: false
            }
        }

        /// A configured outcome, whatever its ending (for comparisons).
        static var configured: Self { .configured(Ending()) }
    }

    /// Configures (or re-configures) with `ports` (<doc:Behaviour#T2>, <doc:Behaviour#T6>,
    /// <doc:Behaviour#A4>, <doc:Behaviour#R1>, <doc:Behaviour#R3>).
    ///
    /// The customer comes from memory when a save to the same storage is still pending (the
    /// store would answer an older value), or from the handover of the folder's previous owner,
    /// or from `stored` (what the engine read from the store, off the lock); without any of
    /// them the outcome asks for the stored one. A reload that was pending, owed or in flight is
    /// requested again on the new ports; listeners, what they were told and reads made before stay.
    /// The previous configuration's ports and pipeline are let go of after the lock.
    mutating func configure(
        _ ports: SegmentationEngine.Ports, namedMode: FlushingMode?, stored: CustomerIds??, newCookie: String?,
        at now: Moment
    ) -> (ConfigureOutcome, Actions) {
        var actions = Actions()
        let current = configured.flatMap { Self.sameStorage($0.ports, ports) ? $0.customer : nil }
        let known: CustomerIds? = ports.storageID.flatMap { unsavedCustomers[$0]?.latest } ?? current ?? ports.handedOverCustomer
        let found: CustomerIds?
        if let known {
            found = known
        } else if let stored {
            found = stored
        } else {
            return (.needsStoredCustomer, actions)
        }

        var customer = found ?? CustomerIds([:])
        // A customer made by an earlier configure of this storage stays replaceable (see Behaviour P8).
        var made = current != nil && configured?.madeAtConfigure == customer ? customer : nil
        if customer.cookie?.isEmpty ?? true {
            guard let newCookie else { return (.needsNewCookie, actions) }
            if customer.cookie != nil {
                actions.append(.log(.warning, "Segments: The stored customer had an empty cookie; a new one was made"))
            }
            var values = customer.values
            values[CustomerIds.cookieKey] = newCookie
            customer = CustomerIds(values)
            made = customer
            save(customer, with: ports, &actions)
        }

        let previous = state
        var ending = Ending()
        var reloadWasPending = false
        var otherIntegration = false
        var burstStarted: TimeInterval?
        switch previous {
        case .running(let old), .loading(let old, _):
            if case .loading(_, let load) = previous {
                reloadWasPending = load.reloadOwed
                otherIntegration = load.otherIntegration  // the listeners have not heard that one yet
                burstStarted = load.burstStarted
            }
            switch old.reload {
            case .fetching(let flight, let followUpOwed): reloadWasPending = reloadWasPending || flight.forListeners || followUpOwed
            case .debouncing(let burst):
                reloadWasPending = true
                burstStarted = burst.firstRequest
            case .retrying: reloadWasPending = true
            case .idle: break
            }
            if let timer = currentTimer { actions.cancel(timer) }
            otherIntegration = otherIntegration || old.ports.integrationID != ports.integrationID || !Self.sameStorage(old.ports, ports)
            if let pipeline = old.ports.tracking, pipeline !== ports.tracking { ending.tracking = pipeline }
            if !Self.sameStorage(old.ports, ports) { ending.storage = endConfiguration(old, &actions) }
        case .unconfigured, .stopped:
            break
        case .modifying:
            preconditionFailure("configure started while another transition was modifying the state")
        }
        let previousTracking = configured?.ports.tracking
        counters.load += 1
        let load = BaselineLoad(
            id: counters.load, reloadOwed: reloadWasPending, otherIntegration: otherIntegration, discardLoaded: false,
            burstStarted: burstStarted)
        state = .loading(
            Configured(
                ports: ports, customer: customer, baseline: .empty,
                snapshotUptime: nil, reload: .idle, madeAtConfigure: made),
            load)
        actions.release(previous)  // the old ports, pipeline and flight go after the lock (see Behaviour D7)

        flushing.mode = namedMode ?? flushing.mode
        if let pipeline = ports.tracking { actions.append(.setFlushingMode(pipeline, flushingMode)) }
        if flushingMode == .immediate { flushing.warnedNotImmediate = false }
        actions.append(.loadBaseline(load.id, from: ports.baselineStore))
        // After the baseline's load: a cold start's first read waits for the baseline only, not
        // for the journal behind it (see Behaviour R3; benchmark 6).
        if let pipeline = ports.tracking, pipeline !== previousTracking { actions.append(.startTracking(pipeline)) }
        warnIfTrackingNotImmediate(&actions)
        return (.configured(ending), actions)
    }

    /// Whether two configurations store the customer in the same place. `nil` names storage that
    /// is new at every configure (memory), so it is never the same (<doc:Behaviour#T2>).
    static func sameStorage(_ old: SegmentationEngine.Ports, _ new: SegmentationEngine.Ports) -> Bool {
        old.storageID != nil && old.storageID == new.storageID
    }

    /// Ends `old` (stopped, replaced by a configuration on other storage, or its client released):
    /// its writes are queued in their place among the steps, and the storage to free is returned
    /// for the ending call (<doc:Behaviour#P5>, <doc:Behaviour#R1>).
    private func endConfiguration(
        _ old: Configured, _ actions: inout Actions
    ) -> (handOver: any StorageHandOver, lastCustomer: CustomerIds)? {
        guard let handOver = old.ports.handOver else { return nil }
        actions.append(.storageWritesQueued(handOver))
        return (handOver, old.customer)
    }

    /// The baseline that `configure` asked for is in (<doc:Behaviour#R3>): the initial reload is
    /// decided (T2) and the reads made meanwhile are served, in call order. A load that a later
    /// configure or stop overtook is ignored; one that anonymize overtook keeps its empty baseline. A
    /// baseline of another integration (a storage shared by two) is not used (D1, C4, G1).
    mutating func baselineLoaded(_ loadID: Int, _ loaded: SegmentBaseline, at now: Moment) -> Actions {
        guard case .loading(var configured, let load) = state, load.id == loadID else { return Actions() }
        var actions = Actions()
        let ours = loaded.integration == nil || loaded.integration == configured.ports.integrationID
        if !ours { actions.append(.log(.verbose, SegmentsLogText.baselineOfAnotherIntegration)) }
        if ours, !load.discardLoaded {  // (anonymize deleted it meanwhile: the empty one stays)
            configured.baseline = loaded
            let fetched = fetchedByThisProcess[configured.ports.integrationID]
            if let fetched, fetched.snapshot == loaded.snapshot { configured.snapshotUptime = fetched.uptime }
        }
        state = .running(configured)
        pruneReleasedOwners(&actions)
        if listeners.isEmpty {
            actions.append(.log(.verbose, SegmentsLogText.initialSkippedNoCallback))
        } else if load.reloadOwed || load.otherIntegration || listeners.anyIncludesFirstLoad {
            requestReload(at: now, burstStarted: load.burstStarted, &actions)
        } else {
            actions.append(.log(.verbose, SegmentsLogText.initialSkippedNotRequired))
        }
        let waiting = reads
        reads = []
        for read in waiting { serve(read, at: now, &actions) }
        return actions
    }

    /// A customer save was written: once none is pending for its storage, the store is the truth again.
    mutating func customerSaved(in storageID: String) -> Actions {
        if let unsaved = unsavedCustomers[storageID], unsaved.pending > 1 {
            unsavedCustomers[storageID]?.pending -= 1
        } else {
            unsavedCustomers[storageID] = nil
        }
        return Actions()
    }

    /// The customer file of `storageID`, refused at configure because protected data was not
    /// available, has been read (<doc:Behaviour#P8>). When the current customer is still the one
    /// configure made for lack of it, the stored customer (with a cookie) becomes the current one,
    /// like an identify: the reload backoff ends and, with listeners, a reload is requested.
    /// Otherwise — identify or anonymize decided meanwhile, or the file had no usable customer —
    /// the current customer stays and is saved over the file.
    mutating func storedCustomerRead(_ stored: CustomerIds?, in storageID: String, at now: Moment) -> Actions {
        var actions = Actions()
        guard let current = configured, current.ports.storageID == storageID else { return actions }
        let made = current.madeAtConfigure
        withConfigured { $0.madeAtConfigure = nil }
        guard let stored, !(stored.cookie?.isEmpty ?? true), made == current.customer, stored != current.customer else {
            save(current.customer, with: current.ports, &actions)
            return actions
        }
        withConfigured { configured in
            configured.customer = stored
            if case .retrying(_, let timer) = configured.reload {
                actions.cancel(timer)
                configured.reload = .idle
            }
        }
        actions.append(.log(.warning, SegmentsLogText.storedCustomerAdopted))
        if !listeners.isEmpty { requestReload(at: now, &actions) }
        return actions
    }

    /// Protected data became available (<doc:Behaviour#P8>): the configuration in force redoes
    /// what its storage refused, in this place of the order — a configuration that ended meanwhile
    /// redoes nothing.
    mutating func protectedDataBecameAvailable() -> Actions {
        var actions = Actions()
        guard let current = configured, let redo = current.ports.refusedStorageRedo, let storageID = current.ports.storageID else {
            return actions
        }
        actions.append(.redoRefusedStorage(redo, storageID: storageID, tracking: current.ports.tracking))
        return actions
    }

    // MARK: - The flushing mode (any state)

    /// Sets the flushing mode (<doc:Behaviour#E2>, <doc:Behaviour#T8>, <doc:Behaviour#A4>): in
    /// force at once when configured, else at the next configure unless its configuration names one.
    mutating func setFlushingMode(_ mode: FlushingMode) -> Actions {
        flushing.mode = mode
        if mode == .immediate { flushing.warnedNotImmediate = false }
        var actions = Actions()
        if let pipeline = configured?.ports.tracking { actions.append(.setFlushingMode(pipeline, mode)) }
        warnIfTrackingNotImmediate(&actions)
        return actions
    }

    /// One warning that segments lag when listeners exist and flushing is not immediate (T8).
    private mutating func warnIfTrackingNotImmediate(_ actions: inout Actions) {
        guard configured != nil, flushingMode != .immediate, !flushing.warnedNotImmediate, !listeners.isEmpty else { return }
        flushing.warnedNotImmediate = true
        actions.append(.log(.warning, SegmentsLogText.flushingNotImmediate))
    }

    // MARK: - The customer (loading or running)

    /// The current customer and the pipeline of the same configuration, or `nil` when not configured.
    var stamp: SegmentationEngine.Stamp? {
        configured.map { SegmentationEngine.Stamp(customer: $0.customer, storageID: $0.ports.storageID, tracking: $0.ports.tracking) }
    }

    typealias IdentifyOutcome = SegmentationEngine.IdentifyOutcome

    /// Merges hard ids into the current customer (<doc:Behaviour#E1>, <doc:Behaviour#T4>,
    /// <doc:Behaviour#A4>) when it is still `expected` — the customer the update was queued stamped
    /// with — or unconditionally when `expected` is `nil`. When the ids change, the backoff of the
    /// old ids ends and a reload is requested.
    mutating func identify(hardIds: [String: String], expecting expected: CustomerIds?, at now: Moment) -> (IdentifyOutcome, Actions) {
        var actions = Actions()
        let outcome = withConfigured { configured -> (IdentifyOutcome, SegmentationEngine.Ports?) in
            if let expected, configured.customer != expected { return (.customerChanged, nil) }
            let merged = configured.customer.merging(hardIds: hardIds)
            guard merged != configured.customer else { return (.identified(merged), nil) }
            configured.customer = merged
            if case .retrying(_, let timer) = configured.reload {
                actions.cancel(timer)
                configured.reload = .idle
            }
            return (.identified(merged), configured.ports)
        }
        guard let (result, changedPorts) = outcome else { return (.notConfigured, actions) }
        if let ports = changedPorts, case .identified(let merged) = result {
            save(merged, with: ports, &actions)
            if !listeners.isEmpty { requestReload(at: now, &actions) }
        }
        return (result, actions)
    }

    /// A new anonymous customer (<doc:Behaviour#A1>, <doc:Behaviour#A2>): cancels pending and
    /// in-flight work, deletes the baseline and link memory, tells listeners of non-empty
    /// categories `[]`, answers pending reads with `[]`, and, when listeners exist, requests a
    /// reload for the new customer so first-load promises are kept (D6).
    mutating func anonymize(newCookie: String, at now: Moment) -> (CustomerIds?, Actions) {
        guard let old = configured else { return (nil, Actions()) }
        var actions = Actions()
        if cancelReload(&actions) { actions.append(.log(.verbose, SegmentsLogText.cancelledMeanwhile)) }
        let anonymous = CustomerIds(cookie: newCookie)
        withConfigured { $0.customer = anonymous }
        save(anonymous, with: old.ports, &actions)
        let emptied = (old.baseline.snapshot?.segments ?? [:]).filter { !$0.value.isEmpty }.mapValues { _ in [Segment]() }
        forgetSegments(&actions)
        deliver(emptied, answer: [:], firstLoad: false, &actions)
        answerReads(with: .success([:]), &actions)
        pruneReleasedOwners(&actions)
        if !listeners.isEmpty { requestReload(at: now, &actions) }
        return (anonymous, actions)
    }

    /// Saves `customer` to the configuration's store; until written, memory is the truth for
    /// that storage (<doc:Behaviour#R1>).
    private mutating func save(_ customer: CustomerIds, with ports: SegmentationEngine.Ports, _ actions: inout Actions) {
        if let storageID = ports.storageID {
            unsavedCustomers[storageID, default: UnsavedCustomer(pending: 0, latest: customer)].pending += 1
            unsavedCustomers[storageID]?.latest = customer
        }
        actions.append(.saveCustomer(customer, to: ports.customerStore, storageID: ports.storageID))
    }

    /// Deletes the baseline and the link memory, in memory and on disk.
    private mutating func forgetSegments(_ actions: inout Actions) {
        let store = withConfigured { configured -> any SegmentBaselineStore in
            configured.baseline = .empty
            configured.snapshotUptime = nil
            return configured.ports.baselineStore
        }
        if case .loading(let configured, var load) = state {
            load.discardLoaded = true
            state = .loading(configured, load)
        }
        if let store { actions.append(.saveBaseline(.empty, to: store)) }
    }

    // MARK: - Listeners (any state)

    /// Registers a listener; when configured, requests a reload (<doc:Behaviour#T1>).
    mutating func addListener(
        _ listener: SegmentListener, group: UUID?, owner: AnyObject?, lifetime: ListenerLifetime = .untilStop, at now: Moment
    ) -> (ListenerToken, Actions) {
        var actions = Actions()
        pruneReleasedOwners(&actions)
        let token = listeners.add(listener, group: group, owner: owner, lifetime: lifetime)
        if configured != nil {
            requestReload(at: now, &actions)
            warnIfTrackingNotImmediate(&actions)
        }
        return (token, actions)
    }

    /// Removes one registration; its gate is closed before this returns (<doc:Behaviour#D7>). The
    /// registration (its handler) is let go of after the lock.
    mutating func removeListener(_ token: ListenerToken) -> Actions {
        var actions = Actions()
        if let removed = listeners.remove(token) { actions.release(removed) }
        return actions
    }

    /// Removes every registration of `group`.
    mutating func removeListeners(group: UUID) -> Actions {
        var actions = Actions()
        let removed = listeners.removeGroup(group)
        if !removed.isEmpty { actions.release(removed) }
        return actions
    }

    /// Drops registrations whose owner is gone; they are let go of after the lock, and so are the
    /// owners found alive (looking at a weak reference holds the object for a moment: if the app
    /// let go of it meanwhile, its `deinit` must not run under the lock, <doc:Behaviour#D7>).
    private mutating func pruneReleasedOwners(_ actions: inout Actions) {
        var alive: [AnyObject] = []
        let removed = listeners.pruneReleasedOwners(keepingAlive: &alive)
        if !removed.isEmpty { actions.release(removed) }
        if !alive.isEmpty { actions.release(OwnersSeenAlive(objects: alive)) }
    }

    // MARK: - Reloads (running)

    /// A tracked event or customer update was uploaded (<doc:Behaviour#T3>).
    mutating func uploadSucceeded(at now: Moment) -> Actions {
        guard configured != nil else { return Actions() }
        var actions = Actions()
        pruneReleasedOwners(&actions)
        guard !listeners.isEmpty else {
            actions.append(.log(.verbose, SegmentsLogText.trackedSkippedNoCallback))
            return actions
        }
        requestReload(at: now, &actions)
        return actions
    }

    /// The app is returning to the foreground (<doc:Behaviour#T11>): with listeners, and the newest
    /// successful reload older than the foreground refresh age (or none made by this process, whose
    /// age is unknown), a reload is requested through the debounce like any other. While the
    /// baseline loads, configure's own reload decision covers it (T2); unconfigured or stopped,
    /// nothing happens.
    mutating func appWillEnterForeground(at now: Moment) -> Actions {
        let age = timings.foregroundRefreshAge
        guard age > 0, case .running(let configured) = state else { return Actions() }
        var actions = Actions()
        pruneReleasedOwners(&actions)
        guard !listeners.isEmpty else { return actions }
        if let fetched = configured.snapshotUptime, now.uptime - fetched <= age { return actions }
        requestReload(at: now, &actions)
        return actions
    }

    /// Coalesces a reload request (<doc:Behaviour#T5>, <doc:Behaviour#T6>): while the baseline
    /// loads it is owed; during a flight it owes one follow-up; while a retry waits it is absorbed
    /// (the retry reloads); while the debounce waits it only moves the burst's last request (the
    /// timer re-arms itself when it fires early, so a burst costs one timer); otherwise it starts a
    /// burst — or goes on with the one a re-configure interrupted, which `burstStarted` names (T6:
    /// the max wait still counts).
    private mutating func requestReload(at now: Moment, burstStarted: TimeInterval? = nil, _ actions: inout Actions) {
        if case .loading(let configured, var load) = state {
            load.reloadOwed = true
            state = .loading(configured, load)
            return
        }
        let timer = TimerID(rawValue: counters.timer + 1)
        let started = withRunning { configured -> Bool in
            switch configured.reload {
            case .fetching(let flight, _):
                configured.reload = .fetching(flight, followUpOwed: true)
            case .retrying:
                break
            case .debouncing(var burst):
                burst.lastRequest = now.uptime
                configured.reload = .debouncing(burst)
            case .idle:
                configured.reload = .debouncing(Burst(firstRequest: burstStarted ?? now.uptime, lastRequest: now.uptime, timer: timer))
                return true
            }
            return false
        }
        guard started == true else { return }
        let firstRequest = burstStarted ?? now.uptime
        if timings.debounce.delay <= 0 {
            // No debounce to wait for: the timer would fire at once, so the reload starts now.
            withRunning { $0.reload = .idle }
            startAutomaticReload(attempt: 0, &actions)
            return
        }
        counters.timer += 1
        actions.schedule(timer, after: max(timings.debounce.fireTime(firstRequest: firstRequest, lastRequest: now.uptime) - now.uptime, 0))
    }

    /// A timer fired: the debounce either waits for the rest of its burst or starts the reload;
    /// a retry starts the reload. A timer that was replaced or cancelled does nothing.
    mutating func timerFired(_ timer: TimerID, at now: Moment) -> Actions {
        var actions = Actions()
        switch configured?.reload {
        case .debouncing(let burst) where burst.timer == timer:
            let due = timings.debounce.fireTime(firstRequest: burst.firstRequest, lastRequest: burst.lastRequest)
            let remaining = due - now.uptime
            if remaining > 0 {
                let next = makeTimer()
                withRunning { $0.reload = .debouncing(Burst(firstRequest: burst.firstRequest, lastRequest: burst.lastRequest, timer: next)) }
                actions.schedule(next, after: remaining)
            } else {
                withRunning { $0.reload = .idle }
                startAutomaticReload(attempt: 0, &actions)
            }
        case .retrying(let attempt, let current) where current == timer:
            withRunning { $0.reload = .idle }
            startAutomaticReload(attempt: attempt, &actions)
        default:
            break
        }
        return actions
    }

    /// Starts the reload a timer was waiting for, unless no listener is left (<doc:Behaviour#T7>).
    private mutating func startAutomaticReload(attempt: Int, _ actions: inout Actions) {
        pruneReleasedOwners(&actions)
        guard !listeners.isEmpty else {
            actions.append(.log(.verbose, SegmentsLogText.reloadSkippedNoCallback))
            return
        }
        startFlight(forListeners: true, retryAttempt: attempt, &actions)
    }

    /// Snapshots the customer and starts a fetch for it (<doc:Behaviour#C1>), linking first when
    /// needed (C4). A pending debounce or retry is absorbed: the fetch starts after every request
    /// it covered.
    private mutating func startFlight(forListeners: Bool, retryAttempt: Int, _ actions: inout Actions) {
        guard case .running(let current) = state else { return }
        var forListeners = forListeners
        var retryAttempt = retryAttempt
        switch current.reload {
        case .fetching:
            return
        case .debouncing(let burst):
            actions.cancel(burst.timer)
            forListeners = true
        case .retrying(let attempt, let timer):
            actions.cancel(timer)
            forListeners = true
            retryAttempt = attempt
        case .idle:
            break
        }
        guard let cookie = current.customer.cookie, !cookie.isEmpty else {
            withRunning { $0.reload = .idle }
            let error = SegmentsError(.missingCookie, "the customer has no cookie")
            actions.append(.log(.warning, SegmentsLogText.fetchFailed(error)))
            answerReads(with: .failure(error), &actions)
            return
        }
        counters.flight += 1
        let flight = Flight(
            id: counters.flight, customer: current.customer,
            needsLink: current.customer.hasHardIds && !current.baseline.linkedCustomers.contains(current.customer),
            repository: current.ports.repository, forListeners: forListeners, retryAttempt: retryAttempt)
        withRunning { $0.reload = .fetching(flight, followUpOwed: false) }
        actions.append(.startFlight(flight))
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
        guard case .running(let current) = state, case .fetching(let flight, let followUpOwed) = current.reload,
            flight.id == flightID
        else { return (.abandon, Actions()) }
        var actions = Actions()
        if linked {
            let baseline = withRunning { configured -> SegmentBaseline in
                configured.baseline.linkedCustomers.insert(flight.customer)
                configured.baseline.integration = configured.ports.integrationID
                return configured.baseline
            }
            if let baseline { actions.append(.saveBaseline(baseline, to: current.ports.baselineStore)) }
        }
        guard current.customer == flight.customer else {
            actions.append(.log(.verbose, SegmentsLogText.cancelledCustomerChanged))
            withRunning { $0.reload = .idle }
            customerChanged(during: flight, followUpOwed: followUpOwed, at: now, &actions)
            return (.abandon, actions)
        }
        return (.send, actions)
    }

    /// A flight came back: apply its outcome, unless it was discarded or its customer is gone
    /// (<doc:Behaviour#C3>, <doc:Behaviour#T9>). Whatever the outcome, a follow-up owed during the
    /// flight is scheduled (T6).
    mutating func flightFinished(
        _ flightID: Int, with result: Result<SegmentsByCategory, SegmentsError>, at now: Moment
    ) -> Actions {
        guard case .running(let current) = state, case .fetching(let flight, let followUpOwed) = current.reload,
            flight.id == flightID
        else { return Actions() }
        withRunning { $0.reload = .idle }
        var actions = Actions()
        guard current.customer == flight.customer else {
            actions.append(.log(.verbose, SegmentsLogText.ignoredDifferentCustomer))
            customerChanged(during: flight, followUpOwed: followUpOwed, at: now, &actions)
            return actions
        }
        switch result {
        case .success(let segments):
            apply(segments, of: flight, at: now, &actions)
            if followUpOwed { requestReload(at: now, &actions) }
        case .failure(let error):
            fail(error, of: flight, followUpOwed: followUpOwed, at: now, &actions)
        }
        return actions
    }

    /// A successful fetch: replaces the baseline, tells listeners and answers reads
    /// (<doc:Behaviour#D1>–<doc:Behaviour#D6>, <doc:Behaviour#G3>).
    private mutating func apply(
        _ segments: SegmentsByCategory, of flight: Flight, at now: Moment, _ actions: inout Actions
    ) {
        let saved = withRunning { configured -> (SegmentsByCategory, SegmentBaseline, any SegmentBaselineStore) in
            let changes = SegmentDiff.changes(from: configured.baseline.snapshot, to: segments, for: flight.customer)
            configured.baseline.snapshot = SegmentSnapshot(customer: flight.customer, segments: segments, fetchedAt: now.wall)
            configured.baseline.integration = configured.ports.integrationID
            configured.snapshotUptime = now.uptime
            return (changes, configured.baseline, configured.ports.baselineStore)
        }
        guard let (changes, baseline, store) = saved else { return }
        if let snapshot = baseline.snapshot, let integration = baseline.integration {
            fetchedByThisProcess[integration] = (snapshot, now.uptime)
        }
        actions.append(.saveBaseline(baseline, to: store))
        let categories = changes.keys.map(\.name).sorted().joined(separator: ", ")
        actions.append(.log(.verbose, "Segments: Segments fetched; changed categories: [\(categories)]"))
        deliver(changes, answer: segments, firstLoad: true, &actions)
        answerReads(with: .success(segments), &actions)
    }

    /// A failed fetch: nothing changes; reads fail; a transient failure of an owed reload is
    /// retried with backoff while listeners exist; after a permanent one, a follow-up owed during
    /// the flight is still scheduled (<doc:Behaviour#D9>, <doc:Behaviour#T6>, <doc:Behaviour#T7>,
    /// <doc:Behaviour#C4>, <doc:Behaviour#L2>).
    private mutating func fail(
        _ error: SegmentsError, of flight: Flight, followUpOwed: Bool, at now: Moment, _ actions: inout Actions
    ) {
        if error.code == .linkFailed { actions.append(.logLinkFailure(flight.customer)) }
        actions.append(.log(.warning, SegmentsLogText.fetchFailed(error)))
        answerReads(with: .failure(error), &actions)
        pruneReleasedOwners(&actions)
        guard flight.forListeners || followUpOwed, !listeners.isEmpty else { return }
        guard error.isTransient else {
            if followUpOwed { requestReload(at: now, &actions) }
            return
        }
        let attempt = flight.retryAttempt + 1
        let delay = timings.retry.delay(attempt: attempt, random: now.random, retryAfter: error.retryAfter)
        let timer = makeTimer()
        withRunning { $0.reload = .retrying(attempt: attempt, timer: timer) }
        actions.schedule(timer, after: delay)
    }

    /// The customer changed under a flight (<doc:Behaviour#C2>, <doc:Behaviour#C3>,
    /// <doc:Behaviour#G6>): reads retry for the current customer (a bounded number of times; a read
    /// that came after the change is not charged), and an owed reload is requested again.
    private mutating func customerChanged(
        during flight: Flight, followUpOwed: Bool, at now: Moment, _ actions: inout Actions
    ) {
        let owed = flight.forListeners || followUpOwed
        var retrying: [PendingRead] = []
        var givenUp: [PendingRead] = []
        for var read in reads {
            if read.customer != flight.customer {
                retrying.append(read)
            } else if read.customerRetries < timings.maxReadRetries {
                read.customerRetries += 1
                read.customer = customer
                retrying.append(read)
            } else {
                givenUp.append(read)
            }
        }
        reads = retrying
        if !givenUp.isEmpty {
            actions.append(
                .answer(givenUp, .failure(SegmentsError(.customerChanged, "the customer changed during the read"))))
        }
        if !retrying.isEmpty {
            startFlight(forListeners: owed && !listeners.isEmpty, retryAttempt: 0, &actions)
        } else if owed && !listeners.isEmpty {
            requestReload(at: now, &actions)
        }
    }

    /// Cancels the debounce or backoff and discards the flight (<doc:Behaviour#A1>,
    /// <doc:Behaviour#A3>). Returns whether anything was pending or in flight. The discarded flight
    /// is let go of after the lock.
    private mutating func cancelReload(_ actions: inout Actions) -> Bool {
        if let timer = currentTimer { actions.cancel(timer) }
        let dropped = withConfigured { configured -> Reload in
            defer { configured.reload = .idle }
            return configured.reload
        }
        guard let dropped else { return false }
        if case .idle = dropped { return false }
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
        counters.read += 1
        let read = PendingRead(id: counters.read, category: category, force: force, reply: reply)
        var actions = Actions()
        switch state {
        case .running:
            serve(read, at: now, &actions)
        case .unconfigured, .loading:
            if reads.count < Self.maxReadsWaitingForConfigure {
                reads.append(read)
            } else {
                let error = SegmentsError(
                    .notConfigured,
                    "too many reads wait for configure (\(Self.maxReadsWaitingForConfigure)); configure the client first")
                actions.append(.answer([read], .failure(error)))
            }
        case .stopped:
            actions.append(.answer([read], .failure(SegmentsError.stopped)))
        case .modifying:
            preconditionFailure("a read started while a transition was modifying the state")
        }
        return (read.id, actions)
    }

    /// Answers a still-pending read with `.cancelled`; a read already answered is left alone, so
    /// every read is answered exactly once.
    mutating func withdrawRead(_ id: Int) -> Actions {
        var actions = Actions()
        if let index = reads.firstIndex(where: { $0.id == id }) {
            actions.append(.answer([reads.remove(at: index)], .failure(SegmentsError(.cancelled, "the read was cancelled"))))
        }
        return actions
    }

    /// Answers from the cache when allowed (G1), otherwise joins the flight or starts one (G2).
    private mutating func serve(_ read: PendingRead, at now: Moment, _ actions: inout Actions) {
        if !read.force, let segments = cacheHit(read.category, at: now) {
            actions.append(.answer([read], .success([read.category: segments])))
            return
        }
        var read = read
        read.customer = customer
        reads.append(read)
        startFlight(forListeners: false, retryAttempt: 0, &actions)
    }

    /// The answer of a read without `force` when the cache gives it right now (<doc:Behaviour#G1>,
    /// T10): running, the baseline belongs to exactly the current customer and is younger than
    /// the cache time — measured on the monotonic clock for a fetch of this process, on its
    /// wall-clock `fetchedAt` for a loaded one. `nil` when the read must wait or fetch.
    func cacheHit(_ category: SegmentCategory, at now: Moment) -> [Segment]? {
        guard case .running(let configured) = state, let snapshot = configured.baseline.snapshot else { return nil }
        let age = configured.snapshotUptime.map { now.uptime - $0 } ?? now.wall.timeIntervalSince(snapshot.fetchedAt)
        guard timings.cache.canAnswer(from: snapshot, for: configured.customer, age: age) else { return nil }
        return snapshot.segments(in: category)
    }

    /// Answers every pending read with `result`.
    private mutating func answerReads(with result: Result<SegmentsByCategory, SegmentsError>, _ actions: inout Actions) {
        guard !reads.isEmpty else { return }
        actions.append(.answer(reads, result))
        reads = []
    }

    // MARK: - Deliveries

    /// Decides the handler calls after an answer (<doc:Behaviour#D4>–<doc:Behaviour#D7>): per
    /// category, in name order, each listener in registration order is told the category's full
    /// list when the category `changed` against the baseline, when the list differs from what that
    /// listener was last told (so no listener keeps another customer's or project's segments, D4),
    /// or — with `firstLoad` — when its first-load promise is still to be kept (D6).
    private mutating func deliver(
        _ changed: SegmentsByCategory, answer: SegmentsByCategory, firstLoad: Bool, _ actions: inout Actions
    ) {
        var deliveries: [Delivery] = []
        let categories = Set(changed.keys).union(answer.keys).union(listeners.categories)
        for category in categories.sorted(by: { $0.name < $1.name }) {
            let segments = changed[category] ?? answer[category] ?? []
            listeners.tell(segments, to: category, changed: changed[category] != nil, firstLoad: firstLoad, into: &deliveries)
        }
        if firstLoad { listeners.keepFirstLoadPromises() }
        if !deliveries.isEmpty { actions.append(.deliver(deliveries)) }
    }

    // MARK: - Stop (→ stopped)

    /// Stops (<doc:Behaviour#A3>): cancels and discards segment work, deletes the baseline and link
    /// memory, removes every listener, fails pending reads with `.stopped`, stops the tracking
    /// pipeline, ends the configuration, and rejects work until configured again. Everything the
    /// app gave is let go of after the lock.
    mutating func stop() -> (Ending, Actions) {
        var actions = Actions()
        if cancelReload(&actions) { actions.append(.log(.verbose, SegmentsLogText.cancelledMeanwhile)) }
        forgetSegments(&actions)
        answerReads(with: .failure(SegmentsError.stopped), &actions)
        let ending = end(&actions)
        let stopped = listeners.stop()
        if !stopped.deliveries.isEmpty { actions.append(.deliver(stopped.deliveries)) }
        if !stopped.streamEnds.isEmpty { actions.append(.endStreams(stopped.streamEnds)) }
        if !stopped.removed.isEmpty { actions.release(stopped.removed) }
        return (ending, actions)
    }

    /// The client was let go of without a stop: its configuration ends as at a stop — the pipeline
    /// stopped, the storage given back with the customer it ended with (<doc:Behaviour#P5>,
    /// <doc:Behaviour#R1>) — but what it stored stays, for the next owner or launch.
    mutating func clientReleased() -> (Ending, Actions) {
        var actions = Actions()
        _ = cancelReload(&actions)
        answerReads(with: .failure(SegmentsError.stopped), &actions)
        return (end(&actions), actions)
    }

    /// Ends the configuration, if any (→ stopped): what the caller carries out is returned; the
    /// configuration's ports — stores, backend, pipeline — are let go of after the lock.
    private mutating func end(_ actions: inout Actions) -> Ending {
        var ending = Ending()
        if let old = configured {
            ending.tracking = old.ports.tracking
            ending.storage = endConfiguration(old, &actions)
        }
        actions.release(state)
        state = .stopped
        return ending
    }
}
