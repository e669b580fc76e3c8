import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

@Suite struct RetryAfterTests {
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
        let harness = Harness(transport: MockTransport(fallback: .status(status, headers: ["retry-after": "12"])))
        let error = try #require(await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) })
        #expect(error.retryAfter == 12)
        #expect(error.isTransient)
    }

    @Test func t7_retryAfterDateUsesTheAdapterClock() async throws {
        // Harness.now is 2024-11-22 04:20:00 UTC.
        let header = "Fri, 22 Nov 2024 04:21:30 GMT"
        let harness = Harness(transport: MockTransport(fallback: .status(503, headers: ["Retry-After": header])))
        let error = try #require(await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) })
        #expect(error.retryAfter == 90)
    }

    @Test func t7_garbageRetryAfterLeavesNoWait() async throws {
        let harness = Harness(transport: MockTransport(fallback: .status(429, headers: ["Retry-After": "later"])))
        let error = try #require(await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) })
        #expect(error.retryAfter == nil)
        #expect(error.httpStatus == 429)
    }
}

/// A `Retry-After` from a hostile server never becomes an infinite or negative wait (SPEC P7).
@Suite(suiteTimeLimit()) struct RetryAfterBoundsTests {
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
