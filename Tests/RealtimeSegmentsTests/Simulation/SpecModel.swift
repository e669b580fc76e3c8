import Foundation

/// What SPEC sections M, T, C, D, G, A, E, N, R and P promise, as a small pure value: the reference the
/// deterministic simulation compares real `SegmentsClient`s with (Docs/Reliability.md,
/// "Deterministic simulation").
///
/// It is written from the behaviour contract, not from the engine or the pipeline: one `mutating`
/// function per thing that can happen (a public call, an app lifecycle event, time passing, a
/// server's answer, a restart), each reading like the lines it cites. Where the contract leaves a
/// choice open, the comment says which one the model makes (the SDK documents the same choice in
/// Docs/Behaviour.md).
///
/// The simulated world: one client at a time (a restart, a hand-over or a launch before the first
/// unlock brings a new one over the same stores), two integrations `A` and `B`, and one of three
/// storages (``Layout``): the app's in-memory stores, one set for both integrations or a baseline
/// and an event queue per integration, or files in one folder. Servers answer fetches after
/// ``fetchTime`` seconds and uploads at once; backoff has no jitter.
///
/// Time: a call's own effects happen at once. What the client does on its queues happens at the
/// next ``settle()`` — at once, unless the session holds the queued work (``hold()``): the end of a
/// configuration's background load (R3, which decides T2 and serves the reads that waited), a
/// flight's first request (C2 applies until it went out), flushes (E5: calls made meanwhile join
/// them) and deliveries (D7: a listener removed before its call runs is not called), in the order
/// they were queued. Work due at one virtual moment runs in every order (``advanced(to:)``): the
/// contract orders the reload machine, the upload backoff and the periodic flush against none of
/// each other.
struct SpecModel: Equatable {
    // MARK: - The vocabulary

    enum Integration: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
        case a = "A", b = "B"
        var description: String { rawValue }
    }

    /// A customer (M3): its cookie, numbered in the order cookies were made, and the one hard id
    /// the simulation uses (`registered`).
    struct Customer: Hashable, Sendable, CustomStringConvertible {
        var cookie: Int
        var registered: String?
        var description: String { "c\(cookie)" + (registered.map { "+\($0)" } ?? "") }
    }

    /// Segments per category name, in the server's order; `s1*` is segment `s1` altered (another
    /// `segmentationId`). The model compares and records lists sorted (D2: order is no change).
    typealias Segments = [String: [String]]

    /// A server's error for one request, as the custom backend throws it.
    struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        var status: Int
        var retryAfter: Double?
        /// 408, 429 and 5xx are transient (WIRE.md, "Status handling"); other statuses are not.
        var isTransient: Bool { status == 408 || status == 429 || (500...599).contains(status) }
        /// E3: 401 and 403 are authorization failures.
        var isAuthorization: Bool { status == 401 || status == 403 }
        /// The code the SDK reports it with (a custom backend throws `.unauthorized` for 401/403).
        var code: String { isAuthorization ? "unauthorized" : "httpStatus" }
        var description: String { "\(status)" + (retryAfter.map { " Retry-After \(Int($0))" } ?? "") }
    }

    /// What a one-shot read was answered with: its category's segments, or an error code.
    enum Answer: Hashable, Sendable, CustomStringConvertible {
        case segments([String])
        case error(String)
        var description: String {
            switch self {
            case .segments(let ids): "[\(ids.joined(separator: ","))]"
            case .error(let code): "error(\(code))"
            }
        }
    }

    /// E5: what a flush reported: how many items went up, or the error that ended it.
    enum FlushOutcome: Hashable, Sendable, CustomStringConvertible {
        case uploaded(Int)
        case error(String)
        var description: String {
            switch self {
            case .uploaded(let count): "uploaded \(count)"
            case .error(let code): "error(\(code))"
            }
        }
    }

    /// What the app sees on the delivery queue, in order: listener calls, read answers and flush
    /// results.
    enum Delivery: Hashable, Sendable, CustomStringConvertible {
        case told(at: Double, listener: Int, segments: [String])
        case answered(at: Double, read: Int, Answer)
        case flushed(at: Double, flush: Int, FlushOutcome)
        var description: String {
            switch self {
            case .told(let at, let listener, let segments): "t=\(at) listener \(listener) told [\(segments.joined(separator: ","))]"
            case .answered(let at, let read, let answer): "t=\(at) read \(read) answered \(answer)"
            case .flushed(let at, let flush, let outcome): "t=\(at) flush \(flush) reported \(outcome)"
            }
        }
    }

    /// What the servers see: links, fetches and uploads. Requests made at the same moment are
    /// compared in a canonical order (``canonical(_:)``): the contract orders uploads among
    /// themselves (E3) and a reload's link before its fetch (C4), not an upload against a fetch
    /// started at the same virtual instant.
    enum Request: Hashable, Sendable, CustomStringConvertible {
        case link(at: Double, Integration, Customer)
        case fetch(at: Double, Integration, Customer)
        /// One item (E3: one request per item), with the customer it was stamped with (E1) and
        /// the status the server answered.
        case upload(at: Double, Integration, Customer, item: Int, status: Int)
        var description: String {
            switch self {
            case .link(let at, let integration, let customer): "t=\(at) \(integration) link \(customer)"
            case .fetch(let at, let integration, let customer): "t=\(at) \(integration) fetch \(customer)"
            case .upload(let at, let integration, let customer, let item, let status):
                "t=\(at) \(integration) upload of item \(item) for \(customer): \(status)"
            }
        }
        var at: Double {
            switch self {
            case .link(let at, _, _), .fetch(let at, _, _), .upload(let at, _, _, _, _): at
            }
        }
        /// Links and fetches before uploads at one moment; otherwise the order they were made in.
        var rank: Int {
            switch self {
            case .link, .fetch: 0
            case .upload: 1
            }
        }
        static func canonical(_ requests: [Request]) -> [Request] {
            requests.enumerated().sorted { ($0.element.at, $0.element.rank, $0.offset) < ($1.element.at, $1.element.rank, $1.offset) }
                .map(\.element)
        }
    }

    /// E2: when queued items are uploaded.
    enum FlushingMode: Hashable, Sendable, CustomStringConvertible {
        case immediate
        case periodic(Double)
        case automatic
        case manual
        var description: String {
            switch self {
            case .immediate: "immediate"
            case .periodic(let seconds): "periodic(\(seconds))"
            case .automatic: "automatic"
            case .manual: "manual"
            }
        }
        /// E2: a period of less than 1 s counts as 1 s.
        var period: Double? {
            if case .periodic(let seconds) = self { return max(seconds, 1) }
            return nil
        }
        /// E2: periodic and automatic upload when the app resigns active or goes to the background.
        var flushesOnLeavingForeground: Bool {
            switch self {
            case .periodic, .automatic: true
            case .immediate, .manual: false
            }
        }
    }

    /// The app lifecycle events of the port (T11, E2, E7).
    enum LifecycleEvent: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        case willResignActive, didEnterBackground, willEnterForeground, didBecomeActive
        var description: String { rawValue }
    }

    /// Where the stores are.
    enum Layout: Hashable, Sendable, CaseIterable {
        /// The app's in-memory stores, one set for both integrations (one storage for two projects).
        case oneStorage
        /// The app's in-memory stores, a baseline and an event queue per integration; one customer.
        case storagePerProject
        /// Files in one folder for both integrations (`.directory(url)`), with its owner lock (P5)
        /// and protected-data refusals (P8).
        case files
    }

    /// One queued event or customer update (E1): its number in the session, the customer it was
    /// stamped with, and its permanent failures (E3).
    struct Item: Hashable, Sendable {
        let number: Int
        let customer: Customer
        var failures = 0
        /// Its place in the queue's file (appended in order; P8: items kept in memory are
        /// written after the unread ones).
        var written = 0
    }
    /// Items written to queue files so far.
    private var itemsWritten = 0

    /// The storage an integration's baseline and queue are in.
    private func slot(_ integration: Integration) -> Integration { layout == .storagePerProject ? integration : .a }

    // MARK: - The contract's log lines (T2, T3, T7, C2, C3, A1, E3, P8), word for word

    enum Log {
        static let initialSkippedNoCallback = "Segments: Skipping initial segments update process for no callback"
        static let initialSkippedNotRequired = "Segments: Skipping initial segments update process as is not required"
        static let trackedSkippedNoCallback = "Segments: Skipping segments update process after tracked event due to no callback registered"
        static let reloadSkippedNoCallback = "Segments: Skipping segments reload process for no callback"
        static let checkCanceled = "Segments: Check process was canceled because customer has changed"
        static let dataIgnored = "Segments: New data are ignored because were loaded for different customer"
        static let cancelledMeanwhile = "Segments: Segments change check has been cancelled meanwhile"
        static let storedCustomerAdopted =
            "Segments: The stored customer could be read once protected data became available; it replaces the customer made while it could not be read"
        /// E3: the line's start; the item's description follows.
        static let itemDropped = "Tracking: Dropped an item after 10 failed uploads:"
        static let all: Set<String> = [
            initialSkippedNoCallback, initialSkippedNotRequired, trackedSkippedNoCallback, reloadSkippedNoCallback,
            checkCanceled, dataIgnored, cancelledMeanwhile, storedCustomerAdopted,
        ]
        static let prefixes = [itemDropped]
    }

    /// A contract line and the virtual moment it was written.
    struct LogLine: Hashable, Sendable, CustomStringConvertible {
        let at: Double
        let text: String
        var description: String { "t=\(at) \(text)" }
        /// Lines are compared moment by moment, and within one moment as a multiset: the lines
        /// of independent work due at one virtual instant (an upload, a fetch) come in any order.
        static func canonical(_ lines: [LogLine]) -> [LogLine] {
            lines.sorted { ($0.at, $0.text) < ($1.at, $1.text) }
        }
    }

    private mutating func log(_ text: String) {
        logs.append(LogLine(at: now, text: text))
    }

    // MARK: - The contract's numbers (T5, T7, T11, G1, G6, E3) and the simulated server's latency

    static let debounce = 5.0
    static let maxWait = 30.0
    static let cacheAge = 5.0
    static let maxReadRetries = 3
    static let foregroundRefreshAge = 60.0
    static let maxPermanentFailures = 10
    /// 47/128 s: a binary fraction, so every time in a session is exact on both sides, and no
    /// multiple of it below 128 is a whole number of seconds.
    static let fetchTime = 47.0 / 128

    /// T7, E3: about 2 s doubling to 60 s (no jitter here), never shorter than a `Retry-After`,
    /// which counts as at most 10 minutes.
    static func backoff(attempt: Int, retryAfter: Double?) -> Double {
        let exponential = min(2 * pow(2, Double(attempt - 1)), 60)
        return max(exponential, min(retryAfter ?? 0, 600))
    }

    // MARK: - The servers

    struct Server: Sendable, Equatable {
        /// Answers by who the customer is: `"anonymous"` or its registered id.
        var answers: [String: Segments] = [:]
        var failNextFetches: [Failure] = []
        var failNextLinks: [Failure] = []
        var failNextUploads: [Failure] = []

        /// The answer is chosen when the request starts, as a server would (and as the fake does).
        mutating func fetch(for customer: Customer) -> Result<Segments, Failure> {
            if !failNextFetches.isEmpty { return .failure(failNextFetches.removeFirst()) }
            return .success(answers[customer.registered ?? "anonymous"] ?? [:])
        }

        mutating func link() -> Failure? {
            failNextLinks.isEmpty ? nil : failNextLinks.removeFirst()
        }

        mutating func upload() -> Failure? {
            failNextUploads.isEmpty ? nil : failNextUploads.removeFirst()
        }
    }

    // MARK: - The client's state

    enum Phase: Equatable { case unconfigured, running(Integration), stopped }

    /// How the app observes a listener.
    enum Observer: Equatable {
        /// A handler: each call is a ``Delivery/told(at:listener:segments:)``.
        case handler
        /// A `changes(of:)` stream: each list is an element (M4); it finishes at stop (M5 rev 4).
        case stream
        /// One category of a `SegmentsModel` (M5): it reads the last list told, `[]` after stop,
        /// and follows the next configuration (rev 4).
        case model
    }

    struct Listener: Equatable {
        let id: Int
        let category: String
        let includeFirstLoad: Bool
        var observer = Observer.handler
        /// D6: told once by the first successful reload after it registered.
        var awaitingFirstLoad: Bool
        /// D4: the list this listener was last delivered; `nil` before its first call.
        var lastDelivered: [String]?
        var registered = true
    }

    /// What a baseline holds (D1, C4), and the integration it belongs to.
    struct Stored: Equatable {
        var snapshot: Snapshot?
        var linked: Set<Customer> = []
        var owner: Integration?
        /// Read from storage by a configure (rather than fetched by this configuration).
        var loaded = false
    }

    /// D1: what the last successful fetch answered, for whom, and when: on the monotonic clock of
    /// the client that fetched it, and on the wall clock (what storage keeps, T10).
    struct Snapshot: Equatable {
        let customer: Customer
        let segments: Segments
        let fetchedAt: Double
        let fetchedAtWall: Double
        /// The client (``SpecModel/generation``) that fetched it: another one has only the wall clock.
        let fetchedBy: Int
    }

    /// One fetch (with its link, C4) for one customer snapshot (C1).
    struct Flight: Equatable {
        let integration: Integration
        let customer: Customer
        /// The reload listeners are owed (T6, T7); a fetch only for one-shot reads is not retried.
        let forListeners: Bool
        let retryAttempt: Int
        var linking: Bool
        /// When the request in progress comes back, and what it will say (chosen at its start).
        var endsAt: Double
        var outcome: Result<Segments, Failure>
        /// Whether its first request went out: not while the client's queued work waits (C2
        /// applies until then).
        var sent = true
        /// When it was queued, while it waits to be sent.
        var sequence = 0
        /// Whether a follow-up may be owed after it (see `dropWaitingFlightIfCustomerChanged`).
        var followUpMaybe = false
    }

    enum Reload: Equatable {
        case idle
        /// T5: a trailing debounce with a max wait.
        case debouncing(firstRequest: Double, lastRequest: Double)
        /// T7: a failed reload waits for its backoff.
        case retrying(attempt: Int, at: Double)
        /// T6: one flight; requests meanwhile owe one follow-up.
        case fetching(Flight, followUpOwed: Bool)
        /// N1: the reload listeners are owed came due offline; it starts when the path returns,
        /// `attempt` retries into its chain (none is counted offline).
        case waitingForPath(attempt: Int)
    }

    struct Read: Equatable {
        let id: Int
        let category: String
        let force: Bool
        var retries = 0
        /// The customer it waits for (G6): a read made after a customer change is not charged a retry.
        var customer: Customer?
    }

    /// R3: a configuration whose background load has not finished: what T2 decides when it does.
    struct Loading: Equatable {
        var owed: Bool
        var otherIntegration: Bool
        var burstStarted: Double?
        /// A reload requested meanwhile (T1, A1, T4): the reloads start once the load ended.
        var requested = false
    }

    /// P8: a client configured while protected data is unavailable and its files refused.
    struct Protected: Equatable {
        /// Whether identify or anonymize decided the customer meanwhile.
        var decided = false
        /// The stored queue, unread until protected data becomes available.
        var unreadQueue: [Item]
    }

    /// E3: an upload backoff waiting.
    struct UploadRetry: Equatable {
        var at: Double
        var sequence: Int
    }

    private(set) var now = 0.0
    /// T10: how far the device's clock was set away from the monotonic timeline.
    private var wallOffset = 0.0
    private var wallNow: Double { now + wallOffset }
    private(set) var deliveries: [Delivery] = []
    private(set) var requests: [Request] = []
    /// The lines of ``Log`` written, with their moments, in order.
    private(set) var logs: [LogLine] = []
    /// The rules ``applied`` counts.
    static let rulesWithABranch = [
        "T2 another integration", "T5 max wait", "T6 follow-up after success", "T6 follow-up after a permanent failure",
        "T7 retry", "T7 retry with Retry-After", "C2 fetch not sent", "C3 answer discarded", "D4 told otherwise, baseline unchanged",
        "D6 first load, nothing changed", "G1 cache answer", "G1 cache answer from a stored baseline", "G6 read retried",
        "G6 read given up", "D1 another integration's baseline not used",
    ]
    /// The rules with a branch of their own that the extended sessions reach (issue 32).
    static let extendedRules = [
        "E2 periodic flush", "E2 flush on leaving the foreground", "E2 backoff cancelled by manual", "E3 transient failure",
        "E3 authorization failure", "E3 permanent failure counted", "E3 item dropped after 10", "E3 upload retry",
        "E3 enqueue waits for the backoff", "E5 flush joined", "E5 flush before configure", "E7 background time",
        "T11 foreground reload", "T11 foreground, fetched recently", "R3 call during the load", "R1 restart carries on",
        "P5 folder refused", "P5 folder handed over", "R1 restart with work queued", "P8 stored customer adopted", "P8 decision stands",
        "M5 model told", "M5 stream told", "A4 lifecycle calls raced",
    ]
    /// The network path's rules with a branch of their own (issue 35).
    static let networkPathRules = [
        "N1 no upload offline", "N1 flush fails offline", "N1 flush finds no path", "N1 read fails offline",
        "N1 reload waits for the path", "N1 no retry counted offline", "N2 flush on the path's return", "N2 upload backoff cut short",
        "N2 reload on the path's return", "N2 path back, fetched recently", "N2 reload backoff cut short",
    ]
    /// How often each rule with a branch of its own applied: evidence that a campaign reached it.
    private(set) var applied: [String: Int] = [:]
    var servers: [Integration: Server] = [.a: Server(), .b: Server()]
    let layout: Layout

    // The stores: they outlive clients.

    /// The customer store's customer.
    private var savedCustomer: Customer?
    private var cookiesMade = 0
    /// The baselines in storage, per ``slot(_:)``.
    private var disk: [Integration: Stored] = [.a: Stored(), .b: Stored()]
    /// E1, E4: queued items per ``slot(_:)``, each stamped with the customer at that moment; what
    /// the queue store holds once the client's disk work ran (the model runs it at once).
    private var queued: [Integration: [Item]] = [.a: [], .b: []]
    /// E7: the requests for background time, and whether each ran out before it ended.
    private(set) var backgroundTime: [(ended: Bool, expired: Bool)] = []

    // The client (a restart or hand-over brings a new one).

    /// Which client this is: 0, then one more per restart or hand-over.
    private(set) var generation = 0
    /// N1–N3: the device has no usable network path (the device's, so it outlives a client).
    private(set) var offline = false
    private(set) var phase = Phase.unconfigured
    /// The client's customer: the stored one from configure on (a new one with a new cookie when
    /// there is none); it survives stop (A3 stops segments work; the customer stays).
    private var current: Customer?
    /// The configuration's baseline.
    private var baseline = Stored()
    private var listeners: [Listener] = []
    private var reload = Reload.idle
    private var reads: [Read] = []
    private(set) var readsMade = 0
    private var mode = FlushingMode.immediate
    private var loading: Loading?
    private var protected: Protected?
    /// E5: a flush asked for (or due) that runs at the next ``settle()``; who waits for its result.
    /// The integration whose pipeline runs it. A3: no upload starts after a stop or a
    /// re-configure ends the pipeline (its queue stays for a later start, or for the next
    /// configuration on the same storage, which takes the flush's waiters); so the next pipeline
    /// on the folder never finds an item the old one sent (E4, issue 32 finding 11).
    private var flushFor: Integration?
    private var flushPending: Bool {
        get { flushFor != nil }
        set { flushFor = newValue ? integration : nil }
    }
    private var flushWaiters: [Int] = []
    /// When the current flush was asked for: queued work runs in the order it was queued.
    private var flushSequence = 0
    private var uploadRetry: UploadRetry?
    /// E3: the failed flushes of the current backoff chain: a success ends it, and so does the
    /// end of the pipeline (re-configure, stop, restart).
    private var uploadAttempts = 0
    /// E2: the next periodic flush.
    private var periodicAt: (at: Double, sequence: Int)?
    /// Whether the client's queued work waits (``hold()``).
    private var holding = false
    /// E1 rev 4: the tracking calls made before the first configure, in call order (at most
    /// 1,000), applied when it runs; a stop (or the client let go of) forgets them.
    private var waitingCalls: [WaitingCall] = []
    enum WaitingCall: Equatable {
        case track(item: Int)
        case identify(String, item: Int)
        /// The new customer is made at the call (its cookie), used at configure.
        case anonymize(Customer)
    }
    /// When queued work runs, whether the storage queue's runs before the scheduler's (the world's
    /// choice for the session: ``SimulatedWorld/storageFirst``).
    let storageFirst: Bool
    /// P8: protected data became available; the retry waits on the storage queue.
    private var retryQueued = false
    /// What the delivery queue holds while the client's queued work waits: a listener removed
    /// before its call runs is not called (D7).
    private var queuedDeliveries: [(delivery: Delivery, stream: Bool)] = []
    /// Ties between pieces of work due at one moment go in the order they were scheduled.
    private var scheduled = 0
    private var reloadSequence = 0
    /// What each stream was told, in order, and whether it finished (M4, M5).
    private(set) var streamValues: [Int: [[String]]] = [:]
    private(set) var finishedStreams: Set<Int> = []
    /// The world's cookies (numbered in the order it first saw them) bound to the model's
    /// (numbered in the order they were made): a customer the app never saw — made and replaced
    /// by two raced calls — has no number in the world.
    private var cookieBindings: [Int: Int] = [:]

    init(layout: Layout, storageFirst: Bool = true) {
        self.layout = layout
        self.storageFirst = storageFirst
    }

    static func == (lhs: SpecModel, rhs: SpecModel) -> Bool {
        // Two candidate orders of raced calls (A4) that agree on everything the client shows and
        // everything it will decide.
        lhs.now == rhs.now && lhs.deliveries == rhs.deliveries && lhs.requests == rhs.requests && lhs.logs == rhs.logs
            && lhs.servers == rhs.servers && lhs.savedCustomer == rhs.savedCustomer && lhs.cookiesMade == rhs.cookiesMade
            && lhs.disk == rhs.disk && lhs.queued == rhs.queued && lhs.phase == rhs.phase && lhs.current == rhs.current
            && lhs.baseline == rhs.baseline && lhs.listeners == rhs.listeners && lhs.reload == rhs.reload && lhs.reads == rhs.reads
            && lhs.mode == rhs.mode && lhs.loading == rhs.loading && lhs.protected == rhs.protected
            && lhs.flushFor == rhs.flushFor && lhs.flushSequence == rhs.flushSequence && lhs.flushWaiters == rhs.flushWaiters && lhs.uploadRetry == rhs.uploadRetry
            && lhs.uploadAttempts == rhs.uploadAttempts
            && lhs.periodicAt?.at == rhs.periodicAt?.at
            && lhs.streamValues == rhs.streamValues && lhs.finishedStreams == rhs.finishedStreams
            && lhs.backgroundTime.map(\.expired) == rhs.backgroundTime.map(\.expired)
            && lhs.cookieBindings == rhs.cookieBindings && lhs.holding == rhs.holding && lhs.retryQueued == rhs.retryQueued
            && lhs.waitingCalls == rhs.waitingCalls && lhs.offline == rhs.offline
            && lhs.queuedDeliveries.map(\.delivery) == rhs.queuedDeliveries.map(\.delivery)
    }

    /// The customer a configured client reports (`nil` unless configured).
    var customer: Customer? {
        if case .running = phase { return current }
        return nil
    }

    var isConfigured: Bool { integration != nil }

    /// Whether the world's `seen` customer is the model's `expected` one: the same hard id, and
    /// cookies bound one to one (a cookie seen for the first time is bound to an unbound one).
    mutating func matches(_ seen: Customer?, _ expected: Customer?) -> Bool {
        guard let seen, let expected else { return seen == nil && expected == nil }
        guard seen.registered == expected.registered else { return false }
        if let bound = cookieBindings[seen.cookie] { return bound == expected.cookie }
        guard !cookieBindings.values.contains(expected.cookie) else { return false }
        cookieBindings[seen.cookie] = expected.cookie
        return true
    }

    /// Whether the world's request is the model's (``matches(_:_:)`` for its customer).
    mutating func matches(_ seen: Request, _ expected: Request) -> Bool {
        switch (seen, expected) {
        case (.link(let at, let integration, let customer), .link(let at2, let integration2, let customer2)),
            (.fetch(let at, let integration, let customer), .fetch(let at2, let integration2, let customer2)):
            return at == at2 && integration == integration2 && matches(customer, customer2)
        case (.upload(let at, let integration, let customer, let item, let status), .upload(let at2, let integration2, let customer2, let item2, let status2)):
            return at == at2 && integration == integration2 && item == item2 && status == status2 && matches(customer, customer2)
        default:
            return false
        }
    }

    private var integration: Integration? {
        if case .running(let integration) = phase { return integration }
        return nil
    }

    private var hasListeners: Bool { listeners.contains { $0.registered } }

    /// What `listenerCount` reports (M4: an owner-tied listener whose owner is gone does not count).
    var listenerCount: Int { listeners.filter(\.registered).count }

    /// What `queuedEventCount` reports once the queue is loaded: 0 when not configured.
    var queuedCount: Int {
        guard let integration else { return 0 }
        return queued[slot(integration)]!.count
    }

    /// The list a `SegmentsModel`'s category shows (M5): the last one told, `[]` before.
    func modelList(listener id: Int) -> [String] {
        listeners.first { $0.id == id }?.lastDelivered ?? []
    }

    /// When the next piece of work is due: the reload's debounce, backoff or request (at most one
    /// exists, T6), the upload backoff (E3) or the periodic flush (E2).
    var nextDue: Double? { nextWork?.at }

    private enum Work { case reload, uploadRetry, periodic }

    private var nextWork: (at: Double, work: Work)? {
        dueWork.min { ($0.at, $0.sequence) < ($1.at, $1.sequence) }.map { ($0.at, $0.work) }
    }

    private var dueWork: [(at: Double, sequence: Int, work: Work)] {
        var candidates: [(at: Double, sequence: Int, work: Work)] = []
        let reloadDue: Double? =
            switch reload {
            case .idle: nil
            case .debouncing(let first, let last): min(last + Self.debounce, first + Self.maxWait)
            case .retrying(_, let at): at
            case .fetching(let flight, _): flight.endsAt
            case .waitingForPath: nil
            }
        if let reloadDue { candidates.append((reloadDue, reloadSequence, .reload)) }
        if let uploadRetry { candidates.append((uploadRetry.at, uploadRetry.sequence, .uploadRetry)) }
        if let periodicAt { candidates.append((periodicAt.at, periodicAt.sequence, .periodic)) }
        return candidates
    }

    /// Asks for a flush at the next ``settle()``. The immediate mode's asks wait for the end of
    /// the background load (R3), which uploads what is queued if the mode is still immediate then.
    private mutating func askFlush(forImmediateMode: Bool) {
        guard isConfigured, !(forImmediateMode && loading != nil) else { return }
        // N1: offline no upload starts (during the load, the flush asked for finds the path gone).
        if offline && loading == nil {
            if queuedCount > 0 { applied["N1 no upload offline", default: 0] += 1 }
            return
        }
        // E5: a flush of an empty queue is done at once (during the load it waits for it).
        guard flushFor != nil || queuedCount > 0 || loading != nil else { return }
        if flushFor == nil { flushSequence = nextSequence() }
        flushFor = integration
    }

    private mutating func nextSequence() -> Int {
        scheduled += 1
        return scheduled
    }

    private mutating func setReload(_ next: Reload) {
        switch (reload, next) {
        case (.fetching(let old, _), .fetching(let new, _)) where old.endsAt == new.endsAt: break
        case (.debouncing, .debouncing), (.idle, _), (_, .idle): reloadSequence = nextSequence()
        default: reloadSequence = nextSequence()
        }
        reload = next
    }

    // MARK: - Time

    /// Time passes to `time`: due work happens in order, each at its own moment (ties in the order
    /// they were scheduled), before anything the app does at `time` itself. The queued work of
    /// each moment runs before the next piece falls due.
    mutating func advance(to time: Double) {
        self = advanced(to: time)[0]
    }

    /// ``advance(to:)`` as every order of the work that falls due at one same moment: the
    /// reload machine's, the upload backoff's and the periodic flush's are independent, and the
    /// contract orders none of them before the others.
    func advanced(to time: Double) -> [SpecModel] {
        precondition(time >= now, "time runs forward")
        var model = self
        model.settle()
        while let next = model.nextWork, next.at <= time {
            if case .fetching(var flight, let owed) = model.reload, flight.followUpMaybe, next.work == .reload {
                // The retry's end: with the follow-up owed, and without.
                flight.followUpMaybe = false
                var orders: [SpecModel] = []
                for followUp in owed ? [true] : [false, true] {
                    var fork = model
                    fork.reload = .fetching(flight, followUpOwed: followUp)
                    for result in fork.advanced(to: time) where !orders.contains(result) { orders.append(result) }
                }
                return Array(orders.prefix(4))
            }
            let tied = model.dueWork.filter { $0.at == next.at }.sorted { $0.sequence < $1.sequence }
            if tied.count > 1 {
                var orders: [SpecModel] = []
                for first in tied {
                    var fork = model
                    fork.applied["simultaneous work in either order", default: 0] += 1
                    fork.now = next.at
                    fork.run(first.work)
                    fork.settle()
                    for result in fork.advanced(to: time) where !orders.contains(result) { orders.append(result) }
                }
                return Array(orders.prefix(4))
            }
            model.now = next.at
            model.run(next.work)
            model.settle()
        }
        model.now = time
        model.settle()
        return [model]
    }

    private mutating func run(_ work: Work) {
        switch work {
        case .reload: reloadFellDue()
        case .uploadRetry: uploadRetryFellDue()
        case .periodic: periodicFlushFellDue()
        }
    }

    /// T10: the user sets the device's clock; no duration changes. Only what storage keeps — a
    /// baseline's wall-clock `fetchedAt` read by another client — sees it.
    mutating func moveWallClock(by seconds: Double) {
        wallOffset += seconds
    }

    /// The client's queued work runs: a configuration's background load ends (R3), then a flush
    /// asked for runs (E5).
    mutating func settle() {
        settleUntilLoaded()
        // The storage queue's own work (the protected-data retry of P8) runs before the work due
        // now on the scheduler, or after it: both happen on a device (``storageFirst``).
        if storageFirst { _ = runRetryIfQueued() }
        runScheduledWork()
        if !storageFirst, runRetryIfQueued() { runScheduledWork() }
    }

    /// The first part of ``settle()``: the deliveries that waited go out, and the configuration's
    /// background load ends (R3).
    private mutating func settleUntilLoaded() {
        holding = false
        let queued = queuedDeliveries
        queuedDeliveries = []
        for (delivery, stream) in queued { post(delivery, stream: stream) }
        if let loading {
            self.loading = nil
            configurationCompleted(loading)
        }
    }

    /// ``settle()`` with the configures that app objects' `deinit`s made (`nested`, in order) while
    /// the client's queued work ran: one candidate per moment they may have come at.
    ///
    /// D7 lets an app object's `deinit` call the SDK, and the SDK promises no moment for the
    /// release: the call that let the object go (a re-configure replacing a backend) may drop it
    /// on its own thread while the work it queued already runs on the client's queues, or that
    /// work may hold it until it ran. A4: such a configure is a call of its own, made after the
    /// call that released its object took effect, and ordered with what the client does behind
    /// the app's back only by when it was made. Three moments, in the order the queued work runs:
    /// - before any of it (the configuration's load ends once, for the later configure: R3);
    /// - after the configuration's background load ended (T2 decided for the earlier configure,
    ///   a flush it asked for still to run, E5), before the work due now (a flight's first
    ///   request, a flush): the load runs on the storage queue while the releasing call returns;
    /// - after all of it (the work held the object).
    ///
    /// `afterTheLoad`: the world made them at the second moment (it pins them there in a
    /// regression test and in half the campaign's sessions): that candidate alone.
    func settled(configuring nested: [Integration], afterTheLoad: Bool = false) -> [SpecModel] {
        var moments = NestedMoment.allCases
        if nested.isEmpty { moments = [.beforeTheQueuedWork] }
        // With no load to end, the second moment is the first.
        if loading == nil { moments.removeAll { $0 == .afterTheLoad } }
        if afterTheLoad, moments.contains(.afterTheLoad) { moments = [.afterTheLoad] }
        var candidates: [SpecModel] = []
        for moment in moments {
            var candidate = self
            if !nested.isEmpty { candidate.applied["D7 configure from a deinit \(moment.rawValue)", default: 0] += 1 }
            switch moment {
            case .beforeTheQueuedWork: break
            case .afterTheLoad: candidate.settleUntilLoaded()
            case .afterTheQueuedWork: candidate.settle()
            }
            for integration in nested { candidate.configure(integration) }
            candidate.settle()
            if !candidates.contains(candidate) { candidates.append(candidate) }
        }
        return candidates
    }

    /// The moments of ``settled(configuring:afterTheLoad:)``.
    enum NestedMoment: String, CaseIterable {
        case beforeTheQueuedWork = "before the queued work"
        case afterTheLoad = "after the load"
        case afterTheQueuedWork = "after the queued work"
    }

    /// The work queued on the scheduler runs in the order it was queued: a flight's first
    /// request, the flush.
    private mutating func runScheduledWork() {
        var work: [(sequence: Int, flight: Bool)] = []
        if case .fetching(let flight, _) = reload, !flight.sent { work.append((flight.sequence, true)) }
        if flushFor != nil { work.append((flushSequence, false)) }
        for item in work.sorted(by: { $0.sequence < $1.sequence }) {
            if item.flight {
                sendWaitingFlight()
                continue
            }
            guard let integration = flushFor else { continue }
            flushFor = nil
            let waiters = flushWaiters
            flushWaiters = []
            runFlush(integration, waiters: waiters, current: true)
        }
    }

    /// Runs the protected-data retry if it is queued; returns whether it was.
    private mutating func runRetryIfQueued() -> Bool {
        guard retryQueued else { return false }
        retryQueued = false
        protectedDataRetried()
        return true
    }

    /// From now the client's queued work waits (a held stretch): a flight started meanwhile sends
    /// its request at the next ``settle()``.
    mutating func hold() {
        holding = true
    }

    /// D8: a delivery goes on the delivery queue; it runs at once unless the client's queued work
    /// waits. A listener's call runs only if the listener is still registered then (D7).
    private mutating func post(_ delivery: Delivery, stream: Bool = false) {
        if holding {
            queuedDeliveries.append((delivery, stream))
            return
        }
        if case .told(_, let id, let segments) = delivery {
            guard listeners.contains(where: { $0.id == id && $0.registered }) else { return }
            if stream {
                streamValues[id, default: []].append(segments)
                return
            }
        }
        deliveries.append(delivery)
    }

    /// The background load ends (its storage queue ran) while work due now waits (R3).
    mutating func settleLoading() {
        if let loading {
            self.loading = nil
            configurationCompleted(loading)
        }
    }

    private mutating func reloadFellDue() {
        switch reload {
        case .idle:
            preconditionFailure("nothing was due")
        case .debouncing:
            setReload(.idle)
            startAutomaticReload(attempt: 0)
        case .retrying(let attempt, _):
            setReload(.idle)
            startAutomaticReload(attempt: attempt)
        case .waitingForPath:
            preconditionFailure("nothing was due")
        case .fetching(var flight, let followUpOwed):
            if flight.linking, case .success = flight.outcome {
                // C4: remembered; C2: the customer is checked again before the fetch is sent.
                baseline.linked.insert(flight.customer)
                save()
                guard current == flight.customer else {
                    applied["C2 fetch not sent", default: 0] += 1
                    log(Log.checkCanceled)
                    setReload(.idle)
                    customerChanged(during: flight, followUpOwed: followUpOwed)
                    return
                }
                flight.linking = false
                flight.outcome = sendFetch(for: flight.customer, to: flight.integration)
                flight.endsAt = now + Self.fetchTime
                setReload(.fetching(flight, followUpOwed: followUpOwed))
            } else {
                setReload(.idle)
                flightFinished(flight, followUpOwed: followUpOwed)
            }
        }
    }

    // MARK: - Lifecycle (A4: one at a time, in call order)

    /// T2, T6, D4, G4, E2, R3: (re-)configure. The customer is the storage's (a new one with a new
    /// cookie when it has none); a reload that was pending, owed or in flight is owed again;
    /// listeners, what they were told and waiting reads stay. The integration's stored baseline
    /// is in at once; the rest of T2 is decided when the background load ends (``settle()``),
    /// where waiting reads are served in call order and, in immediate mode, the queue goes up.
    mutating func configure(_ next: Integration, mode named: FlushingMode? = nil) {
        let first = phase == .unconfigured
        if !isConfigured, protected == nil {
            // The customer file is read at configure (R3): the stored customer, or a new one saved.
            current = savedCustomer ?? makeCustomer()
            saveCustomer()
        }
        if let named { mode = named }
        var pending = Loading(owed: false, otherIntegration: false, burstStarted: nil)
        if case .running(let previous) = phase {
            if let earlier = loading {
                pending = earlier  // the earlier configuration's end had not come yet
            } else {
                switch reload {
                case .idle: break
                case .debouncing(let first, _):
                    // T5, T6: the burst goes on; its max wait still counts from its first request.
                    pending.owed = true
                    pending.burstStarted = first
                case .retrying, .waitingForPath: pending.owed = true
                case .fetching(let flight, let followUpOwed): pending.owed = flight.forListeners || followUpOwed
                }
            }
            setReload(.idle)  // a late answer of the old integration is dropped
            pending.otherIntegration = pending.otherIntegration || previous != next
            if previous != next { applied["T2 another integration", default: 0] += 1 }
            // E3: the old pipeline's backoff ends with it; E5: a flush it was to run is the new one's.
            uploadRetry = nil
            uploadAttempts = 0
        }
        phase = .running(next)
        // R3: the new pipeline loads the queue from its store, in the order it was written.
        queued[slot(next)]!.sort { $0.written < $1.written }
        if let flushFor {
            // A3, E5: the old pipeline sends nothing more; on the same storage its flush is the
            // new configuration's (its waiters wait on, for the same items), on other storage it
            // ends with the old one.
            if slot(flushFor) == slot(next) {
                self.flushFor = next
            } else {
                for flush in flushWaiters { post(.flushed(at: now, flush: flush, .error("stopped"))) }
                self.flushFor = nil
                flushWaiters = []
            }
        }
        // D1: the baseline comes from storage, unless it is another integration's.
        baseline = disk[slot(next)]!
        baseline.loaded = true
        if let owner = baseline.owner, owner != next {
            applied["D1 another integration's baseline not used", default: 0] += 1
            baseline = Stored()
        }
        periodicAt = mode.period.map { (now + $0, nextSequence()) }
        loading = pending
        if first, !waitingCalls.isEmpty { applyWaitingCalls(in: next) }
    }

    /// E1 rev 4: the calls made before the first configure, applied at it in call order: each item
    /// stamped with the configured customer as the calls before it left it (an identify merges
    /// its id, an anonymize replaces the customer with the one it made); the customer saved when
    /// they changed it, and a reload owed (T4, A1); an anonymize among them deletes the baseline
    /// (A1; no listener was told anything yet, so no one is told `[]`).
    private mutating func applyWaitingCalls(in integration: Integration) {
        applied["E1 calls before configure applied", default: 0] += 1
        let initial = current
        var anonymized = false
        for call in waitingCalls {
            switch call {
            case .track(let item):
                enqueue(Item(number: item, customer: current!), in: integration)
            case .identify(let registered, let item):
                current!.registered = registered
                enqueue(Item(number: item, customer: current!), in: integration)
            case .anonymize(let customer):
                current = customer
                anonymized = true
            }
        }
        waitingCalls = []
        if current != initial {
            loading?.owed = true
            saveCustomer()
            protected?.decided = true
        }
        if anonymized {
            applied["E1 anonymize before configure", default: 0] += 1
            forgetSegments()
        }
    }

    /// E1 rev 4: a tracking call before the first configure waits; the 1,001st is refused.
    private mutating func holdCall(_ call: WaitingCall) -> Bool {
        guard waitingCalls.count < 1_000 else {
            applied["E1 call before configure refused", default: 0] += 1
            return false
        }
        applied["E1 call before configure kept", default: 0] += 1
        waitingCalls.append(call)
        return true
    }

    /// T2 when the configuration's background load has ended (R3): the initial reload, the reads
    /// that waited, and (immediate mode) the upload of what is queued.
    private mutating func configurationCompleted(_ pending: Loading) {
        guard isConfigured else { return }
        if !hasListeners {
            log(Log.initialSkippedNoCallback)
        } else if pending.owed || pending.otherIntegration || pending.requested
            || listeners.contains(where: { $0.registered && $0.includeFirstLoad })
        {
            // (A reload requested during the load, T1, is owed: nothing is skipped.)
            // T2: re-configuring to another integration owes listeners its answer (D4); so does
            // a kept includeFirstLoad promise.
            if let burstStarted = pending.burstStarted {
                setReload(.debouncing(firstRequest: burstStarted, lastRequest: now))
            } else {
                requestReload()
            }
        } else {
            log(Log.initialSkippedNotRequired)
        }
        let waiting = reads
        reads = []
        for read in waiting { serve(read) }
        if mode == .immediate, queuedCount > 0 { askFlush(forImmediateMode: true) }
    }

    /// A3 (instance API): everything anonymize does for segments, listeners removed (a
    /// `SegmentsModel`'s kept, reading `[]`, and a stream finished: M5 rev 4), waiting reads failed
    /// with `.stopped`, waiting flushes too (E5), work rejected until configured again. The
    /// customer and queued items stay for the next start.
    mutating func stop() {
        if !waitingCalls.isEmpty { applied["E1 stop forgets calls before configure", default: 0] += 1 }
        waitingCalls = []
        cancelReload()
        if isConfigured { forgetSegments() }
        answerReads(.error("stopped"))
        for index in listeners.indices where listeners[index].registered {
            switch listeners[index].observer {
            case .model:
                listeners[index].lastDelivered = []
                listeners[index].awaitingFirstLoad = true
            case .stream:
                listeners[index].registered = false
                finishedStreams.insert(listeners[index].id)
            case .handler:
                listeners[index].registered = false
            }
        }
        for flush in flushWaiters { post(.flushed(at: now, flush: flush, .error("stopped"))) }
        flushWaiters = []
        flushFor = nil  // A3: no upload starts after the stop
        uploadRetry = nil
        uploadAttempts = 0
        periodicAt = nil
        loading = nil
        phase = .stopped
        endBackgroundTime()
    }

    /// A3 rev 4 (`stopAndDeleteData`, Exponea's `stopIntegration`), made with the client's work
    /// settled: everything ``stop()`` does, then — behind the app's back — one last flush of the
    /// configuration's queue (oldest first; it ends when the queue is empty or at the first failed
    /// upload, transient or permanent, and no backoff follows) and the deletion of everything the
    /// storage holds: the customer (the next configure makes a new one), the baseline and link
    /// memory, and the queue, items that were not uploaded included. Returns whether the
    /// completion failed to come (never, once configured).
    mutating func stopAndDeleteData() -> Bool {
        guard let integration else {
            stop()
            return false
        }
        applied["A3 stop deleting the data", default: 0] += 1
        stop()
        let slot = slot(integration)
        runFlush(integration, waiters: [], current: false, last: true)
        if !queued[slot]!.isEmpty { applied["A3 items deleted unsent", default: 0] += 1 }
        queued[slot] = []
        disk[slot] = Stored()
        savedCustomer = nil
        current = nil
        return false
    }

    /// A1, A2: a new customer (new cookie, no hard ids); pending and in-flight work cancelled;
    /// the baseline and link memory deleted; listeners of non-empty categories told `[]`;
    /// waiting reads answered `[]`; then, with listeners, a reload for the new customer.
    mutating func anonymize() {
        if phase == .unconfigured {
            _ = holdCall(.anonymize(makeCustomer()))  // E1 rev 4: applied at configure, in order
            return
        }
        guard isConfigured else { return }
        cancelReload()
        current = makeCustomer()
        saveCustomer()
        protected?.decided = true
        // A2 per D4: categories non-empty in the baseline, and every listener last told a
        // non-empty list. During a configuration's background load (R3) the baseline is not in
        // yet: what listeners were told decides alone.
        let stored = loading == nil ? baseline.snapshot?.segments ?? [:] : [:]
        let emptied = stored.filter { !$0.value.isEmpty }.mapValues { _ in [String]() }
        forgetSegments()
        deliver(changed: emptied, answer: [:], firstLoad: false)
        answerReads(.segments([]))
        if hasListeners { requestReload() }
    }

    /// E1, T4: queues a customer update; merges the id; a change of ids ends a waiting backoff of
    /// the old ids (T7) and requests a reload. Returns false when refused (after stop); before
    /// the first configure it waits (E1 rev 4).
    mutating func identify(_ registered: String, item: Int) -> Bool {
        if phase == .unconfigured { return holdCall(.identify(registered, item: item)) }
        guard let integration, let before = current else { return false }
        var merged = before
        merged.registered = registered
        enqueue(Item(number: item, customer: merged), in: integration)  // stamped with the ids it adds (A4)
        if merged != before {
            if case .retrying = reload { setReload(.idle) }
            if case .waitingForPath = reload { setReload(.idle) }
            current = merged
            saveCustomer()
            protected?.decided = true
            if hasListeners { requestReload() }
        }
        return true
    }

    /// A4, E1: an identify raced by an anonymize that replaced the customer while the identify's
    /// update was being written: the update is queued stamped with the ids it adds (the identify
    /// came first), and its merge — with the reload it would request — no longer applies to the
    /// new customer. The same end as identify, then anonymize, without the reload request the
    /// anonymize would cancel.
    mutating func identifyOvertakenByAnonymize(_ registered: String, item: Int) -> Bool {
        guard let integration, var stamped = current else { return false }
        stamped.registered = registered
        enqueue(Item(number: item, customer: stamped), in: integration)
        return true
    }

    /// E1: queues an event; refused after stop; before the first configure it waits (rev 4).
    mutating func track(item: Int) -> Bool {
        if phase == .unconfigured { return holdCall(.track(item: item)) }
        guard let integration, let customer = current else { return false }
        enqueue(Item(number: item, customer: customer), in: integration)
        return true
    }

    /// E1, E3: the items of two calls made at once are queued in memory, and written to the
    /// queue's file, in either order: their order among each other is no promise (each call's
    /// item is stamped by its place in the one order, A4, not by when it was written). Swaps the
    /// two items' places in memory (`memory`) and in the file (`file`) while they are both queued.
    mutating func reorderRacedItems(_ first: Int, _ second: Int, memory: Bool, file: Bool) {
        for slot in Integration.allCases {
            guard let i = queued[slot]!.firstIndex(where: { $0.number == first }),
                let j = queued[slot]!.firstIndex(where: { $0.number == second })
            else { continue }
            if file { (queued[slot]![i].written, queued[slot]![j].written) = (queued[slot]![j].written, queued[slot]![i].written) }
            if memory { queued[slot]!.swapAt(i, j) }
        }
    }

    /// E2: immediate mode uploads promptly after each enqueue — unless an upload backoff waits.
    private mutating func enqueue(_ item: Item, in integration: Integration) {
        var item = item
        itemsWritten += 1
        item.written = itemsWritten
        queued[slot(integration)]!.append(item)
        if loading != nil { applied["R3 call during the load", default: 0] += 1 }
        guard mode == .immediate else { return }
        if uploadRetry != nil {
            applied["E3 enqueue waits for the backoff", default: 0] += 1
            return
        }
        askFlush(forImmediateMode: true)
    }

    /// E2: in force at once (before configure too: configure uses it unless it names one).
    /// Switching to immediate uploads what is queued; to manual cancels a waiting retry; a
    /// periodic mode counts its period from now.
    mutating func setMode(_ next: FlushingMode) {
        mode = next
        guard isConfigured else { return }
        periodicAt = next.period.map { (now + $0, nextSequence()) }
        switch next {
        case .manual:
            // The waiting retry is cancelled; the chain's count goes on until an upload succeeds
            // (E2; the contract leaves the count open: Docs/Behaviour.md E3 should say).
            if uploadRetry != nil { applied["E2 backoff cancelled by manual", default: 0] += 1 }
            uploadRetry = nil
        case .immediate:
            if uploadRetry == nil, queuedCount > 0 { askFlush(forImmediateMode: true) }
        case .periodic, .automatic: break
        }
    }

    /// E5: flush number `id`: before configure (or after stop) it fails with `.notConfigured`;
    /// otherwise it runs — at once, even while a backoff waits — or joins the flush asked for.
    mutating func flush(id: Int) {
        guard isConfigured else {
            applied["E5 flush before configure", default: 0] += 1
            post(.flushed(at: now, flush: id, .error("notConfigured")))
            return
        }
        if offline, loading == nil, !flushPending {
            // N1: offline the flush fails at once; nothing is sent.
            applied["N1 flush fails offline", default: 0] += 1
            post(.flushed(at: now, flush: id, .error("network")))
            return
        }
        if flushPending {
            applied["E5 flush joined", default: 0] += 1
        } else if queuedCount == 0, loading == nil {
            // Nothing queued, no flush running: done at once (during the load, R3, it waits
            // for the load and uploads what is queued then).
            post(.flushed(at: now, flush: id, .uploaded(0)))
            return
        }
        flushWaiters.append(id)
        askFlush(forImmediateMode: false)
    }

    /// E2, E7, T11: what the app's lifecycle does to a configured client.
    mutating func lifecycle(_ event: LifecycleEvent) {
        guard isConfigured else { return }
        switch event {
        case .willResignActive:
            // E2, E3: resigning active flushes in periodic and automatic modes, but not while an
            // upload backoff waits (the queue waits with its backoff; issue 32, finding 7). Only the
            // app's own flush and the background's (E5, E7) upload during a backoff.
            if mode.flushesOnLeavingForeground, uploadRetry == nil {
                applied["E2 flush on leaving the foreground", default: 0] += 1
                askFlush(forImmediateMode: false)
            }
        case .didEnterBackground:
            if mode.flushesOnLeavingForeground {
                applied["E2 flush on leaving the foreground", default: 0] += 1
                askFlush(forImmediateMode: false)
            }
            // E7: every mode but manual, with items queued (or loading): background time, and a
            // flush at once even while a backoff waits.
            // N1: offline (the queue loaded) no flush can start, so no time is asked for.
            if mode != .manual, queuedCount > 0 || loading != nil, !(offline && loading == nil) {
                applied["E7 background time", default: 0] += 1
                backgroundTime.append((ended: false, expired: false))
                askFlush(forImmediateMode: false)
            }
        case .willEnterForeground:
            // T11: a reload when the baseline's fetch is older than 60 s; a baseline this client
            // did not fetch (another's, T10), or none (deleted by anonymize, A1), counts as older.
            guard hasListeners else { return }
            if let snapshot = baseline.snapshot, snapshot.fetchedBy == generation,
                now - snapshot.fetchedAt <= Self.foregroundRefreshAge
            {
                applied["T11 foreground, fetched recently", default: 0] += 1
            } else {
                applied["T11 foreground reload", default: 0] += 1
                requestReload()
            }
        case .didBecomeActive:
            break
        }
    }

    /// E7: the platform ran the background time out: open requests end; nothing is dropped.
    mutating func expireBackgroundTime() {
        for index in backgroundTime.indices where !backgroundTime[index].ended {
            backgroundTime[index] = (ended: true, expired: true)
        }
    }

    /// N1, N2: the platform reports the network path. Going offline changes nothing at once. When
    /// a usable path returns to a configured client: in every mode but manual an upload backoff is
    /// cut short and the queue is flushed (once loaded, R3); with listeners, a reload is requested
    /// when the newest successful reload is older than the foreground refresh age (T11's rule; a
    /// baseline this client did not fetch counts as older, and while the configuration loads the
    /// reload is owed); a reload backoff, or a reload that waited for the path, starts at once.
    mutating func networkPath(usable: Bool) {
        guard offline == usable else { return }
        offline = !usable
        guard usable, isConfigured else { return }
        if mode != .manual {
            if uploadRetry != nil { applied["N2 upload backoff cut short", default: 0] += 1 }
            uploadRetry = nil
            if queuedCount > 0 { applied["N2 flush on the path's return", default: 0] += 1 }
            askFlush(forImmediateMode: false)
        }
        if hasListeners {
            if loading != nil {
                requestReload()
            } else if let snapshot = baseline.snapshot, snapshot.fetchedBy == generation,
                now - snapshot.fetchedAt <= Self.foregroundRefreshAge
            {
                applied["N2 path back, fetched recently", default: 0] += 1
            } else {
                applied["N2 reload on the path's return", default: 0] += 1
                requestReload()
            }
        }
        switch reload {
        case .retrying(let attempt, _), .waitingForPath(let attempt):
            applied["N2 reload backoff cut short", default: 0] += 1
            setReload(.idle)
            startAutomaticReload(attempt: attempt)
        case .idle, .debouncing, .fetching:
            break
        }
    }

    private mutating func endBackgroundTime() {
        for index in backgroundTime.indices where !backgroundTime[index].ended { backgroundTime[index].ended = true }
    }

    // MARK: - Uploads (E3, E5)

    /// E3, T3, E5: one request per item, oldest first. A 2xx removes the item, ends any backoff
    /// and requests a reload; a permanent failure counts against the item (dropped at its 10th)
    /// and the flush goes on; a transient or authorization failure ends the flush, keeps every
    /// item and, unless manual, waits for a backoff. Waiters hear how many went up, or the error.
    private mutating func runFlush(_ integration: Integration, waiters: [Int], current: Bool, last: Bool = false) {
        if offline {
            // N1: no upload starts; every item waits, no retry is counted, no backoff grows.
            applied["N1 flush finds no path", default: 0] += 1
            for flush in waiters { post(.flushed(at: now, flush: flush, .error("network"))) }
            endBackgroundTime()
            return
        }
        let slot = slot(integration)
        var uploaded = 0
        var ended: Failure?
        var index = 0
        while index < queued[slot]!.count {
            let item = queued[slot]![index]
            let failure = servers[integration]!.upload()
            requests.append(.upload(at: now, integration, item.customer, item: item.number, status: failure?.status ?? 200))
            guard let failure else {
                queued[slot]!.remove(at: index)
                uploaded += 1
                if current {
                    uploadRetry = nil  // E2: a success ends any upload backoff
                    uploadAttempts = 0
                }
                if !isConfigured {
                    // Stopped meanwhile: segment work is over (T9).
                } else if hasListeners {
                    requestReload()
                } else {
                    log(Log.trackedSkippedNoCallback)
                }
                continue
            }
            if failure.isTransient || failure.isAuthorization {
                applied[failure.isAuthorization ? "E3 authorization failure" : "E3 transient failure", default: 0] += 1
                ended = failure
                break
            }
            queued[slot]![index].failures += 1
            applied["E3 permanent failure counted", default: 0] += 1
            if queued[slot]![index].failures >= Self.maxPermanentFailures {
                applied["E3 item dropped after 10", default: 0] += 1
                queued[slot]!.remove(at: index)
                log(Log.itemDropped)
            } else {
                index += 1
            }
            if last {
                // A3 rev 4: the last flush before a deletion ends at the first failure.
                ended = failure
                break
            }
        }
        if !current {
            // The pipeline of an ended configuration: no backoff of its own follows.
        } else if let ended, mode != .manual, isConfigured {
            uploadAttempts += 1
            uploadRetry = UploadRetry(
                at: now + Self.backoff(attempt: uploadAttempts, retryAfter: ended.retryAfter), sequence: nextSequence())
        } else if ended != nil {
            // E3: in manual mode the next flush is the retry; no backoff runs, none is counted.
            uploadRetry = nil
        }
        let outcome: FlushOutcome = ended.map { .error($0.code) } ?? .uploaded(uploaded)
        for flush in waiters { post(.flushed(at: now, flush: flush, outcome)) }
        endBackgroundTime()
    }

    /// E3: the backoff ran out: the whole queue is tried again (a failure continues the chain).
    private mutating func uploadRetryFellDue() {
        applied["E3 upload retry", default: 0] += 1
        uploadRetry = nil
        askFlush(forImmediateMode: false)
    }

    /// E2: the period ran out: what is queued goes up, unless an upload backoff waits (E3).
    private mutating func periodicFlushFellDue() {
        guard let period = mode.period, let at = periodicAt?.at else { return }
        periodicAt = (at + period, nextSequence())
        guard isConfigured, uploadRetry == nil else { return }
        if queuedCount > 0 { applied["E2 periodic flush", default: 0] += 1 }
        askFlush(forImmediateMode: false)
    }
}

extension SpecModel {
    // MARK: - Restarts, hand-overs and protected data (R1, E4, P5, P8)

    /// R1, E4, T10, T11: the client goes (released, or kept by the app but stopped) and a new one
    /// comes over the same stores: the stored customer, baselines, link memory and queue carry
    /// on; listeners, waiting work and the flushing mode were the old client's. What the old
    /// client's listeners, reads and flushes hear afterwards is not compared (the contract names
    /// no such path).
    mutating func restart() {
        generation += 1
        applied["R1 restart carries on", default: 0] += 1
        if holding { applied["R1 restart with work queued", default: 0] += 1 }
        queuedDeliveries = []  // the app no longer hears the client it let go
        endBackgroundTime()
        phase = .unconfigured
        waitingCalls = []  // E1 rev 4: lost with the client that kept them
        current = nil
        baseline = Stored()
        listeners = []
        reload = .idle
        reads = []
        mode = .immediate
        loading = nil
        protected = nil
        flushPending = false
        flushWaiters = []
        uploadRetry = nil
        uploadAttempts = 0
        periodicAt = nil
        // E4: the queue file keeps what was appended, in order.
        for slot in Integration.allCases { queued[slot]!.sort { $0.written < $1.written } }
    }

    /// P5: another client configures on the folder: refused (`.storage`) while this one holds it,
    /// otherwise it takes the folder over with its last customer and queue (R1). Returns whether
    /// it was refused.
    mutating func handOver(_ next: Integration, mode named: FlushingMode?) -> Bool {
        if isConfigured {
            applied["P5 folder refused", default: 0] += 1
            return true
        }
        applied["P5 folder handed over", default: 0] += 1
        restart()
        configure(next, mode: named)
        return false
    }

    /// P8: a new client configures while protected data is unavailable and every file is refused:
    /// it succeeds with a customer made in memory (never saved over the unread file), an empty
    /// baseline, and a queue of what is tracked meanwhile.
    mutating func configureWhileProtected(_ next: Integration, mode named: FlushingMode?) {
        precondition(!isConfigured && current == nil, "a new client")
        let slot = slot(next)
        protected = Protected(unreadQueue: queued[slot]!)
        queued[slot] = []
        current = makeCustomer()
        configure(next, mode: named)
        baseline = Stored()
    }

    /// P8: protected data became available: the stored customer replaces the one made for lack of
    /// it, unless identify or anonymize decided meanwhile (then that one is saved); the stored
    /// queue goes behind what was tracked meanwhile.
    mutating func protectedDataBecameAvailable() {
        guard protected != nil else { return }
        if holding {
            retryQueued = true
        } else {
            protectedDataRetried()
        }
    }

    /// P8: the retry ran on the storage queue.
    private mutating func protectedDataRetried() {
        guard let protected else { return }
        self.protected = nil
        if !protected.decided, let stored = savedCustomer {
            applied["P8 stored customer adopted", default: 0] += 1
            log(Log.storedCustomerAdopted)
            if case .retrying = reload { setReload(.idle) }
            if case .waitingForPath = reload { setReload(.idle) }
            current = stored
            if isConfigured, hasListeners { requestReload() }
        } else {
            if protected.decided { applied["P8 decision stands", default: 0] += 1 }
            savedCustomer = current
        }
        // The items kept in memory are written after the ones already in the file.
        for slot in Integration.allCases {
            for index in queued[slot]!.indices {
                itemsWritten += 1
                queued[slot]![index].written = itemsWritten
            }
        }
        if let integration {
            queued[slot(integration)]! += protected.unreadQueue
            if mode == .immediate, uploadRetry == nil, queuedCount > 0 { askFlush(forImmediateMode: true) }
        } else {
            queued[.a]! += protected.unreadQueue
        }
    }

    /// A4: calls raced on two threads; the outcome is one of their orders.
    mutating func noteRace() {
        applied["A4 lifecycle calls raced", default: 0] += 1
    }

    // MARK: - Listeners (M4, M5, T1)

    /// Registers listener number `id`; when configured, requests a reload (T1).
    mutating func addListener(id: Int, category: String, includeFirstLoad: Bool, observer: Observer = .handler) {
        listeners.append(
            Listener(id: id, category: category, includeFirstLoad: includeFirstLoad, observer: observer, awaitingFirstLoad: includeFirstLoad))
        if observer == .stream { streamValues[id] = [] }
        if isConfigured {
            if loading != nil { applied["R3 call during the load", default: 0] += 1 }
            requestReload()
        }
    }

    /// Removing an unknown or removed listener is a no-op (M4). So ends a stream the app stops
    /// iterating, a listener whose owner is gone and a released model's.
    mutating func removeListener(id: Int) {
        guard let index = listeners.firstIndex(where: { $0.id == id }) else { return }
        listeners[index].registered = false
        if listeners[index].observer == .stream { finishedStreams.insert(id) }
    }

    /// Whether listener `id` is a registered `SegmentsModel` category (what the app reads of it).
    func isModelListener(_ id: Int) -> Bool {
        listeners.contains { $0.id == id && $0.observer == .model && $0.registered }
    }

    // MARK: - Reloads (T5–T7)

    /// T5, T6, T7: a request starts a burst, extends it, owes a follow-up during a flight, or is
    /// covered by a waiting retry.
    private mutating func requestReload() {
        guard isConfigured else { return }
        if loading != nil {
            loading!.requested = true
            return
        }
        switch reload {
        case .idle: setReload(.debouncing(firstRequest: now, lastRequest: now))
        case .debouncing(let first, _):
            if now - first + Self.debounce > Self.maxWait { applied["T5 max wait", default: 0] += 1 }
            setReload(.debouncing(firstRequest: first, lastRequest: now))
        case .retrying, .waitingForPath: break
        case .fetching(let flight, _): setReload(.fetching(flight, followUpOwed: true))
        }
    }

    /// T7: when the debounce or backoff fires with no listener left, nothing is fetched.
    private mutating func startAutomaticReload(attempt: Int) {
        guard hasListeners else {
            log(Log.reloadSkippedNoCallback)
            return
        }
        startFlight(forListeners: true, retryAttempt: attempt)
    }

    /// C1, C4, G2: one flight at a time; a waiting debounce or retry is absorbed by it.
    private mutating func startFlight(forListeners: Bool, retryAttempt: Int) {
        guard let integration, let customer = current else { return }
        if offline {
            // N1: no segment request starts: reads that need one fail at once; the reload
            // listeners are owed waits for the path, its retries as they were.
            if !reads.isEmpty { applied["N1 read fails offline", default: 0] += 1 }
            answerReads(.error("network"))
            guard forListeners else { return }
            applied["N1 reload waits for the path", default: 0] += 1
            switch reload {
            case .fetching: break
            case .waitingForPath(let attempt): setReload(.waitingForPath(attempt: max(attempt, retryAttempt)))
            case .idle, .debouncing, .retrying: setReload(.waitingForPath(attempt: retryAttempt))
            }
            return
        }
        var forListeners = forListeners
        var retryAttempt = retryAttempt
        switch reload {
        case .fetching: return
        case .debouncing: forListeners = true
        case .retrying(let attempt, _), .waitingForPath(let attempt):
            forListeners = true
            retryAttempt = attempt
        case .idle: break
        }
        var flight = Flight(
            integration: integration, customer: customer, forListeners: forListeners, retryAttempt: retryAttempt,
            linking: false, endsAt: .infinity, outcome: .success([:]), sent: false, sequence: nextSequence())
        if !holding { send(&flight) }
        setReload(.fetching(flight, followUpOwed: false))
    }

    /// C4: the flight's first request goes out: the link when these ids were never linked,
    /// otherwise the fetch.
    private mutating func send(_ flight: inout Flight) {
        let needsLink = flight.customer.registered != nil && !baseline.linked.contains(flight.customer)
        if needsLink {
            requests.append(.link(at: now, flight.integration, flight.customer))
            flight.outcome = servers[flight.integration]!.link().map { .failure($0) } ?? .success([:])
        } else {
            flight.outcome = sendFetch(for: flight.customer, to: flight.integration)
        }
        flight.linking = needsLink
        flight.endsAt = now + Self.fetchTime
        flight.sent = true
    }

    /// C2: a flight whose request waited for the client's queued work goes out now — unless the
    /// customer changed meanwhile.
    private mutating func sendWaitingFlight() {
        dropWaitingFlightIfCustomerChanged()
        guard case .fetching(var flight, let followUpOwed) = reload, !flight.sent else { return }
        send(&flight)
        setReload(.fetching(flight, followUpOwed: followUpOwed))
    }

    /// C2: a flight whose first request had not gone out when the customer changed is dropped
    /// when it would go out; its reads are retried for the new customer (G6). Whether a
    /// follow-up asked for meanwhile (T6) is carried by the retry or still owed after it, the
    /// contract leaves open (the SDK does either, by where the ask came from): the retry's end
    /// runs both ways (``Flight/followUpMaybe``, ``advanced(to:)``).
    private mutating func dropWaitingFlightIfCustomerChanged() {
        guard case .fetching(let flight, let followUpOwed) = reload, !flight.sent, current != flight.customer else { return }
        applied["C2 fetch not sent", default: 0] += 1
        log(Log.checkCanceled)
        setReload(.idle)
        customerChanged(during: flight, followUpOwed: followUpOwed)
        if followUpOwed, hasListeners, case .fetching(var retry, false) = reload {
            retry.followUpMaybe = true
            reload = .fetching(retry, followUpOwed: false)
        }
    }

    private mutating func sendFetch(for customer: Customer, to integration: Integration) -> Result<Segments, Failure> {
        requests.append(.fetch(at: now, integration, customer))
        return servers[integration]!.fetch(for: customer)
    }

    /// C3, D1–D6, D9, T6, T7, G3: a flight's answer for a customer that is gone is dropped;
    /// otherwise success replaces the baseline and tells listeners, failure tells nobody.
    private mutating func flightFinished(_ flight: Flight, followUpOwed: Bool) {
        guard current == flight.customer else {
            applied["C3 answer discarded", default: 0] += 1
            log(Log.dataIgnored)
            customerChanged(during: flight, followUpOwed: followUpOwed)
            return
        }
        switch flight.outcome {
        case .success(let segments):
            let base = baseline.snapshot
            var changed: Segments = [:]
            for category in Set(segments.keys).union(base?.segments.keys ?? [:].keys) {
                let before = Set(base?.segments[category] ?? [])
                let after = Set(segments[category] ?? [])
                // D3: for other ids (or none) every category in the answer changed; D2, D4:
                // otherwise a different set, or non-empty before and empty or absent now.
                if (base?.customer != flight.customer && segments[category] != nil) || before != after {
                    changed[category] = segments[category] ?? []
                }
            }
            baseline.snapshot = Snapshot(
                customer: flight.customer, segments: segments, fetchedAt: now, fetchedAtWall: wallNow, fetchedBy: generation)
            save()
            deliver(changed: changed, answer: segments, firstLoad: true)
            answerReads(with: segments)
            if followUpOwed {
                applied["T6 follow-up after success", default: 0] += 1
                requestReload()
            }
        case .failure(let failure):
            // C4: a link failure fails the reload, as transient as its cause.
            answerReads(.error(flight.linking ? "linkFailed" : "httpStatus"))
            guard flight.forListeners || followUpOwed, hasListeners else { return }
            guard failure.isTransient else {
                if followUpOwed {
                    applied["T6 follow-up after a permanent failure", default: 0] += 1
                    requestReload()
                }
                return
            }
            if offline {
                // N1: offline no retry is counted: the reload waits for the path.
                applied["N1 no retry counted offline", default: 0] += 1
                setReload(.waitingForPath(attempt: flight.retryAttempt))
                return
            }
            applied[failure.retryAfter == nil ? "T7 retry" : "T7 retry with Retry-After", default: 0] += 1
            let attempt = flight.retryAttempt + 1
            setReload(.retrying(attempt: attempt, at: now + Self.backoff(attempt: attempt, retryAfter: failure.retryAfter)))
        }
    }

    /// C2, C3, G6: reads of the old customer retry for the current one, at most three times (a read
    /// made after the change is not charged); an owed reload is requested again.
    private mutating func customerChanged(during flight: Flight, followUpOwed: Bool) {
        let owed = flight.forListeners || followUpOwed
        var retrying: [Read] = []
        var givenUp: [Read] = []
        for var read in reads {
            if read.customer != flight.customer {
                retrying.append(read)
            } else if read.retries < Self.maxReadRetries {
                applied["G6 read retried", default: 0] += 1
                read.retries += 1
                read.customer = current
                retrying.append(read)
            } else {
                givenUp.append(read)
            }
        }
        reads = retrying
        if !givenUp.isEmpty { applied["G6 read given up", default: 0] += 1 }
        for read in givenUp { post(.answered(at: now, read: read.id, .error("customerChanged"))) }
        if !retrying.isEmpty {
            startFlight(forListeners: owed && hasListeners, retryAttempt: 0)
        } else if owed && hasListeners {
            requestReload()
        }
    }

    // MARK: - One-shot reads (G1–G6)

    /// G4: waits before configure (and for the background load, R3), fails after stop, otherwise
    /// is served. Returns the read's number.
    mutating func read(category: String, force: Bool) -> Int {
        readsMade += 1
        let read = Read(id: readsMade, category: category, force: force)
        switch phase {
        case .running where loading == nil: serve(read)
        case .running:
            applied["R3 call during the load", default: 0] += 1
            reads.append(read)
        case .unconfigured: reads.append(read)
        case .stopped: post(.answered(at: now, read: read.id, .error("stopped")))
        }
        return read.id
    }

    /// G1, G2, T10: from the baseline when it is exactly this customer's and younger than 5 s —
    /// on the monotonic clock when this client fetched it, else by its wall-clock `fetchedAt`
    /// (one in the future is stale) — unless forced; otherwise joins the flight or starts one.
    private mutating func serve(_ read: Read) {
        if !read.force, isConfigured, let snapshot = baseline.snapshot, snapshot.customer == current, isFresh(snapshot) {
            applied[baseline.loaded ? "G1 cache answer from a stored baseline" : "G1 cache answer", default: 0] += 1
            post(.answered(at: now, read: read.id, .segments((snapshot.segments[read.category] ?? []).sorted())))
            return
        }
        var read = read
        read.customer = current
        reads.append(read)
        startFlight(forListeners: false, retryAttempt: 0)
    }

    private func isFresh(_ snapshot: Snapshot) -> Bool {
        if snapshot.fetchedBy == generation { return now - snapshot.fetchedAt < Self.cacheAge }
        let age = wallNow - snapshot.fetchedAtWall
        return age >= 0 && age < Self.cacheAge
    }

    private mutating func answerReads(with segments: Segments) {
        for read in reads { post(.answered(at: now, read: read.id, .segments((segments[read.category] ?? []).sorted()))) }
        reads = []
    }

    private mutating func answerReads(_ answer: Answer) {
        for read in reads { post(.answered(at: now, read: read.id, answer)) }
        reads = []
    }

    // MARK: - Deliveries (D4–D7, M5)

    /// Per category in name order, each listener in registration order hears the category's full
    /// list when it changed, when its first load is owed (D6), or when the list differs from
    /// what it was last told (D4).
    private mutating func deliver(changed: Segments, answer: Segments, firstLoad: Bool) {
        let categories = Set(changed.keys).union(answer.keys).union(listeners.filter(\.registered).map(\.category))
        for category in categories.sorted() {
            let segments = (changed[category] ?? answer[category] ?? []).sorted()
            for index in listeners.indices where listeners[index].registered && listeners[index].category == category {
                let listener = listeners[index]
                let owedFirstLoad = firstLoad && listener.awaitingFirstLoad
                let toldOtherwise = listener.lastDelivered.map { $0 != segments } ?? false
                guard changed[category] != nil || owedFirstLoad || toldOtherwise else { continue }
                if changed[category] == nil {
                    applied[owedFirstLoad ? "D6 first load, nothing changed" : "D4 told otherwise, baseline unchanged", default: 0] += 1
                }
                switch listener.observer {
                case .handler: post(.told(at: now, listener: listener.id, segments: segments))
                case .stream:
                    applied["M5 stream told", default: 0] += 1
                    post(.told(at: now, listener: listener.id, segments: segments), stream: true)
                case .model: applied["M5 model told", default: 0] += 1
                }
                listeners[index].lastDelivered = segments
            }
        }
        if firstLoad {
            for index in listeners.indices { listeners[index].awaitingFirstLoad = false }
        }
    }

    // MARK: - Storage

    /// A1, A3: the debounce, backoff or flight is dropped; the log says so only when there was one.
    private mutating func cancelReload() {
        if case .idle = reload { return }
        setReload(.idle)
        log(Log.cancelledMeanwhile)
    }

    /// D1: the configuration's baseline is written to its storage, naming its integration (P8:
    /// kept in memory while its file is refused).
    private mutating func save() {
        guard let integration else { return }
        baseline.owner = integration
        baseline.loaded = false
        if protected == nil { disk[slot(integration)] = baseline }
    }

    /// A1, A3: the baseline and link memory are deleted, in memory and in storage (P8: a refused
    /// file stays as it is).
    private mutating func forgetSegments() {
        guard let integration else { return }
        baseline = Stored()
        if protected == nil { disk[slot(integration)] = Stored() }
    }

    /// A1, E1: the customer is saved at once (P8: never over a file not read yet).
    private mutating func saveCustomer() {
        if protected == nil { savedCustomer = current }
    }

    private mutating func makeCustomer() -> Customer {
        cookiesMade += 1
        return Customer(cookie: cookiesMade - 1)
    }
}
