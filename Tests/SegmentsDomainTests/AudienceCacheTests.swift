import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The LRU cache of qualified segments, as a pure value on explicit time (see Behaviour O3).
@Suite(Hang.timeLimit(minutes: 2)) struct AudienceCacheTests {
    static let t0 = Date(timeIntervalSince1970: 1_000)

    @Test(arguments: [
        // (age in seconds when read) → still there
        (0.0, true),
        (599.999, true),
        (600.0, false),
        (3600.0, false),
        (-1.0, false),  // stored "in the future": the clock went back
    ])
    func o3_entriesExpireAfter600Seconds(age: Double, present: Bool) {
        var cache = ExpiringLRUCache<String, [String]>()
        cache.insert(["a"], forKey: "user", now: Self.t0)
        #expect(cache.contains("user", now: Self.t0 + age) == present)
        #expect((cache.value(forKey: "user", now: Self.t0 + age) != nil) == present)
    }

    @Test func o3_anExpiredEntryIsRemovedWhenRead() {
        var cache = ExpiringLRUCache<String, Int>(capacity: 10, timeout: 5)
        cache.insert(1, forKey: "a", now: Self.t0)
        #expect(cache.value(forKey: "a", now: Self.t0 + 5) == nil)
        #expect(cache.storedCount == 0)
    }

    @Test func o3_cacheHoldsOnly100UsersAndEvictsTheLeastRecentlyUsed() {
        var cache = ExpiringLRUCache<Int, Int>()
        for user in 0..<100 { cache.insert(user, forKey: user, now: Self.t0) }
        #expect(cache.storedCount == 100)
        _ = cache.value(forKey: 0, now: Self.t0)  // 0 is now the most recently used; 1 the least
        cache.insert(100, forKey: 100, now: Self.t0)
        #expect(cache.storedCount == 100)
        #expect(cache.contains(0, now: Self.t0))
        #expect(!cache.contains(1, now: Self.t0))
        #expect(cache.contains(100, now: Self.t0))
    }

    @Test(arguments: [
        // (operations, expected keys present afterwards) with capacity 2
        (["+a", "+b", "+c"], ["b", "c"]),
        (["+a", "+b", "?a", "+c"], ["a", "c"]),
        (["+a", "+b", "+a", "+c"], ["a", "c"]),  // re-inserting refreshes recency
        (["+a", "+b", "?x", "+c"], ["b", "c"]),  // a miss changes nothing
        (["+a", "+b", "-a", "+c"], ["b", "c"]),
    ])
    func o3_leastRecentlyUsedOrder(operations: [String], expected: [String]) {
        var cache = ExpiringLRUCache<String, Int>(capacity: 2, timeout: 600)
        for operation in operations {
            let key = String(operation.dropFirst())
            switch operation.first {
            case "+": cache.insert(0, forKey: key, now: Self.t0)
            case "?": _ = cache.value(forKey: key, now: Self.t0)
            default: cache.removeValue(forKey: key)
            }
        }
        let present = ["a", "b", "c", "x"].filter { cache.contains($0, now: Self.t0) }
        #expect(present == expected)
    }

    @Test func o3_aFullCacheDropsExpiredEntriesBeforeRecentOnes() {
        var cache = ExpiringLRUCache<String, Int>(capacity: 2, timeout: 10)
        cache.insert(1, forKey: "old", now: Self.t0)
        cache.insert(2, forKey: "recent", now: Self.t0 + 8)
        _ = cache.value(forKey: "old", now: Self.t0 + 9)  // most recently used, but expires at t0+10
        cache.insert(3, forKey: "new", now: Self.t0 + 11)
        #expect(cache.contains("recent", now: Self.t0 + 11))
        #expect(cache.contains("new", now: Self.t0 + 11))
    }

    @Test func o3_replacingAValueRestartsItsTimeout() {
        var cache = ExpiringLRUCache<String, Int>(capacity: 2, timeout: 10)
        cache.insert(1, forKey: "a", now: Self.t0)
        cache.insert(2, forKey: "a", now: Self.t0 + 8)
        #expect(cache.value(forKey: "a", now: Self.t0 + 15) == 2)
    }

    @Test func o3_zeroCapacityStoresNothingAndZeroTimeoutNeverExpires() {
        var disabled = ExpiringLRUCache<String, Int>(capacity: 0, timeout: 600)
        disabled.insert(1, forKey: "a", now: Self.t0)
        #expect(disabled.storedCount == 0)
        var forever = ExpiringLRUCache<String, Int>(capacity: 1, timeout: 0)
        forever.insert(1, forKey: "a", now: Self.t0)
        #expect(forever.value(forKey: "a", now: Self.t0 + 1e9) == 1)
    }

    @Test func o2_removeAllEmptiesTheCache() {
        var cache = ExpiringLRUCache<String, Int>()
        cache.insert(1, forKey: "a", now: Self.t0)
        cache.insert(2, forKey: "b", now: Self.t0)
        cache.removeAll()
        #expect(cache.storedCount == 0)
        #expect(cache.value(forKey: "a", now: Self.t0) == nil)
    }
    @Test func o3_peekReadsWithoutChangingRecencyOrRemovingAnything() {
        var cache = ExpiringLRUCache<String, Int>(capacity: 2, timeout: 10)
        cache.insert(1, forKey: "a", now: Self.t0)
        cache.insert(2, forKey: "b", now: Self.t0)
        #expect(cache.peek(forKey: "a", now: Self.t0) == 1)  // a stays the least recently used
        cache.insert(3, forKey: "c", now: Self.t0)
        #expect(cache.peek(forKey: "a", now: Self.t0) == nil)
        #expect(cache.peek(forKey: "b", now: Self.t0) == 2)
        #expect(cache.peek(forKey: "b", now: Self.t0 + 10) == nil, "expired")
        #expect(cache.storedCount == 2, "peeking at an expired entry leaves it stored")
        #expect(cache.peek(forKey: "b", now: Self.t0 + 9) == 2)
    }

    @Test func o3_countAtANowLeavesExpiredEntriesOutAndStoredCountSaysWhatIsKept() {
        var cache = ExpiringLRUCache<String, Int>(capacity: 10, timeout: 10)
        cache.insert(1, forKey: "old", now: Self.t0)
        cache.insert(2, forKey: "new", now: Self.t0 + 5)
        #expect(cache.count(now: Self.t0 + 5) == 2)
        #expect(cache.count(now: Self.t0 + 10) == 1)
        #expect(cache.count(now: Self.t0 + 15) == 0)
        #expect(cache.count(now: Self.t0 - 1) == 0, "the clock went back: both are in the future")
        #expect(cache.storedCount == 2)
    }

    @Test func o3_whenTheClockGoesBackEntriesFromTheFutureAreNeverReturned() {
        var cache = ExpiringLRUCache<String, Int>(capacity: 2, timeout: 600)
        cache.insert(1, forKey: "a", now: Self.t0 + 100)
        #expect(cache.peek(forKey: "a", now: Self.t0) == nil)
        #expect(cache.value(forKey: "a", now: Self.t0) == nil)
        #expect(cache.storedCount == 0, "the lookup removed it")
        cache.insert(1, forKey: "a", now: Self.t0 + 100)
        cache.insert(2, forKey: "b", now: Self.t0 + 100)
        cache.insert(3, forKey: "c", now: Self.t0)  // full: both are invalid now, oldest stored first
        #expect(cache.storedCount == 1)
        #expect(cache.peek(forKey: "c", now: Self.t0) == 3)

        // A future entry behind a valid oldest one stays stored, invisible, until it is evicted.
        var later = ExpiringLRUCache<String, Int>(capacity: 2, timeout: 600)
        later.insert(1, forKey: "x", now: Self.t0)
        later.insert(2, forKey: "y", now: Self.t0 + 100)
        later.insert(3, forKey: "z", now: Self.t0 + 1)  // x is valid and least recently used: it goes
        #expect(!later.contains("x", now: Self.t0 + 1))
        #expect(!later.contains("y", now: Self.t0 + 1))
        #expect(later.contains("z", now: Self.t0 + 1))
        #expect(later.storedCount == 2)
    }

    @Test func o3_evictionFollowsUseOrderNotInsertionOrder() {
        var cache = ExpiringLRUCache<Int, Int>(capacity: 4, timeout: 0)
        for key in 0..<4 { cache.insert(key, forKey: key, now: Self.t0) }
        for key in [2, 0, 3, 1] { _ = cache.value(forKey: key, now: Self.t0) }  // use order: 2, 0, 3, 1
        var evicted: [Int] = []
        for key in 10..<14 {
            let before = Set((0..<4).filter { cache.contains($0, now: Self.t0) })
            cache.insert(key, forKey: key, now: Self.t0)
            let after = Set((0..<4).filter { cache.contains($0, now: Self.t0) })
            evicted += before.subtracting(after)
        }
        #expect(evicted == [2, 0, 3, 1])
        #expect(cache.storedCount == 4)
    }

    @Test func o3_removingEntriesKeepsTheOthersAndTheirOrder() {
        var cache = ExpiringLRUCache<Int, Int>(capacity: 5, timeout: 0)
        for key in 0..<5 { cache.insert(key * 10, forKey: key, now: Self.t0) }
        cache.removeValue(forKey: 0)  // the slot of the last entry moves into the hole
        cache.removeValue(forKey: 2)
        #expect(cache.storedCount == 3)
        #expect([1, 3, 4].map { cache.peek(forKey: $0, now: Self.t0) } == [10, 30, 40])
        cache.insert(50, forKey: 5, now: Self.t0)
        cache.insert(60, forKey: 6, now: Self.t0)
        cache.insert(70, forKey: 7, now: Self.t0)  // full: 1 is the least recently used
        #expect(!cache.contains(1, now: Self.t0))
        #expect([3, 4, 5, 6, 7].allSatisfy { cache.contains($0, now: Self.t0) })
    }

    /// Thousands of random operations, each checked against ``ReferenceLRU``, a plain list with
    /// the documented rules, on a clock that mostly moves forward and sometimes goes back.
    @Test(arguments: [
        (0, 10.0), (1, 10.0), (2, 0.0), (3, 5.0), (5, 10.0), (8, 4.0), (8, 0.0), (16, 20.0),
    ])
    func o3_randomOperationsMatchASimpleReferenceModel(capacity: Int, timeout: Double) {
        for seed in UInt64(1)...8 {
            var random = SeededGenerator(seed: seed &* 7919 &+ UInt64(capacity))
            var cache = ExpiringLRUCache<Int, Int>(capacity: capacity, timeout: timeout)
            var model = ReferenceLRU(capacity: capacity, timeout: timeout)
            var now = Self.t0
            let keys = 0..<(2 * capacity + 3)
            for step in 0..<1_500 {
                let key = Int(random.next(below: UInt64(keys.count)))
                switch random.next(below: 100) {
                case 0..<40:
                    cache.insert(step, forKey: key, now: now)
                    model.insert(step, forKey: key, now: now)
                case 40..<70:
                    let found = cache.value(forKey: key, now: now)
                    #expect(found == model.value(forKey: key, now: now), "seed \(seed) step \(step): value(\(key))")
                case 70..<80:
                    #expect(cache.peek(forKey: key, now: now) == model.peek(forKey: key, now: now))
                case 80..<88:
                    cache.removeValue(forKey: key)
                    model.removeValue(forKey: key)
                case 88..<89:
                    cache.removeAll()
                    model.removeAll()
                case 89..<92:
                    now -= Double(random.next(below: 4))  // the clock goes back
                default:
                    now += Double(random.next(below: 4))
                }
                let same = keys.allSatisfy { cache.peek(forKey: $0, now: now) == model.peek(forKey: $0, now: now) }
                guard same, cache.storedCount == model.entries.count, cache.count(now: now) == model.count(now: now) else {
                    Issue.record("seed \(seed), capacity \(capacity), timeout \(timeout): differs from the model at step \(step)")
                    return
                }
            }
        }
    }
}

/// The documented rules of ``ExpiringLRUCache`` written as plainly as possible: a list, linear
/// scans, sequence numbers for use and storage order.
struct ReferenceLRU {
    struct Entry {
        var key: Int
        var value: Int
        var storedAt: Date
        var stored: Int
        var used: Int
    }

    let capacity: Int
    let timeout: TimeInterval
    var entries: [Entry] = []
    var sequence = 0

    init(capacity: Int, timeout: TimeInterval) {
        self.capacity = max(0, capacity)
        self.timeout = timeout
    }

    func isValid(_ entry: Entry, now: Date) -> Bool {
        guard timeout > 0 else { return true }
        let age = now.timeIntervalSince(entry.storedAt)
        return age >= 0 && age < timeout
    }

    mutating func next() -> Int {
        sequence += 1
        return sequence
    }

    func peek(forKey key: Int, now: Date) -> Int? {
        entries.first { $0.key == key && isValid($0, now: now) }?.value
    }

    func count(now: Date) -> Int {
        entries.filter { isValid($0, now: now) }.count
    }

    mutating func value(forKey key: Int, now: Date) -> Int? {
        guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
        guard isValid(entries[index], now: now) else {
            entries.remove(at: index)
            return nil
        }
        entries[index].used = next()
        return entries[index].value
    }

    mutating func insert(_ value: Int, forKey key: Int, now: Date) {
        guard capacity > 0 else { return }
        if let index = entries.firstIndex(where: { $0.key == key }) {
            let sequence = next()
            entries[index].value = value
            entries[index].storedAt = now
            entries[index].stored = sequence
            entries[index].used = sequence
            return
        }
        if entries.count >= capacity {
            while let oldest = entries.indices.min(by: { entries[$0].stored < entries[$1].stored }),
                !isValid(entries[oldest], now: now)
            {
                entries.remove(at: oldest)
            }
        }
        if entries.count >= capacity, let least = entries.indices.min(by: { entries[$0].used < entries[$1].used }) {
            entries.remove(at: least)
        }
        let sequence = next()
        entries.append(Entry(key: key, value: value, storedAt: now, stored: sequence, used: sequence))
    }

    mutating func removeValue(forKey key: Int) {
        entries.removeAll { $0.key == key }
    }

    mutating func removeAll() {
        entries.removeAll()
    }
}

