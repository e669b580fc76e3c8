import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting

/// Benchmark 1: `getSegments` answered from the cache through the instance API, against the
/// physical floor of the same lookup (a dictionary read under the package's `Locked`), and against
/// that floor plus the hop to a serial queue that Behaviour G4 requires for every answer.
struct CacheHitBenchmark {
    let options: BenchOptions

    func run() async throws -> [Figure] {
        let batches = options.pick(full: 60, quick: 8)
        let calls = options.pick(full: 2_000, quick: 500)
        let logger = Fixtures.logger()
        let repository = RecordingSegmentRepository()
        let segments: SegmentsByCategory = [
            .discovery(): Fixtures.segments(10, prefix: "d"), .merchandising(): Fixtures.segments(10, prefix: "m"),
            .content(): Fixtures.segments(10, prefix: "c"),
        ]
        repository.answer(segments)
        let client = SegmentsClient(
            options: .init(runtime: SegmentsRuntime(logger: logger), timings: SegmentationTimings(cache: CacheFreshness(maxAge: 1e9)), storage: .inMemory))
        try client.configure(.init(backend: .custom(id: "bench-cache", repository: repository, uploader: RecordingEventUploader())))
        defer { client.stop() }
        // One fetch makes the baseline fresh; every later read is a cache hit.
        _ = try await client.getSegments(category: .discovery())

        let floor = Locked(EngineLikeState(segments: segments))
        let hopQueue = DispatchQueue(label: "segments-bench.floor-hop")
        var sdk = Samples(), plain = Samples(), hop = Samples()
        for batch in 0..<(batches + 2) {
            // Interleaved, so load from other processes hits all three alike; two warm-up batches.
            let sdkNs = await timeSDK(client, calls: calls)
            let plainNs = timeFloor(floor, calls: calls)
            let hopNs = await timeFloorWithHop(floor, queue: hopQueue, calls: calls)
            guard batch >= 2 else { continue }
            sdk.append(sdkNs / Double(calls))
            plain.append(plainNs / Double(calls))
            hop.append(hopNs / Double(calls))
        }
        let fetches = repository.fetches.count

        var hit = Figure(
            id: "1", title: "getSegments cache hit (SegmentsClient, completion form)", value: sdk.median, unit: "ns/call",
            display: Format.duration(ns: sdk.median) + "/call",
            baseline: ("dictionary read under Locked", plain.median, Format.duration(ns: plain.median)))
        hit.details = [
            "batches": Double(batches), "callsPerBatch": Double(calls), "sdkP90": sdk.percentile(90),
            "floorP90": plain.percentile(90), "floorWithHopMedian": hop.median, "fetches": Double(fetches),
        ]
        hit.notes.append(
            "median of \(batches) batches of \(calls) calls, each batch waited until its last answer ran on the delivery queue; \(fetches) fetch (the warm-up) reached the repository")
        var withHop = Figure(
            id: "1b", title: "same cache hit vs the floor that includes G4's queue hop", value: sdk.median, unit: "ns/call",
            display: Format.duration(ns: sdk.median) + "/call",
            baseline: ("dictionary read under Locked + async hop to a serial queue", hop.median, Format.duration(ns: hop.median)))
        withHop.notes.append("every answer must be delivered on the delivery queue (see Behaviour G4): this floor pays that hop too")
        hit.notes += Fixtures.notes(from: logger)
        return [hit, withHop]
    }

    /// Nanoseconds for `calls` cache hits, from the first call until the last answer ran.
    private func timeSDK(_ client: SegmentsClient, calls: Int) async -> Double {
        let done = Countdown(count: calls)
        let start = Stopwatch.now()
        for _ in 0..<calls {
            client.getSegments(category: .discovery()) { result in
                if case .success(let list) = result, list.count == 10 { done.arrive() }
            }
        }
        guard let end = await done.wait(timeout: 60) else { return .nan }
        return Double(end - start)
    }

    /// Nanoseconds for `calls` reads of the same list from a dictionary under the same lock type.
    private func timeFloor(_ floor: Locked<EngineLikeState>, calls: Int) -> Double {
        var found = 0
        let start = Stopwatch.now()
        for _ in 0..<calls {
            let list = floor.withLock { $0.segments[.discovery()] ?? [] }
            found &+= list.count
        }
        let elapsed = Stopwatch.now() - start
        Blackhole.consume(found)
        return Double(elapsed)
    }

    /// The floor plus the queue hop every SDK answer takes.
    private func timeFloorWithHop(_ floor: Locked<EngineLikeState>, queue: DispatchQueue, calls: Int) async -> Double {
        let done = Countdown(count: calls)
        let start = Stopwatch.now()
        for _ in 0..<calls {
            let list = floor.withLock { $0.segments[.discovery()] ?? [] }
            queue.async { if list.count == 10 { done.arrive() } }
        }
        guard let end = await done.wait(timeout: 60) else { return .nan }
        return Double(end - start)
    }
}

/// What the floor reads: the segments by category, as the engine keeps them.
struct EngineLikeState: Sendable {
    var segments: SegmentsByCategory
}
