import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting

/// Benchmark 9, rows 9c–9e: `SegmentsUserContext.isQualifiedFor(segment:)` (Behaviour O1 in
/// `Docs/Behaviour.md`) beside Optimizely's way of answering it, a linear scan of the qualified
/// list (`qualifiedSegments?.contains(segment)`), measured in the same batches.
///
/// The list comes from a real fetch (a `RecordingAudienceSegmentFetcher` answering through the
/// client's loader), so the set is the one the fetch built. The floor scans the same list under
/// the same `Locked` the context holds its state in: the two differ only in the lookup. Optimizely
/// itself reads its list through `sync` on a concurrent `DispatchQueue` for every call (its
/// `AtomicArray`), which costs more than a lock: that reading is measured too, in the same batches,
/// and given in the details (`optimizelyQueueScanNs`) and notes, not as the baseline, so that the
/// ratio shows what the set saves and nothing else.
///
/// ODP answers only about the candidate segments, the ones the datafile's audiences name, so a
/// user's list is a subset of them: how many a project's audiences name decides its length. The
/// queries go through every candidate in turn, as `decide` evaluating those audiences would: half
/// are qualified (hits), half not (a scan of the whole list).
/// - 9c: 20 qualified of 40 candidates — a project with a few dozen segment-based audiences.
/// - 9d: 5 of 10 — a project with a handful.
/// - 9e: 200 of 400 — a large one; shows the scan growing with the list and the set not.
struct QualifiedForBenchmark {
    let options: BenchOptions

    func run() async throws -> [Figure] {
        var figures: [Figure] = []
        for (id, qualified, note) in [
            ("9c", 20, "a project with a few dozen segment-based audiences"),
            ("9d", 5, "a project with a handful"),
            ("9e", 200, "a large project"),
        ] {
            figures.append(try await measure(id: id, qualified: qualified, describing: note))
        }
        return figures
    }

    /// Segment names of a realistic length (20–30 bytes, so stored out of line, as real names are).
    static func name(_ index: Int) -> String {
        "segment_\(index)_frequent_buyers"
    }

    private func measure(id: String, qualified count: Int, describing project: String) async throws -> Figure {
        let batches = options.pick(full: 60, quick: 8)
        let calls = options.pick(full: 10_000, quick: 2_000)
        let candidates = (0..<(2 * count)).map(Self.name)
        let answer = candidates.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)

        let fetcher = RecordingAudienceSegmentFetcher()
        fetcher.answer(answer, forUserId: "user-1")
        let audiences = AudienceSegmentsClient(fetcher: fetcher, candidateSegments: candidates, options: .testing)
        let user = audiences.createUserContext(userId: "user-1")
        let fetched = try await user.fetchQualifiedSegments()
        guard Set(fetched) == Set(answer) else { throw BenchFailure("benchmark \(id): the fetch answered \(fetched.count) segments, not \(answer.count)") }
        let scanned = Locked<[String]?>(fetched)
        // The app's own strings (literals in an app), not the list's: equal text, other storage.
        let queries = (0..<candidates.count).map(Self.name)

        let queue = DispatchQueue(label: "bench.atomic-array", attributes: .concurrent)
        var ours = Samples(), scan = Samples(), queued = Samples()
        var hits = 0, floorHits = 0, queueHits = 0
        for batch in 0..<(batches + 2) {
            // Interleaved, so load from other processes hits both alike; two warm-up batches.
            let oursNs = Stopwatch.time {
                for call in 0..<calls where user.isQualifiedFor(segment: queries[call % queries.count]) { hits += 1 }
            }
            let scanNs = Stopwatch.time {
                for call in 0..<calls where scanned.withLock({ $0?.contains(queries[call % queries.count]) ?? false }) {
                    floorHits += 1
                }
            }
            let queuedNs = Stopwatch.time {
                for call in 0..<calls where queue.sync(execute: { fetched.contains(queries[call % queries.count]) }) {
                    queueHits += 1
                }
            }
            guard batch >= 2 else { continue }
            ours.append(Double(oursNs) / Double(calls))
            scan.append(Double(scanNs) / Double(calls))
            queued.append(Double(queuedNs) / Double(calls))
        }
        guard hits == floorHits, hits == queueHits, hits == (batches + 2) * calls / 2 else {
            throw BenchFailure("benchmark \(id): \(hits) hits against \(floorHits) for the scan; expected \((batches + 2) * calls / 2)")
        }
        var figure = Figure(
            id: id, title: "isQualifiedFor, \(count) qualified of \(candidates.count) candidates (half hits)",
            value: ours.median, unit: "ns/call", display: Format.duration(ns: ours.median) + "/call",
            baseline: (
                "Optimizely's read: sync on a concurrent DispatchQueue, then a linear scan", queued.median,
                Format.duration(ns: queued.median)))
        figure.details = [
            "batches": Double(batches), "callsPerBatch": Double(calls), "qualified": Double(count),
            "candidates": Double(candidates.count), "p90": ours.percentile(90), "optimizelyP90": queued.percentile(90),
            "sameLockScanNs": scan.median, "targetSpeedup": 3,
        ]
        figure.notes.append(
            "\(count) qualified segments (\(project)): median of \(batches) batches of \(calls) calls, each candidate in turn, interleaved with both scans; Optimizely's read (its AtomicArray: sync on a concurrent queue, then contains) takes \(Format.fixed(queued.median / ours.median, 1))× the set lookup (target ≥ 3×, issue 32); the same scan under our own lock takes \(Format.duration(ns: scan.median)), \(Format.fixed(scan.median / ours.median, 1))×: what the set alone saves")
        return figure
    }
}
