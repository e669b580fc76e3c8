import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting

/// Benchmark 6: a new client on a directory holding a baseline of 3 × 1,000 segments and 10,000
/// queued events, from `init` until the first `getSegments` is answered from the cache (manual
/// flushing, so nothing uploads; a cache time of 10⁶ s, so the stored `fetchedAt` is fresh on the
/// client's system clock). The floor reads the same files and parses them with
/// `JSONSerialization`, without building any model.
struct ColdStartBenchmark {
    let options: BenchOptions
    let template: StorageTemplate

    func run() async throws -> [Figure] {
        let rounds = options.pick(full: 9, quick: 3)
        let logger = Fixtures.logger()
        var sdk = Samples(), configure = Samples(), floor = Samples(), baselineLoad = Samples(), queueLoad = Samples()
        for round in 0..<(rounds + 1) {
            let copy = try template.copy(in: options.scratch, "cold")
            let storesCopy = try template.copy(in: options.scratch, "cold-stores")
            defer {
                copy.remove()
                storesCopy.remove()
            }
            let floorNs = try Stopwatch.time { try Self.readAndParse(copy.url) }
            let (total, configured) = try await coldStart(copy.url, logger: logger)
            // Where the time goes: the two big files loaded by their stores alone (the results are
            // kept alive past the timing, so freeing them is not counted, as in the client).
            let baselineStore = FileSegmentBaselineStore(directory: storesCopy.url, logger: logger)
            let queueStore = FileEventQueueStore(directory: storesCopy.url, logger: logger)
            var baseline = SegmentBaseline.empty, queued: [TrackedEvent] = []
            let baselineNs = Stopwatch.time { baseline = baselineStore.load() }
            let queueNs = Stopwatch.time { queued = queueStore.load() }
            Blackhole.consume((baseline.snapshot?.segments.count ?? 0) + queued.count)
            guard round >= 1 else { continue }
            sdk.append(total)
            configure.append(configured)
            floor.append(Double(floorNs))
            baselineLoad.append(Double(baselineNs))
            queueLoad.append(Double(queueNs))
        }
        var figure = Figure(
            id: "6",
            title: "cold start: 3 × \(Format.count(template.segmentsPerCategory)) segments + \(Format.count(template.queuedEvents)) queued events → first getSegments",
            value: sdk.median, unit: "ns", display: Format.duration(ns: sdk.median),
            baseline: ("read + JSONSerialization-parse the same files", floor.median, Format.duration(ns: floor.median)))
        figure.details = [
            "rounds": Double(rounds), "configureMedianNs": configure.median, "min": sdk.min, "max": sdk.max,
            "baselineStoreLoadNs": baselineLoad.median, "eventQueueStoreLoadNs": queueLoad.median,
            "target": 100e6,  // the cold-start budget of Docs/Performance.md: 100 ms to the first cached answer
        ]
        figure.notes.append(
            "median of \(rounds) starts, each on a fresh copy of a directory written by the File stores (files in the page cache); configure() alone took \(Format.duration(ns: configure.median)); no fetch reached the repository; loaded alone, the baseline file took \(Format.duration(ns: baselineLoad.median)) and the event journal \(Format.duration(ns: queueLoad.median))")
        figure.notes += Fixtures.notes(from: logger)
        return [figure]
    }

    /// Nanoseconds from creating the client to the first answer, and to the end of `configure`.
    private func coldStart(_ directory: URL, logger: RecordingLogger) async throws -> (Double, Double) {
        let repository = RecordingSegmentRepository()
        let answered = Countdown(count: 1)
        let size = Locked(0)
        let storage = DispatchQueue(label: "bench.storage")
        let start = Stopwatch.now()
        let client = SegmentsClient(
            options: .init(runtime: SegmentsRuntime(logger: logger), timings: SegmentationTimings(cache: CacheFreshness(maxAge: 1e6)), storage: .directory(directory), storageQueue: storage))
        try client.configure(
            .init(backend: .custom(id: "bench-cold", repository: repository, uploader: RecordingEventUploader()), flushingMode: .manual))
        let configured = Stopwatch.now()
        client.getSegments(category: .discovery()) { result in
            size.withLock { $0 = (try? result.get())?.count ?? -1 }
            answered.arrive()
        }
        guard let end = await answered.wait(timeout: 60) else { throw BenchFailure("benchmark 6: no answer in 60 s") }
        defer {
            client.stop()
            storage.sync {}  // the saves stop queued are written before the copy is removed
        }
        let queued = await client.countQueuedEvents()
        guard size.value == template.segmentsPerCategory, repository.fetches.isEmpty, queued == template.queuedEvents else {
            throw BenchFailure(
                "benchmark 6: expected a cache answer of \(template.segmentsPerCategory) segments and \(template.queuedEvents) queued events, got \(size.value) segments, \(repository.fetches.count) fetches, \(queued) queued")
        }
        return (Double(end - start), Double(configured - start))
    }

    /// Reads every file and parses JSON documents and JSON-lines journals generically.
    static func readAndParse(_ directory: URL) throws {
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        var objects = 0
        for file in files {
            let data = try Data(contentsOf: file)
            if file.pathExtension == "json" {
                _ = try JSONSerialization.jsonObject(with: data)
                objects += 1
            } else {
                for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
                    _ = try JSONSerialization.jsonObject(with: Data(line))
                    objects += 1
                }
            }
        }
        Blackhole.consume(objects)
    }
}
