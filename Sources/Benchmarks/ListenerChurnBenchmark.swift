import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting

/// Benchmark 3: registering and then removing 1,000 and 10,000 listeners on a configured client,
/// and registering them on an unconfigured one (no reload request per registration, so only the
/// listener registry is measured).
/// A 10k/1k ratio near 10 means a constant cost per operation; near 100 means each operation is
/// linear in the number of listeners. The floor does the same with a dictionary under `Locked`.
struct ListenerChurnBenchmark {
    let options: BenchOptions

    func run() async throws -> [Figure] {
        let rounds = options.pick(full: 7, quick: 2)
        let sizes = [1_000, 10_000]
        let logger = Fixtures.logger()
        var add: [Int: Samples] = [:], remove: [Int: Samples] = [:]
        var floorAdd: [Int: Samples] = [:], floorRemove: [Int: Samples] = [:]
        var addUnconfigured: [Int: Samples] = [:]
        for round in 0..<(rounds + 1) {
            for size in sizes {
                let (addNs, removeNs) = try churnSDK(size, configured: true, logger: logger)
                let (unconfiguredNs, _) = try churnSDK(size, configured: false, logger: logger)
                let (floorAddNs, floorRemoveNs) = churnFloor(size)
                guard round >= 1 else { continue }
                add[size, default: Samples()].append(addNs)
                remove[size, default: Samples()].append(removeNs)
                addUnconfigured[size, default: Samples()].append(unconfiguredNs)
                floorAdd[size, default: Samples()].append(floorAddNs)
                floorRemove[size, default: Samples()].append(floorRemoveNs)
            }
        }
        var figures: [Figure] = []
        let rows = [
            ("3a", "register", add, floorAdd), ("3b", "remove", remove, floorRemove),
            ("3c", "register before configure", addUnconfigured, floorAdd),
        ]
        for (id, verb, sdk, floor) in rows {
            for size in sizes {
                let value = sdk[size]!.median
                let base = floor[size]!.median
                var figure = Figure(
                    id: id, title: "\(verb) \(Format.count(size)) listeners (total)", value: value, unit: "ns",
                    display: "\(Format.duration(ns: value)) (\(Format.duration(ns: value / Double(size)))/op)",
                    baseline: ("dictionary under Locked", base, Format.duration(ns: base)))
                figure.details = ["rounds": Double(rounds), "perOperationNs": value / Double(size)]
                figures.append(figure)
            }
            let growth = sdk[10_000]!.median / sdk[1_000]!.median
            let floorGrowth = floor[10_000]!.median / floor[1_000]!.median
            var ratio = Figure(
                id: id, title: "\(verb): time for 10k / time for 1k", value: growth, unit: "ratio", display: Format.ratio(growth),
                baseline: ("for the floor", floorGrowth, Format.ratio(floorGrowth)))
            ratio.ratio = nil  // the row is itself a ratio; ~10 = O(1) per operation, ~100 = O(n)
            if id != "3c" {
                ratio.notes.append("10 means a constant cost per \(verb); 100 means each \(verb) is linear in the listener count")
            }
            figures.append(ratio)
        }
        figures[0].notes.append(
            "median of \(rounds) rounds; SegmentsClient configured (custom backend, live TaskScheduler, debounce 1 h so no reload runs), removal by token in registration order; 3c registers on an unconfigured client (no reload request per registration), isolating the registry")
        figures[0].notes += Fixtures.notes(from: logger)
        return figures
    }

    /// Nanoseconds to register `count` listeners, and to remove them all by token.
    private func churnSDK(_ count: Int, configured: Bool, logger: RecordingLogger) throws -> (Double, Double) {
        let client = SegmentsClient(
            options: .init(runtime: SegmentsRuntime(logger: logger), timings: SegmentationTimings(debounce: DebouncePolicy(delay: 3600, maxWait: 3600)), storage: .inMemory))
        if configured {
            try client.configure(
                .init(backend: .custom(id: "bench-churn", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader())))
        }
        defer { client.stop() }
        var tokens: [ListenerToken] = []
        tokens.reserveCapacity(count)
        let handler: @Sendable ([Segment]) -> Void = { Blackhole.consume($0.count) }
        let addNs = Stopwatch.time {
            for _ in 0..<count { tokens.append(client.addListener(category: .discovery(), handler: handler)) }
        }
        let removeNs = Stopwatch.time {
            for token in tokens { client.removeListener(token) }
        }
        precondition(client.listenerCount == 0)
        return (Double(addNs), Double(removeNs))
    }

    /// The same with a plain dictionary of handlers under `Locked`.
    private func churnFloor(_ count: Int) -> (Double, Double) {
        let registry = Locked<(next: Int, handlers: [Int: @Sendable ([Segment]) -> Void])>((0, [:]))
        var tokens: [Int] = []
        tokens.reserveCapacity(count)
        let handler: @Sendable ([Segment]) -> Void = { Blackhole.consume($0.count) }
        let addNs = Stopwatch.time {
            for _ in 0..<count {
                tokens.append(
                    registry.withLock { registry in
                        defer { registry.next += 1 }
                        registry.handlers[registry.next] = handler
                        return registry.next
                    })
            }
        }
        let removeNs = Stopwatch.time {
            for token in tokens { registry.withLock { _ = $0.handlers.removeValue(forKey: token) } }
        }
        return (Double(addNs), Double(removeNs))
    }
}
