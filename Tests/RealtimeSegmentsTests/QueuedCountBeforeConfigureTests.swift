import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// The queue counts of a client that is not configured, before configure and after stop (see
/// Behaviour R1, R3): nothing waits for upload, so both are 0.
@Suite(Hang.timeLimit(minutes: 1)) struct QueuedCountBeforeConfigureTests {
    @Test func r1_r3_aClientThatIsNotConfiguredCountsNothingQueued() async throws {
        let harness = ClientHarness()
        #expect(harness.client.queuedEventCount == 0)
        #expect(await harness.client.countQueuedEvents() == 0)
        try harness.configure(flushingMode: .manual)
        await harness.advance()
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "view")
        #expect(harness.client.queuedEventCount == 1)
        harness.client.stop()
        #expect(harness.client.queuedEventCount == 0)
        #expect(await harness.client.countQueuedEvents() == 0)
    }
}
