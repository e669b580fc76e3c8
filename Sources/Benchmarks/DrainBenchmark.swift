import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting

/// Benchmark 11, one of the figures of "Nothing slow on the app's thread" in `Docs/Performance.md`:
/// draining a backlog. A client on a directory with 10,000 queued events flushes them to the
/// emulator over loopback (one request per item, oldest first, as Behaviour E3 in
/// `Docs/Behaviour.md` says); the floor sends 1,000 of the same requests directly through the SDK's
/// URLSession transport, one after another.
struct DrainBenchmark {
    let options: BenchOptions
    let template: StorageTemplate

    func run() async throws -> [Figure] {
        let emulator = SegmentsEmulator()
        let baseURL = try emulator.start()
        defer { emulator.stop() }
        let logger = Fixtures.logger()
        let copy = try template.copy(in: options.scratch, "drain")
        defer { copy.remove() }
        let storage = DispatchQueue(label: "bench.storage")
        let client = try SegmentsClient(
            configuration: .init(
                backend: .bloomreach(BloomreachConfiguration(
                    integration: .project(token: "bench"), baseURL: baseURL.absoluteString, authorization: .token("key"))),
                flushingMode: .manual),
            options: .init(runtime: SegmentsRuntime(logger: logger), transport: URLSessionSegmentsTransport(timeout: 10), storage: .directory(copy.url), storageQueue: storage))
        defer { client.stop() }
        guard await client.countQueuedEvents() == template.queuedEvents else { throw BenchFailure("benchmark 11: the queue did not load") }
        let start = Stopwatch.now()
        let result = await client.flush()
        let elapsed = Double(Stopwatch.now() - start)
        guard case .success(let uploaded) = result, uploaded == template.queuedEvents, client.queuedEventCount == 0 else {
            throw BenchFailure("benchmark 11: the drain ended with \(result), \(client.queuedEventCount) left")
        }
        let rate = Double(uploaded) / (elapsed / 1e9)

        let direct = DirectRequests(baseURL: baseURL, transport: URLSessionSegmentsTransport(timeout: 10))
        let floorCount = options.pick(full: 1_000, quick: 200)
        let floorStart = Stopwatch.now()
        for index in 0..<floorCount { try await direct.post(index) }
        let floorRate = Double(floorCount) / (Double(Stopwatch.now() - floorStart) / 1e9)

        var figure = Figure(
            id: "11", title: "drain \(Format.count(template.queuedEvents)) queued events to the emulator over loopback",
            value: rate, unit: "per_second", display: "\(Format.rate(rate)) (\(Format.duration(ns: elapsed)) in all)",
            baseline: ("the same POSTs sent directly, one after another", floorRate, Format.rate(floorRate)))
        figure.ratioMeaning = "items uploaded per second by the SDK ÷ direct requests per second (1 is the floor's pace)"
        figure.details = ["targetPerSecondAtLeast": 300, "elapsedNs": elapsed, "floorRequests": Double(floorCount)]
        figure.notes.append(
            "target ≥ 300 items/s; the emulator recorded \(Format.count(emulator.events.count - floorCount)) events from the SDK; each upload's removal goes through the client's storage queue")
        figure.notes += Fixtures.notes(from: logger)
        return [figure]
    }
}

extension DirectRequests {
    /// One POST of an event, as the SDK's uploader sends it.
    func post(_ index: Int) async throws {
        let body = #"{"customer_ids":{"cookie":"\#(Self.cookie)"},"event_type":"ping","properties":{"n":\#(index)},"timestamp":1700000000}"#
        let request = SegmentsHTTPRequest(
            method: .post, url: baseURL.appendingPathComponent("track/v2/projects/bench/customers/events"),
            headers: ["Content-Type": "application/json", "Authorization": "Token key"], body: Data(body.utf8))
        let response = try await transport.send(request)
        guard response.isSuccess else { throw BenchFailure("benchmark 11: a direct POST failed (\(response.status))") }
    }
}
