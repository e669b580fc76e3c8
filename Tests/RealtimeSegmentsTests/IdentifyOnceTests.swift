import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// Identifying a customer queues one customer update (see Behaviour E1): it is queued again only
/// when another lifecycle call changed the customer in between (A4), never when nothing did.
@Suite(Hang.timeLimit(minutes: 1)) struct IdentifyOnceTests {
    @Test func e1_identifyingACustomerQueuesExactlyOneUpdate() async throws {
        let harness = ClientHarness()
        try harness.configure(flushingMode: .immediate)
        await harness.advance()
        try harness.client.identifyCustomer(customerIds: ["registered": "r"], properties: ["plan": "pro"], timestamp: nil)
        await harness.advance(by: 5)
        #expect(harness.uploader.accepted.count == 1)
        #expect(harness.client.customerIds?.hardIds == ["registered": "r"])
    }
}
