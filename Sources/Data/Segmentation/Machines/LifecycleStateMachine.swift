import Foundation
import SegmentsDomain

/// A client's life: unconfigured, loading its baseline, running, stopped — the configuration in
/// force with its ports, the customer, the baseline, the flushing mode, the customers whose save is
/// not written yet (<doc:Behaviour#T2>, <doc:Behaviour#R1>, <doc:Behaviour#R3>, <doc:Behaviour#A1>,
/// <doc:Behaviour#A3>, <doc:Behaviour#A4>, <doc:Behaviour#E2>, <doc:Behaviour#P5>, <doc:Behaviour#P8>).
///
/// A value with one `state` whose cases carry their data, and transitions that return the
/// ``Action``s they decided: saves, loads, the tracking pipeline's start and mode, the storage's
/// hand-over and redo, logs. It knows nothing of listeners, reads or the reload: the client's
/// machine (``SegmentationStateMachine``) passes in what it needs of them (whether listeners exist,
/// whether a reload was pending) and decides what follows for them.
struct LifecycleStateMachine: Sendable {
    /// Where the client is in its life.
    enum State: Sendable {
        /// Not configured yet.
        case unconfigured
        /// Configured; the stored baseline is loading on the storage queue. Reads and reloads wait
        /// for it (<doc:Behaviour#R3>).
        case loading(Configured, BaselineLoad)
        /// Configured, baseline in memory.
        case running(Configured)
        /// Stopped: work is rejected until configured again.
        case stopped
        /// Only while a transition mutates the configured payload in place (no copy-on-write).
        case modifying
    }

    /// The flushing mode in force (or set before configure) and whether the T8 warning was given.
    private struct Flushing: Sendable {
        var mode: FlushingMode?
        var warnedNotImmediate = false
    }

    let timings: SegmentationTimings
    private(set) var state: State = .unconfigured {
        didSet { answerable = Answerable(state) }
    }

    /// What a read may be answered from without waiting: the running configuration's snapshot
    /// when it belongs to exactly the current customer (<doc:Behaviour#G1>). Derived from `state`
    /// at every change of it, never set otherwise, so the cache hit on the app's thread copies
    /// no configuration and compares no customers.
    private var answerable: Answerable?

    private var flushing = Flushing()
    private var unsavedCustomers: [String: UnsavedCustomer] = [:]
    /// The tracking calls made before the first configure (<doc:Behaviour#E1>, rev 4).
    var waiting = WaitingCalls()
    /// The default properties in force, or set for the next configure (<doc:Behaviour#E8>).
    var defaults = DefaultProperties()
    /// The last snapshot this process fetched per integration, with its monotonic moment: a
    /// re-configure that loads it back ages it on the monotonic clock, not the wall clock (T10).
    private var fetchedByThisProcess: [String: (snapshot: SegmentSnapshot, uptime: TimeInterval)] = [:]
    private var loads = 0
    /// Identify calls decided whose update is still being written, in decision order.
    private var pendingIdentifies: [PendingIdentify] = []
    private var identifies = 0
    /// The identify calls the last stop took in before it (``mergeIdentifiesBeforeTheEnd()``):
    /// their updates are written even though the pipeline stopped (``identifyCameBeforeTheStop(_:)``).
    private var identifiesBeforeTheStop: Set<Int> = []
    /// The stops that delete the stored data whose deletion is not done yet (<doc:Behaviour#A3>).
    private var erasures: [Erasure] = []
    private var lastErasure = 0
    /// The pipelines of ended configurations that are not settled yet — a flush they had begun
    /// still runs (<doc:Behaviour#E5>) — with the storage they use: a new configuration on the same
    /// storage loads its queue only once they are (<doc:Behaviour#E4>, <doc:Behaviour#A4>).
    private var unsettled: [(tracking: TrackingPipeline, storageID: String?)] = []

    init(timings: SegmentationTimings) {
        self.timings = timings
    }

    // MARK: - Looking at the state

    /// The configuration, loading or running.
    var configured: Configured? {
        switch state {
        case .loading(let configured, _), .running(let configured): configured
        case .unconfigured, .stopped: nil
        case .modifying: preconditionFailure("the lifecycle was read while it was being modified")
        }
    }

    /// Whether configured: loading or running.
    var isConfigured: Bool {
        switch state {
        case .loading, .running: true
        case .unconfigured, .stopped: false
        case .modifying: preconditionFailure("the lifecycle was read while it was being modified")
        }
    }

    /// The configuration once its baseline is in.
    var running: Configured? {
        if case .running(let configured) = state { configured } else { nil }
    }

    /// Whether the baseline of the configuration in force is loading.
    var isLoading: Bool {
        if case .loading = state { true } else { false }
    }

    /// Whether stopped.
    var isStopped: Bool {
        if case .stopped = state { true } else { false }
    }

    /// The current customer, or `nil` before configuration and after stop. Read on the app's
    /// thread (`customerCookie`): it projects the one field, copying no configuration.
    var customer: CustomerIds? {
        switch state {
        case .loading(let configured, _), .running(let configured): configured.customer
        case .unconfigured, .stopped: nil
        case .modifying: preconditionFailure("the lifecycle was read while it was being modified")
        }
    }

    /// The flushing mode in force, or the one set before configure (`.immediate` by default).
    var flushingMode: FlushingMode { flushing.mode ?? .immediate }

    /// Whether two configurations store the customer in the same place. `nil` names storage that
    /// is new at every configure (memory), so it is never the same (<doc:Behaviour#T2>).
    static func sameStorage(_ old: SegmentationEngine.Ports, _ new: SegmentationEngine.Ports) -> Bool {
        old.storageID != nil && old.storageID == new.storageID
    }

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
            preconditionFailure("a lifecycle transition started while another one was modifying the state")
        }
    }

    // MARK: - Configure (unconfigured, running or stopped → loading → running)

    /// Configures (or re-configures) with `ports` (<doc:Behaviour#T2>, <doc:Behaviour#T6>,
    /// <doc:Behaviour#A4>, <doc:Behaviour#R1>, <doc:Behaviour#R3>).
    ///
    /// The customer comes from memory when a save to the same storage is still pending (the
    /// store would answer an older value), or from the handover of the folder's previous owner,
    /// or from `stored` (what the engine read from the store, off the lock); without any of
    /// them the outcome asks for the stored one. `reload` is what the reload had pending: it is
    /// owed again once the baseline is in. Returns the previous state, to let go of after the lock.
    ///
    /// The calls made before the first configure are applied here, in their order, to the
    /// customer found (<doc:Behaviour#E1>): see ``WaitingCalls/apply(_:to:defaults:)``; their items
    /// are in the ending's ``Ending/replay``.
    mutating func configure(
        _ ports: SegmentationEngine.Ports, namedMode: FlushingMode?, stored: CustomerIds??, newCookie: String?,
        reload: (owed: Bool, burstStarted: TimeInterval?), hasListeners: Bool,
        namedDefaults: ConfiguredDefaults? = nil
    ) -> (ConfigureOutcome, [Action], dropped: State?) {
        var actions: [Action] = []
        let current = configured.flatMap { Self.sameStorage($0.ports, ports) ? $0.customer : nil }
        // A deletion still to come covers this storage (<doc:Behaviour#A3>): its customer is not
        // read; a new one is made (a customer without a cookie), unless a configure after the stop
        // made one already.
        let erasing = erasures.firstIndex { $0.covers(ports.storageID) }
        let unsaved = ports.storageID.flatMap { unsavedCustomers[$0]?.latest }
        let handedOver = unsaved == nil && current == nil && erasing == nil ? ports.handedOverCustomer : nil
        let known: CustomerIds? = unsaved ?? current ?? (erasing != nil ? CustomerIds([:]) : handedOver)
        let found: CustomerIds?
        if let known {
            found = known
        } else if let stored {
            found = stored
        } else {
            return (.needsStoredCustomer, actions, nil)
        }

        var customer = found ?? CustomerIds([:])
        // A customer made by an earlier configure of this storage stays replaceable (see Behaviour P8).
        var made = current != nil && configured?.madeAtConfigure == customer ? customer : nil
        if customer.cookie?.isEmpty ?? true {
            guard let newCookie else { return (.needsNewCookie, actions, nil) }
            if customer.cookie != nil {
                actions.append(.log(.warning, "Segments: The stored customer had an empty cookie; a new one was made"))
            }
            var values = customer.values
            values[CustomerIds.cookieKey] = newCookie
            customer = CustomerIds(values)
            made = customer
            save(customer, with: ports, &actions)
        }
        if let handedOver, let storageID = ports.storageID {
            // The previous owner's save of it may still be queued (R1): until this client's storage
            // queue has waited for it, memory is the truth for the storage, for a configure of this
            // client after a stop as for one of the next owner (P5).
            unsavedCustomers[storageID, default: UnsavedCustomer(pending: 0, latest: handedOver)].pending += 1
            actions.append(.handedOverCustomerWritten(storageID: storageID))
        }

        let previous = state
        var ending = Ending()
        var reloadOwed = reload.owed
        if let namedDefaults { defaults.configure(namedDefaults) }
        var anonymized = false
        if holdsCalls, !waiting.isEmpty {
            // The calls made before this first configure, applied in their order (see Behaviour E1);
            // after a configure still queuing its own, those made meanwhile are applied by this one.
            let applied = WaitingCalls.apply(waiting.takeAll(), to: customer, defaults: defaults)
            if applied.customer != customer {
                customer = applied.customer
                made = nil  // identify or anonymize decided (see Behaviour P8)
                reloadOwed = true  // the ids changed (see Behaviour T4, A1)
                save(customer, with: ports, &actions)
            }
            anonymized = applied.anonymized
            ending.replay = WaitingReplay(tracking: ports.tracking, storageID: ports.storageID, items: applied.items)
            waiting.replayers += 1  // until its caller has queued them, calls wait behind them
        }
        var otherIntegration = false
        var burstStarted = reload.burstStarted
        if let old = configured {
            if case .loading(_, let load) = previous {
                reloadOwed = reloadOwed || load.reloadOwed
                otherIntegration = load.otherIntegration  // the listeners have not heard that one yet
                burstStarted = burstStarted ?? load.burstStarted
            }
            otherIntegration = otherIntegration || old.ports.integrationID != ports.integrationID || !Self.sameStorage(old.ports, ports)
            if let pipeline = old.ports.tracking, pipeline !== ports.tracking {
                ending.tracking = pipeline
                if Self.sameStorage(old.ports, ports) { ending.successor = ports.tracking }
                endTracking(pipeline, of: old.ports, &actions)
            }
            if !Self.sameStorage(old.ports, ports) { ending.storage = endConfiguration(old, &actions) }
        }
        let previousTracking = configured?.ports.tracking
        loads += 1
        let load = BaselineLoad(
            id: loads, reloadOwed: reloadOwed, otherIntegration: otherIntegration, discardLoaded: false, burstStarted: burstStarted)
        state = .loading(
            Configured(ports: ports, customer: customer, baseline: .empty, snapshotUptime: nil, madeAtConfigure: made), load)

        flushing.mode = namedMode ?? flushing.mode
        if let pipeline = ports.tracking { actions.append(.setFlushingMode(pipeline, flushingMode)) }
        if flushingMode == .immediate { flushing.warnedNotImmediate = false }
        // An anonymize made before configure deleted the baseline and link memory (see Behaviour A1).
        if anonymized { actions += forgetSegments() }
        actions.append(.loadBaseline(load.id, from: ports.baselineStore))
        // After the baseline's load: a cold start's first read waits for the baseline only, not
        // for the journal behind it (see Behaviour R3; benchmark 6).
        if let pipeline = ports.tracking, pipeline !== previousTracking {
            let after = unsettled.filter { ports.storageID != nil && $0.storageID == ports.storageID && $0.tracking !== pipeline }
            actions.append(.startTracking(pipeline, after: after.map(\.tracking)))
        }
        actions += warnIfTrackingNotImmediate(hasListeners: hasListeners)
        if let erasing, !erasures[erasing].queued {
            // The deletion comes first, before anything of this configuration is read or written
            // on the storage queue; the stop's last flush is cut short (A3).
            erasures[erasing].queued = true
            actions.insert(erasures[erasing].action, at: 0)
        }
        return (.configured(ending), actions, previous)
    }

    /// Ends the pipeline of a configuration (stopped, replaced, or its client released): until it
    /// is settled, a new configuration on the same storage waits for it before it loads.
    private mutating func endTracking(_ pipeline: TrackingPipeline, of ports: SegmentationEngine.Ports, _ actions: inout [Action]) {
        unsettled.append((pipeline, ports.storageID))
        actions.append(.watchSettled(pipeline))
    }

    /// The client was let go of: no configuration of it will load again, so it keeps no ended
    /// pipeline alive — their flushes are abandoned, as everything else it had going, and their
    /// items stay on disk (<doc:Behaviour#E4>). Returns them, to let go of after the lock.
    mutating func forgetUnsettled() -> [TrackingPipeline] {
        defer { unsettled = [] }
        return unsettled.map(\.tracking)
    }

    /// An ended pipeline is settled (<doc:Behaviour#E4>): configurations from now on load without
    /// waiting for it.
    mutating func trackingSettled(_ pipeline: ObjectIdentifier) {
        unsettled.removeAll { ObjectIdentifier($0.tracking) == pipeline }
    }

    /// Ends `old` (stopped, replaced by a configuration on other storage, or its client released):
    /// its writes are queued in their place among the actions, and the storage to free is returned
    /// for the ending call (<doc:Behaviour#P5>, <doc:Behaviour#R1>).
    private func endConfiguration(
        _ old: Configured, _ actions: inout [Action]
    ) -> (handOver: any StorageHandOver, lastCustomer: CustomerIds)? {
        guard let handOver = old.ports.handOver else { return nil }
        actions.append(.storageWritesQueued(handOver))
        return (handOver, old.customer)
    }

    /// The baseline that `configure` asked for is in (<doc:Behaviour#R3>): running. A load that a
    /// later configure or stop overtook is ignored (`nil`); one that anonymize overtook keeps its
    /// empty baseline. A baseline of another integration (a storage shared by two) is not used
    /// (D1, C4, G1).
    mutating func baselineLoaded(_ loadID: Int, _ loaded: SegmentBaseline) -> (Loaded?, [Action]) {
        guard case .loading(var configured, let load) = state, load.id == loadID else { return (nil, []) }
        var actions: [Action] = []
        let ours = loaded.integration == nil || loaded.integration == configured.ports.integrationID
        if !ours { actions.append(.log(.verbose, SegmentsLogText.baselineOfAnotherIntegration)) }
        if ours, !load.discardLoaded {  // (anonymize deleted it meanwhile: the empty one stays)
            configured.baseline = loaded
            let fetched = fetchedByThisProcess[configured.ports.integrationID]
            if let fetched, fetched.snapshot == loaded.snapshot { configured.snapshotUptime = fetched.uptime }
        }
        state = .running(configured)
        // A return to the foreground during the load is judged as it would have been with this
        // baseline in (T11): a baseline this process did not fetch, or none, counts as older.
        let foregroundOwes = load.returnedToForeground.map { returned in
            configured.snapshotUptime.map { returned - $0 > timings.foregroundRefreshAge } ?? true
        } ?? false
        return (
            Loaded(reloadOwed: load.reloadOwed || foregroundOwes, otherIntegration: load.otherIntegration, burstStarted: load.burstStarted),
            actions
        )
    }

    /// The app returned to the foreground, with listeners, while the baseline loads (T11): the
    /// reload it may owe is decided when the baseline is in.
    mutating func returnedToForegroundWhileLoading(at uptime: TimeInterval) {
        guard case .loading(let configured, var load) = state else { return }
        load.returnedToForeground = uptime
        state = .loading(configured, load)
    }

    /// A reload was requested while the baseline loads: it is owed once it is in (T2).
    mutating func oweReload() {
        guard case .loading(let configured, var load) = state else { return }
        load.reloadOwed = true
        state = .loading(configured, load)
    }

    /// A customer save was written: once none is pending for its storage, the store is the truth again.
    mutating func customerSaved(in storageID: String) {
        if let unsaved = unsavedCustomers[storageID], unsaved.pending > 1 {
            unsavedCustomers[storageID]?.pending -= 1
        } else {
            unsavedCustomers[storageID] = nil
        }
    }

    /// The customer file of `storageID`, refused at configure because protected data was not
    /// available, has been read (<doc:Behaviour#P8>). When the current customer is still the one
    /// configure made for lack of it, the stored customer (with a cookie) becomes the current one
    /// (`true`: the caller treats it like an identify). Otherwise — identify or anonymize decided
    /// meanwhile, or the file had no usable customer — the current customer stays and is saved
    /// over the file.
    mutating func storedCustomerRead(_ stored: CustomerIds?, in storageID: String) -> (adopted: Bool, actions: [Action]) {
        var actions: [Action] = []
        guard let current = configured, current.ports.storageID == storageID else { return (false, actions) }
        let made = current.madeAtConfigure
        withConfigured { $0.madeAtConfigure = nil }
        guard let stored, !(stored.cookie?.isEmpty ?? true), made == current.customer, stored != current.customer else {
            save(current.customer, with: current.ports, &actions)
            return (false, actions)
        }
        withConfigured { $0.customer = stored }
        actions.append(.log(.warning, SegmentsLogText.storedCustomerAdopted))
        return (true, actions)
    }

    /// Protected data became available (<doc:Behaviour#P8>): the configuration in force redoes
    /// what its storage refused, in this place of the order — a configuration that ended meanwhile
    /// redoes nothing.
    func protectedDataBecameAvailable() -> [Action] {
        guard let current = configured, let redo = current.ports.refusedStorageRedo, let storageID = current.ports.storageID else {
            return []
        }
        return [.redoRefusedStorage(redo, storageID: storageID, tracking: current.ports.tracking)]
    }

    // MARK: - The flushing mode (any state)

    /// Sets the flushing mode (<doc:Behaviour#E2>, <doc:Behaviour#T8>, <doc:Behaviour#A4>): in
    /// force at once when configured, else at the next configure unless its configuration names one.
    mutating func setFlushingMode(_ mode: FlushingMode, hasListeners: Bool) -> [Action] {
        flushing.mode = mode
        if mode == .immediate { flushing.warnedNotImmediate = false }
        var actions: [Action] = []
        if let pipeline = configured?.ports.tracking { actions.append(.setFlushingMode(pipeline, mode)) }
        return actions + warnIfTrackingNotImmediate(hasListeners: hasListeners)
    }

    /// One warning that segments lag when listeners exist and flushing is not immediate (T8).
    mutating func warnIfTrackingNotImmediate(hasListeners: Bool) -> [Action] {
        guard configured != nil, flushingMode != .immediate, !flushing.warnedNotImmediate, hasListeners else { return [] }
        flushing.warnedNotImmediate = true
        return [.log(.warning, SegmentsLogText.flushingNotImmediate)]
    }

    // MARK: - The customer (loading or running)

    /// The current customer and the pipeline of the same configuration, or `nil` when not configured.
    var stamp: SegmentationEngine.Stamp? {
        switch state {
        case .loading(let configured, _), .running(let configured):
            SegmentationEngine.Stamp(
                customer: configured.customer, storageID: configured.ports.storageID, tracking: configured.ports.tracking,
                defaults: defaults, holds: waiting.replayers > 0)
        case .unconfigured, .stopped: nil
        case .modifying: preconditionFailure("the lifecycle was read while it was being modified")
        }
    }

    /// An identify whose update the caller is writing (<doc:Behaviour#E1>, <doc:Behaviour#A4>).
    struct PendingIdentify: Sendable {
        let ticket: Int
        /// The customer it merges into, by cookie: a new cookie (anonymize, another storage's
        /// customer) means another call came after it, and its merge no longer applies.
        let cookie: String?
        let hardIds: [String: String]
        /// `nil` while its update is being written; then whether it was queued.
        var queued: Bool?
    }

    /// Decides an identify (<doc:Behaviour#E1>, <doc:Behaviour#A4>): its place in the one order is
    /// now. The update is stamped with the current customer, the ids of the identify calls decided
    /// before it and still being written, and `hardIds` — what it would be stamped with had they
    /// been made one after another. The ids are merged by ``endIdentify(_:queued:)``, in decision
    /// order, once the update is written; `nil` when not configured, or while the calls made before
    /// the first configure are being queued (the caller holds it behind them, E1 rev 4).
    mutating func beginIdentify(hardIds: [String: String]) -> (ticket: Int, stamp: SegmentationEngine.Stamp)? {
        guard let stamp, !stamp.holds else { return nil }
        let cookie = stamp.customer.cookie
        var customer = stamp.customer
        for earlier in pendingIdentifies where earlier.cookie == cookie { customer = customer.merging(hardIds: earlier.hardIds) }
        identifies += 1
        pendingIdentifies.append(PendingIdentify(ticket: identifies, cookie: cookie, hardIds: hardIds))
        let stamped = SegmentationEngine.Stamp(
            customer: customer.merging(hardIds: hardIds), storageID: stamp.storageID, tracking: stamp.tracking, defaults: stamp.defaults)
        return (identifies, stamped)
    }

    /// The update of the identify `ticket` was written (`queued`) or refused. Identify calls
    /// merge in the order they were decided: one whose update is written before an earlier one's
    /// waits for it. A refused one merges nothing; one whose customer was replaced meanwhile
    /// merges nothing either (it came before the call that replaced it). `changed` says the ids
    /// changed (and were saved).
    mutating func endIdentify(_ ticket: Int, queued: Bool) -> (changed: Bool, [Action]) {
        guard let index = pendingIdentifies.firstIndex(where: { $0.ticket == ticket }) else { return (false, []) }
        pendingIdentifies[index].queued = queued
        var merged: CustomerIds?
        var ports: SegmentationEngine.Ports?
        while let first = pendingIdentifies.first, let wasQueued = first.queued {
            pendingIdentifies.removeFirst()
            guard wasQueued else { continue }
            withConfigured { configured in
                guard configured.customer.cookie == first.cookie else { return }
                let next = configured.customer.merging(hardIds: first.hardIds)
                guard next != configured.customer else { return }
                configured.customer = next
                merged = next
                ports = configured.ports
            }
        }
        var actions: [Action] = []
        guard let merged, let ports else { return (false, actions) }
        save(merged, with: ports, &actions)
        return (true, actions)
    }

    /// The configuration ends (a stop) while identify calls decided before it are still having
    /// their updates written: they came before the stop in the one order, so their ids are merged
    /// now, in decision order, as ``endIdentify(_:queued:)`` would have, and saved
    /// (<doc:Behaviour#A4>, <doc:Behaviour#E1>). One whose write was refused merges nothing; one
    /// still being written is taken as queued (its write is the caller's one buffered `write`).
    /// `changed` says the ids changed.
    mutating func mergeIdentifiesBeforeTheEnd() -> (changed: Bool, [Action]) {
        identifiesBeforeTheStop = Set(pendingIdentifies.filter { $0.queued == nil }.map(\.ticket))
        guard let last = pendingIdentifies.last?.ticket else { return (false, []) }
        for index in pendingIdentifies.indices where pendingIdentifies[index].queued == nil {
            pendingIdentifies[index].queued = true
        }
        return endIdentify(last, queued: true)
    }

    /// Whether the identify `ticket` was decided before the last stop, which took it in: its update
    /// is to be written even though the pipeline stopped (<doc:Behaviour#A4>).
    func identifyCameBeforeTheStop(_ ticket: Int) -> Bool {
        identifiesBeforeTheStop.contains(ticket)
    }

    /// A new anonymous customer with `newCookie` (<doc:Behaviour#A1>): saved, and the baseline and
    /// link memory deleted. Returns the customer and the categories that held segments (their
    /// listeners are told `[]`, A2); `nil` when not configured.
    mutating func anonymize(newCookie: String) -> (customer: CustomerIds, emptied: SegmentsByCategory, actions: [Action])? {
        guard let old = configured else { return nil }
        var actions: [Action] = []
        let anonymous = CustomerIds(cookie: newCookie)
        withConfigured { $0.customer = anonymous }
        save(anonymous, with: old.ports, &actions)
        let emptied = (old.baseline.snapshot?.segments ?? [:]).filter { !$0.value.isEmpty }.mapValues { _ in [Segment]() }
        return (anonymous, emptied, actions + forgetSegments())
    }

    /// Saves `customer` to the configuration's store; until written, memory is the truth for
    /// that storage (<doc:Behaviour#R1>).
    private mutating func save(_ customer: CustomerIds, with ports: SegmentationEngine.Ports, _ actions: inout [Action]) {
        if let storageID = ports.storageID {
            unsavedCustomers[storageID, default: UnsavedCustomer(pending: 0, latest: customer)].pending += 1
            unsavedCustomers[storageID]?.latest = customer
        }
        actions.append(.saveCustomer(customer, to: ports.customerStore, storageID: ports.storageID))
    }

    /// Deletes the baseline and the link memory, in memory and on disk.
    mutating func forgetSegments() -> [Action] {
        let store = withConfigured { configured -> any SegmentBaselineStore in
            configured.baseline = .empty
            configured.snapshotUptime = nil
            return configured.ports.baselineStore
        }
        if case .loading(let configured, var load) = state {
            load.discardLoaded = true
            state = .loading(configured, load)
        }
        return store.map { [.saveBaseline(.empty, to: $0)] } ?? []
    }

    // MARK: - Segments (running)

    /// The link of `customer` to its cookie succeeded (<doc:Behaviour#C4>): remembered and saved.
    mutating func linked(_ customer: CustomerIds) -> [Action] {
        let saved = withRunning { configured -> (SegmentBaseline, any SegmentBaselineStore) in
            configured.baseline.linkedCustomers.insert(customer)
            configured.baseline.integration = configured.ports.integrationID
            return (configured.baseline, configured.ports.baselineStore)
        }
        return saved.map { [.saveBaseline($0.0, to: $0.1)] } ?? []
    }

    /// A successful fetch for `customer` replaces the baseline (<doc:Behaviour#D1>–<doc:Behaviour#D3>):
    /// returns the categories that changed, and the saves.
    mutating func fetched(_ segments: SegmentsByCategory, for customer: CustomerIds, at now: Moment) -> (SegmentsByCategory, [Action])? {
        let saved = withRunning { configured -> (SegmentsByCategory, SegmentBaseline, any SegmentBaselineStore) in
            let changes = SegmentDiff.changes(from: configured.baseline.snapshot, to: segments, for: customer)
            configured.baseline.snapshot = SegmentSnapshot(customer: customer, segments: segments, fetchedAt: now.wall)
            configured.baseline.integration = configured.ports.integrationID
            configured.snapshotUptime = now.uptime
            return (changes, configured.baseline, configured.ports.baselineStore)
        }
        guard let (changes, baseline, store) = saved else { return nil }
        if let snapshot = baseline.snapshot, let integration = baseline.integration {
            fetchedByThisProcess[integration] = (snapshot, now.uptime)
        }
        return (changes, [.saveBaseline(baseline, to: store)])
    }

    /// The answer of a read without `force` when the cache gives it right now (<doc:Behaviour#G1>,
    /// T10): running, the baseline belongs to exactly the current customer and is younger than
    /// the cache time — measured on the monotonic clock for a fetch of this process, on its
    /// wall-clock `fetchedAt` for a loaded one. `nil` when the read must wait or fetch.
    func cacheHit(_ category: SegmentCategory, at now: Moment) -> [Segment]? {
        if case .answer(let segments) = cacheHit(category, uptime: now.uptime, wall: now.wall) { segments } else { nil }
    }

    /// ``cacheHit(_:at:)`` for a caller that reads the wall clock only when it is needed: without
    /// `wall`, a snapshot this process did not fetch answers `.needsWallClock`.
    func cacheHit(_ category: SegmentCategory, uptime: TimeInterval, wall: Date?) -> CacheAnswer {
        guard let answerable else { return .miss }
        let age: TimeInterval
        if let fetched = answerable.fetchedUptime {
            age = uptime - fetched
        } else if let wall {
            age = wall.timeIntervalSince(answerable.fetchedAt)
        } else {
            return .needsWallClock
        }
        guard timings.cache.isFresh(age: age) else { return .miss }
        return .answer(answerable.segments[category] ?? [])
    }

    /// What the cache can say about a read right now.
    enum CacheAnswer: Sendable {
        case answer([Segment])
        /// The read must wait or fetch.
        case miss
        /// The snapshot's age is known on the wall clock only: ask again with it.
        case needsWallClock
    }

    // MARK: - Stop (→ stopped)

    /// Ends the configuration, if any (→ stopped): what the ending call carries out is returned,
    /// and the previous state, whose ports — stores, backend, pipeline — are let go of after the lock.
    mutating func end(released: Bool = false) -> (Ending, [Action], dropped: State) {
        var ending = Ending()
        var actions: [Action] = []
        if let old = configured {
            ending.tracking = old.ports.tracking
            if let pipeline = old.ports.tracking { endTracking(pipeline, of: old.ports, &actions) }
            ending.storage = endConfiguration(old, &actions)
        }
        if !waiting.isEmpty, !released {
            // A stop before the first configure forgets the calls made before it (see Behaviour E1).
            actions.append(.log(.warning, SegmentsLogText.waitingCallsDropped(waiting.count)))
        }
        waiting.forget()
        let dropped = state
        state = .stopped
        return (ending, actions, dropped)
    }

    /// What a stop that deletes the stored data covers when the client was never configured: the
    /// default storage (<doc:Behaviour#A3>, "forget this customer").
    struct DefaultStorage: Sendable {
        /// The prefix of the storage ids of the default storage's folders.
        var storage: String
        var eraser: any StoredDataEraser
    }

    /// Ends the configuration, if any (→ stopped), as a stop that deletes the stored data
    /// (<doc:Behaviour#A3>): the ending carries the pipeline's last flush, after which
    /// ``lastFlushEnded(_:)`` queues the deletion (at once without a pipeline); the storage is
    /// given back with a customer without a cookie, so its next owner starts a new one, and its
    /// writes are marked done only once the deletion is (P5). Never configured, the default
    /// storage is deleted (without upload); already stopped, `completion` joins a deletion still
    /// to come, or follows the disk work queued so far.
    mutating func endErasing(
        completion: LifecycleCompletion?, defaultStorage: DefaultStorage?
    ) -> (Ending, [Action], dropped: State) {
        var ending = Ending()
        var actions: [Action] = []
        let completions = completion.map { [$0] } ?? []
        lastErasure += 1
        if let old = configured {
            var erasure = Erasure(
                id: lastErasure, storage: old.ports.storageID, eraser: old.ports.eraser, tracking: old.ports.tracking,
                handOver: old.ports.handOver, queued: false, completions: completions)
            if let storageID = old.ports.storageID { unsavedCustomers[storageID] = nil }
            if let handOver = old.ports.handOver { ending.storage = (handOver, CustomerIds([:])) }
            if let pipeline = old.ports.tracking {
                ending.lastFlush = (pipeline, erasure.id)
            } else {
                erasure.queued = true
                actions.append(erasure.action)
            }
            erasures.append(erasure)
        } else if case .unconfigured = state, let defaultStorage {
            let erasure = Erasure(
                id: lastErasure, storage: defaultStorage.storage, eraser: defaultStorage.eraser, tracking: nil, handOver: nil,
                queued: true, completions: completions)
            erasures.append(erasure)
            actions.append(erasure.action)
        } else if !completions.isEmpty {
            if let last = erasures.indices.last {
                erasures[last].completions += completions
            } else {
                actions.append(.completeAfterStorageWork(completions))
            }
        }
        let dropped = state
        state = .stopped
        return (ending, actions, dropped)
    }

    /// The last flush of the stop `erasureID` ended (<doc:Behaviour#A3>): the deletion is queued,
    /// unless a configure on the same storage queued it first.
    mutating func lastFlushEnded(_ erasureID: Int) -> [Action] {
        guard let index = erasures.firstIndex(where: { $0.id == erasureID }), !erasures[index].queued else { return [] }
        erasures[index].queued = true
        return [erasures[index].action]
    }

    /// The deletion of the stop `erasureID` is done (<doc:Behaviour#A3>): the storage's next owner
    /// may read (P5), and the stop's completions are called.
    mutating func erased(_ erasureID: Int) -> [Action] {
        guard let index = erasures.firstIndex(where: { $0.id == erasureID }) else { return [] }
        let erasure = erasures.remove(at: index)
        var actions: [Action] = []
        if let handOver = erasure.handOver { actions.append(.storageWritesQueued(handOver)) }
        if !erasure.completions.isEmpty { actions.append(.complete(erasure.completions)) }
        return actions
    }

    /// `completion` is called on the main queue once the client's disk work is done: when a
    /// deletion is still to come, with it; otherwise once what is queued on the storage queue so
    /// far is (<doc:Behaviour#A3>, <doc:Behaviour#A5>).
    mutating func whenStorageWorkDone(_ completion: @escaping LifecycleCompletion) -> [Action] {
        if let last = erasures.indices.last {
            erasures[last].completions.append(completion)
            return []
        }
        return [.completeAfterStorageWork([completion])]
    }

    /// Whether a deletion is still to come (for tests and diagnostics).
    var erasurePending: Bool { !erasures.isEmpty }
    // MARK: - Calls made before the first configure (see WaitingCalls.swift)

    /// The next step of the queuing of waiting calls: the calls held while the previous items were
    /// queued, applied to the current customer as at configure; `.done` once none is left.
    mutating func nextReplay() -> ReplayStep {
        guard let current = configured, waiting.replayers > 0 else { return .done }
        guard !waiting.isEmpty else {
            waiting.replayers -= 1
            return .done
        }
        let batch = waiting.takeBatch()
        if batch.count == 1, case .anonymize(let cookie) = batch[0].kind { return .anonymize(cookie: cookie) }
        let applied = WaitingCalls.apply(batch, to: current.customer, defaults: defaults)
        var actions: [Action] = []
        let changed = applied.customer != current.customer
        if changed {
            withConfigured {
                $0.customer = applied.customer
                $0.madeAtConfigure = nil
            }
            save(applied.customer, with: current.ports, &actions)
        }
        let replay = WaitingReplay(tracking: current.ports.tracking, storageID: current.ports.storageID, items: applied.items)
        return .items(replay, changed: changed, actions)
    }
}
