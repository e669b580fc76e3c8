import Foundation

/// What SPEC sections T, C, D, G, A and E promise, as a small pure value: the reference the
/// deterministic simulation compares a real `SegmentsClient` with (Docs/Reliability.md,
/// "Deterministic simulation").
///
/// It is written from the behaviour contract, not from the engine: one `mutating` function per
/// thing that can happen to a client (a public call, time passing, a server answer), each reading
/// like the lines it cites. Where the contract leaves a choice open, the comment says which one
/// the model makes (the engine documents the same choice in Docs/Behaviour.md).
///
/// The simulated world: one client, two integrations `A` and `B`, and one of two storage layouts
/// (``Layout``): everything in one storage, or a baseline and an event queue per integration (as
/// an app's folder per project keeps them) with one customer. Servers answer after
/// ``fetchTime`` seconds; uploads always succeed at once; backoff has no jitter.
struct SpecModel {
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

    /// What the app sees on the delivery queue, in order: listener calls and read answers.
    enum Delivery: Hashable, Sendable, CustomStringConvertible {
        case told(at: Double, listener: Int, segments: [String])
        case answered(at: Double, read: Int, Answer)
        var description: String {
            switch self {
            case .told(let at, let listener, let segments): "t=\(at) listener \(listener) told [\(segments.joined(separator: ","))]"
            case .answered(let at, let read, let answer): "t=\(at) read \(read) answered \(answer)"
            }
        }
    }

    /// What the servers see, in order: links, fetches and uploads.
    enum Request: Hashable, Sendable, CustomStringConvertible {
        case link(at: Double, Integration, Customer)
        case fetch(at: Double, Integration, Customer)
        case upload(at: Double, Integration, Customer)
        var description: String {
            switch self {
            case .link(let at, let integration, let customer): "t=\(at) \(integration) link \(customer)"
            case .fetch(let at, let integration, let customer): "t=\(at) \(integration) fetch \(customer)"
            case .upload(let at, let integration, let customer): "t=\(at) \(integration) upload for \(customer)"
            }
        }
    }

    enum FlushingMode: Hashable, Sendable { case immediate, manual }

    /// Where the two integrations keep their baselines and queued items.
    enum Layout: Hashable, Sendable, CaseIterable {
        /// One storage for both (one folder, or one set of stores, for two projects).
        case oneStorage
        /// A baseline and an event queue per integration; the customer is shared.
        case storagePerProject
    }

    /// The storage an integration's baseline and queue are in.
    private func slot(_ integration: Integration) -> Integration { layout == .oneStorage ? .a : integration }

    // MARK: - The contract's log lines (T2, T3, T7, C2, C3, A1), word for word

    enum Log {
        static let initialSkippedNoCallback = "Segments: Skipping initial segments update process for no callback"
        static let initialSkippedNotRequired = "Segments: Skipping initial segments update process as is not required"
        static let trackedSkippedNoCallback = "Segments: Skipping segments update process after tracked event due to no callback registered"
        static let reloadSkippedNoCallback = "Segments: Skipping segments reload process for no callback"
        static let checkCanceled = "Segments: Check process was canceled because customer has changed"
        static let dataIgnored = "Segments: New data are ignored because were loaded for different customer"
        static let cancelledMeanwhile = "Segments: Segments change check has been cancelled meanwhile"
        static let all: Set<String> = [
            initialSkippedNoCallback, initialSkippedNotRequired, trackedSkippedNoCallback, reloadSkippedNoCallback,
            checkCanceled, dataIgnored, cancelledMeanwhile,
        ]
    }

    // MARK: - The contract's numbers (T5, T7, G1, G6) and the simulated server's latency

    static let debounce = 5.0
    static let maxWait = 30.0
    static let cacheAge = 5.0
    static let maxReadRetries = 3
    /// 47/128 s: a binary fraction, so every time in a session is exact on both sides, and no
    /// multiple of it below 128 is a whole number of seconds.
    static let fetchTime = 47.0 / 128

    /// T7: about 2 s doubling to 60 s (no jitter here), never shorter than a `Retry-After`, which
    /// counts as at most 10 minutes.
    static func backoff(attempt: Int, retryAfter: Double?) -> Double {
        let exponential = min(2 * pow(2, Double(attempt - 1)), 60)
        return max(exponential, min(retryAfter ?? 0, 600))
    }

    // MARK: - The servers

    struct Server: Sendable {
        /// Answers by who the customer is: `"anonymous"` or its registered id.
        var answers: [String: Segments] = [:]
        var failNextFetches: [Failure] = []
        var failNextLinks: [Failure] = []

        /// The answer is chosen when the request starts, as a server would (and as the fake does).
        mutating func fetch(for customer: Customer) -> Result<Segments, Failure> {
            if !failNextFetches.isEmpty { return .failure(failNextFetches.removeFirst()) }
            return .success(answers[customer.registered ?? "anonymous"] ?? [:])
        }

        mutating func link() -> Failure? {
            failNextLinks.isEmpty ? nil : failNextLinks.removeFirst()
        }
    }

    // MARK: - The client's state

    enum Phase: Equatable { case unconfigured, running(Integration), stopped }

    struct Listener {
        let id: Int
        let category: String
        let includeFirstLoad: Bool
        /// D6: told once by the first successful reload after it registered.
        var awaitingFirstLoad: Bool
        /// D4: the list this listener was last delivered; `nil` before its first call.
        var lastDelivered: [String]?
        var registered = true
    }

    /// What a baseline holds (D1, C4), and the integration it belongs to.
    struct Stored {
        var snapshot: Snapshot?
        var linked: Set<Customer> = []
        var owner: Integration?
        /// Read from storage by a configure (rather than fetched by this configuration).
        var loaded = false
    }

    /// D1: what the last successful fetch answered, for whom, and when on the monotonic clock:
    /// every snapshot of a session was fetched by its one process, so no wall-clock time is
    /// needed to age it (T10).
    struct Snapshot {
        let customer: Customer
        let segments: Segments
        let fetchedAt: Double
    }

    /// One fetch (with its link, C4) for one customer snapshot (C1).
    struct Flight {
        let integration: Integration
        let customer: Customer
        /// The reload listeners are owed (T6, T7); a fetch only for one-shot reads is not retried.
        let forListeners: Bool
        let retryAttempt: Int
        var linking: Bool
        /// When the request in progress comes back, and what it will say (chosen at its start).
        var endsAt: Double
        var outcome: Result<Segments, Failure>
    }

    enum Reload {
        case idle
        /// T5: a trailing debounce with a max wait.
        case debouncing(firstRequest: Double, lastRequest: Double)
        /// T7: a failed reload waits for its backoff.
        case retrying(attempt: Int, at: Double)
        /// T6: one flight; requests meanwhile owe one follow-up.
        case fetching(Flight, followUpOwed: Bool)
    }

    struct Read {
        let id: Int
        let category: String
        let force: Bool
        var retries = 0
        /// The customer it waits for (G6): a read made after a customer change is not charged a retry.
        var customer: Customer?
    }

    private(set) var now = 0.0
    private(set) var deliveries: [Delivery] = []
    private(set) var requests: [Request] = []
    /// The lines of ``Log`` written, in order.
    private(set) var logs: [String] = []
    /// The rules ``applied`` counts.
    static let rulesWithABranch = [
        "T2 another integration", "T5 max wait", "T6 follow-up after success", "T6 follow-up after a permanent failure",
        "T7 retry", "T7 retry with Retry-After", "C2 fetch not sent", "C3 answer discarded", "D4 told otherwise, baseline unchanged",
        "D6 first load, nothing changed", "G1 cache answer", "G1 cache answer from a stored baseline", "G6 read retried",
        "G6 read given up", "D1 another integration's baseline not used",
    ]
    /// How often each rule with a branch of its own applied: evidence that a campaign reached it.
    private(set) var applied: [String: Int] = [:]
    var servers: [Integration: Server] = [.a: Server(), .b: Server()]

    private(set) var phase = Phase.unconfigured
    /// The storage's customer: it survives stop (A3 stops segments work; the customer stays).
    private var storedCustomer: Customer?
    private var cookiesMade = 0
    let layout: Layout
    /// The baselines in storage, per ``slot(_:)``.
    private var disk: [Integration: Stored] = [.a: Stored(), .b: Stored()]
    /// The configuration's baseline.
    private var baseline = Stored()
    private var listeners: [Listener] = []
    private var reload = Reload.idle
    private var reads: [Read] = []
    private var readsMade = 0
    private var mode = FlushingMode.immediate
    /// E1: queued items per ``slot(_:)``, each stamped with the customer at that moment.
    private var queued: [Integration: [Customer]] = [.a: [], .b: []]

    init(layout: Layout) {
        self.layout = layout
    }

    /// The customer a configured client reports (`nil` unless configured).
    var customer: Customer? {
        if case .running = phase { return storedCustomer }
        return nil
    }

    private var integration: Integration? {
        if case .running(let integration) = phase { return integration }
        return nil
    }

    private var hasListeners: Bool { listeners.contains { $0.registered } }

    /// When the one pending piece of work — the debounce, the backoff or the flight's request —
    /// is due: at most one exists at a time (T6).
    var nextDue: Double? {
        switch reload {
        case .idle: nil
        case .debouncing(let first, let last): min(last + Self.debounce, first + Self.maxWait)
        case .retrying(_, let at): at
        case .fetching(let flight, _): flight.endsAt
        }
    }

    // MARK: - Time

    /// Time passes to `time`: due work happens in order, each at its own moment, before anything
    /// the app does at `time` itself.
    mutating func advance(to time: Double) {
        precondition(time >= now, "time runs forward")
        while let due = nextDue, due <= time {
            now = due
            workFellDue()
        }
        now = time
    }

    /// T10: the user sets the device's clock; no duration changes, so nothing does.
    mutating func moveWallClock(by seconds: Double) {}

    private mutating func workFellDue() {
        switch reload {
        case .idle:
            preconditionFailure("nothing was due")
        case .debouncing:
            reload = .idle
            startAutomaticReload(attempt: 0)
        case .retrying(let attempt, _):
            reload = .idle
            startAutomaticReload(attempt: attempt)
        case .fetching(var flight, let followUpOwed):
            if flight.linking, case .success = flight.outcome {
                // C4: remembered; C2: the customer is checked again before the fetch is sent.
                baseline.linked.insert(flight.customer)
                save()
                guard storedCustomer == flight.customer else {
                    applied["C2 fetch not sent", default: 0] += 1
                    logs.append(Log.checkCanceled)
                    reload = .idle
                    customerChanged(during: flight, followUpOwed: followUpOwed)
                    return
                }
                flight.linking = false
                flight.outcome = sendFetch(for: flight.customer, to: flight.integration)
                flight.endsAt = now + Self.fetchTime
                reload = .fetching(flight, followUpOwed: followUpOwed)
            } else {
                reload = .idle
                flightFinished(flight, followUpOwed: followUpOwed)
            }
        }
    }

    // MARK: - Lifecycle (A4: one at a time, in call order)

    /// T2, T6, D4, G4: (re-)configure. The customer is the storage's (a new one with a new cookie
    /// the first time); a reload that was pending, owed or in flight is owed again; listeners,
    /// what they were told and waiting reads stay. Then the integration's stored baseline is in,
    /// the initial reload is decided, waiting reads are served in call order, and the tracking
    /// pipeline takes the queue over.
    mutating func configure(_ next: Integration) {
        if storedCustomer == nil { storedCustomer = makeCustomer() }
        var owed = false
        var otherIntegration = false
        var burstStarted: Double?
        if case .running(let previous) = phase {
            switch reload {
            case .idle: break
            case .debouncing(let first, _):
                // T5, T6: the burst goes on; its max wait still counts from its first request.
                owed = true
                burstStarted = first
            case .retrying: owed = true
            case .fetching(let flight, let followUpOwed): owed = flight.forListeners || followUpOwed
            }
            reload = .idle  // a late answer of the old integration is dropped
            otherIntegration = previous != next
            if otherIntegration { applied["T2 another integration", default: 0] += 1 }
        }
        phase = .running(next)
        // D1: the baseline comes from storage, unless it is another integration's. It was fetched
        // by this process (sessions have no restarts), so it still ages on the monotonic clock (T10).
        baseline = disk[slot(next)]!
        baseline.loaded = true
        if let owner = baseline.owner, owner != next {
            applied["D1 another integration's baseline not used", default: 0] += 1
            baseline = Stored()
        }
        if !hasListeners {
            logs.append(Log.initialSkippedNoCallback)
        } else if owed || otherIntegration || listeners.contains(where: { $0.registered && $0.includeFirstLoad }) {
            // T2: re-configuring to another integration owes listeners its answer (D4); so does
            // a kept includeFirstLoad promise.
            if let burstStarted {
                reload = .debouncing(firstRequest: burstStarted, lastRequest: now)
            } else {
                requestReload()
            }
        } else {
            logs.append(Log.initialSkippedNotRequired)
        }
        let waiting = reads
        reads = []
        for read in waiting { serve(read) }
        if mode == .immediate { uploadQueue() }
    }

    /// A3: everything anonymize does for segments, listeners removed, waiting reads failed with
    /// `.stopped`, work rejected until configured again. Queued items stay for the next start.
    mutating func stop() {
        cancelReload()
        if integration != nil { forgetSegments() }
        answerReads(.error("stopped"))
        for index in listeners.indices { listeners[index].registered = false }
        phase = .stopped
    }

    /// A1, A2: a new customer (new cookie, no hard ids); pending and in-flight work cancelled;
    /// the baseline and link memory deleted; listeners of non-empty categories told `[]`;
    /// waiting reads answered `[]`; then, with listeners, a reload for the new customer.
    mutating func anonymize() {
        guard integration != nil else { return }
        cancelReload()
        storedCustomer = makeCustomer()
        let emptied = (baseline.snapshot?.segments ?? [:]).filter { !$0.value.isEmpty }.mapValues { _ in [String]() }
        forgetSegments()
        deliver(changed: emptied, answer: [:], firstLoad: false)
        answerReads(.segments([]))
        if hasListeners { requestReload() }
    }

    /// E1, T4: queues a customer update; merges the id; a change of ids ends a waiting backoff of
    /// the old ids (T7) and requests a reload. Returns false when refused (not configured).
    mutating func identify(_ registered: String) -> Bool {
        guard let integration, let current = storedCustomer else { return false }
        var merged = current
        merged.registered = registered
        queued[slot(integration)]!.append(merged)  // stamped with the ids it adds (A4)
        if merged != current {
            if case .retrying = reload { reload = .idle }
            storedCustomer = merged
            if hasListeners { requestReload() }
        }
        if mode == .immediate { uploadQueue() }
        return true
    }

    /// E1: queues an event; refused when not configured.
    mutating func track() -> Bool {
        guard let integration, let customer = storedCustomer else { return false }
        queued[slot(integration)]!.append(customer)
        if mode == .immediate { uploadQueue() }
        return true
    }

    /// E2: in force at once; switching to immediate uploads what is queued.
    mutating func setMode(_ next: FlushingMode) {
        mode = next
        if integration != nil, mode == .immediate { uploadQueue() }
    }

    /// E5: uploads what is queued.
    mutating func flush() {
        if integration != nil { uploadQueue() }
    }

    /// E3, T3: one request per item, oldest first (they always succeed here); each success
    /// requests a reload.
    private mutating func uploadQueue() {
        guard let integration, let items = queued[slot(integration)], !items.isEmpty else { return }
        for customer in items {
            requests.append(.upload(at: now, integration, customer))
            if !hasListeners { logs.append(Log.trackedSkippedNoCallback) }
        }
        queued[slot(integration)] = []
        if hasListeners { requestReload() }
    }

    /// A1, A3: the debounce, backoff or flight is dropped; the log says so only when there was one.
    private mutating func cancelReload() {
        if case .idle = reload { return }
        reload = .idle
        logs.append(Log.cancelledMeanwhile)
    }

    /// D1: the configuration's baseline is written to its storage, naming its integration.
    private mutating func save() {
        guard let integration else { return }
        baseline.owner = integration
        baseline.loaded = false
        disk[slot(integration)] = baseline
    }

    /// A1, A3: the baseline and link memory are deleted, in memory and in storage.
    private mutating func forgetSegments() {
        guard let integration else { return }
        baseline = Stored()
        disk[slot(integration)] = Stored()
    }

    private mutating func makeCustomer() -> Customer {
        cookiesMade += 1
        return Customer(cookie: cookiesMade - 1)
    }

    // MARK: - Listeners (M4, T1)

    /// Registers listener number `id`; when configured, requests a reload (T1).
    mutating func addListener(id: Int, category: String, includeFirstLoad: Bool) {
        listeners.append(Listener(id: id, category: category, includeFirstLoad: includeFirstLoad, awaitingFirstLoad: includeFirstLoad))
        if integration != nil { requestReload() }
    }

    /// Removing an unknown or removed listener is a no-op (M4).
    mutating func removeListener(id: Int) {
        if let index = listeners.firstIndex(where: { $0.id == id }) { listeners[index].registered = false }
    }

    // MARK: - Reloads (T5–T7)

    /// T5, T6, T7: a request starts a burst, extends it, owes a follow-up during a flight, or is
    /// covered by a waiting retry.
    private mutating func requestReload() {
        guard integration != nil else { return }
        switch reload {
        case .idle: reload = .debouncing(firstRequest: now, lastRequest: now)
        case .debouncing(let first, _):
            if now - first + Self.debounce > Self.maxWait { applied["T5 max wait", default: 0] += 1 }
            reload = .debouncing(firstRequest: first, lastRequest: now)
        case .retrying: break
        case .fetching(let flight, _): reload = .fetching(flight, followUpOwed: true)
        }
    }

    /// T7: when the debounce or backoff fires with no listener left, nothing is fetched.
    private mutating func startAutomaticReload(attempt: Int) {
        guard hasListeners else {
            logs.append(Log.reloadSkippedNoCallback)
            return
        }
        startFlight(forListeners: true, retryAttempt: attempt)
    }

    /// C1, C4, G2: one flight at a time; a waiting debounce or retry is absorbed by it.
    private mutating func startFlight(forListeners: Bool, retryAttempt: Int) {
        guard let integration, let customer = storedCustomer else { return }
        var forListeners = forListeners
        var retryAttempt = retryAttempt
        switch reload {
        case .fetching: return
        case .debouncing: forListeners = true
        case .retrying(let attempt, _):
            forListeners = true
            retryAttempt = attempt
        case .idle: break
        }
        let needsLink = customer.registered != nil && !baseline.linked.contains(customer)
        let outcome: Result<Segments, Failure>
        if needsLink {
            requests.append(.link(at: now, integration, customer))
            outcome = servers[integration]!.link().map { .failure($0) } ?? .success([:])
        } else {
            outcome = sendFetch(for: customer, to: integration)
        }
        reload = .fetching(
            Flight(
                integration: integration, customer: customer, forListeners: forListeners, retryAttempt: retryAttempt,
                linking: needsLink, endsAt: now + Self.fetchTime, outcome: outcome),
            followUpOwed: false)
    }

    private mutating func sendFetch(for customer: Customer, to integration: Integration) -> Result<Segments, Failure> {
        requests.append(.fetch(at: now, integration, customer))
        return servers[integration]!.fetch(for: customer)
    }

    /// C3, D1–D6, D9, T6, T7, G3: a flight's answer for a customer that is gone is dropped;
    /// otherwise success replaces the baseline and tells listeners, failure tells nobody.
    private mutating func flightFinished(_ flight: Flight, followUpOwed: Bool) {
        guard storedCustomer == flight.customer else {
            applied["C3 answer discarded", default: 0] += 1
            logs.append(Log.dataIgnored)
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
                customer: flight.customer, segments: segments, fetchedAt: now)
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
            applied[failure.retryAfter == nil ? "T7 retry" : "T7 retry with Retry-After", default: 0] += 1
            let attempt = flight.retryAttempt + 1
            reload = .retrying(attempt: attempt, at: now + Self.backoff(attempt: attempt, retryAfter: failure.retryAfter))
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
                read.customer = storedCustomer
                retrying.append(read)
            } else {
                givenUp.append(read)
            }
        }
        reads = retrying
        if !givenUp.isEmpty { applied["G6 read given up", default: 0] += 1 }
        for read in givenUp { deliveries.append(.answered(at: now, read: read.id, .error("customerChanged"))) }
        if !retrying.isEmpty {
            startFlight(forListeners: owed && hasListeners, retryAttempt: 0)
        } else if owed && hasListeners {
            requestReload()
        }
    }

    // MARK: - One-shot reads (G1–G6)

    /// G4: waits before configure, fails after stop, otherwise is served. Returns the read's number.
    mutating func read(category: String, force: Bool) -> Int {
        readsMade += 1
        let read = Read(id: readsMade, category: category, force: force)
        switch phase {
        case .running: serve(read)
        case .unconfigured: reads.append(read)
        case .stopped: deliveries.append(.answered(at: now, read: read.id, .error("stopped")))
        }
        return read.id
    }

    /// G1, G2, T10: from the baseline when it is exactly this customer's and younger than 5 s on
    /// the monotonic clock, unless forced; otherwise joins the flight or starts one.
    private mutating func serve(_ read: Read) {
        if !read.force, integration != nil, let snapshot = baseline.snapshot, snapshot.customer == storedCustomer,
            now - snapshot.fetchedAt < Self.cacheAge
        {
            applied[baseline.loaded ? "G1 cache answer from a stored baseline" : "G1 cache answer", default: 0] += 1
            deliveries.append(.answered(at: now, read: read.id, .segments((snapshot.segments[read.category] ?? []).sorted())))
            return
        }
        var read = read
        read.customer = storedCustomer
        reads.append(read)
        startFlight(forListeners: false, retryAttempt: 0)
    }

    private mutating func answerReads(with segments: Segments) {
        for read in reads { deliveries.append(.answered(at: now, read: read.id, .segments((segments[read.category] ?? []).sorted()))) }
        reads = []
    }

    private mutating func answerReads(_ answer: Answer) {
        for read in reads { deliveries.append(.answered(at: now, read: read.id, answer)) }
        reads = []
    }

    // MARK: - Deliveries (D4–D7)

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
                deliveries.append(.told(at: now, listener: listener.id, segments: segments))
                listeners[index].lastDelivered = segments
            }
        }
        if firstLoad {
            for index in listeners.indices { listeners[index].awaitingFirstLoad = false }
        }
    }
}
