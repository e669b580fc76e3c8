// This file imports only what an app (and its tests) import. It must keep compiling: `import RealtimeSegments`
// may not bring a name into an app's files that shadows the standard library's (`Clock`) or, on
// Apple platforms, collides with Combine's (`Scheduler`, `ImmediateScheduler`). The SDK's own time
// ports are `SegmentsClock` and `SegmentsScheduler`, and the test kit's immediate scheduler is
// `ImmediateSegmentsScheduler`, used below beside the platform's.
#if canImport(Combine)
import Combine
#endif
import Foundation
import RealtimeSegments
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 1)) struct ExportedNamesTests {
    /// Swift's `Clock` and `ContinuousClock`, unqualified, next to the SDK's own names.
    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    func elapsed<C: Clock>(on clock: C, _ body: () -> Void) -> C.Duration {
        let start = clock.now
        body()
        return start.duration(to: clock.now)
    }

    @Test func anAppFileUsesTheStandardLibrarysClockUnqualifiedBesideTheSDKsClock() throws {
        guard #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) else { return }
        let sdkClock: any SegmentsClock = TestScheduler()
        var segments: [Segment] = []
        let elapsed: Duration = elapsed(on: ContinuousClock()) {
            segments = [Segment(id: "1", segmentationId: "s", attributes: [:])]
        }
        #expect(elapsed >= .zero)
        #expect(segments.map(\.id) == ["1"])
        #expect(sdkClock.uptime() == 0)
    }

    #if canImport(Combine)
    /// Combine's `Scheduler`, unqualified: its current time on `scheduler`.
    func now<S: Scheduler>(on scheduler: S) -> S.SchedulerTimeType { scheduler.now }

    @Test func anAppFileUsesCombinesSchedulerUnqualifiedBesideTheSDKsScheduler() {
        let queue = DispatchQueue(label: "ExportedNamesTests")
        let testScheduler = TestScheduler()
        let sdkScheduler: any SegmentsScheduler = testScheduler
        sdkScheduler.schedule(after: 1) {}
        #expect(now(on: queue) <= queue.now)
        #expect(testScheduler.pendingWorkCount == 1)
    }

    /// Combine's `ImmediateScheduler`, unqualified: the kit's former name for its own is an
    /// unavailable alias, which the compiler passes over for the available declaration.
    @Test func aTestFileUsesCombinesImmediateSchedulerUnqualifiedBesideTheKits() async {
        let combine: ImmediateScheduler = .shared
        let kit: any SegmentsScheduler = ImmediateSegmentsScheduler()
        await kit.sleep(for: 3600)
        #expect(now(on: combine) <= combine.now)
    }
    #endif
}
