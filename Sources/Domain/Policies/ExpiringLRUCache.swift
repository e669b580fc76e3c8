import Foundation

/// A bounded cache that forgets the least recently used entry when full and treats entries older
/// than a time-out as absent (SPEC O3: 100 users for 600 s).
///
/// A pure value: time is passed in, so the owner decides which clock counts and tests run on
/// virtual time. Not thread-safe by itself; its owner guards it.
///
/// - A `capacity` of 0 disables the cache: nothing is stored.
/// - A `timeout` of 0 or less means entries never expire.
/// - An entry stored "in the future" (the clock went back) counts as expired.
public struct ExpiringLRUCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entry: Sendable {
        var value: Value
        var storedAt: Date
        var lastUse: UInt64
    }

    /// The most entries kept.
    public let capacity: Int
    /// How long an entry stays valid after it was stored, in seconds.
    public let timeout: TimeInterval

    private var entries: [Key: Entry] = [:]
    private var useCounter: UInt64 = 0

    /// An empty cache; the defaults are 100 entries for 600 s.
    public init(capacity: Int = 100, timeout: TimeInterval = 600) {
        self.capacity = max(0, capacity)
        self.timeout = timeout
    }

    /// How many entries are stored, expired ones included until they are looked up or evicted.
    public var count: Int { entries.count }

    /// The value for `key` when present and not expired at `now`; a hit makes the entry the most
    /// recently used, an expired entry is removed.
    public mutating func value(forKey key: Key, now: Date) -> Value? {
        guard var entry = entries[key] else { return nil }
        guard !isExpired(entry, now: now) else {
            entries[key] = nil
            return nil
        }
        entry.lastUse = nextUse()
        entries[key] = entry
        return entry.value
    }

    /// Whether `key` has a value that is not expired at `now`; does not change recency.
    public func contains(_ key: Key, now: Date) -> Bool {
        entries[key].map { !isExpired($0, now: now) } ?? false
    }

    /// Stores `value` for `key` as of `now`, replacing an older value, as the most recently used
    /// entry. When the cache is full, expired entries go first, then the least recently used one.
    public mutating func insert(_ value: Value, forKey key: Key, now: Date) {
        guard capacity > 0 else { return }
        if entries[key] == nil && entries.count >= capacity {
            entries = entries.filter { !isExpired($0.value, now: now) }
            if entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                entries[oldest] = nil
            }
        }
        entries[key] = Entry(value: value, storedAt: now, lastUse: nextUse())
    }

    /// Removes the entry for `key`, if any.
    public mutating func removeValue(forKey key: Key) {
        entries[key] = nil
    }

    /// Removes every entry.
    public mutating func removeAll() {
        entries.removeAll()
    }

    private func isExpired(_ entry: Entry, now: Date) -> Bool {
        guard timeout > 0 else { return false }
        let age = now.timeIntervalSince(entry.storedAt)
        return age < 0 || age >= timeout
    }

    private mutating func nextUse() -> UInt64 {
        useCounter += 1
        return useCounter
    }
}
