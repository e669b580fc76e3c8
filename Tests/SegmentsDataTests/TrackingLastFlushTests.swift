import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The tracking machine's last flush before a stop (Behaviour A3), its state while loading (R3),
/// the background flush of a stopped pipeline (E7), and a removal written while it stops (E4):
/// rows in the shape of ``TrackingStateMachineTests``.
extension TrackingStateMachineTests {
    static let lastFlushRows: [Row] = [
        Row(
            "a3_theLastFlushEndsThePeriodicTimerAndUploadsWhatIsQueued", { running(.periodic(seconds: 10), [item("a")]) },
            { $0.finish {} },
            state: "running(items: [a], flush: a uploaded 0 waiters 0)", steps: ["cancel(timer 1)", "upload(a)"]),
        Row(
            "a3_theLastFlushOfAnEmptyQueueStopsAtOnce", { running(.manual) }, { $0.finish {} },
            state: "stopped", steps: ["release", "finished(1)"]),
        Row(
            "a3_theLastFlushEndsAtItsFirstTransientFailureAndThePipelineStops",
            {
                var machine = running(.manual, [item("a"), item("b")])
                _ = machine.finish {}
                return machine
            },
            { $0.uploadFailed(ids["a"]!, unavailable, at: now) },
            state: "stopped", steps: ["log(warning)", "release", "finished(1)"]),
        Row(
            "e7_aStoppedPipelineKeepsNoBackgroundFlushWaiter",
            {
                var machine = running(.immediate)  // not manual: manual answers before the state is looked at
                _ = machine.stop()
                return machine
            },
            { machine in
                let (kept, steps) = machine.appEnteredBackground { _ in }
                #expect(!kept, "stopped: nothing to do, the background time is not asked for")
                return steps
            },
            state: "stopped", steps: []),
        Row(
            "e4_aRemovalWrittenWhileStoppingLeavesThePipelineStopping",
            {
                var machine = flushing(.manual, [item("a"), item("b")])
                _ = machine.stop()
                return machine
            },
            { $0.removalWritten(ids["a"]!) },
            state: "stopping(items: [a, b], flush: a uploaded 0 waiters 0)", steps: []),
    ]

    @Test(arguments: lastFlushRows) func a3_e4_e7_theLastFlushAndTheStop(_ row: Row) {
        Self.check(row)
    }

    @Test func r3_theMachineIsLoadingOnlyUntilTheStoredQueueIsIn() {
        var machine = Self.loading()
        #expect(machine.isLoading)
        _ = machine.loaded([Self.item("s1")])
        #expect(!machine.isLoading)
        _ = machine.stop()
        #expect(!machine.isLoading)
    }
}
