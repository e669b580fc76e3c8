import Foundation

/// Whether a stored snapshot may answer a one-shot read (<doc:Behaviour#G1>).
public struct CacheFreshness: Hashable, Sendable {
    /// How long a fetch stays fresh.
    public var maxAge: TimeInterval

    /// The default is 5 s.
    public init(maxAge: TimeInterval = 5) {
        self.maxAge = maxAge
    }

    /// Checks the value (<doc:Behaviour#P7>): finite, 0 or more (0 turns the cache off).
    ///
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`.
    public func validate() throws {
        try DurationRules.checkNonNegative(maxAge, "The segments cache time")
    }

    /// Whether `snapshot` answers a read for `customer` at `now`: it must belong to exactly that
    /// customer and be younger than `maxAge`. A snapshot from the future (the clock went back) is stale.
    package func canAnswer(from snapshot: SegmentSnapshot?, for customer: CustomerIds, at now: Date) -> Bool {
        guard let snapshot else { return false }
        return canAnswer(from: snapshot, for: customer, age: now.timeIntervalSince(snapshot.fetchedAt))
    }

    /// Whether `snapshot` answers a read for `customer` when it is `age` seconds old, measured on
    /// a monotonic clock (<doc:Behaviour#T10>). A negative age (a snapshot from the future) is stale.
    package func canAnswer(from snapshot: SegmentSnapshot, for customer: CustomerIds, age: TimeInterval) -> Bool {
        snapshot.customer == customer && isFresh(age: age)
    }

    /// Whether a snapshot of the right customer that is `age` seconds old still answers reads.
    package func isFresh(age: TimeInterval) -> Bool {
        age >= 0 && age < maxAge
    }
}
