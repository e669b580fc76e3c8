import Foundation
import SegmentsDomain

/// Every timing of the segmentation engine; the defaults are the ones <doc:Behaviour> documents.
///
/// ```swift
/// var timings = SegmentationTimings(debounce: DebouncePolicy(delay: 1, maxWait: 10))
/// timings.foregroundRefreshAge = 300      // refresh on return only after five minutes
/// ```
public struct SegmentationTimings: Hashable, Sendable {
    /// Trailing debounce and max wait of automatic reloads (<doc:Behaviour#T5>): 5 s and 30 s.
    public var debounce: DebouncePolicy
    /// How long a fetch answers one-shot reads (<doc:Behaviour#G1>): 5 s.
    public var cache: CacheFreshness
    /// Backoff of failed automatic reloads (<doc:Behaviour#T7>): 2 s doubling to 60 s, ±20 % jitter.
    public var retry: RetryBackoff
    /// How often a one-shot read is retried when the customer changes under it (<doc:Behaviour#G6>): 3.
    public var maxReadRetries: Int
    /// How old the newest successful reload may be when the app returns to the foreground before
    /// listeners get a fresh one (<doc:Behaviour#T11>): 60 s; 0 turns the foreground refresh off.
    /// Set it after `init`; a negative or non-finite age is refused at configure.
    public var foregroundRefreshAge: TimeInterval = SegmentationTimings.defaultForegroundRefreshAge

    /// The default of ``foregroundRefreshAge``: 60 seconds.
    public static let defaultForegroundRefreshAge: TimeInterval = 60

    /// The documented defaults, or the given values.
    public init(
        debounce: DebouncePolicy = DebouncePolicy(), cache: CacheFreshness = CacheFreshness(),
        retry: RetryBackoff = RetryBackoff(), maxReadRetries: Int = 3
    ) {
        self.debounce = debounce
        self.cache = cache
        self.retry = retry
        self.maxReadRetries = max(maxReadRetries, 0)
    }
}
