import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import RealtimeSegments

extension StopIntegrationTests {
    /// "Forget this customer" before any configure (A3 rev 4) with the app's own stores
    /// (`.custom`): what they hold is deleted as the files would be, the customer, the baseline
    /// (its link memory included) and every queued item, and nothing is uploaded.
    @Test func a3_stopAndDeleteDataBeforeAnyConfigureEmptiesTheAppsOwnStores() async throws {
        let customer = InMemoryCustomerStore()
        let baseline = InMemorySegmentBaselineStore()
        let events = InMemoryEventQueueStore()
        let jane = CustomerIds(["cookie": "old", "registered": "jane"])
        customer.save(jane)
        baseline.save(SegmentBaseline(snapshot: nil, linkedCustomers: [jane]))
        for type in ["a", "b"] {
            events.append(
                TrackedEvent(kind: .event(type: type), customerIds: jane, properties: [:], timestamp: Date(timeIntervalSince1970: 1)))
        }
        let harness = ClientHarness(storage: .custom(customer: customer, baseline: baseline, events: events))
        let calls = Recorder<Call>()
        harness.client.stopAndDeleteData { calls.record(Call(onMainThread: Self.onMainQueue)) }
        await Self.settle(harness)

        #expect(calls.count == 1, "the completion is called once the deletion is done")
        #expect(events.load().isEmpty, "every queued item is removed")
        #expect(customer.load()?.values.isEmpty ?? true, "the customer is forgotten")
        #expect(baseline.load().linkedCustomers.isEmpty, "the link memory is forgotten")
        #expect(baseline.load().snapshot == nil)
        #expect(harness.uploader.attempts.isEmpty, "nothing was uploaded")
    }
}
