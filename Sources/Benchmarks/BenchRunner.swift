import Foundation
import SegmentsDomain
import RealtimeSegments

/// Runs the selected benchmarks in order, prints the table and writes the JSON.
struct BenchRunner {
    let options: BenchOptions

    func run() async throws {
        let started = Stopwatch.now()
        var report = Report(
            mode: options.quick ? "quick" : "full", startedAt: ISO8601DateFormatter().string(from: Date()),
            machine: Machine.current(scratch: options.scratch))
        log("segments-bench (\(report.mode), \(report.machine.build)) on \(report.machine.cpuModel), \(report.machine.logicalCPUs) CPUs")

        var template: StorageTemplate?
        if options.runs(6) || options.runs(7) || options.runs(10) || options.runs(11) {
            let segments = options.pick(full: 1_000, quick: 200), events = options.pick(full: 10_000, quick: 1_000)
            log("preparing a storage directory with 3 × \(segments) segments and \(events) queued events …")
            template = try StorageTemplate.prepare(in: options.scratch, segmentsPerCategory: segments, queuedEvents: events)
        }
        defer { template?.directory.remove() }

        let benchmarks: [(Int, String, () async throws -> [Figure])] = [
            (1, "getSegments cache hit", { try await CacheHitBenchmark(options: options).run() }),
            (2, "fan-out to 10,000 listeners", { try await FanOutBenchmark(options: options).run() }),
            (3, "listener registration and removal", { try await ListenerChurnBenchmark(options: options).run() }),
            (4, "coalescing", { try await CoalescingBenchmark(options: options).run() }),
            (5, "trackEvent → listener latency", { try await LoopbackLatencyBenchmark(options: options).run() }),
            (6, "cold start", { try await ColdStartBenchmark(options: options, template: template!).run() }),
            (7, "event queue appends", { try await EventQueueBenchmark(options: options, template: template!).run() }),
            (8, "peak memory", { try await MemoryBenchmark(options: options).run() }),
            (9, "audience segments: LRU cache, isQualifiedFor", {
                try LRUCacheBenchmark(options: options).run() + (try await QualifiedForBenchmark(options: options).run())
            }),
            (10, "cost on the caller's thread", { try await CallersThreadBenchmark(options: options, template: template!).run() }),
            (11, "draining a backlog", { try await DrainBenchmark(options: options, template: template!).run() }),
            (12, "the network returns", { try await NetworkReturnBenchmark(options: options).run() }),
        ]
        for (number, name, body) in benchmarks where options.runs(number) {
            log("[\(number)] \(name) …")
            let begin = Stopwatch.now()
            do {
                report.figures += try await body()
            } catch {
                var failed = Figure(id: "\(number)", title: name, value: .nan, unit: "", display: "FAILED")
                failed.notes.append("\(error)")
                report.figures.append(failed)
            }
            log("[\(number)] done in \(Format.duration(ns: Double(Stopwatch.now() - begin)))")
        }

        report.machine.loadAverageAtEnd = Machine.loadAverage()
        report.durationSeconds = Double(Stopwatch.now() - started) / 1e9
        print("")
        print(report.table())
        print("")
        print("machine: \(report.machine.cpuModel), \(report.machine.logicalCPUs) CPUs, \(Format.fixed(report.machine.memoryGiB, 1)) GiB; \(report.machine.compiler), \(report.machine.build); load \(report.machine.loadAverageAtStart.map { Format.fixed($0, 2) } ?? "?") → \(report.machine.loadAverageAtEnd.map { Format.fixed($0, 2) } ?? "?"); peak RSS of this process \(PeakMemory.ofThisProcess().map { Format.memory(kib: $0) } ?? "?"); \(Format.fixed(report.durationSeconds, 1)) s")
        if let path = options.jsonPath {
            try report.json().write(to: URL(fileURLWithPath: path))
            print("wrote \(path)")
        }
        if report.figures.contains(where: { $0.display == "FAILED" }) {
            throw BenchFailure("some benchmarks failed (see the table)")
        }
    }

    /// Progress on standard error, so standard output holds only the report.
    private func log(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
