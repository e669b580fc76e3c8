import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct RetryAfterTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT, the RFC's example date.
    private static let rfcDate = Date(timeIntervalSince1970: 784_111_777)

    @Test(arguments: [("120", 120.0), ("0", 0), (" 5 ", 5), ("86400", 86_400), ("007", 7)])
    func t7_deltaSeconds(value: String, expected: TimeInterval) {
        #expect(RetryAfter.seconds(from: value, now: Self.rfcDate) == expected)
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:50:07 GMT",  // IMF-fixdate
        "Sunday, 06-Nov-94 08:50:07 GMT",  // RFC 850
        "Sun Nov  6 08:50:07 1994",  // asctime
    ])
    func t7_httpDateIsMeasuredFromTheInjectedNow(value: String) {
        #expect(RetryAfter.seconds(from: value, now: Self.rfcDate) == 30)
    }

    @Test func t7_httpDateInThePastMeansNoWait() {
        #expect(RetryAfter.seconds(from: "Sun, 06 Nov 1994 08:49:00 GMT", now: Self.rfcDate) == 0)
    }

    @Test(arguments: [
        "", "   ", "soon", "-5", "1.5", "+3", "5s", "0x10", "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 25:49:37 GMT", "2024-11-22T04:20:00Z", "Sun, 06 Nov 1994",
    ])
    func t7_garbageIsIgnored(value: String) {
        #expect(RetryAfter.seconds(from: value, now: Self.rfcDate) == nil)
    }

    @Test(arguments: [429, 503, 500])
    func t7_retryAfterReachesTheError(status: Int) async throws {
        let harness = Harness(transport: RecordingTransport(fallback: .status(status, headers: ["retry-after": "12"])))
        let error = try #require(await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) })
        #expect(error.retryAfter == 12)
        #expect(error.isTransient)
    }

    @Test func t7_retryAfterDateUsesTheAdapterClock() async throws {
        // Harness.now is 2024-11-22 04:20:00 UTC.
        let header = "Fri, 22 Nov 2024 04:21:30 GMT"
        let harness = Harness(transport: RecordingTransport(fallback: .status(503, headers: ["Retry-After": header])))
        let error = try #require(await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) })
        #expect(error.retryAfter == 90)
    }

    @Test func t7_garbageRetryAfterLeavesNoWait() async throws {
        let harness = Harness(transport: RecordingTransport(fallback: .status(429, headers: ["Retry-After": "later"])))
        let error = try #require(await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) })
        #expect(error.retryAfter == nil)
        #expect(error.httpStatus == 429)
    }
}

/// A `Retry-After` from a hostile server never becomes an infinite or negative wait (see Behaviour P7).
@Suite(Hang.timeLimit(minutes: 2)) struct RetryAfterBoundsTests {
    @Test(arguments: [String(repeating: "9", count: 400), "99999999999999999999", "0000000000000000000086401"])
    func p7_aHugeDeltaIsFiniteAndCapped(value: String) throws {
        let seconds = try #require(RetryAfter.seconds(from: value, now: Date(timeIntervalSince1970: 0)))
        #expect(seconds.isFinite)
        #expect(seconds == RetryAfter.maximumSeconds)
    }

    @Test func p7_leadingZerosStillCount() {
        #expect(RetryAfter.seconds(from: String(repeating: "0", count: 50) + "7", now: Date()) == 7)
    }

    @Test func p7_aFarFutureDateIsCapped() {
        let seconds = RetryAfter.seconds(from: "Fri, 31 Dec 9999 23:59:59 GMT", now: Date(timeIntervalSince1970: 0))
        #expect(seconds == RetryAfter.maximumSeconds)
    }
}

/// The hand-written HTTP-date parser against dates whose instants are known.
@Suite(Hang.timeLimit(minutes: 2)) struct HTTPDateTests {
    @Test(arguments: [
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0),
        ("Tue, 29 Feb 2000 12:00:00 GMT", 951_825_600),
        ("Sat, 31 Dec 2033 23:59:59 GMT", 2_019_686_399),
        ("Fri, 22 Nov 2024 04:20:00 GMT", 1_732_249_200),
        ("Friday, 22-Nov-24 04:20:00 GMT", 1_732_249_200),
        ("Fri Nov 22 04:20:00 2024", 1_732_249_200),
        ("fri, 22 NOV 2024 04:20:00 gmt", 1_732_249_200),
    ])
    func t7_knownInstants(value: String, epochSeconds: TimeInterval) {
        // A minute before the instant, the wait is a minute (an RFC 850 year is read relative to now).
        #expect(
            RetryAfter.seconds(from: value, now: Date(timeIntervalSince1970: epochSeconds - 60)) == 60)
    }

    @Test(arguments: [
        "Sun, 29 Feb 2100 00:00:00 GMT", "Sun, 31 Apr 2024 00:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov +994 08:49:37 GMT", "Sun Nov 6 08:49:37 94",
        "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT",
    ])
    func t7_malformedDatesAreIgnored(value: String) {
        #expect(RetryAfter.seconds(from: value, now: Date(timeIntervalSince1970: 0)) == nil)
    }

    @Test func t7_aTwoDigitYearIsTheMostRecentPastOneWithThoseDigits() {
        // 2024 + 50 = 2074: "99" is 1999, not 2099; "30" is 2030.
        let now = Date(timeIntervalSince1970: 1_732_249_200)
        #expect(RetryAfter.seconds(from: "Friday, 01-Jan-99 00:00:00 GMT", now: now) == 0)
        #expect(RetryAfter.seconds(from: "Tuesday, 01-Jan-30 00:00:00 GMT", now: now) == RetryAfter.maximumSeconds)
    }
}
