import Foundation

/// When a burst of reload requests fires (<doc:Behaviour#T5>): a trailing debounce of `delay` after
/// the last request, but never later than `maxWait` after the first, so steady tracking cannot
/// starve reloads.
public struct DebouncePolicy: Hashable, Sendable {
    /// Quiet time after the last request before the reload starts.
    public var delay: TimeInterval
    /// Longest time a burst can postpone the reload, counted from its first request.
    public var maxWait: TimeInterval

    /// The defaults are 5 s and 30 s.
    public init(delay: TimeInterval = 5, maxWait: TimeInterval = 30) {
        self.delay = delay
        self.maxWait = max(maxWait, delay)
    }

    /// Checks the values (<doc:Behaviour#P7>): both finite, 0 or more (0 reloads at once after a
    /// request).
    ///
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`.
    public func validate() throws {
        try DurationRules.checkNonNegative(delay, "The reload debounce")
        try DurationRules.checkNonNegative(maxWait, "The reload max wait")
    }

    /// The moment the reload fires, in a monotonic clock's seconds (<doc:Behaviour#T10>), for a
    /// burst that began at `firstRequest` and whose latest request came at `lastRequest`.
    package func fireTime(firstRequest: TimeInterval, lastRequest: TimeInterval) -> TimeInterval {
        min(lastRequest + delay, firstRequest + maxWait)
    }
}
