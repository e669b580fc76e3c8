import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// The live ports that every platform builds, run for real: the scheduler that runs the client's
/// timers (T5, T10) and the protected-data signal off iOS and visionOS (P8).
@Suite(Hang.timeLimit(minutes: 1)) struct LivePortsTests {
    /// The live scheduler runs the work it is given (a bounded wait for a real task, made on a
    /// thread of its own so that no thread of the pool the work needs is blocked).
    @Test func t5_theLiveSchedulerRunsItsWork() async {
        let ran = DispatchSemaphore(value: 0)
        TaskScheduler().schedule(after: 0) { ran.signal() }
        let outcome = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: ran.wait(timeout: .now() + Hang.scaled(30))) }
        }
        #expect(outcome == .success, "the scheduled work never ran")
    }

    /// Where nothing signals the first unlock, protected data is always available: a refused file
    /// is a storage error, not a wait for a signal that never comes.
    @Test func p8_offIOSAndVisionOSProtectedDataIsAlwaysAvailable() {
        #if !(os(iOS) || os(visionOS))
        let availability = SystemProtectedDataAvailability()
        #expect(availability.isProtectedDataAvailable)
        let signals = Locked(0)
        let observation = availability.observeAvailability { signals.withLock { $0 += 1 } }
        observation.cancel()
        #expect(signals.value == 0)
        #endif
    }
}
