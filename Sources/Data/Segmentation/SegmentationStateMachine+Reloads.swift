import Foundation
import SegmentsDomain

/// Automatic reloads: requests, the debounce, flights and their outcomes, retries (see Behaviour T5–T7,
/// C1–C5, D1–D9).
extension SegmentationStateMachine {
    /// A tracked event or customer update was uploaded (see Behaviour T3).
    mutating func uploadSucceeded(at now: Moment) -> Actions {
        guard backend != nil else { return [] }
        guard !listeners.isEmpty else {
            return [.log(.verbose, SegmentsLogText.trackedSkippedNoCallback)]
        }
        var actions = Actions()
        requestReload(at: now, &actions)
        return actions
    }

    /// Coalesces a reload request (see Behaviour T5, T6): during a flight it owes one follow-up; while a
    /// retry waits it is absorbed (the retry reloads); while the debounce waits it only moves the
    /// burst's last request (the timer re-arms itself when it fires early, so a burst costs one
    /// timer); otherwise it starts a burst.
    mutating func requestReload(at now: Moment, _ actions: inout Actions) {
        guard backend != nil else { return }
        guard baselineLoad == nil else {
            reloadDeferred = true
            return
        }
        switch reload {
        case .fetching(let flight, _):
            reload = .fetching(flight, followUpOwed: true)
        case .retrying:
            break
        case .debouncing(var burst):
            burst.lastRequest = now.uptime
            reload = .debouncing(burst)
        case .idle:
            let timer = makeTimer()
            reload = .debouncing(Burst(firstRequest: now.uptime, lastRequest: now.uptime, timer: timer))
            actions.append(.scheduleTimer(timer, after: timings.debounce.delay))
        }
    }

    /// A timer fired: the debounce either waits for the rest of its burst or starts the reload;
    /// a retry starts the reload. A timer that was replaced or cancelled does nothing.
    mutating func timerFired(_ timer: TimerID, at now: Moment) -> Actions {
        var actions = Actions()
        switch reload {
        case .debouncing(var burst) where burst.timer == timer:
            let due = timings.debounce.fireTime(firstRequest: burst.firstRequest, lastRequest: burst.lastRequest)
            let remaining = due - now.uptime
            if remaining > 0 {
                burst.timer = makeTimer()
                reload = .debouncing(burst)
                actions.append(.scheduleTimer(burst.timer, after: remaining))
            } else {
                reload = .idle
                startAutomaticReload(attempt: 0, &actions)
            }
        case .retrying(let attempt, let current) where current == timer:
            reload = .idle
            startAutomaticReload(attempt: attempt, &actions)
        default:
            break
        }
        return actions
    }

    /// Starts the reload a timer was waiting for, unless no listener is left (see Behaviour T7).
    private mutating func startAutomaticReload(attempt: Int, _ actions: inout Actions) {
        guard backend != nil else { return }
        forgetTold(listeners.pruneReleasedOwners())
        guard !listeners.isEmpty else {
            actions.append(.log(.verbose, SegmentsLogText.reloadSkippedNoCallback))
            return
        }
        startFlight(carriesReload: true, retryAttempt: attempt, &actions)
    }

    /// Snapshots the customer and starts a fetch for it (see Behaviour C1), linking first when needed (C4).
    /// A pending debounce or retry is absorbed: the fetch starts after every request it covered.
    mutating func startFlight(carriesReload: Bool, retryAttempt: Int, _ actions: inout Actions) {
        var carriesReload = carriesReload
        var retryAttempt = retryAttempt
        switch reload {
        case .fetching:
            return
        case .debouncing(let burst):
            actions.append(.cancelTimer(burst.timer))
            carriesReload = true
        case .retrying(let attempt, let timer):
            actions.append(.cancelTimer(timer))
            carriesReload = true
            retryAttempt = attempt
        case .idle:
            break
        }
        reload = .idle
        guard let backend, let customer else { return }
        guard baselineLoad == nil else {
            if carriesReload { reloadDeferred = true }
            return
        }
        guard let cookie = customer.cookie, !cookie.isEmpty else {
            let error = SegmentsError(.missingCookie, "the customer has no cookie")
            actions.append(.log(.warning, SegmentsLogText.fetchFailed(error)))
            answerReads(with: .failure(error), &actions)
            return
        }
        nextFlight += 1
        let flight = Flight(
            id: nextFlight, customer: customer,
            needsLink: customer.hasHardIds && !baseline.linkedCustomers.contains(customer),
            repository: backend.repository, carriesReload: carriesReload, retryAttempt: retryAttempt)
        reload = .fetching(flight, followUpOwed: false)
        actions.append(.startFlight(flight))
    }

    /// Before each request of a flight: whether it still counts and its customer is unchanged
    /// (see Behaviour C2). A successful link (`linked`) is remembered first (C4).
    mutating func flightMayProceed(_ flightId: Int, linked: Bool, at now: Moment) -> (Bool, Actions) {
        guard case .fetching(let flight, let followUpOwed) = reload, flight.id == flightId, let backend else {
            return (false, [])
        }
        var actions = Actions()
        if linked {
            baseline.linkedCustomers.insert(flight.customer)
            actions.append(.saveBaseline(baseline, to: backend.baselineStore))
        }
        guard customer == flight.customer else {
            actions.append(.log(.verbose, SegmentsLogText.cancelledCustomerChanged))
            reload = .idle
            customerChanged(during: flight, followUpOwed: followUpOwed, at: now, &actions)
            return (false, actions)
        }
        return (true, actions)
    }

    /// A flight came back: apply its outcome, unless it was discarded or its customer is gone
    /// (see Behaviour C3, T9). Whatever the outcome, a follow-up owed during the flight is scheduled (T6).
    mutating func flightFinished(
        _ flightId: Int, with result: Result<SegmentsByCategory, SegmentsError>, at now: Moment
    ) -> Actions {
        guard case .fetching(let flight, let followUpOwed) = reload, flight.id == flightId else { return [] }
        reload = .idle
        var actions = Actions()
        guard customer == flight.customer else {
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

    /// Behaviour D1–D6, G3: replace the baseline, tell listeners, answer reads.
    private mutating func apply(
        _ segments: SegmentsByCategory, of flight: Flight, at now: Moment, _ actions: inout Actions
    ) {
        let changes = SegmentDiff.changes(from: baseline.snapshot, to: segments, for: flight.customer, told: told)
        baseline.snapshot = SegmentSnapshot(customer: flight.customer, segments: segments, fetchedAt: now.wall)
        snapshotUptime = now.uptime
        if let backend { actions.append(.saveBaseline(baseline, to: backend.baselineStore)) }
        let categories = changes.keys.map(\.name).sorted().joined(separator: ", ")
        actions.append(.log(.verbose, "Segments: Segments fetched; changed categories: [\(categories)]"))
        deliver(changes, firstLoad: segments, &actions)
        answerReads(with: .success(segments), &actions)
    }

    /// Behaviour D9, T6, T7, C4, L2: nothing changes; reads fail; a transient failure of an owed
    /// reload is retried with backoff while listeners exist; after a permanent one, a follow-up
    /// owed during the flight is still scheduled.
    private mutating func fail(
        _ error: SegmentsError, of flight: Flight, followUpOwed: Bool, at now: Moment, _ actions: inout Actions
    ) {
        if error.code == .linkFailed { actions.append(.logLinkFailure(flight.customer)) }
        actions.append(.log(.warning, SegmentsLogText.fetchFailed(error)))
        answerReads(with: .failure(error), &actions)
        forgetTold(listeners.pruneReleasedOwners())
        guard flight.carriesReload || followUpOwed, !listeners.isEmpty else { return }
        guard error.isTransient else {
            if followUpOwed { requestReload(at: now, &actions) }
            return
        }
        let attempt = flight.retryAttempt + 1
        let delay = timings.retry.delay(attempt: attempt, random: random(), retryAfter: error.retryAfter)
        let timer = makeTimer()
        reload = .retrying(attempt: attempt, timer: timer)
        actions.append(.scheduleTimer(timer, after: delay))
    }

    /// The customer changed under a flight (see Behaviour C2, C3, G6): reads retry for the current customer
    /// (a bounded number of times), and an owed reload is requested again.
    private mutating func customerChanged(
        during flight: Flight, followUpOwed: Bool, at now: Moment, _ actions: inout Actions
    ) {
        let owed = flight.carriesReload || followUpOwed
        var retrying: [PendingRead] = []
        var givenUp: [PendingRead] = []
        for var read in reads {
            if read.customerRetries < timings.maxReadRetries {
                read.customerRetries += 1
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
            startFlight(carriesReload: owed && !listeners.isEmpty, retryAttempt: 0, &actions)
        } else if owed && !listeners.isEmpty {
            requestReload(at: now, &actions)
        }
    }

    /// Cancels the debounce or backoff and discards the flight (see Behaviour A1, A3). Returns whether
    /// anything was pending or in flight.
    mutating func cancelReload(_ actions: inout Actions) -> Bool {
        if let timer = currentTimer { actions.append(.cancelTimer(timer)) }
        defer { reload = .idle }
        if case .idle = reload { return false }
        return true
    }
}
