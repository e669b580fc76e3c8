import Foundation
import RealtimeSegments
import SegmentsTesting
import Testing

/// `SegmentCallbackData` as the Exponea SDK 4.x declares it (SPEC X1): equal to its copies only,
/// a handler that may be `nil`, and `fireBlock(category:)`.
@Suite(Hang.timeLimit(minutes: 1)) struct SegmentCallbackDataTests {
    @Test func x1_m4_aCallbackEqualsItsCopiesAndNotAnotherMadeAlike() {
        let told = LockedValue<[[String]]>([])
        let callback = SegmentCallbackData(category: .discovery(), isIncludeFirstLoad: true) { list in
            told.withLock { $0.append(list.map(\.id)) }
        }
        let copy = callback
        let alike = SegmentCallbackData(category: .discovery(), isIncludeFirstLoad: true) { _ in }
        #expect(callback == copy)
        #expect(callback != alike)
        callback.fireBlock(category: [Segment(id: "s1", segmentationId: "g1")])
        #expect(told.value == [["s1"]])
    }

    @Test func x1_aCallbackWithoutAHandlerIsAccepted() {
        let quiet = SegmentCallbackData(category: .content(), isIncludeFirstLoad: false, onNewData: nil)
        quiet.fireBlock(category: [])  // told nothing, and nothing breaks
        #expect(quiet.category == .content() && !quiet.isIncludeFirstLoad)
    }
}
