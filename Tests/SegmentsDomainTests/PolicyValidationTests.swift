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

    /// A backoff changed after `init` (its fields are `var`s, which the initializer's clamping does
    /// not guard) and the field and value the refusal must name.
    struct BadField: Sendable, CustomTestStringConvertible {
        let field: String
        let value: String
        let backoff: RetryBackoff

        init(_ field: String, _ value: String, _ change: (inout RetryBackoff) -> Void) {
            self.field = field
            self.value = value
            var backoff = RetryBackoff()
            change(&backoff)
            self.backoff = backoff
        }

        var testDescription: String { "\(field) = \(value)" }
    }

    static let badFields: [BadField] = [
        BadField("jitter", "5.0") { $0.jitter = 5 },
        BadField("jitter", "1.5") { $0.jitter = 1.5 },
        BadField("jitter", "-0.1") { $0.jitter = -0.1 },
        BadField("jitter", "nan") { $0.jitter = .nan },
        BadField("jitter", "inf") { $0.jitter = .infinity },
        BadField("initial", "0.0") { $0.initial = 0 },
        BadField("initial", "-1.0") { $0.initial = -1 },
        BadField("initial", "nan") { $0.initial = .nan },
        BadField("maximum", "0.0") { $0.maximum = 0 },
        BadField("maximum", "inf") { $0.maximum = .infinity },
        BadField("maximum", "1.0") { $0.maximum = 1 },  // below the first delay (2 s)
        BadField("initial", "90.0") { $0.initial = 90 },  // above the longest delay (60 s)
    ]

    /// T7, E3, P7: every field is checked, not only the jitter's being a number: a jitter of 5
    /// would make most retries wait 0 s (a tight loop), a longest delay below the first one would
    /// make the doubling meaningless. The refusal names the field and its value.
    @Test(arguments: badFields)
    func p7_t7_e3_everyFieldOfABackoffIsValidatedAndTheRefusalNamesItAndItsValue(bad: BadField) {
        let error = #expect(throws: SegmentsError.self) { try bad.backoff.validate() }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("(\(bad.field)") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(bad.value) == true, "\(error?.message ?? "")")
    }

    /// P7: whatever a valid backoff is, no retry waits 0 s or less, at any attempt and any jitter
    /// draw except the very edge of a full (±100 %) jitter.
    @Test func p7_t7_e3_aValidBackoffNeverWaitsZeroSeconds() throws {
        for jitter in [0, 0.2, 0.5, 0.99] {
            for (initial, maximum) in [(0.001, 0.001), (2.0, 60.0), (1.0, 1e6)] {
                let backoff = RetryBackoff(initial: initial, maximum: maximum, jitter: jitter)
                try backoff.validate()
                for attempt in [1, 2, 10, 100] {
                    for random in [0, 0.25, 0.5, 0.999_999] {
                        #expect(backoff.delay(attempt: attempt, random: random) > 0, "\(backoff) attempt \(attempt) random \(random)")
                    }
                }
            }
        }
    }

    @Test func p7_theDefaultsAndSmallPositiveBackoffsAreValid() throws {
        try RetryBackoff().validate()
        try RetryBackoff(initial: 0.001, maximum: 0.01).validate()
        try RetryBackoff(initial: 5, maximum: 5, jitter: 0).validate()
        try RetryBackoff(jitter: 1).validate()
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
