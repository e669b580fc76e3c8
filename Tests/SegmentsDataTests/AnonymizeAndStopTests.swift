import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// Anonymize and stop (Behaviour A).
@Suite(Hang.timeLimit(minutes: 2)) struct AnonymizeAndStopTests {
    static let cancelledLine = "Segments: Segments change check has been cancelled meanwhile"

    @Test func a1_anonymizeMakesANewCustomerAndForgetsSegmentsAndLinks() async {
        let harness = EngineHarness(customer: CustomerIds(["cookie": "cookie-a", "registered": "jane"]))
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.baselineStore.load().linkedCustomers.count == 1)
        let customer = harness.engine.anonymize()
        harness.drainDeliveries()
        #expect(customer == CustomerIds(cookie: "new-cookie-1"))
        #expect(harness.customerStore.load() == customer)
        #expect(harness.baselineStore.load() == .empty)
        #expect(harness.engine.listenerCount == 1)
        #expect(harness.logger.count(of: Self.cancelledLine) == 0)  // nothing was pending
    }

    @Test func a1_anonymizeCancelsThePendingDebounceAndReloadsForTheNewCustomer() async {
        let harness = EngineHarness()
        harness.configure()
        harness.listen()
        await harness.advance(by: 3)
        harness.engine.anonymize()
        #expect(harness.logger.count(of: Self.cancelledLine) == 1)
        // The old burst is gone; a new one starts for the new customer.
        #expect(harness.scheduler.pendingDelays == [5])
        await harness.advance(by: 60)
        #expect(harness.repository.fetches == [CustomerIds(cookie: "new-cookie-1")])
    }

    @Test func a1_anonymizeCancelsRetriesAndDiscardsTheFlightInProgress() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(with: Fixture.transient)
        harness.configure()
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        await harness.advance(by: 5)
        #expect(harness.scheduler.pendingDelays == [2])
        harness.engine.anonymize()
        #expect(harness.scheduler.pendingDelays == [5])  // the retry is gone; a debounce for new-cookie-1

        harness.repository.delay = 1
        harness.repository.answer([.discovery(): [Fixture.s1]], forCookie: "new-cookie-1")
        harness.repository.answer([.discovery(): [Fixture.s2]], forCookie: "new-cookie-2")
        await harness.advance(by: 5.5)  // in flight for new-cookie-1
        #expect(harness.repository.fetches.last == CustomerIds(cookie: "new-cookie-1"))
        harness.engine.anonymize()
        await harness.advance(by: 0.5)  // the discarded flight returns: nothing of new-cookie-1 is told
        #expect(recorder.count == 0)
        #expect(harness.baselineStore.load() == .empty)
        #expect(harness.logger.count(of: Self.cancelledLine) == 2)
        await harness.advance(by: 10)
        // The first-load promise is kept for the customer who is current (D6).
        #expect(recorder.all == [[Fixture.s2]])
    }

    /// Defect: a logout at start-up stranded includeFirstLoad listeners until something was tracked.
    @Test func a1_d6_anonymizeRightAfterConfigureStillKeepsTheFirstLoadPromise() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]], forCookie: "new-cookie-1")
        harness.configure()
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        await harness.advance(by: 1)
        harness.engine.anonymize()
        await harness.advance(by: 60)
        #expect(recorder.all == [[Fixture.s1]])
        #expect(harness.repository.fetches == [CustomerIds(cookie: "new-cookie-1")])
    }

    @Test func a1_anonymizeWithoutListenersRequestsNothing() async {
        let harness = EngineHarness()
        harness.configure()
        harness.engine.anonymize()
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 0)
        #expect(harness.scheduler.pendingWorkCount == 0)
        #expect(harness.logger.count(of: Self.cancelledLine) == 0)
    }

    @Test func a2_listenersOfNonEmptyCategoriesAreToldEmptyAtOnce() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1], .content(): []])
        harness.configure()
        let (discovery, _) = harness.listen(.discovery())
        let (content, _) = harness.listen(.content())
        await harness.advance(by: 5)
        #expect(discovery.all == [[Fixture.s1]])
        harness.engine.anonymize()
        harness.drainDeliveries()
        #expect(discovery.all == [[Fixture.s1], []])
        #expect(content.all == [[]])  // told [] by the first load only (D3), not again
    }

    /// The listener was told the first load and a reload is in flight when stop comes: neither the
    /// flight's answer nor a later trigger reaches it, and no fetch starts after stop.
    @Test func a3_stopRemovesListenersAndRejectsWorkUntilConfiguredAgain() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        await harness.advance(by: 5)
        #expect(recorder.all == [[Fixture.s1]], "the listener was not told the first load")
        #expect(harness.fetchCount == 1)

        harness.repository.delay = 10
        harness.repository.answer([.discovery(): [Fixture.s2]])
        harness.engine.itemUploaded()
        await harness.advance(by: 5)
        #expect(harness.fetchCount == 2, "no reload was in flight when stop came")
        harness.engine.stop()
        #expect(harness.engine.listenerCount == 0)
        #expect(!harness.engine.isConfigured)
        #expect(harness.engine.identify(hardIds: ["registered": "x"]) == nil)
        #expect(harness.engine.anonymize() == nil)
        harness.engine.itemUploaded()
        await harness.advance(by: 60)
        harness.drainDeliveries()
        #expect(harness.fetchCount == 2, "a fetch started after stop")
        #expect(recorder.all == [[Fixture.s1]], "the listener was told after stop")

        harness.repository.delay = 0
        harness.configure()
        let (again, _) = harness.listen(includeFirstLoad: true)
        await harness.advance(by: 5)
        #expect(again.all == [[Fixture.s2]])
    }
}
