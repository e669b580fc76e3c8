import Foundation
import SegmentsDomain

/// A ``SegmentsScheduler`` that ignores delays: work starts at once on a new task and `sleep` returns
/// immediately. For tests and previews that care about outcomes, not timing.
public struct ImmediateScheduler: SegmentsScheduler {
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
