import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting

/// Benchmark 12: the network comes back (Behaviour N2). Two clients over loopback HTTP to the
/// emulator track the same events while the network is away, then it returns; measured is the time
/// from the return until every event is uploaded and the listener is told the segment they make.
///
/// The path-aware client is told by its network-path port (`ManualNetworkPath`, as
/// `NWPathMonitor` would) and sent nothing while offline; the other client knows nothing of the
/// network, as before issue 35: its requests fail while the network is away (a transport
/// middleware fails them as a missing network does), so it backs off, and after the return it
/// waits out the backoff it grew. Both run in the same samples, with the same backoff (scaled
/// down from the SDK's 2 s doubling to 60 s to 0.25 s doubling to 8 s, so a sample takes seconds)
/// and a debounce of 0.
struct NetworkReturnBenchmark {
    let options: BenchOptions
    static let events = 10
    static let offlineFor: TimeInterval = 2
    static let backoff = RetryBackoff(initial: 0.25, maximum: 8)

    func run() async throws -> [Figure] {
        let samples = options.pick(full: 12, quick: 3)
        let emulator = SegmentsEmulator()
        emulator.setRules([
            EmulatorSegmentRule(category: "discovery", segmentId: "browsers", segmentationId: "engagement", eventType: "view_item")
        ])
        let baseURL = try emulator.start()
        defer { emulator.stop() }
        let logger = Fixtures.logger()
        var aware = Samples(), backoffOnly = Samples()
        var sentOffline = 0
        for sample in 1...samples {
            let pathAware = try await ReturningClient(baseURL: baseURL, logger: logger, followsPath: true)
            let retrying = try await ReturningClient(baseURL: baseURL, logger: logger, followsPath: false)
            defer {
                pathAware.client.stop()
                retrying.client.stop()
            }
            pathAware.goOffline()
            retrying.goOffline()
            try pathAware.track(Self.events)
            try retrying.track(Self.events)
            try await Task.sleep(nanoseconds: UInt64(Self.offlineFor * 1e9))
            sentOffline += pathAware.network.refused
            let start = Stopwatch.now()
            pathAware.goOnline()
            retrying.goOnline()
            guard let awareEnd = await pathAware.done(timeout: 30), let retryingEnd = await retrying.done(timeout: 60) else {
                throw BenchFailure("benchmark 12: sample \(sample): the queue was not uploaded or the listener not told")
            }
            aware.append(Double(awareEnd - start))
            backoffOnly.append(Double(retryingEnd - start))
        }
        let baselineP50 = ("a client that only retries with backoff", backoffOnly.median, Format.duration(ns: backoffOnly.median))
        let baselineP99 = ("the client that only retries", backoffOnly.percentile(99), Format.duration(ns: backoffOnly.percentile(99)))
        var figures = [
            Figure(
                id: "12", title: "network back → \(Self.events) queued events uploaded and listener told, loopback: p50",
                value: aware.median, unit: "ns", display: Format.duration(ns: aware.median), baseline: baselineP50),
            Figure(
                id: "12", title: "network back → \(Self.events) queued events uploaded and listener told, loopback: p99",
                value: aware.percentile(99), unit: "ns", display: Format.duration(ns: aware.percentile(99)), baseline: baselineP99),
        ]
        figures[0].details = [
            "samples": Double(samples), "awareMin": aware.min, "awareMax": aware.max, "retryingMin": backoffOnly.min,
            "retryingMax": backoffOnly.max, "requestsSentOfflineByTheAwareClient": Double(sentOffline),
        ]
        figures[0].notes.append(
            "\(samples) samples; each: two new in-memory clients listening to discovery, \(Self.events) view_item events tracked while the network is away for \(Self.offlineFor) s, then it returns; backoff 0.25 s doubling to 8 s (the SDK's default is 2 s to 60 s), debounce 0; the path-aware client sent \(sentOffline) requests while offline")
        figures[0].notes += Fixtures.notes(from: logger)
        return figures
    }
}

/// The network as a client's transport sees it: while off, every request fails as with no
/// connection (`.network`, transient); on, it counts the event uploads that succeed.
private final class NetworkSwitch: SegmentsTransportMiddleware {
    private let state = Locked((on: true, refused: 0))
    let uploads: Countdown

    init(uploads: Int) {
        self.uploads = Countdown(count: uploads)
    }

    var refused: Int { state.withLock { $0.refused } }

    func set(on: Bool) {
        state.withLock { $0.on = on }
    }

    func intercept(
        _ request: SegmentsHTTPRequest, next: @Sendable (SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse
    ) async throws -> SegmentsHTTPResponse {
        let on = state.withLock { state -> Bool in
            if !state.on { state.refused += 1 }
            return state.on
        }
        guard on else { throw SegmentsError(.network, "the network is away (benchmark 12)") }
        let response = try await next(request)
        if response.isSuccess, request.method == .post, request.url.path.hasSuffix("/customers/events") { uploads.arrive() }
        return response
    }
}

/// One client listening to discovery, whose events make it a `browsers` customer.
private final class ReturningClient: Sendable {
    let client: SegmentsClient
    let network: NetworkSwitch
    let path = ManualNetworkPath()
    let followsPath: Bool
    private let told = Countdown(count: 1)
    private let listened = Locked((firstLoad: false, told: false))

    init(baseURL: URL, logger: RecordingLogger, followsPath: Bool) async throws {
        self.followsPath = followsPath
        network = NetworkSwitch(uploads: NetworkReturnBenchmark.events)
        var options = SegmentsClient.Options(
            runtime: SegmentsRuntime(logger: logger),
            timings: SegmentationTimings(debounce: DebouncePolicy(delay: 0, maxWait: 0), retry: NetworkReturnBenchmark.backoff),
            uploadRetry: NetworkReturnBenchmark.backoff, transport: URLSessionSegmentsTransport(timeout: 10), middlewares: [network],
            storage: .inMemory)
        // The client that only retries knows nothing of the network: its path is always usable.
        options.networkPath = followsPath ? path : ManualNetworkPath()
        client = SegmentsClient(options: options)
        try client.configure(
            .init(
                backend: .bloomreach(
                    BloomreachConfiguration(
                        integration: .project(token: "bench"), baseURL: baseURL.absoluteString, authorization: .token("key")))))
        let listened = self.listened, told = self.told
        client.addListener(category: .discovery(), includeFirstLoad: true) { list in
            let first = listened.withLock { state -> Bool in
                state.firstLoad = true
                guard list.contains(where: { $0.id == "browsers" }), !state.told else { return false }
                state.told = true
                return true
            }
            if first { told.arrive() }
        }
        guard await eventually(timeout: 10, { listened.value.firstLoad }) else {
            throw BenchFailure("benchmark 12: the first load did not arrive")
        }
    }

    func goOffline() {
        network.set(on: false)
        if followsPath { path.goOffline() }
    }

    func goOnline() {
        network.set(on: true)
        if followsPath { path.goOnline() }
    }

    func track(_ count: Int) throws {
        for index in 0..<count {
            try client.trackEvent(properties: ["sku": .string("SKU-\(index)")], timestamp: nil, eventType: "view_item")
        }
    }

    /// When the last of the events went up and the listener was told, whichever came later.
    func done(timeout: TimeInterval) async -> UInt64? {
        guard let uploaded = await network.uploads.wait(timeout: timeout), let told = await told.wait(timeout: timeout) else {
            return nil
        }
        return max(uploaded, told)
    }
}
