import Foundation

/// The source of the current time. Nothing in the core reads `Date()` directly, so tests can run
/// on virtual time (`TestScheduler` in `SegmentsTesting`).
///
/// A clock tells two kinds of time (<doc:Behaviour#T10>): the wall time ``now()``, for timestamps
/// and for anything persisted, and the monotonic ``uptime()``, for every duration (debounce, cache
/// freshness, backoff, time-outs). Setting the device's clock moves the first, never the second.
public protocol SegmentsClock: Sendable {
    /// The current wall time: timestamps of events and `fetchedAt` of stored snapshots.
    func now() -> Date

    /// Seconds since an arbitrary fixed origin on a clock that never goes back and ignores changes
    /// of the wall clock (it keeps counting while the device sleeps). Only differences between two
    /// readings of the same clock mean anything.
    func uptime() -> TimeInterval
}
