import Foundation

/// A bounded cache that forgets the least recently used entry when full and treats entries older
/// than a time-out as absent (<doc:Behaviour#O3>: 100 users for 600 s).
///
/// A pure value: time is passed in, so the owner decides which clock counts and tests run on
/// virtual time. Not thread-safe by itself; its owner guards it.
///
/// - A `capacity` of 0 disables the cache: nothing is stored.
/// - A `timeout` of 0 or less means entries never expire.
/// - An entry stored "in the future" (the clock went back) counts as expired.
/// - Lookup, insert, eviction and removal take constant time: the entries sit in one array, linked
///   twice (by use and by storage time), with a dictionary from key to array slot. The methods are
///   `@inlinable`, so callers in other modules get code specialized for their key and value types.
///
/// When a new key arrives at a full cache, entries that are no longer valid go first, oldest stored
/// first, as long as the oldest stored one is invalid; then, if the cache is still full, the least
/// recently used entry goes. With a clock that never goes back this drops every expired entry
/// before any valid one. (After the clock went back, an entry stored "in the future" that is not
/// the oldest stored one stays until it is read, removed or least recently used; it is never returned.)
package struct ExpiringLRUCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// One entry and its place in both orders. Links are slots in `nodes`; `-1` is "none".
    @usableFromInline
    struct Node: Sendable {
        @usableFromInline var key: Key
        @usableFromInline var value: Value
        @usableFromInline var storedAt: Date
        /// The neighbour used more recently, and less recently.
        @usableFromInline var newerUse: Int
        @usableFromInline var olderUse: Int
        /// The neighbour stored (inserted or replaced) later, and earlier.
        @usableFromInline var newerStore: Int
        @usableFromInline var olderStore: Int

        @inlinable
        init(key: Key, value: Value, storedAt: Date) {
            self.key = key
            self.value = value
            self.storedAt = storedAt
            newerUse = -1
            olderUse = -1
            newerStore = -1
            olderStore = -1
        }
    }

    /// The most entries kept.
    package let capacity: Int
    /// How long an entry stays valid after it was stored, in seconds.
    package let timeout: TimeInterval

    /// The entries, dense: slots `0..<nodes.count`, none empty.
    @usableFromInline var nodes: [Node] = []
    /// The slot of each key.
    @usableFromInline var slots: [Key: Int] = [:]
    /// The ends of the use order.
    @usableFromInline var mostRecentlyUsed = -1
    @usableFromInline var leastRecentlyUsed = -1
    /// The ends of the storage order.
    @usableFromInline var newestStored = -1
    @usableFromInline var oldestStored = -1

    /// An empty cache; the defaults are 100 entries for 600 s.
    @inlinable
    package init(capacity: Int = 100, timeout: TimeInterval = 600) {
        self.capacity = max(0, capacity)
        self.timeout = timeout
        nodes.reserveCapacity(min(self.capacity, 1024))
        slots.reserveCapacity(min(self.capacity, 1024))
    }

    /// How many entries are stored, expired ones included until they are read, removed or evicted.
    /// Use ``count(now:)`` for the entries a lookup would find.
    @inlinable
    package var storedCount: Int { nodes.count }

    /// How many entries are stored, expired ones included until they are read, removed or evicted.
    @available(*, deprecated, renamed: "storedCount", message: "counts expired entries too; use storedCount or count(now:)")
    @inlinable
    package var count: Int { nodes.count }

    /// How many entries are valid (not expired) at `now`. Takes time proportional to the entries.
    @inlinable
    package func count(now: Date) -> Int {
        var valid = 0
        for node in nodes where isValid(node.storedAt, now: now) { valid += 1 }
        return valid
    }

    /// The value for `key` when present and not expired at `now`; a hit makes the entry the most
    /// recently used, an expired entry is removed.
    @inlinable
    package mutating func value(forKey key: Key, now: Date) -> Value? {
        guard let slot = slots[key] else { return nil }
        guard isValid(nodes[slot].storedAt, now: now) else {
            remove(slot)
            return nil
        }
        if slot != mostRecentlyUsed {
            unlinkUse(slot)
            linkMostRecentlyUsed(slot)
        }
        return nodes[slot].value
    }

    /// The value for `key` when present and not expired at `now`, like ``value(forKey:now:)`` but
    /// without touching the cache: recency stays as it was and nothing is removed.
    @inlinable
    package func peek(forKey key: Key, now: Date) -> Value? {
        guard let slot = slots[key], isValid(nodes[slot].storedAt, now: now) else { return nil }
        return nodes[slot].value
    }

    /// Whether `key` has a value that is not expired at `now`; does not change recency.
    @inlinable
    package func contains(_ key: Key, now: Date) -> Bool {
        guard let slot = slots[key] else { return false }
        return isValid(nodes[slot].storedAt, now: now)
    }

    /// Stores `value` for `key` as of `now`, replacing an older value, as the most recently used
    /// entry. When the cache is full, invalid entries go first (see the type's documentation), then
    /// the least recently used one.
    @inlinable
    package mutating func insert(_ value: Value, forKey key: Key, now: Date) {
        guard capacity > 0 else { return }
        if let slot = slots[key] {
            nodes[slot].value = value
            nodes[slot].storedAt = now
            if slot != mostRecentlyUsed {
                unlinkUse(slot)
                linkMostRecentlyUsed(slot)
            }
            if slot != newestStored {
                unlinkStore(slot)
                linkNewestStored(slot)
            }
            return
        }
        if nodes.count >= capacity {
            while oldestStored != -1, !isValid(nodes[oldestStored].storedAt, now: now) {
                remove(oldestStored)
            }
        }
        let slot: Int
        if nodes.count >= capacity {
            // Reuse the least recently used entry's slot: no array moves, one key out, one in.
            slot = leastRecentlyUsed
            unlinkUse(slot)
            unlinkStore(slot)
            slots[nodes[slot].key] = nil
            nodes[slot] = Node(key: key, value: value, storedAt: now)
        } else {
            slot = nodes.count
            nodes.append(Node(key: key, value: value, storedAt: now))
        }
        slots[key] = slot
        linkMostRecentlyUsed(slot)
        linkNewestStored(slot)
    }

    /// Removes the entry for `key`, if any.
    @inlinable
    package mutating func removeValue(forKey key: Key) {
        if let slot = slots[key] { remove(slot) }
    }

    /// Removes every entry.
    @inlinable
    package mutating func removeAll() {
        nodes.removeAll(keepingCapacity: true)
        slots.removeAll(keepingCapacity: true)
        mostRecentlyUsed = -1
        leastRecentlyUsed = -1
        newestStored = -1
        oldestStored = -1
    }

    // MARK: - Internals

    @inlinable
    func isValid(_ storedAt: Date, now: Date) -> Bool {
        guard timeout > 0 else { return true }
        let age = now.timeIntervalSince(storedAt)
        return age >= 0 && age < timeout
    }

    /// Takes the entry at `slot` out of both orders, the dictionary and the array; the last entry
    /// moves into the hole so the array stays dense.
    @inlinable
    mutating func remove(_ slot: Int) {
        unlinkUse(slot)
        unlinkStore(slot)
        slots[nodes[slot].key] = nil
        let last = nodes.count - 1
        if slot != last {
            nodes.swapAt(slot, last)
            let moved = nodes[slot]
            slots[moved.key] = slot
            if moved.newerUse != -1 { nodes[moved.newerUse].olderUse = slot } else { mostRecentlyUsed = slot }
            if moved.olderUse != -1 { nodes[moved.olderUse].newerUse = slot } else { leastRecentlyUsed = slot }
            if moved.newerStore != -1 { nodes[moved.newerStore].olderStore = slot } else { newestStored = slot }
            if moved.olderStore != -1 { nodes[moved.olderStore].newerStore = slot } else { oldestStored = slot }
        }
        nodes.removeLast()
    }

    @inlinable
    mutating func unlinkUse(_ slot: Int) {
        let newer = nodes[slot].newerUse, older = nodes[slot].olderUse
        if newer != -1 { nodes[newer].olderUse = older } else { mostRecentlyUsed = older }
        if older != -1 { nodes[older].newerUse = newer } else { leastRecentlyUsed = newer }
    }

    @inlinable
    mutating func linkMostRecentlyUsed(_ slot: Int) {
        nodes[slot].newerUse = -1
        nodes[slot].olderUse = mostRecentlyUsed
        if mostRecentlyUsed != -1 { nodes[mostRecentlyUsed].newerUse = slot } else { leastRecentlyUsed = slot }
        mostRecentlyUsed = slot
    }

    @inlinable
    mutating func unlinkStore(_ slot: Int) {
        let newer = nodes[slot].newerStore, older = nodes[slot].olderStore
        if newer != -1 { nodes[newer].olderStore = older } else { newestStored = older }
        if older != -1 { nodes[older].newerStore = newer } else { oldestStored = newer }
    }

    @inlinable
    mutating func linkNewestStored(_ slot: Int) {
        nodes[slot].newerStore = -1
        nodes[slot].olderStore = newestStored
        if newestStored != -1 { nodes[newestStored].newerStore = slot } else { oldestStored = slot }
        newestStored = slot
    }
}
