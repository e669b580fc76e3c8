import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting

/// Benchmark 2: one change of a category delivered to 10,000 listeners of it, timed from the
/// moment the fetch result is handed to the engine until the last listener ran; against 10,000
/// plain hops of the same handler onto a serial queue.
struct FanOutBenchmark {
    static let listeners = 10_000

    let options: BenchOptions

    func run() async throws -> [Figure] {
        let rounds = options.pick(full: 15, quick: 3)
        let logger = Fixtures.logger()
        let result = try await Self.measure(listeners: Self.listeners, rounds: rounds, logger: logger)
        var figure = Figure(
            id: "2", title: "one change → 10,000 listeners (fetch result to last listener)", value: result.sdk.median,
            unit: "ns", display: Format.duration(ns: result.sdk.median),
            baseline: ("10,000 handler hops onto a serial queue", result.floor.median, Format.duration(ns: result.floor.median)))
        figure.details = [
            "rounds": Double(rounds), "listeners": Double(Self.listeners), "sdkMin": result.sdk.min, "sdkMax": result.sdk.max,
            "floorMin": result.floor.min, "perListenerNs": result.sdk.median / Double(Self.listeners),
            "registrationMs": result.registrationNs / 1e6,
        ]
        figure.notes.append(
            "median of \(rounds) forced getSegments with a changed answer (RecordingSegmentRepository, live TaskScheduler); \(Format.duration(ns: result.sdk.median / Double(Self.listeners))) per listener")
        figure.notes += Fixtures.notes(from: logger)
        return [figure]
    }

    struct Result {
        var sdk = Samples()
        var floor = Samples()
        var registrationNs: Double = 0
    }

    /// Registers `listeners` listeners of `discovery` on a configured client, then delivers
    /// `rounds` changes (alternating two answers) and times each, interleaved with the floor.
    static func measure(listeners: Int, rounds: Int, logger: RecordingLogger) async throws -> Result {
        let repository = StampingRepository()
        let deliveryQueue = DispatchQueue(label: "segments-bench.fanout-delivery")
        let client = SegmentsClient(
            options: .init(runtime: SegmentsRuntime(logger: logger, deliveryQueue: deliveryQueue), timings: SegmentationTimings(debounce: DebouncePolicy(delay: 3600, maxWait: 3600)), storage: .inMemory))
        defer { client.stop() }
        let arrivals = Locked<Countdown?>(nil)
        let handler: @Sendable ([Segment]) -> Void = { segments in
            if !segments.isEmpty { arrivals.withLock { $0 }?.arrive() }
        }
        var result = Result()
        // Registered before configure, without first load, so no automatic reload interferes (T2).
        result.registrationNs = Double(Stopwatch.time {
            for _ in 0..<listeners { client.addListener(category: .discovery(), handler: handler) }
        })
        try client.configure(.init(backend: .custom(id: "bench-fanout", repository: repository, uploader: RecordingEventUploader())))

        let answers: [SegmentsByCategory] = [
            [.discovery(): Fixtures.segments(3, prefix: "a")], [.discovery(): Fixtures.segments(3, prefix: "b")],
        ]
        let floorQueue = DispatchQueue(label: "segments-bench.fanout-floor")
        for round in 0..<(rounds + 1) {
            let countdown = Countdown(count: listeners)
            arrivals.withLock { $0 = countdown }
            repository.recording.answer(answers[round % 2])
            client.getSegments(force: true, category: .discovery()) { _ in }
            guard let end = await countdown.wait(timeout: 120) else {
                throw BenchFailure("benchmark 2: the listeners were not all called within 120 s")
            }
            let sdkNs = Double(end - repository.answeredAt)
            let floorNs = await floor(listeners: listeners, segments: answers[round % 2][.discovery()]!, queue: floorQueue, handler: handler, arrivals: arrivals)
            guard round >= 1 else { continue }  // the first round warms up
            result.sdk.append(sdkNs)
            result.floor.append(floorNs)
        }
        return result
    }

    /// `listeners` hops of the handler onto a serial queue, each with its own copy of the list.
    private static func floor(
        listeners: Int, segments: [Segment], queue: DispatchQueue, handler: @escaping @Sendable ([Segment]) -> Void,
        arrivals: Locked<Countdown?>
    ) async -> Double {
        let countdown = Countdown(count: listeners)
        arrivals.withLock { $0 = countdown }
        let start = Stopwatch.now()
        for _ in 0..<listeners {
            queue.async { handler(segments) }
        }
        guard let end = await countdown.wait(timeout: 120) else { return .nan }
        return Double(end - start)
    }
}

/// A benchmark that could not produce its figure.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
