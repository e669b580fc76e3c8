import Foundation
import SegmentsTesting
import Testing

/// `.onDedicatedThread`: a test case under it runs on its executor's thread, not on the
/// cooperative pool, before and after it suspends, and so do its child tasks.
@Suite(Hang.timeLimit(minutes: 1), .onDedicatedThread) struct DedicatedThreadTraitTests {
    /// Whether the caller runs on a dedicated thread (a synchronous call: async code asks it where
    /// it runs, not where it was when it called).
    static func onDedicatedThread() -> Bool { DedicatedThreadExecutor.currentThreadIsDedicated }
    static func onDedicatedThreadAsync() async -> Bool { onDedicatedThread() }

    @Test func aSynchronousTestRunsOnTheExecutorsThread() {
        #expect(Self.onDedicatedThread())
    }

    @Test func anAsyncTestStaysThereAcrossSuspensionsAndItsChildTasksRunThereToo() async {
        #expect(Self.onDedicatedThread())
        await Task.yield()
        // A suspension that another thread ends (no sleep: a global-queue thread resumes it).
        await withCheckedContinuation { (resumed: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { resumed.resume() }
        }
        #expect(Self.onDedicatedThread())
        async let child = Self.onDedicatedThreadAsync()
        #expect(await child, "a child task inherits the executor")
    }

    @Test(arguments: 0..<4) func theCasesOfOneTestRunOnThreadsOfTheirOwn(case: Int) {
        #expect(Self.onDedicatedThread())
    }
}

/// Without the trait, a test runs on the cooperative pool (so the tests above prove the trait).
@Suite(Hang.timeLimit(minutes: 1)) struct WithoutDedicatedThreadTraitTests {
    @Test func aTestWithoutTheTraitRunsElsewhere() {
        #expect(!DedicatedThreadTraitTests.onDedicatedThread())
    }
}
