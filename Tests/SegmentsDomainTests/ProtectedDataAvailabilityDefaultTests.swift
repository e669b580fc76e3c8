import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The default answer of ``ProtectedDataAvailability/isProtectedDataAvailable`` (see Behaviour P8,
/// rev 4): a port that does not answer it reports protected data available, so a refused file is a
/// `.storage` error and never waits for a signal that such a port may never send.
@Suite(Hang.timeLimit(minutes: 1)) struct ProtectedDataAvailabilityDefaultTests {
    /// A port that only signals, as one written before the question existed.
    private struct SignallingOnly: ProtectedDataAvailability {
        func observeAvailability(_ handler: @escaping @Sendable () -> Void) -> ProtectedDataObservation {
            ProtectedDataObservation(onCancel: {})
        }
    }

    @Test func p8_aPortThatDoesNotAnswerReportsProtectedDataAvailable() {
        #expect(SignallingOnly().isProtectedDataAvailable)
        let port: any ProtectedDataAvailability = SignallingOnly()
        #expect(port.isProtectedDataAvailable)
    }
}
