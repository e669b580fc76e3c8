import Foundation

/// How long to wait before retrying a failed request (<doc:Behaviour#T7>, <doc:Behaviour#E3>):
/// capped exponential backoff with jitter, never shorter than the server's `Retry-After` — but a
/// `Retry-After` longer than ``maximumRetryAfter`` (10 minutes) counts as that much, so a server
/// cannot park the SDK for days.
public struct RetryBackoff: Hashable, Sendable {
    /// The wait before the first retry.
    public var initial: TimeInterval
    /// The longest wait.
    public var maximum: TimeInterval
    /// The share of the wait that is randomised, `0...1` (0.2 → ±20 %).
    public var jitter: Double
    /// The longest `Retry-After` honoured (<doc:Behaviour#T7>): 600 s.
    public static let maximumRetryAfter: TimeInterval = 600

    /// The defaults are 2 s doubling to 60 s with ±20 % jitter.
    public init(initial: TimeInterval = 2, maximum: TimeInterval = 60, jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = max(maximum, initial)
        self.jitter = min(max(jitter, 0), 1)
    }

    /// Checks every field (<doc:Behaviour#P7>, <doc:Behaviour#T7>, <doc:Behaviour#E3>): ``initial``
    /// and ``maximum`` finite and greater than 0, ``initial`` not longer than ``maximum``, and
    /// ``jitter`` a number from 0 to 1. The initializer clamps its arguments, but the fields are
    /// `var`s: a value set afterwards is only checked here (`SegmentsClient.Options.validate()`
    /// calls this for both backoffs, and `configure` calls that).
    ///
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` naming the field and its value: a zero
    ///   wait would retry in a tight loop, an infinite one would never retry, and a jitter outside
    ///   `0...1` (say 5) would make most waits 0 s.
    public func validate() throws {
        try DurationRules.checkPositive(initial, "The first retry delay (initial)")
        try DurationRules.checkPositive(maximum, "The longest retry delay (maximum)")
        guard initial <= maximum else {
            throw SegmentsError(
                .invalidConfiguration,
                "The first retry delay (initial, \(initial) s) must not be longer than the longest retry delay (maximum, \(maximum) s)")
        }
        guard (0...1).contains(jitter) else {  // NaN is in no range
            throw SegmentsError(
                .invalidConfiguration, "The retry jitter (jitter) must be a number from 0 to 1, not \(jitter)")
        }
    }

    /// The wait before retry number `attempt` (1 for the first retry).
    ///
    /// - Parameters:
    ///   - random: a value in `0..<1` that places the wait inside the jitter band (0.5 = no jitter).
    ///   - retryAfter: the server's `Retry-After` in seconds, if it sent one; the wait is at least
    ///     that, capped at ``maximumRetryAfter``.
    package func delay(attempt: Int, random: Double, retryAfter: TimeInterval? = nil) -> TimeInterval {
        let exponent = Double(min(max(attempt, 1) - 1, 62))
        let base = min(initial * pow(2, exponent), maximum)
        let unit = min(max(random, 0), 1)
        let jittered = min(base * (1 + jitter * (2 * unit - 1)), maximum)
        let serverWait = min(max(retryAfter ?? 0, 0), Self.maximumRetryAfter)
        return max(jittered, serverWait.isNaN ? 0 : serverWait)
    }
}
