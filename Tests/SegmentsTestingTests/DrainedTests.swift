import Foundation
import SegmentsTesting
import Testing

/// `drained` in async code suspends the task until the queue's work so far has run, and reports a
/// queue that does not drain instead of waiting for ever.
@Suite(Hang.timeLimit(minutes: 1)) struct DrainedTests {
    @Test func theAsyncFormReturnsOnceTheWorkQueuedBeforeItHasRun() async {
        let queue = DispatchQueue(label: "test.drained")
        let ran = LockedValue<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        queue.async { _ = gate.wait(timeout: .now() + 30); ran.withLock { $0.append(1) } }
        queue.async { ran.withLock { $0.append(2) } }
        gate.signal()
        #expect(await drained(queue))
        #expect(ran.value == [1, 2])
    }

    @Test func theAsyncFormReportsAQueueThatDoesNotDrain() async {
        let queue = DispatchQueue(label: "test.stuck")
        queue.suspend()
        defer { queue.resume() }
        let issues = LockedValue<[String]>([])
        var reached: Bool?
        await withKnownIssue {
            reached = await drained(queue, within: 0.05)
        } matching: { issue in
            issues.withLock { $0.append(issue.comments.map(\.rawValue).joined()) }
            return true
        }
        #expect(reached == false)
        #expect(issues.value == ["the queue test.stuck did not drain within 0 s (deadlocked?)"])
    }
}
