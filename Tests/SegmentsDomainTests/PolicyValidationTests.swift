import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// Behaviour P7: every duration of the pure policies is checked; a bad one is `.invalidConfiguration`.
@Suite(Hang.timeLimit(minutes: 2)) struct PolicyValidationTests {
    @Test(arguments: [
        RetryBackoff(initial: 0), RetryBackoff(initial: -1), RetryBackoff(initial: .nan),
        RetryBackoff(initial: .infinity), RetryBackoff(initial: 1, maximum: .infinity),
        RetryBackoff(initial: 1, jitter: .nan),
    ])
    func p7_aBackoffThatWouldSpinOrNeverRetryIsInvalid(backoff: RetryBackoff) {
        let error = #expect(throws: SegmentsError.self) { try backoff.validate() }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func p7_theDefaultsAndSmallPositiveBackoffsAreValid() throws {
        try RetryBackoff().validate()
        try RetryBackoff(initial: 0.001, maximum: 0.01).validate()
        try DebouncePolicy().validate()
        try DebouncePolicy(delay: 0, maxWait: 0).validate()
        try CacheFreshness().validate()
        try CacheFreshness(maxAge: 0).validate()
    }

    @Test func p7_nonFiniteOrNegativeDebounceAndCacheTimesAreInvalid() {
        #expect(throws: SegmentsError.self) { try DebouncePolicy(delay: -1).validate() }
        #expect(throws: SegmentsError.self) { try DebouncePolicy(delay: .nan).validate() }
        #expect(throws: SegmentsError.self) { try DebouncePolicy(delay: 1, maxWait: .infinity).validate() }
        #expect(throws: SegmentsError.self) { try CacheFreshness(maxAge: .nan).validate() }
        #expect(throws: SegmentsError.self) { try CacheFreshness(maxAge: -5).validate() }
    }
}
