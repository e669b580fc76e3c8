import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The listener registry's bookkeeping, driven directly (SPEC M4): what removal by token, by group
/// and of every listener leaves behind.
@Suite(hangTimeLimit(minutes: 1)) struct ListenerRegistryTests {
    static func listener(_ category: SegmentCategory) -> SegmentListener {
        SegmentListener(category: category, includeFirstLoad: false) { _ in }
    }

    @Test func m4_oneMemberRemovedByTokenThenTheGroupLeavesNoGroupBehind() {
        var registry = ListenerRegistry()
        let group = UUID()
        let first = registry.add(Self.listener(.discovery()), group: group, owner: nil)
        _ = registry.add(Self.listener(.content()), group: group, owner: nil)
        _ = registry.add(Self.listener(.content()), group: nil, owner: nil)
        #expect(registry.groupCount == 1)
        #expect(registry.remove(first) == .discovery())  // its category's last listener
        #expect(registry.count == 2)
        #expect(registry.removeGroup(group) == [])  // content keeps the listener outside the group
        #expect(registry.count == 1)
        #expect(registry.groupCount == 0)
        #expect(registry.removeGroup(group) == [])
    }

    @Test func m4_everyMemberRemovedByTokenLeavesNoGroupBehind() {
        var registry = ListenerRegistry()
        let group = UUID()
        let tokens = [SegmentCategory.discovery(), .content()].map {
            registry.add(Self.listener($0), group: group, owner: nil)
        }
        for token in tokens { registry.remove(token) }
        #expect(registry.groupCount == 0)
        #expect(registry.isEmpty)
        // A later member of the same group is removed with it, and only it.
        let later = registry.add(Self.listener(.merchandising()), group: group, owner: nil)
        #expect(registry.groupCount == 1)
        #expect(registry.removeGroup(group) == [.merchandising()])
        #expect(registry.remove(later) == nil)  // already gone
        #expect(registry.groupCount == 0)
    }
}
