import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The audience cache's time-out at its edges (see Behaviour O3): any time-out above 0, however
/// short, expires entries; 0 or less keeps them until they are evicted.
@Suite(Hang.timeLimit(minutes: 1)) struct CacheTimeoutEdgeTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func o3_anEntryOfACacheWithASubSecondTimeoutExpiresAfterIt() {
        var cache = ExpiringLRUCache<String, Int>(capacity: 10, timeout: 0.5)
        cache.insert(1, forKey: "user", now: Self.t0)
        #expect(cache.contains("user", now: Self.t0 + 0.4))
        #expect(!cache.contains("user", now: Self.t0 + 0.5))
        #expect(cache.value(forKey: "user", now: Self.t0 + 0.6) == nil)
    }

    @Test(arguments: [0.0, -1.0])
    func o3_aCacheWithoutATimeoutKeepsEntriesUntilEvicted(timeout: TimeInterval) {
        var cache = ExpiringLRUCache<String, Int>(capacity: 10, timeout: timeout)
        cache.insert(1, forKey: "user", now: Self.t0)
        #expect(cache.value(forKey: "user", now: Self.t0 + 86_400 * 365) == 1)
    }
}
