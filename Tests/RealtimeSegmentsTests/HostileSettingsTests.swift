import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// A `SegmentsScheduler` that counts every piece of work scheduled on it, then hands it to a `TestScheduler`.
private final class CountingScheduler: SegmentsScheduler, Sendable {
    let inner: TestScheduler
    private let count = LockedValue(0)
    init(_ inner: TestScheduler) { self.inner = inner }
    var scheduled: Int { count.value }
    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork {
        count.withLock { $0 += 1 }
        return inner.schedule(after: delay, work)
    }
    func sleep(for delay: TimeInterval) async { await inner.sleep(for: delay) }
}

/// An app error whose text must stay out of logs (see Behaviour P4).
private struct AppStoreError: Error, CustomStringConvertible {
    var description: String { "disk full at /Users/jane@example.com/cookie=COOKIE-123 token jwt-SECRET" }
}

/// An event queue that keeps events in memory but fails every write to "disk" with an app error.
private final class FailingEventQueueStore: EventQueueStore, Sendable {
    private let events = LockedValue<[TrackedEvent]>([])
    func load() -> [TrackedEvent] { events.value }
    func append(_ event: TrackedEvent) throws { events.withLock { $0.append(event) } }
    func sync() throws { throw AppStoreError() }
    func update(_ event: TrackedEvent) throws { throw AppStoreError() }
    func remove(id: TrackedEvent.ID) throws { throw AppStoreError() }
}

/// Behaviour E2, P4 and P7 at the client: bad settings are refused at configure or at run time
/// without a busy loop, and a foreign error's text never reaches a log line.
@Suite(Hang.timeLimit(minutes: 2)) struct HostileSettingsTests {
    private struct Fixture {
        let time = TestScheduler()
        let scheduler: CountingScheduler
        let logger = RecordingLogger()
        let client: SegmentsClient
        let uploader: RecordingEventUploader
        let storage = DispatchQueue(label: "hostile-settings.storage")

        init() {
            scheduler = CountingScheduler(time)
            client = SegmentsClient(
                options: .init(
                    runtime: SegmentsRuntime(scheduler: scheduler, clock: time, logger: logger),
                    storage: .inMemory, storageQueue: storage))
            uploader = RecordingEventUploader()
        }

        var configuration: SegmentsClient.Configuration {
            .init(backend: .custom(id: "hostile", repository: RecordingSegmentRepository(), uploader: uploader))
        }

        /// Runs a minute of virtual time, second by second, and answers how much work was scheduled.
        func scheduledWorkOverAMinute() async -> Int {
            storage.sync {}
            let before = scheduler.scheduled
            for _ in 0..<60 {
                await time.advance(by: 1)
                storage.sync {}
            }
            return scheduler.scheduled - before
        }
    }

    static let badIntervals: [TimeInterval] = [.nan, 0, -1, -.infinity, .infinity, -.nan]

    @Test(arguments: badIntervals)
    func e2_p7_aBadPeriodSetAfterConfigureSchedulesNoLoop(seconds: TimeInterval) async throws {
        let fixture = Fixture()
        try fixture.client.configure(fixture.configuration)
        fixture.client.flushingMode = .manual
        let idle = await fixture.scheduledWorkOverAMinute()

        fixture.client.flushingMode = .periodic(seconds: seconds)
        let scheduled = await fixture.scheduledWorkOverAMinute()

        #expect(scheduled <= idle, "periodic(\(seconds)) scheduled \(scheduled) pieces of work in a minute (idle: \(idle))")
        #expect(fixture.client.flushingMode == .manual)
        #expect(fixture.logger.entries.contains { $0.level == .error && $0.message.contains("Flushing mode refused") })
    }

    @Test(arguments: badIntervals)
    func e2_p7_aBadPeriodSetBeforeConfigureSchedulesNoLoop(seconds: TimeInterval) async throws {
        let fixture = Fixture()
        fixture.client.flushingMode = .manual
        fixture.client.flushingMode = .periodic(seconds: seconds)
        try fixture.client.configure(fixture.configuration)
        let scheduled = await fixture.scheduledWorkOverAMinute()

        #expect(scheduled <= 1, "periodic(\(seconds)) scheduled \(scheduled) pieces of work in a minute")
        #expect(fixture.client.flushingMode == .manual)
    }

    @Test(arguments: badIntervals)
    func e2_p7_aBadPeriodInTheConfigurationIsRefusedAtConfigure(seconds: TimeInterval) async {
        let fixture = Fixture()
        var configuration = fixture.configuration
        configuration.flushingMode = .periodic(seconds: seconds)
        let error = #expect(throws: SegmentsError.self) { try fixture.client.configure(configuration) }
        #expect(error?.code == .invalidConfiguration)
        #expect(!fixture.client.isConfigured)
        #expect(await fixture.scheduledWorkOverAMinute() == 0)
    }

    @Test(arguments: [0, -1, Int.min])
    func e2_p7_anExponeaPeriodOfZeroOrLessIsRefusedAndReadsAsTheModeBefore(seconds: Int) async throws {
        let fixture = Fixture()
        let exponea = Exponea(client: fixture.client)
        exponea.flushingMode = .manual
        exponea.flushingMode = .periodic(seconds)
        #expect(exponea.flushingMode == .manual)
        try fixture.client.configure(fixture.configuration)
        #expect(await fixture.scheduledWorkOverAMinute() <= 1)
    }

    @Test(arguments: ["TOKEN\r\nX-Injected: 1", "TOKEN\n", "TOKEN\u{0}"])
    func p7_exponeaRefusesAKeyWithAControlCharacterAtConfigure(key: String) {
        let fixture = Fixture()
        let exponea = Exponea(client: fixture.client)
        exponea.configure(Exponea.ProjectSettings(projectToken: "T", authorization: .token(key)))
        #expect(!exponea.isConfigured)
        #expect(fixture.logger.entries.contains { $0.level == .error && $0.message.contains("control character") })
        #expect(!fixture.logger.messages.joined().contains("TOKEN"))
    }

    @Test func p4_exponeaRefusesABaseURLWithAPasswordWithoutLoggingIt() {
        let fixture = Fixture()
        let exponea = Exponea(client: fixture.client)
        exponea.configure(
            Exponea.ProjectSettings(projectToken: "T", authorization: .token("K"), baseUrl: "https://jane:PASSWORD-9@api.example.com"))
        #expect(!exponea.isConfigured)
        #expect(fixture.logger.entries.contains { $0.level == .error && $0.message.contains("user name or password") })
        #expect(!fixture.logger.messages.joined().contains("PASSWORD-9"))
    }

    @Test func p4_aFailingEventStoresTextNeverReachesTheLog() async throws {
        let fixture = Fixture()
        let store = FailingEventQueueStore()
        let client = SegmentsClient(
            options: .init(
                runtime: SegmentsRuntime(scheduler: fixture.scheduler, clock: fixture.time, logger: fixture.logger),
                storage: .custom(.init(customer: RecordingCustomerStore(), baseline: RecordingSegmentBaselineStore(), events: store)),
                storageQueue: fixture.storage))
        try client.configure(fixture.configuration)
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "purchase")
        _ = await fixture.scheduledWorkOverAMinute()
        _ = await client.flush()
        fixture.storage.sync {}

        let lines = fixture.logger.messages.joined(separator: "\n")
        #expect(lines.contains("AppStoreError"), "the failure is logged, by its type: \(lines)")
        for leak in ["COOKIE-123", "jwt-SECRET", "jane@example.com"] {
            #expect(!lines.contains(leak), "\(leak) logged: \(lines)")
        }
    }
}
