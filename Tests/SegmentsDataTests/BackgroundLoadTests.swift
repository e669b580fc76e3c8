import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// Behaviour R3 in the engine: `configure` returns before the baseline is loaded; reads and reloads
/// that come meanwhile wait for it and are served in call order, never on half-loaded state.
@Suite(Hang.timeLimit(minutes: 2)) struct BackgroundLoadTests {
    static func freshBaseline(_ harness: EngineHarness) -> SegmentBaseline {
        SegmentBaseline(snapshot: SegmentSnapshot(
            customer: Fixture.customerA, segments: [.discovery(): [Fixture.s1]], fetchedAt: harness.scheduler.now()))
    }

    @Test func r3_readsDuringTheBaselineLoadAreAnsweredInOrderOnceItIsIn() async {
        let harness = EngineHarness()
        try? harness.baselineStore.save(Self.freshBaseline(harness))
        harness.storageQueue.suspend()
        harness.engine.configure(harness.backend)
        #expect(harness.engine.customer == Fixture.customerA, "the customer is known when configure returns")
        let first = harness.read(.discovery())
        let second = harness.read(.content())
        await drained(harness.deliveryQueue)
        #expect(first.count == 0 && second.count == 0, "nothing is answered from a half-loaded state")
        harness.storageQueue.resume()
        await harness.advance()
        #expect(first.all.map(\.value) == [[Fixture.s1]])
        #expect(second.all.map(\.value) == [[]])
        #expect(harness.fetchCount == 0, "both answered from the loaded baseline")
    }

    @Test func t3_r3_aReloadRequestedDuringTheBaselineLoadRunsOnceItIsIn() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        let (told, _) = harness.listen(.discovery(), includeFirstLoad: false)
        harness.storageQueue.suspend()
        harness.engine.configure(harness.backend)
        harness.engine.itemUploaded()  // a request during the load is kept, not lost
        harness.storageQueue.resume()
        await harness.advance(by: 5)
        #expect(harness.fetchCount == 1)
        #expect(told.all == [[Fixture.s1]])
    }

    @Test func a1_r3_anonymizeDuringTheBaselineLoadKeepsTheBaselineDeleted() async {
        let harness = EngineHarness()
        try? harness.baselineStore.save(Self.freshBaseline(harness))
        harness.repository.answer([.discovery(): [Fixture.s2]])
        harness.storageQueue.suspend()
        harness.engine.configure(harness.backend)
        harness.engine.anonymize()
        harness.storageQueue.resume()
        let read = harness.read(.discovery())
        await harness.advance()
        #expect(harness.fetchCount == 1, "the old customer's baseline was not revived by the late load")
        #expect(read.all.map(\.value) == [[Fixture.s2]])
    }
}

extension BackgroundLoadTests {
    @Test func a1_r3_anonymizeDuringTheBaselineLoadForgetsTheLinkMemoryForGood() async {
        let harness = EngineHarness()
        let jane = CustomerIds(["cookie": "cookie-a", "registered": "jane"])
        try? harness.baselineStore.save(SegmentBaseline(snapshot: nil, linkedCustomers: [jane]))
        harness.repository.answer([.discovery(): [Fixture.s2]])
        harness.storageQueue.suspend()
        harness.engine.configure(harness.backend)
        harness.engine.anonymize()
        harness.storageQueue.resume()
        let read = harness.read(.discovery(), force: true)
        await harness.advance()
        #expect(read.all.map(\.value) == [[Fixture.s2]])
        #expect(harness.baselineStore.load().linkedCustomers.isEmpty, "the late load did not bring the link memory back")
    }
}
