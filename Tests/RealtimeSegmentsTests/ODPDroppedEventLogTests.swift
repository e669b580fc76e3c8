import Foundation
import RealtimeSegments
import SegmentsDomain
import SegmentsTesting
import Testing

/// Over the ODP backend tracked events are accepted and dropped (they still request a segments
/// reload, SPEC T3), each with one verbose line (SPEC O5, L1).
@Suite(Hang.timeLimit(minutes: 1)) struct ODPDroppedEventLogTests {
    @Test func o5_t3_anEventTrackedOverODPIsDroppedWithOneVerboseLine() async throws {
        let harness = ClientHarness()
        defer { harness.client.stop() }
        harness.transport.respond(to: ODPBackendTests.path, with: ODPBackendTests.answer([]))
        try harness.client.configure(ODPBackendTests.configuration())
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
        await harness.advance(by: 5)
        let dropped = harness.logger.entries.filter {
            $0.message == "Segments: The ODP backend does not upload tracked events; one was dropped"
        }
        #expect(dropped.map(\.level) == [.verbose])
        #expect(harness.transport.requests.allSatisfy { $0.path == ODPBackendTests.path }, "nothing is uploaded")
    }
}
