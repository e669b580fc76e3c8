import Foundation
import SegmentsDomain

/// The automatic reload of one configuration and the one fetch it may have in flight
/// (<doc:Behaviour#T5>–<doc:Behaviour#T7>, <doc:Behaviour#G2>): when to fetch, never what.
///
/// A value with one `state` whose cases carry their data and transitions that return the
/// ``Action``s they decided. It knows nothing of customers, listeners or reads: the client's machine
/// (``SegmentationStateMachine``) asks it, tells it what happened, and builds the ``Flight`` it
/// starts from the configuration in force.
struct ReloadStateMachine: Sendable {
    /// Where the reload is.
    enum State: Sendable {
        /// Nothing pending, nothing in flight.
        case idle
        /// A burst of requests waits for its trailing debounce (T5).
        case debouncing(Burst)
        /// A failed reload waits for its backoff; `attempt` retries were scheduled so far (T7).
        case retrying(attempt: Int, timer: TimerID)
        /// A fetch is in flight; requests that came meanwhile owe one follow-up (T6).
        case fetching(Flight, followUpOwed: Bool)
        /// The reload listeners are owed came due while the device had no usable network path: it
        /// starts when the path returns, `attempt` retries into its chain, which did not grow
        /// offline (<doc:Behaviour#N1>, <doc:Behaviour#N2>).
        case waitingForPath(attempt: Int)
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

    /// What the reload decided.
    enum Action: Sendable, Equatable {
        /// Start a timer; the client's machine hands it back to ``timerFired(_:at:debounce:)``.
        case scheduleTimer(TimerID, after: TimeInterval)
        /// Withdraw a timer.
        case cancelTimer(TimerID)
        /// The debounce or the backoff is over: start the reload listeners are owed, this many
        /// retries into a chain of failures.
        case startReload(retryAttempt: Int)
    }

    /// What ``prepareFlight(forListeners:retryAttempt:)`` decided for a flight about to start.
    struct FlightTicket: Sendable {
        let id: Int
        let forListeners: Bool
        let retryAttempt: Int
        /// The debounce or backoff timer the flight absorbed, withdrawn.
        let actions: [Action]
    }

    private(set) var state: State = .idle
    private var timers = 0
    private var flights = 0

    /// The timer the reload waits for, if any.
    var timer: TimerID? {
        switch state {
        case .debouncing(let burst): burst.timer
        case .retrying(_, let timer): timer
        case .idle, .fetching, .waitingForPath: nil
        }
    }

    /// What a re-configure carries over (<doc:Behaviour#T6>): whether a reload was pending, owed or
    /// in flight for listeners, and when the burst being debounced started.
    var pending: (owed: Bool, burstStarted: TimeInterval?) {
        switch state {
        case .idle: (false, nil)
        case .debouncing(let burst): (true, burst.firstRequest)
        case .retrying, .waitingForPath: (true, nil)
        case .fetching(let flight, let followUpOwed): (flight.forListeners || followUpOwed, nil)
        }
    }

    private mutating func makeTimer() -> TimerID {
        timers += 1
        return TimerID(rawValue: timers)
    }

    /// Coalesces a request (<doc:Behaviour#T5>, <doc:Behaviour#T6>): during a flight it owes one
    /// follow-up; while a retry waits it is absorbed (the retry reloads); while the debounce waits
    /// it only moves the burst's last request (the timer re-arms itself when it fires early, so a
    /// burst costs one timer); otherwise it starts a burst — or goes on with the one a re-configure
    /// interrupted, which `burstStarted` names (T6: the max wait still counts). Without a debounce
    /// the reload starts at once.
    mutating func request(at now: TimeInterval, burstStarted: TimeInterval? = nil, debounce: DebouncePolicy) -> [Action] {
        switch state {
        case .fetching(let flight, _):
            state = .fetching(flight, followUpOwed: true)
            return []
        case .retrying, .waitingForPath:
            return []
        case .debouncing(var burst):
            burst.lastRequest = now
            state = .debouncing(burst)
            return []
        case .idle:
            let firstRequest = burstStarted ?? now
            if debounce.delay <= 0 { return [.startReload(retryAttempt: 0)] }
            let timer = makeTimer()
            state = .debouncing(Burst(firstRequest: firstRequest, lastRequest: now, timer: timer))
            return [.scheduleTimer(timer, after: max(debounce.fireTime(firstRequest: firstRequest, lastRequest: now) - now, 0))]
        }
    }

    /// A timer fired: the debounce waits for the rest of its burst or ends; a backoff ends. A timer
    /// that was replaced or withdrawn does nothing.
    mutating func timerFired(_ timer: TimerID, at now: TimeInterval, debounce: DebouncePolicy) -> [Action] {
        switch state {
        case .debouncing(let burst) where burst.timer == timer:
            let remaining = debounce.fireTime(firstRequest: burst.firstRequest, lastRequest: burst.lastRequest) - now
            guard remaining <= 0 else {
                let next = makeTimer()
                state = .debouncing(Burst(firstRequest: burst.firstRequest, lastRequest: burst.lastRequest, timer: next))
                return [.scheduleTimer(next, after: remaining)]
            }
            state = .idle
            return [.startReload(retryAttempt: 0)]
        case .retrying(let attempt, let current) where current == timer:
            state = .idle
            return [.startReload(retryAttempt: attempt)]
        default:
            return []
        }
    }

    /// A flight is about to start (<doc:Behaviour#C1>): `nil` while one is in flight (it is
    /// joined). A pending debounce or backoff is absorbed — the flight starts after every request
    /// it covered, for listeners, and goes on with the backoff's chain.
    mutating func prepareFlight(forListeners: Bool, retryAttempt: Int) -> FlightTicket? {
        var forListeners = forListeners
        var retryAttempt = retryAttempt
        var actions: [Action] = []
        switch state {
        case .fetching:
            return nil
        case .debouncing(let burst):
            actions.append(.cancelTimer(burst.timer))
            forListeners = true
        case .retrying(let attempt, let timer):
            actions.append(.cancelTimer(timer))
            forListeners = true
            retryAttempt = attempt
        case .waitingForPath(let attempt):
            forListeners = true
            retryAttempt = attempt
        case .idle:
            break
        }
        state = .idle
        flights += 1
        return FlightTicket(id: flights, forListeners: forListeners, retryAttempt: retryAttempt, actions: actions)
    }

    /// The flight prepared is in flight.
    mutating func began(_ flight: Flight) {
        state = .fetching(flight, followUpOwed: false)
    }

    /// The flight `id`, if it is the one in flight, and whether a follow-up is owed.
    func inFlight(_ id: Int) -> (flight: Flight, followUpOwed: Bool)? {
        guard case .fetching(let flight, let followUpOwed) = state, flight.id == id else { return nil }
        return (flight, followUpOwed)
    }

    /// The flight `id` ended (answered, or abandoned before a request): nothing is in flight.
    mutating func finished(_ id: Int) -> (flight: Flight, followUpOwed: Bool)? {
        guard let current = inFlight(id) else { return nil }
        state = .idle
        return current
    }

    /// A reload for listeners failed transiently (<doc:Behaviour#T7>): the next attempt waits
    /// `delay`.
    mutating func retry(attempt: Int, after delay: TimeInterval) -> [Action] {
        let timer = makeTimer()
        state = .retrying(attempt: attempt, timer: timer)
        return [.scheduleTimer(timer, after: delay)]
    }

    /// The customer changed (identify, or the stored customer adopted): the backoff of the old one
    /// ends (<doc:Behaviour#T7>); anything else stays.
    mutating func endBackoff() -> [Action] {
        switch state {
        case .retrying(_, let timer):
            state = .idle
            return [.cancelTimer(timer)]
        case .waitingForPath:
            state = .idle
            return []
        case .idle, .debouncing, .fetching:
            return []
        }
    }

    // MARK: - The network path (N1, N2)

    /// The reload listeners are owed cannot start: the device has no usable network path
    /// (<doc:Behaviour#N1>). A pending debounce or backoff is withdrawn and the reload waits for the
    /// path, `attempt` retries into its chain — no retry is counted and no backoff grows. A flight
    /// in flight goes on (its outcome is applied as usual).
    mutating func waitForPath(attempt: Int) -> [Action] {
        switch state {
        case .fetching:
            return []
        case .waitingForPath(let waiting):
            state = .waitingForPath(attempt: max(waiting, attempt))
            return []
        case .idle, .debouncing, .retrying:
            let withdrawn = timer.map { [Action.cancelTimer($0)] } ?? []
            state = .waitingForPath(attempt: attempt)
            return withdrawn
        }
    }

    /// A usable path returned (<doc:Behaviour#N2>): a backoff in progress is cut short and a reload
    /// that waited for the path starts now, both in their chain of retries; a debounce or a flight
    /// goes on as it was.
    mutating func pathReturned() -> [Action] {
        switch state {
        case .retrying(let attempt, let timer):
            state = .idle
            return [.cancelTimer(timer), .startReload(retryAttempt: attempt)]
        case .waitingForPath(let attempt):
            state = .idle
            return [.startReload(retryAttempt: attempt)]
        case .idle, .debouncing, .fetching:
            return []
        }
    }

    /// Withdraws the debounce or backoff and discards the flight (<doc:Behaviour#A1>,
    /// <doc:Behaviour#A3>): returns what was dropped (`nil` when nothing was pending or in flight),
    /// to let go of after the lock.
    mutating func cancel() -> (dropped: State?, actions: [Action]) {
        let actions = timer.map { [Action.cancelTimer($0)] } ?? []
        defer { state = .idle }
        if case .idle = state { return (nil, actions) }
        return (state, actions)
    }
}
