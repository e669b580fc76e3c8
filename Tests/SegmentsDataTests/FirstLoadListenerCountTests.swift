import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The registry's count of listeners that want the first load (see Behaviour D6, T2): it falls by
/// one per such listener removed, so another one still asks for it.
@Suite(Hang.timeLimit(minutes: 1)) struct FirstLoadListenerCountTests {
    private static func listener(firstLoad: Bool) -> SegmentListener {
        SegmentListener(category: .discovery(), includeFirstLoad: firstLoad) { _ in }
    }

    @Test func d6_t2_removingOneOfTwoFirstLoadListenersLeavesTheOtherAskingForIt() {
        var registry = ListenerRegistry()
        let first = registry.add(Self.listener(firstLoad: true), group: nil, owner: nil)
        let second = registry.add(Self.listener(firstLoad: true), group: nil, owner: nil)
        _ = registry.add(Self.listener(firstLoad: false), group: nil, owner: nil)
        _ = registry.remove(first)
        #expect(registry.anyIncludesFirstLoad)
        _ = registry.remove(second)
        #expect(!registry.anyIncludesFirstLoad)
    }
}
