import Foundation
import SegmentsDomain

/// The live `SegmentsScheduler` (the `SegmentsDomain` port): each piece of work runs on its own task after a real-time sleep.
public struct TaskScheduler: SegmentsScheduler {
    /// Creates the scheduler.
    public init() {}

    /// Starts a task that sleeps `delay` seconds, then runs `work` unless it was cancelled.
    @discardableResult
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork {
        let task = Task {
            if delay > 0 { await sleep(for: delay) }
            guard !Task.isCancelled else { return }
            await work()
        }
        return ScheduledWork { task.cancel() }
    }

    /// Sleeps `delay` seconds of real time; returns early when the task is cancelled.
    public func sleep(for delay: TimeInterval) async {
        guard delay > 0 else { return }
        // Capped so a huge delay cannot overflow UInt64 nanoseconds (about 584 years).
        let nanoseconds = UInt64(min(delay, 1e9) * 1e9)
        try? await Task.sleep(nanoseconds: nanoseconds)
    }
}
