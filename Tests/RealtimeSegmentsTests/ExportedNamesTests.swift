// This file imports only what an app (and its tests) import. It must keep compiling: `import RealtimeSegments`
// may not bring a `Clock` (which would shadow the standard library's) or a `Scheduler` (which
// would collide with Combine's on Apple platforms) into an app's files. `CombineStandIn` exports a
// `Scheduler` as Combine does, so a re-exported `Scheduler` makes the name below ambiguous.
import CombineStandIn
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

    /// Combine's `Scheduler` (here its stand-in), unqualified.
    func schedulerName(_ scheduler: some Scheduler) -> String { String(describing: type(of: scheduler)) }

    @Test func anAppFileUsesCombinesSchedulerNameUnqualifiedBesideTheSDK() {
        #expect(schedulerName(ImmediateStandInScheduler()) == "ImmediateStandInScheduler")
        #expect(SegmentCategory.content().name == "content")
    }

    @Test func anAppFileUsesTheStandardLibrarysClockUnqualifiedBesideTheSDK() throws {
        guard #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) else { return }
        var segments: [Segment] = []
        let elapsed: Duration = elapsed(on: ContinuousClock()) {
            segments = [Segment(id: "1", segmentationId: "s", attributes: [:])]
        }
        #expect(elapsed >= .zero)
        #expect(segments.map(\.id) == ["1"])
        #expect(SegmentCategory.discovery().name == "discovery")
    }
}
