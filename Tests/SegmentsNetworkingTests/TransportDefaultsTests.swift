import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// The URLSession transport's documented defaults and floor (see Behaviour P7): a 10 s deadline,
/// answers of at most 1 MiB, and a negative size limit read as 0 (no body accepted).
@Suite(Hang.timeLimit(minutes: 1)) struct TransportDefaultsTests {
    @Test func p7_theDefaultsAreATenSecondDeadlineAndOneMiBAnswers() {
        #expect(URLSessionSegmentsTransport.defaultTimeout == 10)
        #expect(URLSessionSegmentsTransport.defaultMaximumResponseSize == 1_048_576)
        let transport = URLSessionSegmentsTransport()
        #expect(transport.timeout == 10)
        #expect(transport.maximumResponseSize == 1_048_576)
    }

    @Test(arguments: [-5, 0])
    func p7_aSizeLimitBelowZeroIsZero(limit: Int) {
        #expect(URLSessionSegmentsTransport(maximumResponseSize: limit).maximumResponseSize == 0)
    }
}
