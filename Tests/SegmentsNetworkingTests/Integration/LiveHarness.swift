import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsNetworking
import SegmentsTesting

/// One `SegmentsEmulator` on 127.0.0.1 (ephemeral port) and the real adapters pointed at it through
/// a real `URLSessionSegmentsTransport`.
///
/// Create it at the start of a test and stop it in a `defer`:
/// ```swift
/// let live = try LiveHarness(.project)
/// defer { live.stop() }
/// ```
/// The scheduler is a `RecordingSleeper`, so the stream-mode authorization retry records its 1 s
/// wait instead of sleeping; the clock is frozen at `Harness.now`, so an HTTP-date `Retry-After`
/// gives an exact number of seconds.
struct LiveHarness {
    let emulator: SegmentsEmulator
    let baseURL: URL
    let transport: URLSessionSegmentsTransport
    let scheduler: RecordingSleeper
    let logger: LogRecorder
    let configuration: BloomreachConfiguration

    /// The deadline of requests whose deadline is not what a test checks: one only a hang reaches.
    /// A loopback request can wait seconds for a thread on a loaded machine (50 uploads at once
    /// under ThreadSanitizer beside two busy loops passed 5 s), and a test that checks a deadline
    /// gives its own.
    static let generousTimeout: TimeInterval = 30

    /// Starts an emulator and wires the adapters for `mode`'s integration and credentials.
    ///
    /// - Parameters:
    ///   - requireCredentials: make the emulator refuse requests without `mode`'s credentials.
    ///   - refreshesStreamToken: stream mode only: send the JWT from a `BloomreachAuthorizationProvider`
    ///     (so a 401/403 is retried once), or as a static `.bearer` (so a 401/403 fails at once).
    ///   - requestTimeout: the configuration's per-request deadline (it overrides the transport's).
    ///   - maximumResponseSize: the transport's response cap.
    ///   - emulatorLimits: the emulator's server limits (e.g. a short idle time-out).
    init(
        _ mode: LiveMode, requireCredentials: Bool = false, refreshesStreamToken: Bool = true,
        requestTimeout: TimeInterval = LiveHarness.generousTimeout,
        maximumResponseSize: Int = URLSessionSegmentsTransport.defaultMaximumResponseSize,
        emulatorLimits: EmulatorLimits = EmulatorLimits()
    ) throws {
        let provider = refreshesStreamToken ? mode.streamProvider : nil
        let authorization: BloomreachAuthorization =
            mode == .stream && !refreshesStreamToken ? .bearer(LiveMode.jwt) : mode.authorization
        try self.init(
            mode.integration, authorization: authorization, stream: provider,
            requestTimeout: requestTimeout, maximumResponseSize: maximumResponseSize, emulatorLimits: emulatorLimits)
        if requireCredentials { mode.requireCredentials(on: emulator) }
    }

    /// Starts an emulator and wires the adapters for exactly these settings.
    init(
        _ integration: BloomreachIntegration, authorization: BloomreachAuthorization = .none,
        stream provider: (any BloomreachAuthorizationProvider)? = nil, requestTimeout: TimeInterval = LiveHarness.generousTimeout,
        maximumResponseSize: Int = URLSessionSegmentsTransport.defaultMaximumResponseSize,
        timeline: Timeline = Timeline(), emulatorLimits: EmulatorLimits = EmulatorLimits()
    ) throws {
        emulator = SegmentsEmulator(limits: emulatorLimits)
        baseURL = try emulator.start()
        transport = URLSessionSegmentsTransport(timeout: requestTimeout, maximumResponseSize: maximumResponseSize)
        scheduler = RecordingSleeper(timeline: timeline)
        logger = LogRecorder()
        configuration = BloomreachConfiguration(
            integration: integration, baseURL: baseURL.absoluteString, authorization: authorization,
            authorizationProvider: provider, requestTimeout: requestTimeout)
    }

    /// Stops the emulator: closes its listener and connections and waits for its threads.
    func stop() {
        emulator.stop()
    }

    var repository: BloomreachSegmentRepository {
        BloomreachSegmentRepository(
            configuration: configuration, transport: transport, scheduler: scheduler,
            clock: FixedClock(date: Harness.now), logger: logger)
    }

    /// A repository on the same transport whose requests have another deadline.
    func repository(requestTimeout: TimeInterval) -> BloomreachSegmentRepository {
        var configuration = configuration
        configuration.requestTimeout = requestTimeout
        return BloomreachSegmentRepository(
            configuration: configuration, transport: transport, scheduler: scheduler,
            clock: FixedClock(date: Harness.now), logger: logger)
    }

    var uploader: BloomreachEventUploader {
        BloomreachEventUploader(
            configuration: configuration, transport: transport, scheduler: scheduler,
            clock: FixedClock(date: Harness.now), logger: logger)
    }

    /// An uploader on the same transport whose requests have another deadline.
    func uploader(requestTimeout: TimeInterval) -> BloomreachEventUploader {
        var configuration = configuration
        configuration.requestTimeout = requestTimeout
        return BloomreachEventUploader(
            configuration: configuration, transport: transport, scheduler: scheduler,
            clock: FixedClock(date: Harness.now), logger: logger)
    }

    /// The requests the emulator logged on `route`, oldest first.
    func requests(on route: EmulatorRoute) -> [EmulatorRecordedRequest] {
        emulator.requests(on: route)
    }
}

/// The two Bloomreach integrations, each with the credentials it sends and where its requests go.
enum LiveMode: String, CaseIterable, Sendable, CustomStringConvertible {
    case project
    case stream

    static let projectToken = "TOKEN"
    static let streamId = "STREAM"
    static let apiKey = "API_KEY"
    static let jwt = "header.payload.signature"

    var description: String { rawValue }

    var integration: BloomreachIntegration {
        switch self {
        case .project: .project(token: Self.projectToken)
        case .stream: .stream(id: Self.streamId)
        }
    }

    /// What the emulator reports as the integration of a request in this mode.
    var emulatorIntegration: EmulatorIntegration {
        switch self {
        case .project: .project(token: Self.projectToken)
        case .stream: .stream(id: Self.streamId)
        }
    }

    /// Project mode authorizes with a static API key; stream mode with the app's JWT.
    var authorization: BloomreachAuthorization {
        switch self {
        case .project: .token(Self.apiKey)
        case .stream: .none
        }
    }

    /// A provider that always hands out the same JWT (stream mode only).
    var streamProvider: (any BloomreachAuthorizationProvider)? {
        switch self {
        case .project: nil
        case .stream: TokenSequence([Self.jwt, Self.jwt, Self.jwt])
        }
    }

    /// The `Authorization` value every request of this mode carries.
    var authorizationHeader: String {
        switch self {
        case .project: "Token \(Self.apiKey)"
        case .stream: "Bearer \(Self.jwt)"
        }
    }

    /// Makes `emulator` accept only this mode's credentials.
    func requireCredentials(on emulator: SegmentsEmulator) {
        switch self {
        case .project: emulator.requireAuthorization(authorizationHeader)
        case .stream: emulator.acceptBearerTokens([Self.jwt])
        }
    }

    // MARK: Where the requests go (the wire format (Behaviour)), as the emulator logs them: encoded path and raw query.

    func fetchPath() -> String {
        switch self {
        case .project: "/webxp/projects/\(Self.projectToken)/segments"
        case .stream: "/webxp/streams/\(Self.streamId)/segments"
        }
    }

    func linkPath(cookie: String) -> String {
        switch self {
        case .project: "/webxp/projects/\(Self.projectToken)/cookies/\(cookie)/link-ids"
        case .stream: "/webxp/streams/\(Self.streamId)/cookies/\(cookie)/link-ids"
        }
    }

    var eventPath: String {
        switch self {
        case .project: "/track/v2/projects/\(Self.projectToken)/customers/events"
        case .stream: "/track/u/v1/customers/events"
        }
    }

    var customerUpdatePath: String {
        switch self {
        case .project: "/track/v2/projects/\(Self.projectToken)/customers"
        case .stream: "/track/u/v1/customers"
        }
    }

    /// The raw query of tracking requests: none in project mode, the stream id in stream mode.
    var trackingQuery: String? {
        switch self {
        case .project: nil
        case .stream: "stream_id=\(Self.streamId)"
        }
    }
}

/// Live-test values shared by the integration suites.
enum Live {
    static let purchase = TrackedEvent(
        kind: .event(type: "purchase"), customerIds: identified,
        properties: ["price": 9.99, "sku": "A-1", "qty": 2, "gift": nil, "tags": ["a", "b"], "meta": ["ok": true]],
        timestamp: Date(timeIntervalSince1970: 1_732_249_200.123))

    static let update = TrackedEvent(
        kind: .customerUpdate, customerIds: identified, properties: ["plan": "gold", "age": 42],
        timestamp: Date(timeIntervalSince1970: 1_732_249_200.5))

    /// An event of `type` for `customer`, stamped at `Harness.now`.
    static func event(
        _ type: String, for customer: CustomerIds = anonymous, properties: [String: JSONValue] = [:]
    ) -> TrackedEvent {
        TrackedEvent(kind: .event(type: type), customerIds: customer, properties: properties, timestamp: Harness.now)
    }

    /// `date` as an IMF-fixdate, the preferred HTTP-date form (`Fri, 22 Nov 2024 04:20:30 GMT`).
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE',' dd MMM yyyy HH':'mm':'ss 'GMT'"
        return formatter.string(from: date)
    }
}

extension EmulatorSegment {
    /// The SDK's view of this wire segment.
    var sdkSegment: Segment {
        Segment(id: id, segmentationId: segmentationId, attributes: attributes)
    }
}
