import Foundation
import SegmentsDomain
import RealtimeSegments

/// Benchmark 9: the audience cache (`ExpiringLRUCache`, Behaviour O3 in `Docs/Behaviour.md`) on its
/// own, called from this module as any client module calls it, against the floor of the same
/// lookup: a dictionary read under the package's `Locked`. Its targets (a hit ≤ 150 ns, an evicting
/// insert ≤ 500 ns) and the historical before/after runs are in "The audience LRU cache" of
/// `Docs/Performance.md`.
///
/// Both rows hold the cache under the same `Locked` as the floor, as `QualifiedSegmentsLoader`
/// does, with the loader's key and value types (`AudienceIdentifier` → `[String]`).
/// - 9a: a hit in a full cache of 100 users (the hit also makes the entry the most recently used).
/// - 9b: an insert of a new user into a full cache of 100, which evicts the least recently used.
struct LRUCacheBenchmark {
    let options: BenchOptions

    static let capacity = 100

    func run() throws -> [Figure] {
        let batches = options.pick(full: 60, quick: 8)
        let calls = options.pick(full: 10_000, quick: 2_000)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        // 200 users cycled through a cache of 100: every insert is a new user and evicts one.
        let users = (0..<(2 * Self.capacity)).map { AudienceIdentifier(field: .fsUserId, value: "user-\($0)@example.com") }
        let answer = ["has_purchased", "likes_shoes", "newsletter"]

        var filled = ExpiringLRUCache<AudienceIdentifier, [String]>(capacity: Self.capacity, timeout: 600)
        var plain: [AudienceIdentifier: [String]] = [:]
        for user in users.prefix(Self.capacity) {
            filled.insert(answer, forKey: user, now: now)
            plain[user] = answer
        }
        let lookupCache = Locked(filled)
        let insertCache = Locked(filled)
        let floor = Locked(plain)
        let churn = Locked(plain)

        var lookup = Samples(), insert = Samples(), read = Samples(), write = Samples()
        var hits = 0
        for batch in 0..<(batches + 2) {
            // Interleaved, so load from other processes hits all four alike; two warm-up batches.
            let lookupNs = Stopwatch.time {
                for call in 0..<calls {
                    let user = users[call % Self.capacity]
                    hits &+= lookupCache.withLock { $0.value(forKey: user, now: now) }?.count ?? 0
                }
            }
            let readNs = Stopwatch.time {
                for call in 0..<calls {
                    let user = users[call % Self.capacity]
                    hits &+= floor.withLock { $0[user] }?.count ?? 0
                }
            }
            // Starts where the previous batch stopped, so every insert is a user not in the cache.
            let offset = batch * calls
            let insertNs = Stopwatch.time {
                for call in 0..<calls {
                    let user = users[(offset + call + Self.capacity) % users.count]
                    insertCache.withLock { $0.insert(answer, forKey: user, now: now) }
                }
            }
            let writeNs = Stopwatch.time {
                for call in 0..<calls {
                    let evicted = users[(offset + call) % users.count]
                    let user = users[(offset + call + Self.capacity) % users.count]
                    churn.withLock { dictionary in
                        dictionary[evicted] = nil
                        dictionary[user] = answer
                    }
                }
            }
            guard batch >= 2 else { continue }
            lookup.append(Double(lookupNs) / Double(calls))
            read.append(Double(readNs) / Double(calls))
            insert.append(Double(insertNs) / Double(calls))
            write.append(Double(writeNs) / Double(calls))
        }
        Blackhole.consume(hits)
        let kept = insertCache.withLock { $0.storedCount }
        let expectedHits = (batches + 2) * calls * answer.count * 2
        var notes: [String] = []
        if hits != expectedHits { notes.append("MISSES: \(hits) of \(expectedHits) expected hit values") }
        if kept != Self.capacity { notes.append("the insert cache held \(kept) entries, not \(Self.capacity)") }

        var lookupFigure = Figure(
            id: "9a", title: "LRU lookup alone (hit, capacity 100, under Locked)", value: lookup.median, unit: "ns/call",
            display: Format.duration(ns: lookup.median) + "/call",
            baseline: ("dictionary read under Locked", read.median, Format.duration(ns: read.median)))
        lookupFigure.details = [
            "batches": Double(batches), "callsPerBatch": Double(calls), "p90": lookup.percentile(90),
            "floorP90": read.percentile(90), "target": 150,
        ]
        lookupFigure.notes.append(
            "median of \(batches) batches of \(calls) hits on 100 users (AudienceIdentifier → [String]), interleaved with the floor; target ≤ 150 ns (issue 15)")
        lookupFigure.notes += notes
        var insertFigure = Figure(
            id: "9b", title: "LRU insert at capacity 100, evicting (under Locked)", value: insert.median, unit: "ns/call",
            display: Format.duration(ns: insert.median) + "/call",
            baseline: ("dictionary read under Locked", read.median, Format.duration(ns: read.median)))
        insertFigure.details = [
            "batches": Double(batches), "callsPerBatch": Double(calls), "p90": insert.percentile(90),
            "dictionaryRemoveAndInsertMedian": write.median, "dictionaryRemoveAndInsertP90": write.percentile(90),
            "target": 500,
        ]
        insertFigure.notes.append(
            "median of \(batches) batches of \(calls) inserts of a user not in the full cache; a dictionary remove + insert under Locked took \(Format.duration(ns: write.median)) in the same run; target ≤ 500 ns (issue 15)")
        return [lookupFigure, insertFigure]
    }
}
