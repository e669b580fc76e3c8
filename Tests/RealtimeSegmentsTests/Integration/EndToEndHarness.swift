import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting

/// A real client (URLSession transport, file stores, live scheduler) against the emulator on
/// 127.0.0.1, with short timings so each scenario takes well under a second.
final class EndToEndHarness: Sendable {
    static let rules = [
        EmulatorSegmentRule(
            category: "discovery", segmentId: "browsers", segmentationId: "engagement", eventType: "view_item"),
        EmulatorSegmentRule(
            category: "content", segmentId: "buyers", segmentationId: "lifecycle", eventType: "purchase"),
    ]
    static let timings = SegmentationTimings(
        debounce: DebouncePolicy(delay: 0.05, maxWait: 0.2), cache: CacheFreshness(maxAge: 5),
        retry: RetryBackoff(initial: 0.05, maximum: 0.2))

    let emulator: SegmentsEmulator
    let baseURL: URL
    let directory = TemporaryDirectory()
    let logger = RecordingLogger()

    init() throws {
        emulator = SegmentsEmulator()
        emulator.setRules(Self.rules)
        emulator.requireAuthorization("Token key")
        baseURL = try emulator.start()
    }

    /// A client on the harness's storage directory; several may be made to simulate restarts.
    func makeClient(
        integration: BloomreachIntegration = .project(token: "project"),
        authorization: BloomreachAuthorization = .token("key"),
        stream: (any BloomreachAuthorizationProvider)? = nil, timings: SegmentationTimings = EndToEndHarness.timings,
        requestTimeout: TimeInterval = 5, clock: any SegmentsClock = SystemClock(),
        scheduler: any SegmentsScheduler = TaskScheduler(), deliveryQueue: DispatchQueue = DispatchQueue(label: "e2e.delivery"),
        storage: SegmentsClient.Options.Storage? = nil, networkPath: (any NetworkPath)? = nil
    ) throws -> SegmentsClient {
        var options = SegmentsClient.Options(
            runtime: SegmentsRuntime(scheduler: scheduler, clock: clock, logger: logger, deliveryQueue: deliveryQueue), timings: timings,
            uploadRetry: RetryBackoff(initial: 0.05, maximum: 0.2), transport: URLSessionSegmentsTransport(),
            storage: storage ?? .directory(directory.url))
        if let networkPath { options.networkPath = networkPath }
        return try SegmentsClient(
            configuration: .init(
                backend: .bloomreach(
                    BloomreachConfiguration(
                        integration: integration, baseURL: baseURL.absoluteString, authorization: authorization,
                        authorizationProvider: stream, requestTimeout: requestTimeout))),
            options: options)
    }

    func tearDown() {
        emulator.stop()
        directory.remove()
    }
}

/// The live scheduler, counting the work that is scheduled or running on it and the sleeps in
/// progress: every piece of the SDK's asynchronous work (timers, fetches, uploads, retries) runs
/// through its scheduler, so `outstanding == 0` after stop means nothing of the client is left
/// that could start a request — a proof by count, not by watching a window of time.
final class OutstandingWorkScheduler: SegmentsScheduler {
    private let live = TaskScheduler()
    private let counts = LockedValue((outstanding: 0, scheduled: 0))

    /// Work scheduled and neither finished nor cancelled, plus sleeps in progress.
    var outstanding: Int { counts.withLock { $0.outstanding } }
    /// Every `schedule` call so far.
    var scheduled: Int { counts.withLock { $0.scheduled } }

    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork {
        enum Phase { case waiting, started, settled }
        let phase = LockedValue(Phase.waiting)
        let counts = self.counts
        counts.withLock {
            $0.outstanding += 1
            $0.scheduled += 1
        }
        let token = live.schedule(after: delay) {
            // Started unless cancelled first; then counted until it ends.
            guard phase.withLock({ phase in
                guard phase == .waiting else { return false }
                phase = .started
                return true
            }) else { return }
            await work()
            phase.withLock { $0 = .settled }
            counts.withLock { $0.outstanding -= 1 }
        }
        return ScheduledWork {
            token.cancel()
            // Cancelled before it started: it never runs. Started: its end settles it.
            let dropped = phase.withLock { phase in
                guard phase == .waiting else { return false }
                phase = .settled
                return true
            }
            if dropped { counts.withLock { $0.outstanding -= 1 } }
        }
    }

    func sleep(for delay: TimeInterval) async {
        counts.withLock { $0.outstanding += 1 }
        await live.sleep(for: delay)
        counts.withLock { $0.outstanding -= 1 }
    }
}

/// Waits (in real time, for integration tests only) until `condition` holds or `timeout` passes.
/// The limit is generous on purpose: it only matters when a test fails, and on a loaded 2-core
/// machine (or under a sanitizer) the SDK's jobs wait their turn in a cooperative pool busy with
/// other suites (`o5_theRealTimeEngineRunsOverODP`, 0.1 s alone, took 21 s in a whole run on one core).
/// Under `SEGMENTS_TEST_TIME_SCALE` (a sanitizer run) the limit is that many times longer, as the
/// suites' time limits are (`Hang.timeScale`).
func eventually(timeout: TimeInterval = 60, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(Hang.scaled(timeout))
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}

extension Segment {
    static let browsers = Segment(id: "browsers", segmentationId: "engagement")
    static let buyers = Segment(id: "buyers", segmentationId: "lifecycle")
}
