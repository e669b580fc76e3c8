import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting

/// Benchmark 5: from `trackEvent` to the listener call, over loopback HTTP to the emulator, with
/// the debounce set to 0.
///
/// Every run must produce a change, so the emulator gets a ladder of rules: rule k puts a customer
/// into segment `step-k` once it has k `view_item` events. Each tracked event therefore adds
/// exactly one segment to `discovery`. Two clients run alternately, one on file storage (the
/// default: the event append and the baseline save are synced to disk) and one in memory; the
/// floor, interleaved with them, is the network part alone: the same two requests (POST the event,
/// GET the segments) sent directly through the SDK's URLSession transport. The floor's customer
/// climbs the same ladder (its event is a `view_item` too, with the same headers and body shape),
/// so the emulator does the same work for it: the same rule matches and the same answer, one
/// segment longer each run, to encode and send.
struct LoopbackLatencyBenchmark {
    let options: BenchOptions

    func run() async throws -> [Figure] {
        let runs = options.pick(full: 200, quick: 30)
        let warmUp = options.pick(full: 10, quick: 3)
        let emulator = SegmentsEmulator()
        emulator.setRules(
            (1...(runs + warmUp)).map { step in
                EmulatorSegmentRule(
                    category: "discovery", segmentId: "step-\(step)", segmentationId: "ladder", eventType: "view_item",
                    minimumCount: step)
            })
        let baseURL = try emulator.start()
        defer { emulator.stop() }
        let directory = try Fixtures.directory(in: options.scratch, "latency")
        defer { directory.remove() }
        let logger = Fixtures.logger()
        let onDisk = try await LadderClient(baseURL: baseURL, storage: .directory(directory.url), logger: logger)
        let inMemory = try await LadderClient(baseURL: baseURL, storage: .inMemory, logger: logger)
        defer {
            onDisk.client.stop()
            inMemory.client.stop()
        }
        let floor = DirectRequests(baseURL: baseURL, transport: URLSessionSegmentsTransport(timeout: 10))
        let probe = try SyncProbe(directory: directory.url)

        var disk = Samples(), memory = Samples(), direct = Samples(), fsync = Samples()
        for run in 1...(runs + warmUp) {
            let diskNs = try await onDisk.measure(run)
            let memoryNs = try await inMemory.measure(run)
            let floorNs = try await floor.roundTrip(run)
            let syncNs = try probe.measure()
            guard run > warmUp else { continue }
            disk.append(diskNs)
            memory.append(memoryNs)
            direct.append(floorNs)
            fsync.append(syncNs)
        }

        let floorP50 = ("POST event + GET segments sent directly", direct.median, Format.duration(ns: direct.median))
        let floorP99 = ("the direct requests", direct.percentile(99), Format.duration(ns: direct.percentile(99)))
        var figures = [
            Figure(
                id: "5a", title: "trackEvent → listener, loopback, debounce 0, file storage: p50", value: disk.median,
                unit: "ns", display: Format.duration(ns: disk.median), baseline: floorP50),
            Figure(
                id: "5a", title: "trackEvent → listener, loopback, debounce 0, file storage: p99",
                value: disk.percentile(99), unit: "ns", display: Format.duration(ns: disk.percentile(99)), baseline: floorP99),
            Figure(
                id: "5b", title: "trackEvent → listener, loopback, debounce 0, in-memory storage: p50", value: memory.median,
                unit: "ns", display: Format.duration(ns: memory.median), baseline: floorP50),
            Figure(
                id: "5b", title: "trackEvent → listener, loopback, debounce 0, in-memory storage: p99",
                value: memory.percentile(99), unit: "ns", display: Format.duration(ns: memory.percentile(99)), baseline: floorP99),
        ]
        figures[0].details = [
            "runs": Double(runs), "diskMin": disk.min, "diskMax": disk.max, "memoryMin": memory.min, "floorMin": direct.min,
            "fsyncProbeMedianNs": fsync.median, "fsyncProbeP99Ns": fsync.percentile(99),
        ]
        let sdkFetches = emulator.requests(on: .fetch).filter { $0.query["cookie"] != DirectRequests.cookie }.count
        let sdkUploads = emulator.events.filter { $0.customerIds["cookie"] != DirectRequests.cookie }.count
        figures[0].notes.append(
            "\(runs) runs per client after \(warmUp) warm-up runs, alternating the two clients and the direct requests; each run adds one segment through a ladder of emulator rules; URLSession transport, live scheduler; the clients sent \(sdkFetches) fetches (first loads included) and \(sdkUploads) uploads")
        figures[0].notes.append(
            "on file storage each run pays three fsyncs (the event append, the baseline's temporary file, its directory); a write+fsync of a small file in the same directory took \(Format.duration(ns: fsync.median)) at the median (p99 \(Format.duration(ns: fsync.percentile(99)))) during these runs")
        figures[0].notes += Fixtures.notes(from: logger)
        return figures
    }
}

/// One client listening to `discovery`, which grows by one segment per tracked `view_item`.
private final class LadderClient: Sendable {
    let client: SegmentsClient
    private let latest = Locked<(size: Int, countdown: Countdown?, expected: Int)>((-1, nil, 0))

    init(baseURL: URL, storage: SegmentsClient.Options.Storage, logger: RecordingLogger) async throws {
        client = try SegmentsClient(
            configuration: .init(
                backend: .bloomreach(
                    BloomreachConfiguration(
                        integration: .project(token: "bench"), baseURL: baseURL.absoluteString, authorization: .token("key")))),
            options: .init(runtime: SegmentsRuntime(logger: logger), timings: SegmentationTimings(debounce: DebouncePolicy(delay: 0, maxWait: 0)), transport: URLSessionSegmentsTransport(timeout: 10), storage: storage))
        let latest = self.latest
        client.addListener(category: .discovery(), includeFirstLoad: true) { list in
            let reached = latest.withLock { state -> Countdown? in
                state.size = list.count
                return list.count == state.expected ? state.countdown : nil
            }
            reached?.arrive()
        }
        guard await eventually(timeout: 10, { latest.value.size == 0 }) else {
            throw BenchFailure("benchmark 5: the first load did not arrive")
        }
    }

    /// Nanoseconds from `trackEvent` until the listener hears of segment `step-<run>`.
    func measure(_ run: Int) async throws -> Double {
        let countdown = Countdown(count: 1)
        latest.withLock { $0.countdown = countdown; $0.expected = run }
        let start = Stopwatch.now()
        try client.trackEvent(properties: ["sku": .string("SKU-\(run)")], timestamp: nil, eventType: "view_item")
        guard let end = await countdown.wait(timeout: 30) else {
            throw BenchFailure("benchmark 5: run \(run) got no listener call within 30 s")
        }
        return Double(end - start)
    }
}

/// The network floor of benchmark 5: the event upload and the segments fetch, sent straight
/// through the transport for a customer of its own. The requests are the SDK's, built by hand:
/// the same headers, a body of the same shape (a `view_item` event with one string property and
/// a fractional timestamp), and a cookie as long as the SDK's UUID, so the emulator answers the
/// floor's fetch with as many segments as the clients' and neither side gets less work.
struct DirectRequests {
    static let cookie = "f1005000-0000-4000-8000-000000000000"

    let baseURL: URL
    let transport: URLSessionSegmentsTransport

    /// Nanoseconds for one POST of an event and one GET of the segments, back to back.
    func roundTrip(_ run: Int) async throws -> Double {
        let timestamp = Date().timeIntervalSince1970
        let body = #"{"customer_ids":{"cookie":"\#(Self.cookie)"},"event_type":"view_item","properties":{"sku":"SKU-\#(run)"},"timestamp":\#(timestamp)}"#
        let headers: SegmentsHTTPHeaders = [
            "Content-Type": "application/json", "Accept": "application/json", "Authorization": "Token key",
            "User-Agent": BloomreachConfiguration.defaultUserAgent,
        ]
        let post = SegmentsHTTPRequest(
            method: .post, url: baseURL.appendingPathComponent("track/v2/projects/bench/customers/events"),
            headers: headers, body: Data(body.utf8))
        let get = SegmentsHTTPRequest(
            url: URL(string: baseURL.absoluteString + "/webxp/projects/bench/segments?cookie=\(Self.cookie)")!,
            headers: headers)
        let start = Stopwatch.now()
        let posted = try await transport.send(post)
        let fetched = try await transport.send(get)
        let elapsed = Stopwatch.now() - start
        guard posted.isSuccess, fetched.isSuccess else {
            throw BenchFailure("benchmark 5: the direct requests failed (\(posted.status), \(fetched.status))")
        }
        // The same emulator work as the clients': the answer already holds this run's segment.
        guard String(decoding: fetched.body, as: UTF8.self).contains(#""step-\#(run)""#) else {
            throw BenchFailure("benchmark 5: the direct fetch of run \(run) lacks segment step-\(run)")
        }
        return Double(elapsed)
    }
}
