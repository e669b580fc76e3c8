import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The per-category index of listeners (see Behaviour M4, D7): registration order survives any sequence
/// of removals, including the compactions that drop removed tokens.
@Suite(Hang.timeLimit(minutes: 1)) struct ListenerRegistryTests {
    /// A handler that records its index.
    static func listener(_ category: SegmentCategory, _ index: Int, into calls: Locked<[Int]>) -> SegmentListener {
        SegmentListener(category: category, includeFirstLoad: false) { _ in calls.withLock { $0.append(index) } }
    }

    @Test(arguments: [1, 7, 42])
    func d7_m4_deliveriesFollowRegistrationOrderAfterAnyRemovals(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var registry = ListenerRegistry()
        let calls = Locked<[Int]>([])
        var alive: [(index: Int, token: ListenerToken, category: SegmentCategory)] = []
        for index in 0..<400 {
            let category: SegmentCategory = index % 3 == 0 ? .content() : .discovery()
            alive.append((index, registry.add(Self.listener(category, index, into: calls), group: nil, owner: nil), category))
            if index % 5 == 4 {  // remove a few at random as we go
                for _ in 0..<3 where !alive.isEmpty {
                    let victim = alive.remove(at: Int(generator.next() % UInt64(alive.count)))
                    _ = registry.remove(victim.token)
                }
            }
        }
        for category in [SegmentCategory.discovery(), .content()] {
            calls.withLock { $0 = [] }
            var deliveries: [Delivery] = []
            registry.tell([], to: category, changed: true, firstLoad: false, into: &deliveries)
            deliveries.forEach { $0.run() }
            #expect(calls.value == alive.filter { $0.category == category }.map(\.index))
        }
        #expect(registry.count == alive.count)
    }

    @Test func m4_d7_removingReturnsTheRegistrationToLetGoOfOutsideTheLockOnce() {
        var registry = ListenerRegistry()
        let calls = Locked<[Int]>([])
        let first = registry.add(Self.listener(.discovery(), 0, into: calls), group: nil, owner: nil)
        let second = registry.add(Self.listener(.discovery(), 1, into: calls), group: nil, owner: nil)
        #expect(registry.remove(first)?.token == first)
        #expect(registry.remove(second)?.token == second)
        #expect(registry.remove(second) == nil)  // unknown: a no-op
        #expect(registry.isEmpty)
        #expect(registry.categories.isEmpty)
    }

    /// A listener last told segments (of the customer or project before) hears `[]` when the new
    /// answer has none, although the category did not change against the baseline; a listener told
    /// nothing yet, or told `[]` already, hears nothing (see Behaviour D4).
    @Test func d4_aListenerToldSegmentsHearsEmptyWhenTheAnswerHasNoneThoughTheCategoryDidNotChange() {
        var registry = ListenerRegistry()
        let calls = Locked<[Int]>([])
        let a = Segment(id: "a", segmentationId: "s")
        var deliveries: [Delivery] = []
        _ = registry.add(Self.listener(.discovery(), 0, into: calls), group: nil, owner: nil)
        registry.tell([a], to: .discovery(), changed: true, firstLoad: false, into: &deliveries)
        _ = registry.add(Self.listener(.discovery(), 1, into: calls), group: nil, owner: nil)
        registry.tell([], to: .discovery(), changed: false, firstLoad: false, into: &deliveries)
        registry.tell([], to: .discovery(), changed: false, firstLoad: false, into: &deliveries)
        deliveries.forEach { $0.run() }
        #expect(calls.value == [0, 0])
        #expect(deliveries.map(\.segments) == [[a], []])
    }
}

/// The listener registry's bookkeeping, driven directly (see Behaviour M4): what removal by token, by group
/// and of every listener leaves behind.
@Suite(Hang.timeLimit(minutes: 1)) struct ListenerRegistryGroupTests {
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
        #expect(registry.remove(first)?.token == first)
        #expect(registry.count == 2)
        #expect(registry.removeGroup(group).map(\.listener.category) == [.content()])
        #expect(registry.count == 1)
        #expect(registry.groupCount == 0)
        #expect(registry.removeGroup(group).isEmpty)
        #expect(registry.categories == [.content()])
    }

    @Test func m4_everyMemberRemovedByTokenLeavesNoGroupBehind() {
        var registry = ListenerRegistry()
        let group = UUID()
        let tokens = [SegmentCategory.discovery(), .content()].map {
            registry.add(Self.listener($0), group: group, owner: nil)
        }
        for token in tokens { _ = registry.remove(token) }
        #expect(registry.groupCount == 0)
        #expect(registry.isEmpty)
        // A later member of the same group is removed with it, and only it.
        let later = registry.add(Self.listener(.merchandising()), group: group, owner: nil)
        #expect(registry.groupCount == 1)
        #expect(registry.removeGroup(group).map(\.token) == [later])
        #expect(registry.remove(later) == nil)  // already gone
        #expect(registry.groupCount == 0)
    }
}

