import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// Behaviour D6, D7: first loads follow registration order also when nothing changed — the
/// path where the category is not told to everyone (the baseline already holds the answer), so
/// each listener is picked for its pending promise or for what it was last told.
@Suite(Hang.timeLimit(minutes: 1)) struct FirstLoadOrderTests {
    @Test func d6_d7_firstLoadsOfAnUnchangedCategoryFollowRegistrationOrder() async {
        let baseline = SegmentBaseline(
            snapshot: SegmentSnapshot(
                customer: Fixture.customerA, segments: [.discovery(): [Fixture.s1]],
                fetchedAt: TestScheduler().now().addingTimeInterval(-3600)))
        let harness = EngineHarness(baseline: baseline)
        harness.repository.answer([.discovery(): [Fixture.s1]])  // the same: unchanged
        harness.configure()
        let order = Recorder<Int>()
        for index in 0..<20 {
            harness.engine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: true) { segments in
                if segments == [Fixture.s1] { order.record(index) }
            })
        }
        await harness.advance(by: 5)
        #expect(harness.fetchCount == 1)
        #expect(order.all == Array(0..<20))
    }
}
