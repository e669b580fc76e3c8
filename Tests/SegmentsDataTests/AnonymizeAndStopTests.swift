import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// SPEC A: anonymize and stop.
@Suite struct AnonymizeAndStopTests {
    static let cancelledLine = "Segments: Segments change check has been cancelled meanwhile"

    @Test func a1_anonymizeMakesANewCustomerAndForgetsSegmentsAndLinks() async {
        let harness = EngineHarness(customer: CustomerIds(["cookie": "cookie-a", "registered": "jane"]))
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.baselineStore.load().linkedCustomers.count == 1)
        let customer = harness.engine.anonymize()
        #expect(customer == CustomerIds(cookie: "new-cookie-1"))
        #expect(harness.customerStore.load() == customer)
        #expect(harness.baselineStore.load() == .empty)
        #expect(harness.engine.listenerCount == 1)
        #expect(harness.logger.count(of: Self.cancelledLine) == 0)  // nothing was pending
    }

    @Test func a1_anonymizeCancelsThePendingDebounceAndLogsIt() async {
        let harness = EngineHarness()
        harness.configure()
        harness.listen()
        harness.engine.anonymize()
        #expect(harness.scheduler.pendingWorkCount == 0)
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 0)
        #expect(harness.logger.count(of: Self.cancelledLine) == 1)
    }

    @Test func a1_anonymizeCancelsRetriesAndDiscardsTheFlightInProgress() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(with: Fixture.transient)
        harness.configure()
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        await harness.advance(by: 5)
        #expect(harness.scheduler.pendingDelays == [2])
        harness.engine.anonymize()
        #expect(harness.scheduler.pendingWorkCount == 0)

        harness.repository.delay = 1
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.engine.reloadAfterUpload()
        await harness.advance(by: 5.5)  // in flight for new-cookie-1
        harness.engine.anonymize()
        await harness.advance(by: 10)
        #expect(recorder.count == 0)
        #expect(harness.baselineStore.load() == .empty)
        #expect(harness.logger.count(of: Self.cancelledLine) == 2)
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

    @Test func a3_stopRemovesListenersAndRejectsWorkUntilConfiguredAgain() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        harness.engine.stop()
        #expect(harness.engine.listenerCount == 0)
        #expect(!harness.engine.isConfigured)
        #expect(harness.engine.identify(hardIds: ["registered": "x"]) == nil)
        #expect(harness.engine.anonymize() == nil)
        harness.engine.reloadAfterUpload()
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 0)
        #expect(recorder.count == 0)

        harness.configure()
        let (again, _) = harness.listen(includeFirstLoad: true)
        await harness.advance(by: 5)
        #expect(again.all == [[Fixture.s1]])
    }
}
