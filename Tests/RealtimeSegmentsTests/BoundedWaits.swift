import Foundation
import SegmentsTesting
import Testing

// Bounded waits: a deadlock fails the test that meets it (and lets the run go on and end)
// instead of blocking a thread forever. Every limit is generous: only a hang reaches it.

/// Waits for `semaphore` on a thread of its own — not on a cooperative or global-queue thread,
/// which other tests' tasks need: `true` when it was signalled within `seconds`.
func signalled(_ semaphore: DispatchSemaphore, within seconds: TimeInterval = 30) async -> Bool {
    await onDedicatedThread { semaphore.wait(timeout: .now() + seconds) == .success }
}

/// Waits until the work queued on `queue` so far has run, at most `seconds`; records an issue
/// naming the queue when it has not (a deadlocked queue), instead of `queue.sync {}` waiting forever.
@discardableResult
func drained(
    _ queue: DispatchQueue, within seconds: TimeInterval = 30, sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    let reached = DispatchSemaphore(value: 0)
    queue.async { reached.signal() }
    guard reached.wait(timeout: .now() + seconds) == .success else {
        Issue.record("the queue \(queue.label) did not drain within \(Int(seconds)) s (deadlocked?)", sourceLocation: sourceLocation)
        return false
    }
    return true
}
