import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The checks every configured duration goes through, at their edges (see Behaviour P7).
@Suite(Hang.timeLimit(minutes: 1)) struct DurationRulesTests {
    /// The code of the error `check` throws; nil when it throws none.
    private func code(_ check: () throws -> Void) -> String? {
        do {
            try check()
            return nil
        } catch {
            return (error as? SegmentsError)?.code.rawValue ?? "not a SegmentsError: \(error)"
        }
    }
    private let invalid = SegmentsError.Code.invalidConfiguration.rawValue

    @Test(arguments: [0.001, 0.5, 1, 299.5, 300])
    func p7_aRequestTimeoutAboveZeroAndAtMostThreeHundredSecondsIsAccepted(value: TimeInterval) {
        #expect(code { try DurationRules.checkTimeout(value, "requestTimeout") } == nil)
    }

    @Test(arguments: [0, -0.5, 300.001, 300.5, 301, .infinity, .nan])
    func p7_aRequestTimeoutOfZeroOrLessOrOverThreeHundredSecondsIsInvalid(value: TimeInterval) {
        #expect(code { try DurationRules.checkTimeout(value, "requestTimeout") } == invalid)
    }

    @Test func p7_theRefusalNamesTheSettingAndTheRange() {
        let error = #expect(throws: SegmentsError.self) { try DurationRules.checkTimeout(301, "requestTimeout") }
        #expect(error?.message == "requestTimeout must be more than 0 and at most 300 seconds")
    }

    @Test func p7_aPositiveDurationIsMoreThanZero() {
        #expect(code { try DurationRules.checkPositive(0.5, "interval") } == nil)
        #expect(code { try DurationRules.checkPositive(0, "interval") } == invalid)
        #expect(code { try DurationRules.checkPositive(.infinity, "interval") } == invalid)
    }

    @Test func p7_aNonNegativeDurationMayBeZero() {
        #expect(code { try DurationRules.checkNonNegative(0, "wait") } == nil)
        #expect(code { try DurationRules.checkNonNegative(0.5, "wait") } == nil)
        #expect(code { try DurationRules.checkNonNegative(-0.001, "wait") } == invalid)
        #expect(code { try DurationRules.checkNonNegative(.nan, "wait") } == invalid)
    }
}
