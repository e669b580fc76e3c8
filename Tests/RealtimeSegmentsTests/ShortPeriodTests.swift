import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// A periodic interval only has to be finite and above 0 (see Behaviour E2, P7): half a second is
/// valid, at run time and in a configuration.
@Suite(Hang.timeLimit(minutes: 1)) struct ShortPeriodTests {
    @Test func e2_aPeriodOfHalfASecondIsAccepted() async throws {
        let harness = ClientHarness()
        try harness.configure(flushingMode: .periodic(seconds: 0.5))
        #expect(harness.client.flushingMode == .periodic(seconds: 0.5))
        harness.client.flushingMode = .periodic(seconds: 0.25)
        #expect(harness.client.flushingMode == .periodic(seconds: 0.25))
        #expect(!harness.logger.entries.contains { $0.level == .error })
    }
}
