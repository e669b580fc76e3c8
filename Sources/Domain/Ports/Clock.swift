import Foundation

/// The source of the current time. Nothing in the core reads `Date()` directly, so tests can run
/// on virtual time (`TestScheduler` in `SegmentsTesting`).
public protocol Clock: Sendable {
    /// The current time.
    func now() -> Date
}
