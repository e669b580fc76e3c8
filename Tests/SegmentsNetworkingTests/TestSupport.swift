import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting

/// A shared, ordered record of what happened, so tests can assert on the interleaving of the
/// transport, the scheduler and the stream token provider.
final class Timeline: Sendable {
    private let entries = Locked<[String]>([])
    func record(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.value }
}

/// A clock frozen at one instant.
struct FixedClock: SegmentsClock {
    var date: Date
    func now() -> Date { date }
    func uptime() -> TimeInterval { 0 }
}

/// A scheduler on virtual time: `sleep` records the delay and returns at once; scheduled work
/// runs at once. Enough for the networking adapters, which only sleep.
final class RecordingSleeper: SegmentsScheduler {
    private let sleeps = Locked<[TimeInterval]>([])
    let timeline: Timeline

    init(timeline: Timeline = Timeline()) { self.timeline = timeline }

    var recordedSleeps: [TimeInterval] { sleeps.value }

    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork {
        let task = Task { await work() }
        return ScheduledWork { task.cancel() }
    }

    func sleep(for delay: TimeInterval) async {
        sleeps.withLock { $0.append(delay) }
        timeline.record("sleep \(delay)")
    }
}

/// A logger that keeps every line it is given.
final class LogRecorder: SegmentsLogger {
    private let lines = Locked<[(LogLevel, String)]>([])
    let logLevel: LogLevel

    init(level: LogLevel = .verbose) { self.logLevel = level }

    func log(_ level: LogLevel, _ message: String) {
        guard isEnabled(level) else { return }
        lines.withLock { $0.append((level, message)) }
    }

    var messages: [String] { lines.withLock { $0.map(\.1) } }
    func messages(at level: LogLevel) -> [String] { lines.withLock { $0.filter { $0.0 == level }.map(\.1) } }
}

/// A token provider (project or stream) that hands out tokens from a list, one more after each refusal.
final class TokenSequence: BloomreachAuthorizationProvider {
    private let state: Locked<(tokens: [String?], index: Int, failures: Int)>
    let timeline: Timeline

    init(_ tokens: [String?], timeline: Timeline = Timeline()) {
        state = Locked((tokens, 0, 0))
        self.timeline = timeline
    }

    var failures: Int { state.value.failures }

    func token() async -> String? {
        let token = state.withLock { $0.index < $0.tokens.count ? $0.tokens[$0.index] : nil }
        timeline.record("token \(token ?? "nil")")
        return token
    }

    func authorizationFailed() async {
        state.withLock { $0.failures += 1; $0.index += 1 }
        timeline.record("authorizationFailed")
    }
}

/// The pieces of one adapter under test, wired to a `RecordingTransport`.
struct Harness {
    static let project = BloomreachIntegration.project(token: "TOKEN")
    static let stream = BloomreachIntegration.stream(id: "STREAM")
    static let now = Date(timeIntervalSince1970: 1_732_249_200)

    let transport: RecordingTransport
    let scheduler: RecordingSleeper
    let logger: LogRecorder
    let configuration: BloomreachConfiguration

    init(
        _ integration: BloomreachIntegration = project, baseURL: String = "https://api.exponea.com",
        authorization: BloomreachAuthorization = .none, provider: (any BloomreachAuthorizationProvider)? = nil,
        transport: RecordingTransport = RecordingTransport(fallback: .json("{}")), timeline: Timeline = Timeline(),
        loggerLevel: LogLevel = .verbose
    ) {
        self.transport = transport
        scheduler = RecordingSleeper(timeline: timeline)
        logger = LogRecorder(level: loggerLevel)
        configuration = BloomreachConfiguration(
            integration: integration, baseURL: baseURL, authorization: authorization, authorizationProvider: provider)
    }

    var repository: BloomreachSegmentRepository {
        BloomreachSegmentRepository(
            configuration: configuration, transport: transport, scheduler: scheduler,
            clock: FixedClock(date: Self.now), logger: logger)
    }

    var uploader: BloomreachEventUploader {
        BloomreachEventUploader(
            configuration: configuration, transport: transport, scheduler: scheduler,
            clock: FixedClock(date: Self.now), logger: logger)
    }
}

extension SegmentsHTTPRequest {
    /// The body parsed as a JSON object.
    func jsonBody() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: body ?? Data())
        return object as? [String: Any] ?? [:]
    }
}

/// Runs `body` and returns the `SegmentsError` it threw, or `nil` when it threw nothing or another error.
func segmentsError(_ body: () async throws -> Void) async -> SegmentsError? {
    do {
        try await body()
        return nil
    } catch {
        return error as? SegmentsError
    }
}

let anonymous = CustomerIds(cookie: "0b7cdd1c-5d8e-4c2f-9a55-0c4f8f2d1e11")
let identified = CustomerIds(["cookie": "0b7cdd1c-5d8e-4c2f-9a55-0c4f8f2d1e11", "registered": "jane@example.com"])
