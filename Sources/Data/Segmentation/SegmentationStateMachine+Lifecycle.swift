import Foundation
import SegmentsDomain

/// Configure, stop, anonymize, identify (see Behaviour T2, T4, T6, T8, A1–A3, E1).
extension SegmentationStateMachine {
    /// What `configure` read from the new backend's stores, off the engine's lock.
    struct Loaded: Sendable {
        var customer: CustomerIds?
        /// The stored baseline, or `nil` when it still has to be loaded (in the background: the
        /// machine then asks for it with ``Action/loadBaseline(_:from:)``, see Behaviour R3).
        var baseline: SegmentBaseline?
        /// A fresh cookie, made when the stored customer has none (or an empty one).
        var newCookie: String?
    }

    /// Configures (or re-configures) with `backend` (see Behaviour T2, T6): a reload that was pending,
    /// owed or in flight is requested again on the new backend; listeners and what they were told
    /// stay; reads made before are served.
    mutating func configure(_ backend: SegmentationEngine.Ports, loaded: Loaded, at now: Moment) -> Actions {
        var actions = Actions()
        var reloadWasPending: Bool
        if case .fetching(let flight, let followUpOwed) = reload {
            reloadWasPending = flight.carriesReload || followUpOwed
        } else {
            reloadWasPending = currentTimer != nil
        }
        reloadWasPending = reloadWasPending || (baselineLoad != nil && reloadDeferred)
        _ = cancelReload(&actions)
        phase = .running(backend)

        var loadedCustomer = loaded.customer ?? CustomerIds([:])
        if loadedCustomer.cookie?.isEmpty ?? true {
            if loadedCustomer.cookie != nil {
                actions.append(.log(.warning, "Segments: The stored customer had an empty cookie; a new one was made"))
            }
            var values = loadedCustomer.values
            values[CustomerIds.cookieKey] = loaded.newCookie ?? UUID().uuidString.lowercased()
            loadedCustomer = CustomerIds(values)
            actions.append(.saveCustomer(loadedCustomer, to: backend.customerStore))
        }
        customer = loadedCustomer
        snapshotUptime = nil
        baselineDiscarded = false
        guard let loadedBaseline = loaded.baseline else {
            // The baseline loads on the storage queue; until it is in, reads and reloads wait
            // (see Behaviour R3) and the rest of configure runs in `baselineLoaded`.
            baseline = .empty
            nextBaselineLoad += 1
            baselineLoad = nextBaselineLoad
            reloadDeferred = reloadWasPending
            actions.append(.loadBaseline(nextBaselineLoad, from: backend.baselineStore))
            warnIfTrackingNotImmediate(&actions)
            return actions
        }
        baselineLoad = nil
        baseline = loadedBaseline
        finishConfigure(reloadWasPending: reloadWasPending, at: now, &actions)
        return actions
    }

    /// The baseline that `configure` asked for is in (see Behaviour R3): the initial reload is decided and
    /// the reads made meanwhile are served, in call order. A load that a later configure, stop or
    /// anonymize overtook is ignored (anonymize keeps its empty baseline).
    mutating func baselineLoaded(_ load: Int, _ loaded: SegmentBaseline, at now: Moment) -> Actions {
        guard baselineLoad == load, backend != nil else { return [] }
        baselineLoad = nil
        if !baselineDiscarded { baseline = loaded }
        baselineDiscarded = false
        let reloadWasPending = reloadDeferred
        reloadDeferred = false
        var actions = Actions()
        finishConfigure(reloadWasPending: reloadWasPending, at: now, &actions)
        return actions
    }

    /// Behaviour T2: the initial reload; then the reads that waited are served.
    private mutating func finishConfigure(reloadWasPending: Bool, at now: Moment, _ actions: inout Actions) {
        if listeners.isEmpty {
            actions.append(.log(.verbose, SegmentsLogText.initialSkippedNoCallback))
        } else if reloadWasPending || listeners.anyWantsFirstLoad {
            requestReload(at: now, &actions)
        } else {
            actions.append(.log(.verbose, SegmentsLogText.initialSkippedNotRequired))
        }
        warnIfTrackingNotImmediate(&actions)

        let waiting = reads
        reads = []
        for read in waiting { serve(read, at: now, &actions) }
    }

    /// Stops (see Behaviour A3): cancels and discards segment work, deletes the baseline and link memory,
    /// removes every listener, fails pending reads with `.stopped`, rejects work until configured.
    mutating func stop() -> Actions {
        var actions = Actions()
        if cancelReload(&actions) { actions.append(.log(.verbose, SegmentsLogText.cancelledMeanwhile)) }
        forgetSegments(&actions)
        answerReads(with: .failure(SegmentsError.stopped), &actions)
        phase = .stopped
        baselineLoad = nil
        reloadDeferred = false
        customer = nil
        listeners.removeAll()
        told = [:]
        return actions
    }

    /// A new anonymous customer (see Behaviour A1, A2): cancels pending and in-flight work, deletes the
    /// baseline and link memory, tells listeners of non-empty categories `[]`, answers pending
    /// reads with `[]`, and, when listeners exist, requests a reload for the new customer so
    /// first-load promises are kept (D6).
    mutating func anonymize(newCookie: String, at now: Moment) -> (CustomerIds?, Actions) {
        guard let backend else { return (nil, []) }
        var actions = Actions()
        if cancelReload(&actions) { actions.append(.log(.verbose, SegmentsLogText.cancelledMeanwhile)) }
        let anonymous = CustomerIds(cookie: newCookie)
        customer = anonymous
        actions.append(.saveCustomer(anonymous, to: backend.customerStore))
        var emptied: SegmentsByCategory = [:]
        for (category, segments) in (baseline.snapshot?.segments ?? [:]).merging(told, uniquingKeysWith: { $1 })
        where !segments.isEmpty {
            emptied[category] = []
        }
        forgetSegments(&actions)
        deliver(emptied, firstLoad: nil, &actions)
        answerReads(with: .success([:]), &actions)
        forgetTold(listeners.pruneReleasedOwners())
        if !listeners.isEmpty { requestReload(at: now, &actions) }
        return (anonymous, actions)
    }

    /// Merges hard ids into the current customer; never removes ids (see Behaviour E1). When the ids
    /// change, the backoff of the old ids ends and a reload is requested (T4).
    mutating func identify(hardIds: [String: String], at now: Moment) -> (CustomerIds?, Actions) {
        guard let backend, let current = customer else { return (nil, []) }
        let merged = current.merging(hardIds: hardIds)
        guard merged != current else { return (current, []) }
        customer = merged
        var actions: Actions = [.saveCustomer(merged, to: backend.customerStore)]
        if case .retrying(_, let timer) = reload {
            actions.append(.cancelTimer(timer))
            reload = .idle
        }
        if !listeners.isEmpty { requestReload(at: now, &actions) }
        return (merged, actions)
    }

    /// Whether tracked events are uploaded immediately (see Behaviour T8).
    mutating func setTrackingImmediate(_ immediate: Bool) -> Actions {
        trackingIsImmediate = immediate
        if immediate { warnedTrackingNotImmediate = false }
        var actions = Actions()
        warnIfTrackingNotImmediate(&actions)
        return actions
    }

    /// One warning that segments lag when listeners exist and flushing is not immediate (T8).
    mutating func warnIfTrackingNotImmediate(_ actions: inout Actions) {
        guard backend != nil, !trackingIsImmediate, !warnedTrackingNotImmediate, !listeners.isEmpty else { return }
        warnedTrackingNotImmediate = true
        actions.append(.log(.warning, SegmentsLogText.flushingNotImmediate))
    }

    /// Deletes the baseline and the link memory, in memory and on disk.
    private mutating func forgetSegments(_ actions: inout Actions) {
        baseline = .empty
        if baselineLoad != nil { baselineDiscarded = true }
        snapshotUptime = nil
        if let backend { actions.append(.saveBaseline(baseline, to: backend.baselineStore)) }
    }
}
