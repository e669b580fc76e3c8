import Foundation
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct InMemoryStoreTests {
    @Test func p1_inMemoryCustomerStoreRoundTrips() {
        let store = InMemoryCustomerStore()
        #expect(store.load() == nil)
        store.save(Fixtures.identified)
        #expect(store.load() == Fixtures.identified)
        #expect(InMemoryCustomerStore(customer: Fixtures.anonymous).load() == Fixtures.anonymous)
    }

    @Test func d1_inMemoryBaselineStoreRoundTrips() {
        let store = InMemorySegmentBaselineStore()
        #expect(store.load() == .empty)
        store.save(Fixtures.baseline)
        #expect(store.load() == Fixtures.baseline)
    }

    @Test func e3_inMemoryQueueHasTheSameSemanticsAsTheFileQueue() {
        let events = Fixtures.events(4)
        let store = InMemoryEventQueueStore(events: Array(events.prefix(2)))
        store.append(events[2])
        store.append(events[3])
        var failed = events[1]
        failed.failedAttempts = 2
        store.update(failed)
        store.remove(id: events[0].id)
        store.remove(id: UUID())
        store.update(events[0])
        #expect(store.load() == [failed, events[2], events[3]])
        store.append(failed)
        #expect(store.load() == [events[2], events[3], failed])
    }
}
