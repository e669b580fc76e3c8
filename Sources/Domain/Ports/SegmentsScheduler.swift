import Foundation

/// Runs work later: debounce, backoff, periodic flushes, and every asynchronous step of the
/// engine go through it, so tests control all of them with virtual time.
///
/// `schedule(after:_:)` registers the work *before it returns* and returns its cancellation
/// token synchronously, so a test advancing virtual time can never race the registration. It must
/// never run the work before it returns (callers may hold a lock); the work runs later, on
/// another task.
public protocol SegmentsScheduler: Sendable {
    /// Runs `work` once, `delay` seconds from now (at once for `0` or less).
    @discardableResult
    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork

    /// Suspends the caller for `delay` seconds of this scheduler's time.
    func sleep(for delay: TimeInterval) async
}

/// The token of scheduled work: cancelling it before the work starts means it never runs.
public final class ScheduledWork: Sendable {
    private let onCancel: @Sendable () -> Void

    /// A token that calls `onCancel` when cancelled.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    /// Cancels the work if it has not started; cancelling twice is harmless.
    public func cancel() {
        onCancel()
    }
}
