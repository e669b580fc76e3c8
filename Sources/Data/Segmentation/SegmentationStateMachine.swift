import Foundation
import SegmentsDomain

/// Every decision of the segmentation engine, as a value (see Behaviour T, C, D, G, A).
///
/// Each event the engine sees (a public call, a timer firing, a flight coming back) is one
/// `mutating` transition that changes the state and returns the ``Action``s it decided: schedule
/// or cancel a timer, start a fetch, deliver, answer reads, save, log. The machine runs no
/// code of anyone else and does no I/O; ``SegmentationEngine`` holds it under its lock and carries
/// the actions out after releasing the lock, in the order they were decided. The current time is
/// an input (``Moment``), so transitions are tested without a scheduler.
struct SegmentationStateMachine: Sendable {
    /// Where the engine is in its life (see Behaviour T2, A3).
    enum Phase: Sendable {
        /// Not configured yet: listeners and reads wait.
        case unconfigured
        /// Configured with a backend.
        case running(SegmentationEngine.Ports)
        /// Stopped: work is rejected until configured again.
        case stopped
    }

    /// The automatic reload and the one fetch the engine may have in flight (see Behaviour T5–T7, G2).
    /// Exactly one case holds at a time, so "a debounce and a retry at once" or "two flights"
    /// cannot be written down.
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

    /// A burst of reload requests, on the monotonic clock (see Behaviour T5, T10).
    struct Burst: Sendable {
        var firstRequest: TimeInterval
        var lastRequest: TimeInterval
        var timer: TimerID
    }

    /// One fetch (with its link) for one customer snapshot (see Behaviour C1).
    struct Flight: Sendable {
        let id: Int
        let customer: CustomerIds
        let needsLink: Bool
        let repository: any SegmentRepository
        /// Whether listeners are owed this reload, so a transient failure is retried (T7); a
        /// flight started only for one-shot reads is not.
        let carriesReload: Bool
        /// Retries already made in this chain of failures (T7).
        let retryAttempt: Int
    }

    /// Identifies one scheduled timer; a timer that fires after it was replaced does nothing.
    struct TimerID: Hashable, Sendable {
        let rawValue: Int
    }

    /// "Now", read once per event: the monotonic clock for durations, the wall clock for
    /// `fetchedAt` (see Behaviour T10).
    struct Moment: Sendable {
        var uptime: TimeInterval
        var wall: Date
    }

    /// A one-shot read waiting for the network or for configuration (see Behaviour G).
    struct PendingRead: Sendable {
        /// Identifies the read, so a cancelled task can withdraw it.
        let id: Int
        let category: SegmentCategory
        let force: Bool
        let reply: ReadReply
        /// How often the read was retried because the customer changed (see Behaviour G6).
        var customerRetries = 0
    }

    /// How a read is answered (see Behaviour G4): a completion handler on the delivery queue, or an
    /// awaiting task resumed directly.
    enum ReadReply: Sendable {
        case onDeliveryQueue(@Sendable (Result<[Segment], SegmentsError>) -> Void)
        case direct(@Sendable (Result<[Segment], SegmentsError>) -> Void)
    }

    /// What the engine carries out once its lock is released, in this order.
    enum Action: Sendable {
        case log(LogLevel, String)
        /// The link-failure line: the customer's ids appear only at verbose level (see Behaviour C4, P4).
        case logLinkFailure(CustomerIds)
        case scheduleTimer(TimerID, after: TimeInterval)
        case cancelTimer(TimerID)
        case startFlight(Flight)
        /// Handler calls, run in this order on the delivery queue (see Behaviour D5–D8).
        case deliver([Delivery])
        /// Answers each read with `result` narrowed to its category (see Behaviour G4).
        case answer([PendingRead], Result<SegmentsByCategory, SegmentsError>)
        case saveCustomer(CustomerIds, to: any CustomerStore)
        case saveBaseline(SegmentBaseline, to: any SegmentBaselineStore)
        /// Load the baseline on the storage queue and hand it to `baselineLoaded` (see Behaviour R3).
        case loadBaseline(Int, from: any SegmentBaselineStore)
    }

    /// The actions of one transition, in order. Most transitions decide none or one, so the first
    /// is stored inline and only a second one allocates.
    struct Actions: Sequence, ExpressibleByArrayLiteral, Sendable {
        private var first: Action?
        private var rest: [Action] = []

        init() {}

        init(arrayLiteral elements: Action...) {
            for element in elements { append(element) }
        }

        var isEmpty: Bool { first == nil }

        mutating func append(_ action: Action) {
            if first == nil { first = action } else { rest.append(action) }
        }

        func makeIterator() -> Iterator {
            Iterator(first: first, rest: rest)
        }

        /// The first action, then the rest.
        struct Iterator: IteratorProtocol {
            fileprivate var first: Action?
            fileprivate let rest: [Action]
            fileprivate var index = 0

            fileprivate init(first: Action?, rest: [Action]) {
                self.first = first
                self.rest = rest
            }

            mutating func next() -> Action? {
                if let action = first {
                    first = nil
                    return action
                }
                guard index < rest.count else { return nil }
                defer { index += 1 }
                return rest[index]
            }
        }
    }

    /// Reads waiting for `configure` beyond this many are refused (a bounded queue).
    static let maxReadsWaitingForConfigure = 1_000

    let timings: SegmentationTimings
    /// A value in `0..<1` for backoff jitter.
    let random: @Sendable () -> Double

    var phase: Phase = .unconfigured
    var customer: CustomerIds?
    var baseline = SegmentBaseline.empty
    /// When `baseline.snapshot` was fetched on the monotonic clock; `nil` for one loaded from disk,
    /// whose wall-clock `fetchedAt` is all there is (see Behaviour T10).
    var snapshotUptime: TimeInterval?
    var listeners = ListenerRegistry()
    /// What the listeners of each category were last told, non-empty lists only (see Behaviour D4). It
    /// survives re-configuration; it is dropped with a category's last listener.
    var told: SegmentsByCategory = [:]
    var reload: Reload = .idle
    /// Reads waiting for configuration or for the flight in progress.
    var reads: [PendingRead] = []
    var nextTimer = 0
    var nextFlight = 0
    var nextRead = 0
    /// The baseline load `configure` is waiting for, if any: reads and reloads wait for it.
    var baselineLoad: Int?
    var nextBaselineLoad = 0
    /// A reload was requested (or was pending at configure) while the baseline loaded.
    var reloadDeferred = false
    /// Anonymize deleted the baseline while it loaded: the loaded one is stale.
    var baselineDiscarded = false
    var trackingIsImmediate = true
    var warnedTrackingNotImmediate = false

    init(timings: SegmentationTimings, random: @escaping @Sendable () -> Double) {
        self.timings = timings
        self.random = random
    }

    var backend: SegmentationEngine.Ports? {
        if case .running(let backend) = phase { return backend }
        return nil
    }

    /// The timer the reload waits for, if any: the only one that may still fire usefully.
    var currentTimer: TimerID? {
        switch reload {
        case .debouncing(let burst): burst.timer
        case .retrying(_, let timer): timer
        case .idle, .fetching: nil
        }
    }

    /// The flight in progress, if any.
    var flight: Flight? {
        if case .fetching(let flight, _) = reload { return flight }
        return nil
    }

    mutating func makeTimer() -> TimerID {
        nextTimer += 1
        return TimerID(rawValue: nextTimer)
    }

    /// Forgets what listeners of categories that lost their last listener were told.
    mutating func forgetTold(_ categories: some Sequence<SegmentCategory>) {
        for category in categories { told[category] = nil }
    }
}
