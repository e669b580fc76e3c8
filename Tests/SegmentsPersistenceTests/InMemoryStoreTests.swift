import Foundation
import SegmentsDomain
import SegmentsPersistence
import Testing

@Suite struct InMemoryStoreTests {
    @Test func p1_inMemoryCustomerStoreRoundTrips() throws {
        let store = InMemoryCustomerStore()
        #expect(store.load() == nil)
        try store.save(Fixtures.identified)
        #expect(store.load() == Fixtures.identified)
        #expect(InMemoryCustomerStore(customer: Fixtures.anonymous).load() == Fixtures.anonymous)
    }

    @Test func d1_inMemoryBaselineStoreRoundTrips() throws {
        let store = InMemorySegmentBaselineStore()
        #expect(store.load() == .empty)
        try store.save(Fixtures.baseline)
        #expect(store.load() == Fixtures.baseline)
    }

    @Test func e3_inMemoryQueueHasTheSameSemanticsAsTheFileQueue() throws {
        let events = Fixtures.events(4)
        let store = InMemoryEventQueueStore(events: Array(events.prefix(2)))
        try store.append(events[2])
        try store.append(events[3])
        var failed = events[1]
        failed.failedAttempts = 2
        try store.update(failed)
        try store.remove(id: events[0].id)
        try store.remove(id: UUID())
        try store.update(events[0])
        #expect(store.load() == [failed, events[2], events[3]])
        try store.append(failed)
        #expect(store.load() == [events[2], events[3], failed])
    }
}
