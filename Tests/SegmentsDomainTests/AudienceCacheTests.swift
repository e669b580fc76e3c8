import Foundation
import SegmentsDomain
import Testing

/// The LRU cache of qualified segments, as a pure value on explicit time (SPEC O3).
@Suite(.timeLimit(.minutes(2))) struct AudienceCacheTests {
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
        #expect(cache.count == 0)
    }

    @Test func o3_cacheHoldsOnly100UsersAndEvictsTheLeastRecentlyUsed() {
        var cache = ExpiringLRUCache<Int, Int>()
        for user in 0..<100 { cache.insert(user, forKey: user, now: Self.t0) }
        #expect(cache.count == 100)
        _ = cache.value(forKey: 0, now: Self.t0)  // 0 is now the most recently used; 1 the least
        cache.insert(100, forKey: 100, now: Self.t0)
        #expect(cache.count == 100)
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
        #expect(disabled.count == 0)
        var forever = ExpiringLRUCache<String, Int>(capacity: 1, timeout: 0)
        forever.insert(1, forKey: "a", now: Self.t0)
        #expect(forever.value(forKey: "a", now: Self.t0 + 1e9) == 1)
    }

    @Test func o2_removeAllEmptiesTheCache() {
        var cache = ExpiringLRUCache<String, Int>()
        cache.insert(1, forKey: "a", now: Self.t0)
        cache.insert(2, forKey: "b", now: Self.t0)
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.value(forKey: "a", now: Self.t0) == nil)
    }
}
