import Foundation
import SegmentsDomain

/// A ``SegmentsScheduler`` that ignores delays: work starts at once on a new task and `sleep` returns
/// immediately. For tests that care about outcomes, not timing.
///
/// The name says whose scheduler it is: Combine exports an `ImmediateScheduler` of its own, and a
/// test file that imports both must be able to name either without qualifying it.
public struct ImmediateSegmentsScheduler: SegmentsScheduler {
    /// Creates the scheduler.
    public init() {}

    /// Starts `work` at once, whatever `delay` says.
    @discardableResult
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork {
        let task = Task { await work() }
        return ScheduledWork { task.cancel() }
    }

    /// Returns at once.
    public func sleep(for delay: TimeInterval) async {}
}
