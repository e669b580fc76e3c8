import Foundation
import SegmentsTesting
import Testing

// Bounded waits: a deadlock fails the test that meets it (and lets the run go on and end)
// instead of blocking a thread forever. Every limit is generous: only a hang reaches it.

/// Waits for `semaphore` on a thread of its own — not on a cooperative or global-queue thread,
/// which other tests' tasks need: `true` when it was signalled within `seconds` (times `Hang.timeScale`).
func signalled(_ semaphore: DispatchSemaphore, within seconds: TimeInterval = 30) async -> Bool {
    await onDedicatedThread { semaphore.wait(timeout: .now() + Hang.scaled(seconds)) == .success }
}

