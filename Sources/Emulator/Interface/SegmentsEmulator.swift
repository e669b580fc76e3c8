import Foundation

/// A loopback HTTP/1.1 server that emulates the Bloomreach Engagement endpoints and the ODP
/// GraphQL endpoint that the SDK talks to (the wire format at the end of `Docs/Behaviour.md`).
///
/// It serves fetch segments, link-ids, track event and customer update in project mode
/// (`/webxp/projects/{token}/…`, `/track/v2/projects/{token}/…`) and stream mode
/// (`/webxp/streams/{id}/…`, `/track/u/v1/…?stream_id=`), remembers customers, links and events,
/// answers fetches from fixed answers or from ``EmulatorSegmentRule``s evaluated on the events it
/// received, logs every request and plays injected ``EmulatorFault``s. `POST /v3/graphql` answers
/// ODP audience queries from fixed answers or ``EmulatorAudienceRule``s, checking `x-api-key`
/// (see `SegmentsEmulator+ODP.swift`).
///
/// ```swift
/// let emulator = SegmentsEmulator()
/// let baseURL = try emulator.start()   // http://127.0.0.1:PORT
/// defer { emulator.stop() }
/// emulator.setRules([EmulatorSegmentRule(category: "discovery", segmentId: "s", segmentationId: "g",
///                                        eventType: "purchase")])
/// ```
///
/// Every method is thread-safe. The emulator is an independent peer of the SDK and imports only
/// Foundation. It listens on 127.0.0.1 only, answers 403 to a request whose `Host` is not loopback
/// or that a browser sends from a page of another origin (`Origin` not loopback, or
/// `Sec-Fetch-Site: cross-site`), and bounds what it keeps and how long a connection lasts
/// (``EmulatorLimits``).
public final class SegmentsEmulator: Sendable {
    private let requestedPort: UInt16
    private let limits: EmulatorLimits
    let state: EmulatorLocked<EmulatorState>
    let server = EmulatorLocked<EmulatorSocketServer?>(nil)

    /// An emulator that will listen on 127.0.0.1:`port` (0, the default, picks a free port).
    public init(port: UInt16 = 0, limits: EmulatorLimits = EmulatorLimits()) {
        requestedPort = port
        self.limits = limits
        state = EmulatorLocked(EmulatorState(limits: limits))
    }

    deinit {
        stop()
    }

    // MARK: Lifecycle

    /// Starts listening (a no-op when already running) and returns ``baseURL``.
    ///
    /// The emulator can be started again after ``stop()``; its recorded state is kept.
    /// - Throws: ``EmulatorError`` when the socket cannot be created or bound.
    @discardableResult
    public func start() throws -> URL {
        try server.withLock { server in
            if server == nil {
                let handler = EmulatorRequestHandler(state: state)
                server = try EmulatorSocketServer(port: requestedPort, limits: limits) { request in
                    handler.respond(to: request)
                }
            }
            return Self.url(port: server!.port)
        }
    }

    /// Closes the listener and every open connection and waits for the server's threads.
    /// Idempotent; also called on deinit.
    public func stop() {
        let running = server.withLock { server -> EmulatorSocketServer? in
            defer { server = nil }
            return server
        }
        running?.stop()
    }

    /// `http://127.0.0.1:PORT` while running, else `nil`.
    public var baseURL: URL? {
        port.map(Self.url(port:))
    }

    /// The port listened on while running, else `nil`.
    public var port: UInt16? {
        server.withLock { $0?.port }
    }

    /// How many client connections the server holds open now, 0 when stopped: a test waits for
    /// it to fall to 0 to know the server closed an idle connection, instead of sleeping.
    package var openConnectionCount: Int {
        server.withLock { $0?.openConnectionCount } ?? 0
    }

    /// Whether the emulator is listening.
    public var isRunning: Bool {
        port != nil
    }

    private static func url(port: UInt16) -> URL {
        // A literal host and a number always form a valid URL.
        URL(string: "http://127.0.0.1:\(port)")!
    }

    // MARK: Segments

    /// Replaces the segment rules (used for cookies without a fixed answer).
    public func setRules(_ rules: [EmulatorSegmentRule]) {
        state.withLock { $0.rules = EmulatorRuleSet(rules: rules) }
    }

    /// Replaces the rules with those of a rules document (see ``EmulatorRuleSet``).
    /// - Throws: `DecodingError` when the data is not a rules document; the rules are then unchanged.
    public func loadRules(from jsonData: Data) throws {
        let ruleSet = try EmulatorRuleSet(jsonData: jsonData)
        state.withLock { $0.rules = ruleSet }
    }

    /// Replaces the rules with those of a rules file (see ``EmulatorRuleSet``).
    public func loadRules(contentsOf url: URL) throws {
        try loadRules(from: Data(contentsOf: url))
    }

    /// The current rules.
    public var rules: [EmulatorSegmentRule] {
        state.withLock { $0.rules.rules }
    }

    /// Makes every fetch for `cookie` answer exactly `segments` (category → list), ignoring rules.
    public func setFixedSegments(_ segments: [String: [EmulatorSegment]], forCookie cookie: String) {
        state.withLock { $0.fixedAnswers[cookie] = segments }
    }

    /// Returns `cookie` to rule-based answers.
    public func clearFixedSegments(forCookie cookie: String) {
        state.withLock { _ = $0.fixedAnswers.removeValue(forKey: cookie) }
    }

    /// Returns every cookie to rule-based answers.
    public func clearAllFixedSegments() {
        state.withLock { $0.fixedAnswers.removeAll() }
    }

    /// What a fetch for `cookie` would answer now (fixed answer, else rules), without faults.
    public func segments(forCookie cookie: String) -> [String: [EmulatorSegment]] {
        state.withLock { $0.segments(forCookie: cookie) }
    }

    // MARK: Authorization

    /// Project-mode requests must carry exactly this `Authorization` value (e.g. `"Token KEY"`),
    /// else they get 401. `nil` (the default) accepts any request.
    public func requireAuthorization(_ value: String?) {
        state.withLock { $0.projectAuthorization = value }
    }

    /// Stream-mode requests must carry `Authorization: Bearer <token>` with one of `tokens`, else
    /// they get 401. `nil` (the default) accepts any request.
    public func acceptBearerTokens(_ tokens: Set<String>?) {
        state.withLock { $0.streamBearerTokens = tokens }
    }

    // MARK: Faults

    /// Plays `fault` for the next `count` requests on `route` (``EmulatorRoute/any`` = every route).
    ///
    /// Faults are consumed one per routed request (404/405 answers consume none), oldest first among
    /// those aimed at the request's route, before authorization is checked. A `.status` or
    /// `.redirect` fault answers without processing the request; every other fault lets the request
    /// be processed (the event is stored, the ids linked) and only delays or garbles the answer, as
    /// a broken proxy would.
    public func injectFault(_ fault: EmulatorFault, on route: EmulatorRoute = .any, count: Int = 1) {
        state.withLock { $0.faults.add(fault, route: route, count: count) }
    }

    /// Forgets every fault not yet played.
    public func clearFaults() {
        state.withLock { $0.faults.removeAll() }
    }

    /// How many fault plays are still waiting.
    public var pendingFaultCount: Int {
        state.withLock { $0.faults.pendingCount }
    }
}
