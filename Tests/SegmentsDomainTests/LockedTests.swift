import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The SDK's one lock: updates made through it from many threads at once are all kept, the
/// guarantee the engine's state and the visitor registry rely on (see Behaviour V3, "no lost
/// update").
@Suite(Hang.timeLimit(minutes: 1)) struct LockedTests {
    @Test func v3_noUpdateIsLostWhenEightThreadsIncrementAtOnce() {
        let counter = Locked(0)
        let threads = 8, increments = 4_000  // enough to interleave; bounded for ThreadSanitizer on a loaded 2-core machine
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<increments { counter.withLock { $0 += 1 } }
        }
        #expect(counter.value == threads * increments)
    }
}
