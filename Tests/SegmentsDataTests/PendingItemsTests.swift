import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// Behaviour E3: the pipeline's queue in memory — oldest first, removal and update by id, a cursor that
/// survives removals in front of it and appends behind it — with O(1) steps, so a drain is O(n).
@Suite(Hang.timeLimit(minutes: 2)) struct PendingItemsTests {
    static func items(_ count: Int) -> [TrackedEvent] {
        (0..<count).map {
            TrackedEvent(kind: .event(type: "e\($0)"), customerIds: CustomerIds(cookie: "c"), properties: [:], timestamp: Date())
        }
    }

    @Test func e3_oldestFirstWithRemovalsUpdatesAndReplacements() {
        let events = Self.items(5)
        var queue = PendingItems()
        for event in events { queue.append(event) }
        queue.remove(events[1].id)
        var retried = events[3]
        retried.failedAttempts = 2
        queue.update(retried)
        queue.append(events[0])  // the same id again: replaced, and moved to the end
        #expect(queue.ordered.map(\.kind) == [events[2], retried, events[4], events[0]].map(\.kind))
        #expect(queue.ordered[1].failedAttempts == 2)
        #expect(queue.count == 4)
        queue.remove(UUID())  // unknown: nothing happens
        #expect(queue.count == 4)
    }

    @Test func e3_aDrainingCursorSeesItemsAddedBehindItAndSkipsRemovedOnes() {
        let events = Self.items(3_000)
        var queue = PendingItems()
        for event in events.prefix(2_000) { queue.append(event) }
        var cursor = 0
        var drained: [TrackedEvent.ID] = []
        while let (event, next) = queue.first(atOrAfter: cursor) {
            cursor = next
            drained.append(event.id)
            queue.remove(event.id)
            if drained.count == 1_000 {
                for event in events.suffix(1_000) { queue.append(event) }
                queue.remove(events[1_500].id)  // gone before the cursor reached it
            }
        }
        #expect(drained == events.map(\.id).filter { $0 != events[1_500].id })
        #expect(queue.isEmpty)
        #expect(queue.ordered.isEmpty)
    }
}
